//! Short names a text defines for what it named just before — `Visser Precision Cast, LLC
//! ("Visser")`, `Acme GmbH (hereinafter the “Buyer”)` — so that an array merged from the parts
//! of a long text holds one thing named two ways once, under the name the text gave it first.
//! A part that reads only the middle of a document sees the short name; the part that read
//! the definition gave the full one.

/// The longest a definition's parenthesis may run, in characters.
const MAX_DEFINITION_CHARS: usize = 120;
/// The most words a defined short name may have.
const MAX_SHORT_NAME_WORDS: usize = 6;
/// How far before its definition the full name may end, in characters (`Acme Inc., a Delaware
/// corporation ("Acme")`).
pub(super) const MAX_NAME_GAP_CHARS: usize = 200;

/// A short name the text defines: the name folded (case and spacing, a leading "the" dropped),
/// and where its definition's parenthesis opens (code points).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Definition {
    pub short: String,
    pub at: usize,
}

/// Every short name `text` defines in a parenthesis: a quoted phrase of at most
/// [`MAX_SHORT_NAME_WORDS`] words inside `( … )`, whatever words go with it (`hereinafter`,
/// `the`, `collectively`).
pub(super) fn definitions(text: &str) -> Vec<Definition> {
    let chars: Vec<char> = text.chars().collect();
    let mut found = Vec::new();
    for (open, _) in chars.iter().enumerate().filter(|(_, c)| **c == '(') {
        let inside: String = (chars[open + 1..].iter())
            .take(MAX_DEFINITION_CHARS)
            .take_while(|c| !matches!(c, ')' | '('))
            .collect();
        if let Some(short) = quoted(&inside) {
            found.push(Definition { short, at: open });
        }
    }
    found
}

/// The first quoted phrase of `inside` (straight or curly quotes), folded, if it is a name's
/// length.
fn quoted(inside: &str) -> Option<String> {
    let start = inside.find(['"', '“', '\'', '‘'])?;
    let quote = inside[start..].chars().next()?;
    let close = match quote {
        '“' => '”',
        '‘' => '’',
        other => other,
    };
    let rest = &inside[start + quote.len_utf8()..];
    let end = rest.find([close, if close == '”' { '"' } else { close }])?;
    let phrase = rest[..end].trim();
    let words = phrase.split_whitespace().count();
    (1..=MAX_SHORT_NAME_WORDS)
        .contains(&words)
        .then(|| fold(phrase))
}

/// `name` folded for comparing with a short name: case and spacing, a leading "the" dropped.
pub(super) fn fold(name: &str) -> String {
    let lower: Vec<String> = name.split_whitespace().map(str::to_lowercase).collect();
    match lower.split_first() {
        Some((first, rest)) if first == "the" && !rest.is_empty() => rest.join(" "),
        _ => lower.join(" "),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_names_are_found_in_their_parentheses_whatever_the_quotes() {
        let text = "LIQUIDMETAL TECHNOLOGIES, INC., a Delaware corporation (the \"Company\"), and \
                    Visser Precision Cast, LLC (hereinafter “Visser”) (collectively, the ‘Parties’) \
                    (see Schedule A) (\"a name far too long to be any short name at all\")";
        let found: Vec<String> = definitions(text).into_iter().map(|d| d.short).collect();
        assert_eq!(found, ["company", "visser", "parties"]);
        let at = definitions(text)[0].at;
        assert_eq!(text.chars().nth(at), Some('('));
    }

    #[test]
    fn names_fold_case_spacing_and_a_leading_the() {
        assert_eq!(fold("The  Company"), "company");
        assert_eq!(fold("the"), "the");
        assert_eq!(fold("Theodore Inc."), "theodore inc.");
    }
}
