//! Reads a model's answer as JSON, repairing what models commonly wrap around it or get
//! slightly wrong: markdown fences, prose around the object, trailing commas, comments, raw
//! line breaks and other control characters inside strings. Each
//! repair is recorded; well-formed JSON takes the fast path and is never touched.

use serde_json::Value;

/// A parsed answer and the repairs it needed.
#[derive(Debug, Clone, PartialEq)]
pub struct Parsed {
    pub value: Value,
    pub repairs: Vec<String>,
}

/// Parses `text` as one JSON value, repairing near-JSON. The error says why it is not JSON.
pub fn parse(text: &str) -> Result<Parsed, String> {
    let trimmed = text.trim();
    let first_error = match serde_json::from_str(trimmed) {
        Ok(value) => {
            return Ok(Parsed {
                value,
                repairs: Vec::new(),
            });
        }
        Err(error) => error.to_string(),
    };
    let mut repairs = Vec::new();
    let mut candidate = trimmed;
    if let Some(fenced) = fenced_block(candidate) {
        candidate = fenced;
        repairs.push("removed a markdown code fence".to_owned());
    }
    if let Some((start, end)) = object_span(candidate) {
        let object = &candidate[start..end];
        if object.len() != candidate.trim().len() {
            repairs.push("removed text around the JSON object".to_owned());
        }
        candidate = object;
    }
    if let Ok(value) = serde_json::from_str(candidate) {
        return Ok(Parsed { value, repairs });
    }
    let Cleaned {
        text: cleaned,
        removed_comments,
        removed_commas,
        escaped_controls,
    } = clean(candidate);
    if removed_comments {
        repairs.push("removed comments".to_owned());
    }
    if removed_commas {
        repairs.push("removed trailing commas".to_owned());
    }
    if escaped_controls {
        repairs.push("escaped control characters inside strings".to_owned());
    }
    serde_json::from_str(&cleaned)
        .map(|value| Parsed { value, repairs })
        .map_err(|_| first_error)
}

/// The content of the first ```-fenced block, without its language tag.
fn fenced_block(text: &str) -> Option<&str> {
    let start = text.find("```")?;
    let after_fence = &text[start + 3..];
    let body_start = after_fence.find('\n').map_or(0, |newline| newline + 1);
    let body = &after_fence[body_start..];
    let end = body.find("```").unwrap_or(body.len());
    Some(body[..end].trim())
}

/// The byte span of the first balanced `{...}` in `text`, skipping braces inside strings.
fn object_span(text: &str) -> Option<(usize, usize)> {
    let start = text.find('{')?;
    let mut depth = 0usize;
    let mut in_string = false;
    let mut escaped = false;
    for (offset, c) in text[start..].char_indices() {
        if in_string {
            match c {
                _ if escaped => escaped = false,
                '\\' => escaped = true,
                '"' => in_string = false,
                _ => {}
            }
            continue;
        }
        match c {
            '"' => in_string = true,
            '{' => depth += 1,
            '}' => {
                depth -= 1;
                if depth == 0 {
                    return Some((start, start + offset + 1));
                }
            }
            _ => {}
        }
    }
    None
}

/// What [`clean`] made of a text, and which repairs it needed.
struct Cleaned {
    text: String,
    removed_comments: bool,
    removed_commas: bool,
    escaped_controls: bool,
}

/// Removes `//` and `/* */` comments and commas directly before `}` or `]`, outside strings;
/// escapes control characters (a raw line break, a tab) inside strings.
fn clean(text: &str) -> Cleaned {
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let (mut removed_comments, mut removed_commas, mut escaped_controls) = (false, false, false);
    let mut in_string = false;
    let mut escaped = false;
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if in_string {
            if c.is_control() && !escaped {
                escaped_controls = true;
                match c {
                    '\n' => out.push_str("\\n"),
                    '\r' => out.push_str("\\r"),
                    '\t' => out.push_str("\\t"),
                    _ => out.push_str(&format!("\\u{:04x}", u32::from(c))),
                }
                i += 1;
                continue;
            }
            out.push(c);
            match c {
                _ if escaped => escaped = false,
                '\\' => escaped = true,
                '"' => in_string = false,
                _ => {}
            }
            i += 1;
            continue;
        }
        match (c, chars.get(i + 1)) {
            ('"', _) => {
                in_string = true;
                out.push(c);
                i += 1;
            }
            ('/', Some('/')) => {
                removed_comments = true;
                while i < chars.len() && chars[i] != '\n' {
                    i += 1;
                }
            }
            ('/', Some('*')) => {
                removed_comments = true;
                i += 2;
                while i < chars.len() && !(chars[i] == '*' && chars.get(i + 1) == Some(&'/')) {
                    i += 1;
                }
                i += 2;
            }
            (',', _) => {
                let next = chars[i + 1..].iter().find(|c| !c.is_whitespace());
                if matches!(next, Some('}') | Some(']')) {
                    removed_commas = true;
                } else {
                    out.push(c);
                }
                i += 1;
            }
            _ => {
                out.push(c);
                i += 1;
            }
        }
    }
    Cleaned {
        text: out,
        removed_comments,
        removed_commas,
        escaped_controls,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn well_formed_json_needs_no_repair() {
        let parsed = parse("  {\"a\": [1, 2]}\n").unwrap();
        assert_eq!(parsed.value, json!({"a": [1, 2]}));
        assert!(parsed.repairs.is_empty());
    }

    #[test]
    fn code_fence_and_prose_are_removed() {
        let parsed = parse("Here you go:\n```json\n{\"a\": \"}\"}\n```\nHope it helps").unwrap();
        assert_eq!(parsed.value, json!({"a": "}"}));
        assert_eq!(parsed.repairs, vec!["removed a markdown code fence"]);
    }

    #[test]
    fn prose_around_an_object_is_removed() {
        let parsed = parse("Sure! {\"name\": \"Ada {the first}\"} -- done").unwrap();
        assert_eq!(parsed.value, json!({"name": "Ada {the first}"}));
        assert_eq!(parsed.repairs, vec!["removed text around the JSON object"]);
    }

    #[test]
    fn trailing_commas_and_comments_are_removed_outside_strings() {
        let parsed =
            parse("{\"a\": [1, 2,], // note\n \"b\": \"x,}\", /* c */ \"c\": {\"d\": 1,},}")
                .unwrap();
        assert_eq!(
            parsed.value,
            json!({"a": [1, 2], "b": "x,}", "c": {"d": 1}})
        );
        assert_eq!(
            parsed.repairs,
            vec!["removed comments", "removed trailing commas"]
        );
    }

    #[test]
    fn control_characters_inside_strings_are_escaped() {
        let parsed = parse("{\"note\": \"two\nlines\tand\u{1}\", \"b\": 1}").unwrap();
        assert_eq!(
            parsed.value,
            json!({"note": "two\nlines\tand\u{1}", "b": 1})
        );
        assert_eq!(
            parsed.repairs,
            vec!["escaped control characters inside strings"]
        );
        // Outside strings a line break is whitespace and stays.
        assert!(parse("{\n\"a\": \"x\ny\",\n}").is_ok());
    }

    #[test]
    fn text_without_json_is_an_error_with_the_parser_reason() {
        let error = parse("I cannot help with that.").unwrap_err();
        assert!(error.contains("expected"), "{error}");
        assert!(parse("{\"a\": ").is_err());
        assert!(parse("").is_err());
    }

    #[test]
    fn non_ascii_text_never_splits_a_character() {
        let parsed = parse("Voilà — {\"städte\": [\"Zürich\",]} ✓").unwrap();
        assert_eq!(parsed.value, json!({"städte": ["Zürich"]}));
    }
}
