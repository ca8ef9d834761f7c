//! Where each value of an answer's JSON text is: the byte range of every leaf (a string with
//! its quotes, a number, `true`, `false`, `null`) by JSON pointer. Only plain JSON is read —
//! an answer that needed repairs has no text its values can be traced to.
//!
//! ```
//! let leaves = structure::answer::spans::leaves(r#"{"a": [1, "x"]}"#).unwrap();
//! assert_eq!(leaves["/a/0"], 7..8);
//! assert_eq!(leaves["/a/1"], 10..13);
//! ```

use std::collections::BTreeMap;
use std::ops::Range;

use crate::schema::walk;

/// The byte range of each leaf of `text`, by JSON pointer; `None` when `text` is not one JSON
/// value (whitespace around it aside) or nests deeper than a walk follows.
pub fn leaves(text: &str) -> Option<BTreeMap<String, Range<usize>>> {
    let mut scanner = Scanner {
        text: text.as_bytes(),
        at: 0,
        leaves: BTreeMap::new(),
    };
    scanner.value(String::new(), 0)?;
    scanner.skip_whitespace();
    (scanner.at == scanner.text.len()).then_some(scanner.leaves)
}

struct Scanner<'a> {
    text: &'a [u8],
    at: usize,
    leaves: BTreeMap<String, Range<usize>>,
}

impl Scanner<'_> {
    fn skip_whitespace(&mut self) {
        while self
            .text
            .get(self.at)
            .is_some_and(|byte| matches!(byte, b' ' | b'\t' | b'\n' | b'\r'))
        {
            self.at += 1;
        }
    }

    fn eat(&mut self, byte: u8) -> Option<()> {
        self.skip_whitespace();
        (self.text.get(self.at) == Some(&byte)).then(|| self.at += 1)
    }

    fn peek(&mut self) -> Option<u8> {
        self.skip_whitespace();
        self.text.get(self.at).copied()
    }

    /// Reads the value at the cursor, found at `pointer`.
    fn value(&mut self, pointer: String, depth: usize) -> Option<()> {
        if walk::too_deep(depth) {
            return None;
        }
        match self.peek()? {
            b'{' => self.object(pointer, depth),
            b'[' => self.array(pointer, depth),
            _ => {
                let start = self.at;
                self.scalar()?;
                self.leaves.insert(pointer, start..self.at);
                Some(())
            }
        }
    }

    fn object(&mut self, pointer: String, depth: usize) -> Option<()> {
        self.eat(b'{')?;
        if self.eat(b'}').is_some() {
            return Some(());
        }
        loop {
            self.skip_whitespace();
            let start = self.at;
            self.string()?;
            let key: String = serde_json::from_slice(&self.text[start..self.at]).ok()?;
            self.eat(b':')?;
            self.value(format!("{pointer}/{}", walk::escape(&key)), depth + 1)?;
            if self.eat(b',').is_none() {
                return self.eat(b'}');
            }
        }
    }

    fn array(&mut self, pointer: String, depth: usize) -> Option<()> {
        self.eat(b'[')?;
        if self.eat(b']').is_some() {
            return Some(());
        }
        for index in 0.. {
            self.value(format!("{pointer}/{index}"), depth + 1)?;
            if self.eat(b',').is_none() {
                return self.eat(b']');
            }
        }
        None
    }

    /// A string, number or literal, checked by serde_json.
    fn scalar(&mut self) -> Option<()> {
        let start = self.at;
        if self.text.get(self.at) == Some(&b'"') {
            self.string()?;
        } else {
            let end = (self.text[start..].iter())
                .position(|byte| matches!(byte, b',' | b'}' | b']' | b' ' | b'\t' | b'\n' | b'\r'))
                .map_or(self.text.len(), |offset| start + offset);
            self.at = end;
        }
        serde_json::from_slice::<serde_json::Value>(&self.text[start..self.at])
            .ok()
            .filter(|value| !value.is_object() && !value.is_array())
            .map(drop)
    }

    /// Moves past the string at the cursor (its escapes skipped, not decoded).
    fn string(&mut self) -> Option<()> {
        if self.text.get(self.at) != Some(&b'"') {
            return None;
        }
        let mut at = self.at + 1;
        loop {
            match self.text.get(at)? {
                b'"' => break,
                b'\\' => at += 2,
                _ => at += 1,
            }
        }
        self.at = at + 1;
        Some(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_leaf_is_found_with_its_quotes_and_escaped_keys() {
        let text = r#" {"a/b": "x\"y", "n": -1.5e3, "t": true, "z": null, "o": {"e": []}} "#;
        let leaves = leaves(text).unwrap();
        let at = |pointer: &str| &text[leaves[pointer].clone()];
        assert_eq!(at("/a~1b"), r#""x\"y""#);
        assert_eq!(at("/n"), "-1.5e3");
        assert_eq!(at("/t"), "true");
        assert_eq!(at("/z"), "null");
        assert_eq!(leaves.len(), 4, "an empty array is no leaf: {leaves:?}");
    }

    #[test]
    fn text_that_is_not_one_json_value_has_no_leaves() {
        for text in [
            r#"{"a": 1,}"#,
            r#"{"a": 1} {"b": 2}"#,
            r#"{"a": tru}"#,
            r#"{'a': 1}"#,
            r#"{"a": "open"#,
            "",
        ] {
            assert_eq!(leaves(text), None, "{text}");
        }
        let deep = "[".repeat(200) + &"]".repeat(200);
        assert_eq!(leaves(&deep), None, "nesting past the walk's limit");
    }
}
