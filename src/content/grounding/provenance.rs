//! Provenance: where in the text each value of an answer comes from, with no LLM call.
//!
//! Every leaf of the data — a string, a number, each item of an array of them — gets a
//! [`Source`]: the span of the text that equals it (`exact`), the span that equals it after a
//! normalisation (`normalized`: case and whitespace; a number as written, `1,200` → 1200; a date
//! written out, `14 April 2025` → `2025-04-14`; an enum value named in other words, `failed` →
//! `failure`), or no span (`derived`). Offsets count Unicode code points, and UTF-16 code units
//! for JavaScript. Booleans and nulls are judgements and absence, and have no source.
//!
//! ```
//! use serde_json::json;
//! use structure::content::grounding::provenance::sources;
//! use structure::outcome::Match;
//!
//! let schema = json!({"type": "object", "properties": {
//!     "name": {"type": "string"}, "followers": {"type": "integer"}, "role": {"type": "string"},
//! }});
//! let data = json!({"name": "Zoë Kim", "followers": 1200, "role": "CTO"});
//! let found = sources(&data, &schema, "Zoë  KIM, 1,200 followers");
//! assert_eq!((found[0].matched, found[0].span.as_ref().unwrap().end), (Match::Normalized, 8));
//! assert_eq!(found[1].span.as_ref().unwrap().text, "1,200");
//! assert_eq!(found[2].matched, Match::Derived);
//! ```

use std::cell::OnceCell;
use std::ops::Range;

use serde_json::Value;

use super::dates::{DateSpans, date_spans};
use super::words::{at_word_edges, named_span, written_numbers};
use crate::outcome::{Match, Source, Span};
use crate::schema::walk;
use crate::schema::walk::{escape, too_deep};

/// The annotation of a field whose value is legitimately worked out (a summary, a category):
/// exempt from grounding.
pub const DERIVED_ANNOTATION: &str = "x-structure-derived";

/// Every leaf of `data` (valid against `schema`), in document order.
fn leaves<'d>(data: &'d Value, schema: &Value) -> Vec<Leaf<'d>> {
    let mut leaves = Vec::new();
    collect(
        schema,
        Some(schema),
        data,
        String::new(),
        false,
        0,
        &mut leaves,
    );
    leaves
}

/// The source of every leaf of `data` (valid against `schema`) in `text`, in document order.
pub fn sources(data: &Value, schema: &Value, text: &str) -> Vec<Source> {
    let text = Text::new(text);
    leaves(data, schema)
        .into_iter()
        .map(|leaf| text.source(leaf))
        .collect()
}

/// The leaves of `data` whose value no span supports although their field needs one: not
/// marked [`DERIVED_ANNOTATION`], not an enum or a constant (a judgement).
pub fn ungrounded<'d>(data: &'d Value, schema: &Value, text: &str) -> Vec<(String, &'d Value)> {
    let text = Text::new(text);
    leaves(data, schema)
        .into_iter()
        .filter(|leaf| !leaf.exempt)
        .filter_map(|leaf| {
            let pointer = leaf.pointer.clone();
            let value = leaf.value;
            (text.source(leaf).matched == Match::Derived).then_some((pointer, value))
        })
        .collect()
}

/// One leaf of the data, with what its schema says about it.
struct Leaf<'d> {
    pointer: String,
    value: &'d Value,
    /// Its schema's `format`.
    format: Option<String>,
    /// An enum or a constant: the text may name it in other words.
    named: bool,
    /// Grounding does not apply: a judgement (enum, constant) or marked derived.
    exempt: bool,
}

/// Gathers the leaves under `data`, whose schema is `schema` (`None`: unknown).
fn collect<'d>(
    root: &Value,
    schema: Option<&Value>,
    data: &'d Value,
    pointer: String,
    derived: bool,
    depth: usize,
    leaves: &mut Vec<Leaf<'d>>,
) {
    if too_deep(depth) {
        return;
    }
    let schema = schema.map(|schema| walk::follow(root, schema));
    let derived = derived
        || schema.is_some_and(|schema| {
            schema.get(DERIVED_ANNOTATION).and_then(Value::as_bool) == Some(true)
        });
    match data {
        Value::Object(object) => {
            for (name, value) in object {
                let field = schema.and_then(|schema| field_schema(root, schema, name, 0));
                let at = format!("{pointer}/{}", escape(name));
                collect(root, field, value, at, derived, depth + 1, leaves);
            }
        }
        Value::Array(items) => {
            for (index, item) in items.iter().enumerate() {
                let item_schema = schema.and_then(|schema| item_schema(schema, index));
                let at = format!("{pointer}/{index}");
                collect(root, item_schema, item, at, derived, depth + 1, leaves);
            }
        }
        Value::String(_) | Value::Number(_) => {
            let named = schema.is_some_and(|schema| {
                schema.get("enum").is_some() || schema.get("const").is_some()
            });
            leaves.push(Leaf {
                pointer,
                value: data,
                format: schema
                    .and_then(|schema| schema.get("format"))
                    .and_then(Value::as_str)
                    .map(str::to_owned),
                named,
                exempt: derived || named,
            });
        }
        Value::Bool(_) | Value::Null => {}
    }
}

/// The schema of property `name` of an object whose schema is `schema`: its `properties`, else
/// a combinator branch that declares it, else `additionalProperties`.
fn field_schema<'s>(
    root: &'s Value,
    schema: &'s Value,
    name: &str,
    depth: usize,
) -> Option<&'s Value> {
    if too_deep(depth) {
        return None;
    }
    let schema = walk::follow(root, schema);
    if let Some(field) = schema
        .get("properties")
        .and_then(|properties| properties.get(name))
    {
        return Some(field);
    }
    let branches = ["allOf", "anyOf", "oneOf"]
        .iter()
        .filter_map(|keyword| schema.get(*keyword).and_then(Value::as_array))
        .flatten();
    for branch in branches {
        if let Some(field) = field_schema(root, branch, name, depth + 1) {
            return Some(field);
        }
    }
    schema
        .get("additionalProperties")
        .filter(|additional| additional.is_object())
}

/// The schema of item `index` of an array whose schema is `schema`.
fn item_schema(schema: &Value, index: usize) -> Option<&Value> {
    if let Some(prefix) = schema.get("prefixItems").and_then(Value::as_array)
        && let Some(item) = prefix.get(index)
    {
        return Some(item);
    }
    schema.get("items").filter(|items| items.is_object())
}

/// The text, with what finding spans in it needs.
struct Text<'t> {
    text: &'t str,
    /// The text lower-cased with whitespace runs folded to one space, and the byte offset in
    /// `text` of each of its bytes (one more at the end).
    folded: String,
    origin: Vec<usize>,
    /// The dates the text writes out in full, and the instants ([`date_spans`]), read once for
    /// every date field: each read lower-cases the whole text and runs the date patterns over it.
    dates: [OnceCell<DateSpans>; 2],
}

impl<'t> Text<'t> {
    fn new(text: &'t str) -> Self {
        let (folded, origin) = fold(text);
        Self {
            text,
            folded,
            origin,
            dates: Default::default(),
        }
    }

    fn source(&self, leaf: Leaf<'_>) -> Source {
        let found = match leaf.value {
            Value::String(value) => self.string(value, &leaf),
            Value::Number(_) => self.number(leaf.value),
            _ => None,
        };
        match found {
            Some((range, matched)) => Source {
                pointer: leaf.pointer,
                span: Some(self.span(range)),
                matched,
                page: None,
                boxes: Vec::new(),
                cell: None,
                confidence: None,
            },
            None => Source {
                pointer: leaf.pointer,
                span: None,
                matched: Match::Derived,
                page: None,
                boxes: Vec::new(),
                cell: None,
                confidence: None,
            },
        }
    }

    fn string(&self, value: &str, leaf: &Leaf<'_>) -> Option<(Range<usize>, Match)> {
        if value.is_empty() {
            return None;
        }
        if let Some((start, _)) = self
            .text
            .match_indices(value)
            .find(|(start, _)| at_word_edges(self.text, &(*start..start + value.len())))
        {
            return Some((start..start + value.len(), Match::Exact));
        }
        let (folded_value, _) = fold(value);
        let folded_value = folded_value.trim();
        if !folded_value.is_empty()
            && let Some(range) = self
                .folded
                .match_indices(folded_value)
                .map(|(start, _)| start..start + folded_value.len())
                .find(|range| self.folded_at_word_edges(range))
        {
            return Some((
                self.origin[range.start]..self.origin[range.end],
                Match::Normalized,
            ));
        }
        let with_time = match leaf.format.as_deref() {
            Some("date") => Some(false),
            Some("date-time") => Some(true),
            _ => None,
        };
        if let Some(with_time) = with_time
            && let Some((_, range)) = self.dates[usize::from(with_time)]
                .get_or_init(|| date_spans(self.text, with_time))
                .iter()
                .find(|(date, _)| same_instant(date, value))
        {
            return Some((range.clone(), Match::Normalized));
        }
        if leaf.named {
            return named_span(self.text, value).map(|range| (range, Match::Normalized));
        }
        None
    }

    fn number(&self, value: &Value) -> Option<(Range<usize>, Match)> {
        let wanted = value.as_f64()?;
        let (_, range) = written_numbers(self.text)
            .into_iter()
            .find(|(written, _)| written.as_f64() == Some(wanted))?;
        let written = value.to_string();
        let matched = if self.text[range.clone()] == *written {
            Match::Exact
        } else {
            Match::Normalized
        };
        Some((range, matched))
    }

    /// Whether a match in the folded text is one in the text: at word edges, and not inside
    /// what one character lower-cases to (`i` of the `i̇` that `İ` becomes).
    fn folded_at_word_edges(&self, range: &Range<usize>) -> bool {
        let whole = |at: usize| {
            at == 0 || at == self.folded.len() || self.origin[at - 1] != self.origin[at]
        };
        whole(range.start) && whole(range.end) && at_word_edges(&self.folded, range)
    }

    fn span(&self, range: Range<usize>) -> Span {
        span_at(self.text, range)
    }
}

/// The span of `text` at byte `range`, in code points and UTF-16 code units.
pub fn span_at(text: &str, range: Range<usize>) -> Span {
    let before = &text[..range.start];
    let within = &text[range];
    let start = before.chars().count();
    let utf16_start = before.encode_utf16().count();
    Span {
        start,
        end: start + within.chars().count(),
        text: within.to_owned(),
        utf16_start,
        utf16_end: utf16_start + within.encode_utf16().count(),
    }
}

/// The exact source at `pointer` of `written`, where `text` first writes it (for the tests of
/// what reads sources).
#[cfg(test)]
pub(crate) fn exact_source(pointer: &str, text: &str, written: &str) -> Source {
    let at = text.find(written).expect("the text writes it");
    Source {
        pointer: pointer.to_owned(),
        span: Some(span_at(text, at..at + written.len())),
        matched: Match::Exact,
        page: None,
        boxes: Vec::new(),
        cell: None,
        confidence: None,
    }
}

/// `text` lower-cased with each run of whitespace folded to one space, and the byte offset in
/// `text` of each byte of the result (one more at the end).
fn fold(text: &str) -> (String, Vec<usize>) {
    let mut folded = String::with_capacity(text.len());
    let mut origin = Vec::with_capacity(text.len() + 1);
    let mut in_space = false;
    for (index, c) in text.char_indices() {
        if c.is_whitespace() {
            if !in_space {
                folded.push(' ');
                origin.push(index);
            }
            in_space = true;
            continue;
        }
        in_space = false;
        for lowered in c.to_lowercase() {
            for _ in 0..lowered.len_utf8() {
                origin.push(index);
            }
            folded.push(lowered);
        }
    }
    origin.push(text.len());
    (folded, origin)
}

/// Whether two dates or instants are the same: equal as written, or the same instant.
fn same_instant(written: &str, value: &str) -> bool {
    written == value
        || crate::time::parse_rfc3339(written)
            .zip(crate::time::parse_rfc3339(value))
            .is_some_and(|(a, b)| a == b)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn schema() -> Value {
        json!({"type": "object", "properties": {
            "name": {"type": "string"},
            "age": {"type": "integer"},
            "born": {"type": "string", "format": "date"},
            "status": {"type": "string", "enum": ["success", "failure"]},
            "summary": {"type": "string", "x-structure-derived": true},
            "tags": {"type": "array", "items": {"type": "string"}},
            "vip": {"type": "boolean"},
        }})
    }

    #[test]
    fn every_date_field_finds_its_own_date_read_once_beside_dates_without_a_time() {
        let schema = json!({"type": "object", "properties": {
            "opened": {"type": "string", "format": "date-time"},
            "closed": {"type": "string", "format": "date-time"},
            "day": {"type": "string", "format": "date"},
            "last": {"type": "string", "format": "date"},
            "filed": {"type": "string", "format": "date"},
        }});
        // An instant is found beside a date the text gives without a time.
        let text =
            "Opened on 14 April 2025 at 08:00 UTC, closed 2025-04-20T17:30:00Z, filed 2025-04-21.";
        let data = json!({
            "opened": "2025-04-14T08:00:00Z", "closed": "2025-04-20T17:30:00Z",
            "day": "2025-04-14", "last": "2025-04-20", "filed": "2025-04-21",
        });
        let spans: Vec<Option<String>> = sources(&data, &schema, text)
            .into_iter()
            .map(|source| source.span.map(|span| span.text))
            .collect();
        assert_eq!(
            spans,
            [
                Some("14 April 2025 at 08:00 UTC"),
                Some("2025-04-20T17:30:00Z"),
                Some("14 April 2025 at 08:00 UTC"),
                Some("2025-04-20T17:30:00Z"),
                Some("2025-04-21"),
            ]
            .map(|span| span.map(str::to_owned))
        );
    }

    #[test]
    fn each_leaf_gets_its_span_or_is_derived() {
        let text = "Harriet   OKAFOR (34), born 14 April 1990; the deploy failed. #ops";
        let data = json!({
            "name": "Harriet Okafor", "age": 34, "born": "1990-04-14", "status": "failure",
            "summary": "a failed deploy", "tags": ["ops", "prod"], "vip": false,
        });
        let found = sources(&data, &schema(), text);
        let shown: Vec<(&str, Option<&str>, Match)> = found
            .iter()
            .map(|source| {
                let text = source.span.as_ref().map(|span| span.text.as_str());
                (source.pointer.as_str(), text, source.matched)
            })
            .collect();
        assert_eq!(
            shown,
            vec![
                ("/name", Some("Harriet   OKAFOR"), Match::Normalized),
                ("/age", Some("34"), Match::Exact),
                ("/born", Some("14 April 1990"), Match::Normalized),
                ("/status", Some("failed"), Match::Normalized),
                ("/summary", None, Match::Derived),
                ("/tags/0", Some("ops"), Match::Exact),
                ("/tags/1", None, Match::Derived),
            ]
        );
        for source in &found {
            if let Some(span) = &source.span {
                let slice: String = text
                    .chars()
                    .skip(span.start)
                    .take(span.end - span.start)
                    .collect();
                assert_eq!(slice, span.text);
            }
        }
        let missing = ungrounded(&data, &schema(), text);
        assert_eq!(
            missing,
            vec![("/tags/1".to_owned(), &json!("prod"))],
            "enums and derived fields are exempt"
        );
    }

    #[test]
    fn offsets_count_code_points_and_utf16_units() {
        let text = "🎉 Zoë 北京市 1,200";
        let data = json!({"name": "北京市", "age": 1200});
        let found = sources(&data, &schema(), text);
        let city = found[0].span.as_ref().unwrap();
        assert_eq!((city.start, city.end), (6, 9));
        assert_eq!(
            (city.utf16_start, city.utf16_end),
            (7, 10),
            "the emoji is two UTF-16 units"
        );
        let number = found[1].span.as_ref().unwrap();
        assert_eq!(
            (number.text.as_str(), found[1].matched),
            ("1,200", Match::Normalized)
        );
        assert_eq!((number.start, number.end), (10, 15));
    }

    #[test]
    fn lowering_that_changes_lengths_keeps_offsets_right() {
        let text = "İstanbul ŞEHRİ, Straße";
        let data = json!({"name": "strasse", "tags": ["i̇stanbul şehri̇"]});
        let found = sources(&data, &schema(), text);
        assert_eq!(found[0].matched, Match::Derived, "ß is not folded to ss");
        let span = found[1].span.as_ref().unwrap();
        assert_eq!(span.text, "İstanbul ŞEHRİ");
        assert_eq!((span.start, span.end), (0, 14));
    }

    #[test]
    fn a_value_inside_a_longer_word_is_not_its_source() {
        let text = "Annual report 1975 by Ann, İstanbul office; 東京都.";
        let data = json!({"name": "Ann", "age": 7, "tags": ["stanbul", "東京", "annual", "nual"]});
        let found = sources(&data, &schema(), text);
        let shown: Vec<(Option<&str>, Match)> = found
            .iter()
            .map(|source| {
                (
                    source.span.as_ref().map(|span| span.text.as_str()),
                    source.matched,
                )
            })
            .collect();
        assert_eq!(
            shown,
            vec![
                (Some("Ann"), Match::Exact),
                (None, Match::Derived),
                (None, Match::Derived),
                (Some("東京"), Match::Exact),
                (Some("Annual"), Match::Normalized),
                (None, Match::Derived),
            ]
        );
        assert_eq!(
            found[0].span.as_ref().unwrap().start,
            22,
            "the word, not the start of Annual"
        );
    }
}
