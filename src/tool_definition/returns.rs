//! The JSON Schema of the tool's result, generated from the types that serialise it: an outcome
//! ([`crate::outcome::Outcome`], written by `outcome::Written`) or an error
//! (`{"error": ...}`, [`crate::StructureError`]). `returns.json` beside this file is its output,
//! which the component carries; `tests/core_returns.rs` holds the file to this generator (and
//! writes it again with `STRUCTURE_BLESS=1`), so a field added to a type without the schema
//! fails the tests.

use schemars::JsonSchema;
use schemars::generate::SchemaSettings;
use serde_json::{Map, Value};

use crate::error::StructureError;
use crate::outcome::Written;

/// The result of a structure call: an outcome (status ok, need-more-input or stale), or an
/// error that says why there is none.
#[derive(JsonSchema)]
#[schemars(untagged)]
#[expect(dead_code, reason = "a shape to describe, never built")]
enum ToolResult<'a> {
    Outcome(Written<'a>),
    Error(ErrorResult),
}

/// A typed error: its kind and the details of that kind, a message, and the tokens spent.
#[derive(JsonSchema)]
#[schemars(deny_unknown_fields)]
#[expect(dead_code, reason = "a shape to describe, never built")]
struct ErrorResult {
    error: StructureError,
}

/// The tool definition's `returns`: every subschema written out in place (no `$ref`, which
/// some clients that register a tool verbatim do not follow), numbers without the Rust widths
/// schemars names as formats, and a field the types leave out when empty never `null`.
pub fn generate() -> Value {
    let mut settings = SchemaSettings::draft2020_12().for_serialize();
    settings.inline_subschemas = true;
    let schema = settings
        .into_generator()
        .into_root_schema_for::<ToolResult>();
    let mut returns = schema.to_value();
    if let Value::Object(root) = &mut returns {
        root.remove("$schema");
        root.remove("title");
        root.insert("type".into(), Value::from("object"));
    }
    tidy(&mut returns);
    returns
}

/// The widths schemars writes as `format` (`uint32`, `double`): no validator knows them.
const NUMBER_FORMATS: [&str; 12] = [
    "int", "int8", "int16", "int32", "int64", "uint", "uint8", "uint16", "uint32", "uint64",
    "float", "double",
];

fn tidy(schema: &mut Value) {
    match schema {
        Value::Object(node) => {
            if let Some(Value::String(description)) = node.get_mut("description") {
                *description = unwrapped(description);
            }
            if node
                .get("format")
                .and_then(Value::as_str)
                .is_some_and(|format| NUMBER_FORMATS.contains(&format))
            {
                node.remove("format");
            }
            never_null_when_optional(node);
            node.values_mut().for_each(tidy);
        }
        Value::Array(items) => items.iter_mut().for_each(tidy),
        _ => {}
    }
}

/// A doc comment's text as one line a paragraph: the line breaks of the source are not the
/// description's.
fn unwrapped(text: &str) -> String {
    let paragraphs: Vec<String> = text
        .split("\n\n")
        .map(|paragraph| {
            paragraph
                .split('\n')
                .map(str::trim)
                .collect::<Vec<_>>()
                .join(" ")
        })
        .collect();
    paragraphs.join("\n\n")
}

/// A property the serialiser leaves out when it has no value (`skip_serializing_if`) is not
/// required, and is never written as `null`: its type loses `null`.
fn never_null_when_optional(node: &mut Map<String, Value>) {
    let required: Vec<String> = node
        .get("required")
        .and_then(Value::as_array)
        .map(|names| {
            names
                .iter()
                .filter_map(|name| name.as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default();
    let Some(Value::Object(properties)) = node.get_mut("properties") else {
        return;
    };
    for (name, property) in properties.iter_mut() {
        if required.contains(name) {
            continue;
        }
        let Some(Value::Array(types)) = property.get_mut("type") else {
            continue;
        };
        types.retain(|kind| kind != "null");
        if let [single] = types.as_slice() {
            let single = single.clone();
            property["type"] = single;
        }
    }
}
