//! The words of a text as grounding reads them: copied tokens, word spans and numbers.

use std::borrow::Cow;

use serde_json::Value;

/// The longest word span offered for a plain string in extractive mode.
pub const MAX_SPAN_WORDS: usize = 8;

/// Characters that end a span: markup, key-value syntax and clause punctuation.
const SPAN_BREAKS: &[char] = &[
    '"', '=', ';', ':', '(', ')', '[', ']', '{', '}', '<', '>', '|', '!', '?', ',', '\\', '\n',
    '\r', '\t',
];

pub(super) const TRIM: &[char] = &[
    '.', ',', ';', ':', '!', '?', '"', '\'', '(', ')', '[', ']', '{', '}', '<', '>', '`',
];

/// Whitespace-separated words, and their parts between key-value or markup characters, with
/// surrounding punctuation trimmed (`email=ada@x.org,` → `email=ada@x.org`, `ada@x.org`).
pub(super) fn copied_tokens(text: &str) -> Vec<&str> {
    let mut tokens = Vec::new();
    for word in text.split_whitespace() {
        let word = word.trim_matches(TRIM);
        if !word.is_empty() {
            tokens.push(word);
        }
        for part in word.split(['=', '|', ',', ';', '"', '\'', '<', '>', '(', ')']) {
            let part = part.trim_matches(TRIM);
            if !part.is_empty() && part != word {
                tokens.push(part);
            }
        }
    }
    tokens
}

/// Runs of up to [`MAX_SPAN_WORDS`] words that do not cross a [`SPAN_BREAKS`] character, as
/// written (inner spacing and punctuation kept, outer punctuation trimmed). A word holding an
/// email address or a URL ends a span too: those belong to fields of their format, and a small
/// model readily puts them anywhere.
pub(super) fn spans(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    for segment in segments(text) {
        let words: Vec<(usize, usize)> = word_bounds(segment);
        for first in 0..words.len() {
            for last in first..words.len().min(first + MAX_SPAN_WORDS) {
                let word = &segment[words[last].0..words[last].1];
                if word.contains('@') || word.contains("://") {
                    break;
                }
                out.push(&segment[words[first].0..words[last].1]);
            }
        }
    }
    out
}

/// `text` split at [`SPAN_BREAKS`], except a `:` or `,` between two digits (`09:15`, `1,200`):
/// a time or a number is one word.
fn segments(text: &str) -> Vec<&str> {
    let bytes = text.as_bytes();
    let mut out = Vec::new();
    let mut start = 0;
    for (index, c) in text.char_indices() {
        let within_number = matches!(c, ':' | ',')
            && index > 0
            && bytes[index - 1].is_ascii_digit()
            && bytes.get(index + 1).is_some_and(u8::is_ascii_digit);
        if SPAN_BREAKS.contains(&c) && !within_number {
            out.push(&text[start..index]);
            start = index + c.len_utf8();
        }
    }
    out.push(&text[start..]);
    out
}

/// Byte ranges of the words of `segment`, trailing dots and quotes trimmed (`Nair.` → `Nair`).
fn word_bounds(segment: &str) -> Vec<(usize, usize)> {
    let mut words = Vec::new();
    let mut start = None;
    for (index, c) in segment.char_indices().chain([(segment.len(), ' ')]) {
        match (c.is_whitespace(), start) {
            (false, None) => start = Some(index),
            (true, Some(begin)) => {
                let word = segment[begin..index].trim_end_matches(TRIM);
                let word_start = begin + (word.len() - word.trim_start_matches(TRIM).len());
                if word_start < begin + word.len() {
                    words.push((word_start, begin + word.len()));
                }
                start = None;
            }
            _ => {}
        }
    }
    words
}

/// The words of `text` in lower case: runs of letters and digits, with the `inner` characters
/// kept inside a word (`'` keeps `aujourd'hui` whole). A word with no capital is the text's
/// own, not a copy (most words of a text, and this runs on every call).
pub(super) fn lowercase_words<'t>(
    text: &'t str,
    inner: &'t [char],
) -> impl Iterator<Item = Cow<'t, str>> + 't {
    text.split(move |c: char| !c.is_alphanumeric() && !inner.contains(&c))
        .filter(|word| !word.is_empty())
        .map(|word| {
            if word.chars().any(char::is_uppercase) {
                Cow::Owned(word.to_lowercase())
            } else {
                Cow::Borrowed(word)
            }
        })
}

/// Whether a text, by its [`lowercase_words`], names `value` (an enum value such as
/// `in_progress` or `failure`): each of its words appears in the text as itself or as a word
/// sharing its stem (`failed` names `failure`: a common start of four or more letters and two
/// thirds of the shorter word).
pub(super) fn names(text_words: &[Cow<'_, str>], value: &str) -> bool {
    let mut value_words = lowercase_words(value, &[]).peekable();
    value_words.peek().is_some()
        && value_words.all(|wanted| text_words.iter().any(|word| names_word(word, &wanted)))
}

/// Whether the lower-case `word` is `wanted` or shares its stem.
fn names_word(word: &str, wanted: &str) -> bool {
    let common = word
        .chars()
        .zip(wanted.chars())
        .take_while(|(a, b)| a == b)
        .count();
    let shorter = word.chars().count().min(wanted.chars().count());
    word == wanted || (common >= 4 && common * 3 >= shorter * 2)
}

/// The byte range of `text` that names `value` as [`names`] reads it: from the first word
/// naming one of its words to the last.
pub(crate) fn named_span(text: &str, value: &str) -> Option<std::ops::Range<usize>> {
    let mut words = Vec::new();
    let mut start = None;
    for (index, c) in text.char_indices().chain([(text.len(), ' ')]) {
        match (c.is_alphanumeric(), start) {
            (true, None) => start = Some(index),
            (false, Some(begin)) => {
                words.push((text[begin..index].to_lowercase(), begin..index));
                start = None;
            }
            _ => {}
        }
    }
    let mut span: Option<std::ops::Range<usize>> = None;
    for wanted in lowercase_words(value, &[]) {
        let (_, range) = words.iter().find(|(word, _)| names_word(word, &wanted))?;
        span = Some(match span {
            None => range.clone(),
            Some(span) => span.start.min(range.start)..span.end.max(range.end),
        });
    }
    span
}

/// Whether the byte `range` of `text` starts and ends at word edges: a match of "Ann" in
/// "Annual" or of "7" in "1975" is not the text writing that value. In scripts written without
/// spaces between words (Chinese, Japanese, Korean, Thai and their neighbours) any place is an
/// edge, so `東京` is found in `東京都`.
pub(crate) fn at_word_edges(text: &str, range: &std::ops::Range<usize>) -> bool {
    let (before, within, after) = (
        &text[..range.start],
        &text[range.clone()],
        &text[range.end..],
    );
    let joined = |outer: Option<char>, inner: Option<char>| {
        outer
            .zip(inner)
            .is_some_and(|(outer, inner)| joins_words(outer) && joins_words(inner))
    };
    !joined(before.chars().next_back(), within.chars().next())
        && !joined(after.chars().next(), within.chars().next_back())
}

/// A letter, digit or combining mark of a script that separates its words: two such
/// characters side by side belong to one word.
fn joins_words(c: char) -> bool {
    (c.is_alphanumeric() || is_combining_mark(c)) && !written_without_spaces(c)
}

/// The combining marks of the blocks where text meets them (`i̇` lower-cased from `İ`, an
/// accent typed apart from its letter).
fn is_combining_mark(c: char) -> bool {
    matches!(c, '\u{300}'..='\u{36F}' | '\u{1AB0}'..='\u{1AFF}' | '\u{1DC0}'..='\u{1DFF}'
        | '\u{20D0}'..='\u{20FF}' | '\u{FE20}'..='\u{FE2F}')
}

/// Scripts written without spaces between words: a word may end anywhere.
fn written_without_spaces(c: char) -> bool {
    matches!(c,
        '\u{0E00}'..='\u{0EFF}' // Thai, Lao
        | '\u{0F00}'..='\u{0FFF}' // Tibetan
        | '\u{1000}'..='\u{109F}' // Myanmar
        | '\u{1100}'..='\u{11FF}' // Hangul Jamo
        | '\u{1780}'..='\u{17FF}' // Khmer
        | '\u{3040}'..='\u{31FF}' // Kana, Bopomofo, Hangul compatibility Jamo
        | '\u{3400}'..='\u{4DBF}' // CJK extension A
        | '\u{4E00}'..='\u{9FFF}' // CJK unified ideographs
        | '\u{AC00}'..='\u{D7AF}' // Hangul syllables
        | '\u{F900}'..='\u{FAFF}' // CJK compatibility ideographs
        | '\u{FF66}'..='\u{FF9F}' // half-width Katakana
        | '\u{20000}'..='\u{3FFFF}' // CJK extensions B and later
    )
}

/// The numbers written in `text` with digits (`34-year-old` → 34, `1,200` → 1200, `-3.5`);
/// with `integer`, whole numbers only.
pub(super) fn numbers(text: &str, integer: bool) -> Vec<Value> {
    written_numbers(text)
        .into_iter()
        .filter(|(value, _)| !integer || !value.is_f64())
        .map(|(value, _)| value)
        .collect()
}

/// Words that state a number without digits, in the languages dates are read in (English,
/// German, French, Spanish, Italian, Portuguese, Dutch): a text with one of them, or a digit,
/// may give a count.
const NUMBER_WORDS: &[&str] = &[
    "one",
    "two",
    "three",
    "four",
    "five",
    "six",
    "seven",
    "eight",
    "nine",
    "ten",
    "eleven",
    "twelve",
    "twenty",
    "thirty",
    "forty",
    "fifty",
    "sixty",
    "seventy",
    "eighty",
    "ninety",
    "hundred",
    "thousand",
    "million",
    "billion",
    "dozen",
    "once",
    "twice",
    "thrice",
    "single",
    "double",
    "pair",
    "both",
    "first",
    "second",
    "third",
    "fifth",
    "eighth",
    "ninth",
    "twelfth",
    "elf",
    "zwölf",
    "zwanzig",
    "dreißig",
    "vierzig",
    "fünfzig",
    "sechzig",
    "siebzig",
    "achtzig",
    "neunzig",
    "onze",
    "douze",
    "treize",
    "quatorze",
    "quinze",
    "seize",
    "vingt",
    "trente",
    "quarante",
    "cinquante",
    "soixante",
    "doce",
    "veinte",
    "treinta",
    "cuarenta",
    "cincuenta",
    "undici",
    "dodici",
    "venti",
    "trenta",
    "quaranta",
    "cinquanta",
    "zero",
    "none",
    "half",
    "eins",
    "zwei",
    "drei",
    "vier",
    "fünf",
    "sechs",
    "sieben",
    "acht",
    "neun",
    "zehn",
    "hundert",
    "tausend",
    "un",
    "une",
    "deux",
    "trois",
    "quatre",
    "cinq",
    "dix",
    "cent",
    "mille",
    "uno",
    "una",
    "dos",
    "tres",
    "cuatro",
    "cinco",
    "diez",
    "cien",
    "mil",
    "due",
    "tre",
    "quattro",
    "dieci",
    "cento",
    "um",
    "uma",
    "dois",
    "duas",
    "três",
    "twee",
    "drie",
    "vijf",
    "tien",
    "honderd",
    "duizend",
];

/// The English number words that lead [`NUMBER_WORDS`], `one` to `ninety`.
const ENGLISH_NUMBERS: usize = 20;
/// English endings only number words have: `nineteen`, `sixteenth`, `fortieth`, `fourth`
/// (with a number word before them, checked by [`mentions_a_number`]).
const NUMBER_ENDINGS: &[&str] = &["teen", "teenth", "tieth", "th"];

/// Whether `text` may state a number: a digit, a word of [`NUMBER_WORDS`], or one made of a
/// number word's start and a number's ending (`nineteen`, `ninety-second` as `ninety` and
/// `second`, `seventieth`, `sixth`). It errs towards yes: a text that may state one is read by
/// the model, never asked for at once.
pub(super) fn mentions_a_number(text: &str) -> bool {
    text.bytes().any(|byte| byte.is_ascii_digit())
        || lowercase_words(text, &[]).any(|word| {
            NUMBER_WORDS.contains(&&*word)
                || NUMBER_ENDINGS.iter().any(|ending| {
                    let root = word.strip_suffix(ending).and_then(|start| start.get(..3));
                    root.is_some_and(|root| {
                        (NUMBER_WORDS.iter().take(ENGLISH_NUMBERS)).any(|n| n.starts_with(root))
                    })
                })
        })
}

/// The numbers written in `text` with digits, each with the byte range it is written in (its
/// sign included).
pub(crate) fn written_numbers(text: &str) -> Vec<(Value, std::ops::Range<usize>)> {
    let bytes = text.as_bytes();
    let mut out = Vec::new();
    let mut index = 0;
    while index < bytes.len() {
        if !bytes[index].is_ascii_digit() {
            index += 1;
            continue;
        }
        let mut end = index;
        let mut digits = String::new();
        let mut fraction = false;
        while end < bytes.len() {
            let c = bytes[end];
            let next_is_digit = bytes.get(end + 1).is_some_and(u8::is_ascii_digit);
            if c.is_ascii_digit() {
                digits.push(c as char);
            } else if c == b','
                && bytes.len() >= end + 4
                && bytes[end + 1..end + 4].iter().all(u8::is_ascii_digit)
                && !bytes.get(end + 4).is_some_and(u8::is_ascii_digit)
            {
                // A thousands separator.
            } else if c == b'.' && next_is_digit && !fraction {
                fraction = true;
                digits.push('.');
            } else {
                break;
            }
            end += 1;
        }
        let signed = index > 0
            && bytes[index - 1] == b'-'
            && (index == 1 || !bytes[index - 2].is_ascii_alphanumeric());
        if signed {
            digits.insert(0, '-');
        }
        let value = if fraction {
            digits
                .parse::<f64>()
                .ok()
                .and_then(|n| serde_json::Number::from_f64(n).map(Value::Number))
        } else {
            digits.parse::<i64>().ok().map(Value::from)
        };
        let start = if signed { index - 1 } else { index };
        out.extend(value.map(|value| (value, start..end)));
        index = end;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn numbers_and_spans_are_read_as_written() {
        assert_eq!(
            numbers(
                "34-year-old bob-7 owes -3.5 on 2025-06-03, 1,200 or 1,20",
                false
            ),
            vec![
                json!(34),
                json!(7),
                json!(-3.5),
                json!(2025),
                json!(6),
                json!(3),
                json!(1200),
                json!(1),
                json!(20)
            ]
        );
        assert_eq!(numbers("3.5 and 4", true), vec![json!(4)]);
        let found = spans("J. R. R. Tolkien wrote \"The Hobbit\".");
        assert!(found.contains(&"J. R. R. Tolkien"), "{found:?}");
        assert!(found.contains(&"The Hobbit"), "{found:?}");
        assert!(
            !found
                .iter()
                .any(|span| span.contains('"') || span.ends_with('.'))
        );
        assert_eq!(
            spans("Zürich — Genève"),
            vec![
                "Zürich",
                "Zürich —",
                "Zürich — Genève",
                "—",
                "— Genève",
                "Genève"
            ]
        );
    }

    #[test]
    fn a_match_starts_and_ends_at_word_edges_except_in_scripts_without_spaces() {
        let edges = |text: &str, value: &str| {
            text.match_indices(value)
                .any(|(start, _)| at_word_edges(text, &(start..start + value.len())))
        };
        assert!(!edges("the Annual report", "Ann"));
        assert!(edges("Ann's report, Annual", "Ann"));
        assert!(!edges("born in 1975", "7") && edges("room 7, 1975", "7"));
        assert!(!edges("İstanbul", "stanbul"), "İ is a letter");
        assert!(
            !edges("i\u{307}stanbul", "stanbul"),
            "a combining dot joins its letter"
        );
        assert!(edges("東京都に住む", "東京") && edges("在東京都", "東京都"));
        assert!(edges("(555) 010-2030", "(555)") && edges("Zoë.", "Zoë"));
        assert!(!edges("Zoëlle", "Zoë"));
    }

    #[test]
    fn a_text_names_an_enum_value_by_its_words_or_their_stems() {
        let named =
            |text: &str, value: &str| names(&lowercase_words(text, &[]).collect::<Vec<_>>(), value);
        assert!(named("FAILURE user=dev_ops", "failure"));
        assert!(named("and it failed.", "failure"));
        assert!(named("the medium-priority ticket", "medium"));
        assert!(named("work is in progress", "in_progress"));
        assert!(!named("the login page", "low"));
        assert!(!named("a fair", "failure"), "too short a common start");
        assert!(!named("", "open") && !named("open", ""));
        assert_eq!(
            lowercase_words("Aujourd'hui, le 3.", &['\'']).collect::<Vec<_>>(),
            vec!["aujourd'hui", "le", "3"]
        );
    }
}
