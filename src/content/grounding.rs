//! Grounding: values that can only be copied from the text are offered to the model as the
//! copies the text holds, so a model that decodes under the schema cannot invent them.
//!
//! ```
//! use serde_json::json;
//! use structure::content::grounding::{Grounded, ground};
//!
//! let schema = json!({
//!     "type": "object",
//!     "properties": {"email": {"type": "string", "format": "email"}},
//!     "required": ["email"],
//! });
//! let Grounded::Narrowed { schema: sent, .. } = ground(&schema, "Mail ada@example.com.", false) else {
//!     unreachable!()
//! };
//! assert_eq!(sent["properties"]["email"]["enum"], json!(["ada@example.com"]));
//! // No address in the text: the answer would have to invent one, so the text lacks it.
//! assert!(matches!(ground(&schema, "Call Ada.", false), Grounded::Missing(_)));
//! ```
//!
//! Always grounded: strings of a format whose values are copied, never derived (email, URI,
//! hostname, IP address, UUID). With `extractive` (setting `structure_extractive`, for small
//! local models): also plain strings, as word spans of the text, and integers, as the numbers
//! it writes; and a `date` or `date-time` field needs the text to mention a date at all (see
//! [`mentions_a_date`]), though its value is left to the model (it may be relative). A candidate is offered only when the field's own schema accepts it (pattern,
//! lengths, bounds); a required field without any candidate means the text lacks its value.
//! Fields under `$ref`, combinators or `enum` are left alone, and so is a field with more than
//! [`MAX_CANDIDATES`] candidates. The narrowed schema only ever accepts less than the target,
//! and local validation still uses the target.

use serde_json::{Map, Value, json};

use crate::schema::validator::CompiledSchema;

/// Formats whose values are written out, never worked out: a value not in the text is made up.
pub const COPIED_FORMATS: &[&str] = &[
    "email",
    "idn-email",
    "uri",
    "iri",
    "hostname",
    "idn-hostname",
    "ipv4",
    "ipv6",
    "uuid",
];

/// A field with more candidates is sent unnarrowed (long texts; the schema stays small).
pub const MAX_CANDIDATES: usize = 512;

/// The longest word span offered for a plain string in extractive mode.
pub const MAX_SPAN_WORDS: usize = 8;

/// Characters that end a span: markup, key-value syntax and clause punctuation.
const SPAN_BREAKS: &[char] = &[
    '"', '=', ';', ':', '(', ')', '[', ']', '{', '}', '<', '>', '|', '!', '?', ',', '\\', '\n',
    '\r', '\t',
];

/// What grounding made of a target schema for one text.
#[derive(Debug, Clone, PartialEq)]
pub enum Grounded {
    /// The schema to send, and a note per narrowed or dropped field (for the trace).
    Narrowed { schema: Value, notes: Vec<String> },
    /// Required fields (pointer, description) that nothing in the text can fill.
    Missing(Vec<(String, Option<String>)>),
}

impl Grounded {
    /// The need message for [`Grounded::Missing`].
    pub fn need(missing: &[(String, Option<String>)]) -> String {
        let fields: Vec<String> = missing
            .iter()
            .map(|(pointer, description)| match description {
                Some(description) => format!("{pointer} ({description})"),
                None => pointer.clone(),
            })
            .collect();
        format!("the text gives no value for {}", fields.join(", "))
    }
}

/// Grounds `target` (an object schema) in `text`.
pub fn ground(target: &Value, text: &str, extractive: bool) -> Grounded {
    let mut walk = Walk {
        text,
        extractive,
        notes: Vec::new(),
        missing: Vec::new(),
    };
    let schema = walk.object(target, "", true);
    if walk.missing.is_empty() {
        Grounded::Narrowed {
            schema,
            notes: walk.notes,
        }
    } else {
        Grounded::Missing(walk.missing)
    }
}

struct Walk<'t> {
    text: &'t str,
    extractive: bool,
    notes: Vec<String>,
    missing: Vec<(String, Option<String>)>,
}

#[derive(Clone, Copy)]
enum Kind {
    Copied,
    Span,
    Number {
        integer: bool,
    },
    /// Not narrowed: only whether the text mentions a date.
    Date,
}

impl Walk<'_> {
    /// `node` with its properties grounded; `required_path` when every step to it is required
    /// (only then does a field without candidates make the whole answer impossible).
    fn object(&mut self, node: &Value, pointer: &str, required_path: bool) -> Value {
        let Some(properties) = node.get("properties").and_then(Value::as_object) else {
            return node.clone();
        };
        let required: Vec<&str> = node
            .get("required")
            .and_then(Value::as_array)
            .map(|names| names.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        let mut grounded = Map::new();
        for (name, field) in properties {
            let at = format!("{pointer}/{}", name.replace('~', "~0").replace('/', "~1"));
            let is_required = required.contains(&name.as_str());
            if field.get("type").and_then(Value::as_str) == Some("object") && !is_combined(field) {
                grounded.insert(
                    name.clone(),
                    self.object(field, &at, required_path && is_required),
                );
                continue;
            }
            let Some(kind) = self.kind(field) else {
                grounded.insert(name.clone(), field.clone());
                continue;
            };
            let candidates = match kind {
                Kind::Date if mentions_a_date(self.text) => {
                    grounded.insert(name.clone(), field.clone());
                    continue;
                }
                Kind::Date => Vec::new(),
                _ => candidates(kind, self.text, field),
            };
            if candidates.len() > MAX_CANDIDATES {
                grounded.insert(name.clone(), field.clone());
            } else if candidates.is_empty() {
                if !is_required {
                    self.notes
                        .push(format!("{at}: left out, the text holds no value for it"));
                } else if required_path {
                    let description = field.get("description").and_then(Value::as_str);
                    self.missing.push((at, description.map(str::to_owned)));
                } else {
                    grounded.insert(name.clone(), field.clone());
                }
            } else {
                self.notes.push(format!(
                    "{at}: narrowed to the {} value(s) the text holds",
                    candidates.len()
                ));
                let mut narrowed = json!({ "type": field["type"], "enum": candidates });
                if let Some(description) = field.get("description") {
                    narrowed["description"] = description.clone();
                }
                grounded.insert(name.clone(), narrowed);
            }
        }
        let mut node = node.clone();
        node["properties"] = Value::Object(grounded);
        node
    }

    fn kind(&self, field: &Value) -> Option<Kind> {
        if is_combined(field) || field.get("enum").is_some() || field.get("const").is_some() {
            return None;
        }
        let format = field.get("format").and_then(Value::as_str);
        match field.get("type").and_then(Value::as_str)? {
            "string" if format.is_some_and(|format| COPIED_FORMATS.contains(&format)) => {
                Some(Kind::Copied)
            }
            "string" if self.extractive && format.is_none() => Some(Kind::Span),
            "string" if self.extractive && matches!(format, Some("date" | "date-time")) => {
                Some(Kind::Date)
            }
            "integer" if self.extractive => Some(Kind::Number { integer: true }),
            "number" if self.extractive => Some(Kind::Number { integer: false }),
            _ => None,
        }
    }
}

fn is_combined(field: &Value) -> bool {
    ["$ref", "anyOf", "oneOf", "allOf", "not", "if"]
        .iter()
        .any(|keyword| field.get(keyword).is_some())
}

/// The values of `kind` written in `text` that `field` accepts, in order of first appearance.
fn candidates(kind: Kind, text: &str, field: &Value) -> Vec<Value> {
    let found: Vec<Value> = match kind {
        Kind::Copied => copied_tokens(text).into_iter().map(Value::from).collect(),
        Kind::Span => spans(text).into_iter().map(Value::from).collect(),
        Kind::Number { integer } => numbers(text, integer),
        Kind::Date => Vec::new(),
    };
    let mut unique: Vec<Value> = Vec::new();
    for value in found {
        if !unique.contains(&value) {
            unique.push(value);
        }
        if unique.len() > MAX_CANDIDATES {
            return unique;
        }
    }
    let Ok(check) = CompiledSchema::compile_checked(field) else {
        return Vec::new();
    };
    unique.retain(|value| check.is_valid(value));
    unique
}

const TRIM: &[char] = &[
    '.', ',', ';', ':', '!', '?', '"', '\'', '(', ')', '[', ']', '{', '}', '<', '>', '`',
];

/// Whitespace-separated words, and their parts between key-value or markup characters, with
/// surrounding punctuation trimmed (`email=ada@x.org,` → `email=ada@x.org`, `ada@x.org`).
fn copied_tokens(text: &str) -> Vec<&str> {
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
fn spans(text: &str) -> Vec<&str> {
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

/// Words that name or point to a day, in English, German, French, Spanish, Italian,
/// Portuguese and Dutch (month and weekday names by their common stems, relative days).
const DATE_WORDS: &[&str] = &[
    // Months (stems shared across the languages where they can be).
    "jan",
    "feb",
    "febr",
    "fév",
    "mär",
    "mar",
    "apr",
    "abr",
    "avr",
    "mai",
    "may",
    "mei",
    "mag",
    "jun",
    "juin",
    "giu",
    "jul",
    "juil",
    "lug",
    "aug",
    "ago",
    "aoû",
    "sep",
    "set",
    "okt",
    "oct",
    "ott",
    "out",
    "nov",
    "dec",
    "dez",
    "déc",
    "dic",
    "january",
    "february",
    "march",
    "april",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
    "januar",
    "februar",
    "märz",
    "juni",
    "juli",
    "oktober",
    "dezember",
    "janvier",
    "février",
    "mars",
    "avril",
    "juillet",
    "août",
    "septembre",
    "octobre",
    "novembre",
    "décembre",
    "enero",
    "febrero",
    "marzo",
    "abril",
    "mayo",
    "junio",
    "julio",
    "agosto",
    "septiembre",
    "octubre",
    "noviembre",
    "diciembre",
    "gennaio",
    "febbraio",
    "aprile",
    "maggio",
    "giugno",
    "luglio",
    "settembre",
    "ottobre",
    "dicembre",
    "janeiro",
    "fevereiro",
    "março",
    "maio",
    "junho",
    "julho",
    "setembro",
    "outubro",
    "novembro",
    "dezembro",
    "januari",
    "februari",
    "maart",
    "augustus",
    // Weekdays.
    "monday",
    "tuesday",
    "wednesday",
    "thursday",
    "friday",
    "saturday",
    "sunday",
    "mon",
    "tue",
    "tues",
    "wed",
    "thu",
    "thur",
    "thurs",
    "fri",
    "sat",
    "sun",
    "montag",
    "dienstag",
    "mittwoch",
    "donnerstag",
    "freitag",
    "samstag",
    "sonntag",
    "lundi",
    "mardi",
    "mercredi",
    "jeudi",
    "vendredi",
    "samedi",
    "dimanche",
    "lunes",
    "martes",
    "miércoles",
    "jueves",
    "viernes",
    "sábado",
    "domingo",
    "lunedì",
    "martedì",
    "mercoledì",
    "giovedì",
    "venerdì",
    "sabato",
    "segunda",
    "terça",
    "quarta",
    "quinta",
    "sexta",
    "maandag",
    "dinsdag",
    "woensdag",
    "donderdag",
    "vrijdag",
    "zaterdag",
    "zondag",
    // Relative days and times.
    "today",
    "tonight",
    "tomorrow",
    "yesterday",
    "now",
    "ago",
    "noon",
    "midnight",
    "heute",
    "morgen",
    "gestern",
    "übermorgen",
    "vorgestern",
    "jetzt",
    "aujourd'hui",
    "demain",
    "hier",
    "maintenant",
    "hoy",
    "mañana",
    "ayer",
    "ahora",
    "oggi",
    "domani",
    "ieri",
    "adesso",
    "hoje",
    "amanhã",
    "ontem",
    "agora",
    "vandaag",
    "gisteren",
    "nu",
];

/// Whether `text` mentions a date in any form a model could read one from: a year (`1999`),
/// numbers joined by date separators (`2025-06-03`, `3/4/25`, `3.4.`), a month or weekday
/// name, or a relative day ([`DATE_WORDS`]). A text with none of these cannot give a date.
pub fn mentions_a_date(text: &str) -> bool {
    let words = text
        .split(|c: char| !c.is_alphanumeric() && c != '\'')
        .filter(|word| !word.is_empty());
    for word in words {
        let lower = word.to_lowercase();
        if DATE_WORDS.contains(&lower.as_str()) {
            return true;
        }
        if word.len() == 4
            && word.bytes().all(|b| b.is_ascii_digit())
            && matches!(word.as_bytes()[0], b'1' | b'2')
        {
            return true;
        }
    }
    let bytes = text.as_bytes();
    bytes.windows(3).any(|window| {
        window[0].is_ascii_digit()
            && matches!(window[1], b'-' | b'/' | b'.')
            && window[2].is_ascii_digit()
    }) && !numbers_only_decimal(text)
}

/// Whether every digit-separator-digit run in `text` is a decimal number (`3.5 kg`), which
/// is no date.
fn numbers_only_decimal(text: &str) -> bool {
    text.split_whitespace().all(|word| {
        let word = word.trim_matches(TRIM);
        let separators = word
            .bytes()
            .filter(|b| matches!(b, b'-' | b'/' | b'.'))
            .count();
        let digits_and_separators = word
            .bytes()
            .all(|b| b.is_ascii_digit() || matches!(b, b'-' | b'/' | b'.' | b','));
        !(digits_and_separators && separators >= 1) || (separators == 1 && word.contains('.'))
    })
}

/// The numbers written in `text` with digits (`34-year-old` → 34, `1,200` → 1200, `-3.5`);
/// with `integer`, whole numbers only.
fn numbers(text: &str, integer: bool) -> Vec<Value> {
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
                .filter(|_| !integer)
                .and_then(|n| serde_json::Number::from_f64(n).map(Value::Number))
        } else {
            digits.parse::<i64>().ok().map(Value::from)
        };
        out.extend(value);
        index = end;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn narrowed(schema: &Value, text: &str, extractive: bool) -> Value {
        match ground(schema, text, extractive) {
            Grounded::Narrowed { schema, .. } => schema,
            Grounded::Missing(missing) => panic!("missing {missing:?}"),
        }
    }

    #[test]
    fn copied_formats_are_offered_as_the_text_writes_them() {
        let schema = json!({"type": "object", "properties": {
            "email": {"type": "string", "format": "email", "description": "Email"},
            "site": {"type": "string", "format": "uri"},
            "id": {"type": "string", "format": "uuid"},
        }, "required": ["email"]});
        let text =
            "ORDER customer=\"Li\" email=li.wei@example.com (see https://example.com/a?b=1).";
        let sent = narrowed(&schema, text, false);
        let emails = sent["properties"]["email"]["enum"].as_array().unwrap();
        assert!(emails.contains(&json!("li.wei@example.com")), "{emails:?}");
        assert_eq!(sent["properties"]["email"]["description"], "Email");
        let sites = sent["properties"]["site"]["enum"].as_array().unwrap();
        assert_eq!(
            sites[0], "https://example.com/a?b=1",
            "trailing ')' and '.' trimmed"
        );
        assert!(
            sent["properties"].get("id").is_none(),
            "an optional copied field the text lacks is left out"
        );
    }

    #[test]
    fn a_required_copied_field_the_text_lacks_is_missing_at_any_required_depth() {
        let schema = json!({"type": "object", "properties": {
            "customer": {"type": "object", "properties": {
                "email": {"type": "string", "format": "email", "description": "Customer's email"},
            }, "required": ["email"]},
        }, "required": ["customer"]});
        let Grounded::Missing(missing) = ground(&schema, "Li ordered a mug.", false) else {
            panic!("not missing")
        };
        assert_eq!(
            Grounded::need(&missing),
            "the text gives no value for /customer/email (Customer's email)"
        );
        // Under an optional object the answer can still leave the object out.
        let mut optional = schema.clone();
        optional["required"] = json!([]);
        assert!(matches!(
            ground(&optional, "Li ordered a mug.", false),
            Grounded::Narrowed { .. }
        ));
    }

    #[test]
    fn plain_strings_and_numbers_are_grounded_only_when_extractive() {
        let schema = json!({"type": "object", "properties": {
            "name": {"type": "string"},
            "age": {"type": "integer", "minimum": 0},
            "userId": {"type": "string", "pattern": "^[a-z_0-9]{3,16}$"},
        }, "required": ["name", "age"]});
        let text = "Name: Priya Nair. Age: 45, user=priya_n, -3 points, 1,200 followers.";
        assert_eq!(narrowed(&schema, text, false), schema);
        let sent = narrowed(&schema, text, true);
        let names = sent["properties"]["name"]["enum"].as_array().unwrap();
        assert!(names.contains(&json!("Priya Nair")), "{names:?}");
        assert!(!names.iter().any(|n| n.as_str().unwrap().contains(':')));
        assert_eq!(
            sent["properties"]["age"]["enum"],
            json!([45, 1200]),
            "minimum 0 drops -3"
        );
        assert_eq!(sent["properties"]["age"]["type"], "integer");
        let ids = sent["properties"]["userId"]["enum"].as_array().unwrap();
        assert!(
            ids.contains(&json!("priya_n"))
                && ids.iter().all(|id| {
                    let id = id.as_str().unwrap();
                    id.chars()
                        .all(|c| c.is_ascii_lowercase() || c == '_' || c.is_ascii_digit())
                }),
            "{ids:?}"
        );
        let Grounded::Missing(missing) = ground(&schema, "Priya Nair, nurse.", true) else {
            panic!("age has no candidate")
        };
        assert_eq!(missing, vec![("/age".to_owned(), None)]);
    }

    #[test]
    fn enums_references_formats_derived_and_crowded_fields_stay_as_they_are() {
        let schema = json!({"type": "object", "properties": {
            "status": {"type": "string", "enum": ["open", "closed"]},
            "when": {"type": "string", "format": "date"},
            "who": {"$ref": "#/$defs/name"},
            "either": {"anyOf": [{"type": "string"}, {"type": "integer"}]},
            "summary": {"type": "string"},
        }, "required": ["status", "when", "who", "either", "summary"],
           "$defs": {"name": {"type": "string"}}});
        let long_text: String = (0..200)
            .map(|i| format!("w{i} on 2025-06-0{} ", i % 9 + 1))
            .collect();
        let sent = narrowed(&schema, &long_text, true);
        assert_eq!(sent, schema, "{} spans are too many", 200 * MAX_SPAN_WORDS);
    }

    #[test]
    fn a_required_date_needs_a_text_that_mentions_one_in_extractive_mode() {
        let schema = json!({"type": "object", "properties": {
            "name": {"type": "string"},
            "date": {"type": "string", "format": "date"},
        }, "required": ["name", "date"]});
        for dated in [
            "Fair on 14 April 2025",
            "Fair, 2025-06-03",
            "Fair on 3/4/25",
            "Fair next Friday",
            "Fair tomorrow",
            "Messe am 3. März",
            "Fête demain",
            "Fair in 1999",
        ] {
            let sent = narrowed(&schema, dated, true);
            assert_eq!(
                sent["properties"]["date"], schema["properties"]["date"],
                "{dated}"
            );
        }
        for undated in [
            "The Science Fair, with 200 visitors; the date hasn't been decided.",
            "user=eve_12 status=success",
            "Fair: 3.5 stars",
        ] {
            assert_eq!(
                ground(&schema, undated, true),
                Grounded::Missing(vec![("/date".to_owned(), None)]),
                "{undated}"
            );
            assert!(matches!(
                ground(&schema, undated, false),
                Grounded::Narrowed { .. }
            ));
        }
    }

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
}
