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
//! local models) also:
//! - plain strings, as word spans of the text, and integers and numbers, as the numbers it
//!   writes — the items of an array of them too;
//! - `date` and `date-time` fields, as the dates the text writes out in full
//!   (`dates::written_dates`), unless it also points at a day only a reader can resolve
//!   ("next Friday"): then the model works the date out, provided the text mentions one at
//!   all ([`mentions_a_date`]);
//! - a string `enum`, narrowed to the values the text names when it names some.
//!
//! A candidate is offered only when the field's own schema accepts it (pattern, lengths,
//! bounds); a required field without any candidate means the text lacks its value, an
//! optional one is left out. Fields under `$ref` or combinators are left alone, and so is a
//! field with more than [`MAX_CANDIDATES`] candidates. The narrowed schema only ever accepts
//! less than the target, and local validation still uses the target.

use std::borrow::Cow;

use serde_json::{Map, Value, json};

use crate::schema::validator::CompiledSchema;
use crate::schema::walk::{self, Next, escape, too_deep};

mod computed;
mod dates;
mod pattern;
pub mod provenance;
mod words;

use computed::is_computed;
pub use dates::{mentions_a_date, needs_the_current_date};
pub use words::MAX_SPAN_WORDS;
use words::{copied_tokens, numbers, spans};

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

/// What grounding made of a target schema for one text.
#[derive(Debug, Clone, PartialEq)]
pub enum Grounded<'s> {
    /// The schema to send (the target itself when nothing in it is grounded), and a note per
    /// narrowed or dropped field (for the trace).
    Narrowed {
        schema: Cow<'s, Value>,
        notes: Vec<String>,
    },
    /// Required fields (pointer, description) that nothing in the text can fill.
    Missing(Vec<(String, Option<String>)>),
}

impl Grounded<'_> {
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

/// Builds what grounding needs before the first call (see `crate::prepare`).
pub fn prepare() {
    dates::prepare();
}

/// Grounds `target` (an object schema) in `text`.
pub fn ground<'s>(target: &'s Value, text: &str, extractive: bool) -> Grounded<'s> {
    if !extractive && !holds_copied_format(target) {
        // The common case: nothing to ground, nothing to copy.
        return Grounded::Narrowed {
            schema: Cow::Borrowed(target),
            notes: Vec::new(),
        };
    }
    let mut walk = Walk {
        text,
        extractive,
        notes: Vec::new(),
        missing: Vec::new(),
    };
    let schema = walk.object(target, "", true, 0);
    if walk.missing.is_empty() {
        Grounded::Narrowed {
            schema: Cow::Owned(schema),
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
    /// `date` (or `date-time`, `with_time`).
    Date {
        with_time: bool,
    },
}

impl Walk<'_> {
    /// `node` with its properties grounded; `required_path` when every step to it is required
    /// (only then does a field without candidates make the whole answer impossible).
    fn object(&mut self, node: &Value, pointer: &str, required_path: bool, depth: usize) -> Value {
        let Some(properties) = node
            .get("properties")
            .and_then(Value::as_object)
            .filter(|_| !too_deep(depth))
        else {
            return node.clone();
        };
        let required: Vec<&str> = node
            .get("required")
            .and_then(Value::as_array)
            .map(|names| names.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        let mut grounded = Map::new();
        for (name, field) in properties {
            let at = format!("{pointer}/{}", escape(name));
            let is_required = required.contains(&name.as_str());
            if field.get("type").and_then(Value::as_str) == Some("object") && !is_combined(field) {
                grounded.insert(
                    name.clone(),
                    self.object(field, &at, required_path && is_required, depth + 1),
                );
                continue;
            }
            if let Some(field) = self.field(field, &at, is_required, required_path) {
                grounded.insert(name.clone(), field);
            }
        }
        let mut node = node.clone();
        node["properties"] = Value::Object(grounded);
        node
    }

    /// `field` grounded, or `None` when the sent schema leaves it out.
    fn field(
        &mut self,
        field: &Value,
        at: &str,
        is_required: bool,
        required_path: bool,
    ) -> Option<Value> {
        if is_computed(field, at) {
            // A count, a total, a sum: worked out from the text, never copied from it, so never
            // narrowed to the numbers it writes nor missing for want of one.
            return Some(field.clone());
        }
        if self.extractive
            && let Some(named) = named_values(field, self.text)
        {
            self.notes.push(format!(
                "{at}: narrowed to the {} of its values the text names",
                named.len()
            ));
            let mut narrowed = field.clone();
            narrowed["enum"] = Value::Array(named);
            return Some(narrowed);
        }
        if field.get("type").and_then(Value::as_str) == Some("array") && !is_combined(field) {
            let items = field.get("items")?;
            let Some(kind) = self.kind(items) else {
                return Some(field.clone());
            };
            return match self.narrow(kind, items, at) {
                Narrowed::Unchanged => Some(field.clone()),
                // An array may be empty: a required one is never missing.
                Narrowed::Nothing if is_required => Some(field.clone()),
                Narrowed::Nothing => {
                    self.notes
                        .push(format!("{at}: left out, the text holds no value for it"));
                    None
                }
                Narrowed::To(items) => {
                    let mut narrowed = field.clone();
                    narrowed["items"] = items;
                    Some(narrowed)
                }
            };
        }
        let Some(kind) = self.kind(field) else {
            return Some(field.clone());
        };
        match self.narrow(kind, field, at) {
            Narrowed::Unchanged => Some(field.clone()),
            Narrowed::Nothing if !is_required => {
                self.notes
                    .push(format!("{at}: left out, the text holds no value for it"));
                None
            }
            Narrowed::Nothing if required_path => {
                let description = field.get("description").and_then(Value::as_str);
                self.missing
                    .push((at.to_owned(), description.map(str::to_owned)));
                Some(field.clone())
            }
            Narrowed::Nothing => Some(field.clone()),
            Narrowed::To(narrowed) => Some(narrowed),
        }
    }

    /// `field` (of `kind`) as the values the text holds.
    fn narrow(&mut self, kind: Kind, field: &Value, at: &str) -> Narrowed {
        let candidates = candidates(kind, self.text, field);
        if candidates.is_empty() && !certainly_absent(kind, self.text) {
            // The text may give it in a form only a reader turns into the value (a date that
            // is relative or partial, a count in words, a span the field's pattern wants
            // written another way): the model works it out, and validation checks it.
            return Narrowed::Unchanged;
        }
        if candidates.len() > MAX_CANDIDATES {
            return Narrowed::Unchanged;
        }
        if candidates.is_empty() {
            return Narrowed::Nothing;
        }
        self.notes.push(format!(
            "{at}: narrowed to the {} value(s) the text holds",
            candidates.len()
        ));
        let mut narrowed = json!({ "type": field["type"], "enum": candidates });
        if let Some(description) = field.get("description") {
            narrowed["description"] = description.clone();
        }
        Narrowed::To(narrowed)
    }

    fn kind(&self, field: &Value) -> Option<Kind> {
        if is_combined(field)
            || field.get("enum").is_some()
            || field.get("const").is_some()
            || is_derived(field)
        {
            return None;
        }
        let format = field.get("format").and_then(Value::as_str);
        match field.get("type").and_then(Value::as_str)? {
            "string" if format.is_some_and(|format| COPIED_FORMATS.contains(&format)) => {
                Some(Kind::Copied)
            }
            "string" if self.extractive && format.is_none() => Some(Kind::Span),
            "string" if self.extractive && matches!(format, Some("date" | "date-time")) => {
                Some(Kind::Date {
                    with_time: format == Some("date-time"),
                })
            }
            "integer" if self.extractive => Some(Kind::Number { integer: true }),
            "number" if self.extractive => Some(Kind::Number { integer: false }),
            _ => None,
        }
    }
}

/// Whether a field that grounding would narrow without extractive mode is anywhere in
/// `node`.
fn holds_copied_format(node: &Value) -> bool {
    let finished = walk::schemas(node, &mut |schema, _| {
        let format = schema.get("format").and_then(Value::as_str);
        if format.is_some_and(|format| COPIED_FORMATS.contains(&format)) {
            Next::Stop
        } else {
            Next::Descend
        }
    });
    !finished
}

/// Whether `text` certainly holds no value of `kind`, so that a required field of it can be
/// asked for without a call: no such token at all (copied formats), no word at all (spans), no
/// digit and no number word (numbers), no mention of a date (dates).
fn certainly_absent(kind: Kind, text: &str) -> bool {
    match kind {
        Kind::Copied => true,
        Kind::Span => spans(text).is_empty(),
        Kind::Number { .. } => !words::mentions_a_number(text),
        Kind::Date { .. } => !mentions_a_date(text),
    }
}

/// What the text makes of one field.
enum Narrowed {
    /// Sent as it is (not groundable here, or too many candidates).
    Unchanged,
    /// The text holds no value for it.
    Nothing,
    /// The values the text holds.
    To(Value),
}

/// The values of a string `enum` the text names (`priority high`, `FAILURE`, `it failed` for
/// `failure`), when it names some but not all; `None` otherwise (the choice is then the
/// model's judgement).
fn named_values(field: &Value, text: &str) -> Option<Vec<Value>> {
    if is_combined(field) || is_derived(field) {
        return None;
    }
    let values = field.get("enum")?.as_array()?;
    let text_words: Vec<_> = words::lowercase_words(text, &[]).collect();
    let named: Vec<Value> = values
        .iter()
        .filter(|value| {
            value
                .as_str()
                .is_some_and(|value| words::names(&text_words, value))
        })
        .cloned()
        .collect();
    (!named.is_empty() && named.len() < values.len()).then_some(named)
}

/// A field marked [`provenance::DERIVED_ANNOTATION`]: its value is worked out, not copied.
fn is_derived(field: &Value) -> bool {
    field
        .get(provenance::DERIVED_ANNOTATION)
        .and_then(Value::as_bool)
        == Some(true)
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
        Kind::Date { with_time } => dates::written_dates(text, with_time)
            .unwrap_or_default()
            .into_iter()
            .map(Value::from)
            .collect(),
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

#[cfg(test)]
mod tests {
    use super::*;

    fn narrowed(schema: &Value, text: &str, extractive: bool) -> Value {
        match ground(schema, text, extractive) {
            Grounded::Narrowed { schema, .. } => schema.into_owned(),
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
    fn a_value_worked_out_from_the_text_is_neither_narrowed_nor_missing() {
        let schema = json!({"type": "object", "properties": {
            "attendeeCount": {"type": "integer"},
            "facts": {"type": "integer", "description": "The number of facts the text states"},
            "total_due": {"type": "number"},
            "year": {"type": "integer"},
            "count": {"type": "integer"},
        }, "required": ["attendeeCount", "facts", "total_due", "year"]});
        let text = "Ada, Bob and Carol came; tea was 4 and cake 6.";
        let sent = narrowed(&schema, text, true);
        for computed in ["attendeeCount", "facts", "total_due"] {
            assert_eq!(
                sent["properties"][computed], schema["properties"][computed],
                "{computed}"
            );
        }
        assert_eq!(
            sent["properties"]["year"]["enum"],
            json!([4, 6]),
            "a year is copied"
        );
        // A `count` beside a unit is as often copied: only a description says it is counted.
        assert_eq!(sent["properties"]["count"]["enum"], json!([4, 6]));
        // No number in the text: a count is still the model's to work out, a year is missing.
        assert_eq!(
            ground(&schema, "Ada and Bob came for tea.", true),
            Grounded::Missing(vec![("/year".to_owned(), None)])
        );
    }

    #[test]
    fn absence_is_decided_without_the_model_only_where_it_is_certain() {
        let schema = json!({"type": "object", "properties": {
            "units": {"type": "integer", "minimum": 1},
            "price": {"type": "string", "pattern": "^[$][0-9]+[.][0-9]{2}$"},
        }, "required": ["units", "price"]});
        // A count in words and a price the pattern wants written with its sign: the model's
        // to give, not missing.
        let sent = narrowed(
            &schema,
            "Ada sold it twice, at 5 dollars and 10 cents.",
            true,
        );
        assert_eq!(sent["properties"]["units"]["enum"], json!([5, 10]));
        assert_eq!(sent["properties"]["price"], schema["properties"]["price"]);
        let sent = narrowed(&schema, "Ada sold it twice for ten dollars.", true);
        assert_eq!(sent["properties"]["units"], schema["properties"]["units"]);
        // Numbers in words the model reads: a teen, an ordinal, a compound.
        for text in [
            "The new barista is only nineteen.",
            "He celebrated his ninety-second birthday.",
            "It was their seventieth sale and the sixth at that price.",
        ] {
            assert!(
                matches!(ground(&schema, text, true), Grounded::Narrowed { .. }),
                "{text}"
            );
        }
        // No digit and no number word: the number is certainly not there.
        assert_eq!(
            ground(&schema, "Ada sold it for money.", true),
            Grounded::Missing(vec![("/units".to_owned(), None)])
        );
    }

    #[test]
    fn extractive_mode_grounds_array_items_and_the_enum_values_a_text_names() {
        let schema = json!({"type": "object", "properties": {
            "status": {"type": "string", "enum": ["success", "failure"], "description": "Outcome"},
            "priority": {"type": "string", "enum": ["low", "high"]},
            "tags": {"type": "array", "items": {"type": "string"}, "uniqueItems": true},
            "scores": {"type": "array", "items": {"type": "integer"}},
        }, "required": ["status"]});
        let text = "Deploy FAILED, tags prod and hotfix";
        let sent = narrowed(&schema, text, true);
        assert_eq!(
            sent["properties"]["status"],
            json!({"type": "string", "enum": ["failure"], "description": "Outcome"})
        );
        assert_eq!(
            sent["properties"]["priority"], schema["properties"]["priority"],
            "named by none: the model's judgement"
        );
        let tags = &sent["properties"]["tags"];
        assert_eq!(tags["uniqueItems"], true);
        assert!(
            tags["items"]["enum"]
                .as_array()
                .unwrap()
                .contains(&json!("hotfix")),
            "{tags}"
        );
        assert!(
            sent["properties"].get("scores").is_none(),
            "an optional array of numbers the text lacks is left out"
        );
        assert_eq!(narrowed(&schema, text, false), schema);
        let both = narrowed(&schema, "success or failure?", true);
        assert_eq!(both["properties"]["status"], schema["properties"]["status"]);
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
        let long_text: String = (0..200).map(|i| format!("w{i} tomorrow ")).collect();
        let sent = narrowed(&schema, &long_text, true);
        assert_eq!(sent, schema, "{} spans are too many", 200 * MAX_SPAN_WORDS);
    }

    #[test]
    fn dates_are_offered_as_written_or_left_to_the_model_in_extractive_mode() {
        let schema = json!({"type": "object", "properties": {
            "name": {"type": "string"},
            "date": {"type": "string", "format": "date"},
        }, "required": ["name", "date"]});
        for (text, offered) in [
            ("Fair on 14 April 2025", json!(["2025-04-14"])),
            (
                "Fair, 2025-06-03 or June 4, 2025",
                json!(["2025-06-03", "2025-06-04"]),
            ),
        ] {
            let sent = narrowed(&schema, text, true);
            assert_eq!(sent["properties"]["date"]["enum"], offered, "{text}");
        }
        for relative in dates::DATES_TO_WORK_OUT {
            let sent = narrowed(&schema, relative, true);
            assert_eq!(
                sent["properties"]["date"], schema["properties"]["date"],
                "{relative}"
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
}
