//! How a schema node travels through a subset that must close every object: as itself, as a
//! JSON-encoded string, or a map as key/value pairs; and the names an object requires.

use serde_json::{Map, Value};

/// How a schema node is carried through a subset that encodes free-form values.
pub(crate) enum Shape<'a> {
    /// Any value: sent as a JSON-encoded string.
    Opaque,
    /// An object whose keys are data (`additionalProperties: <schema>`, no `properties`): sent
    /// as an array of `{key, value}` pairs.
    Map(&'a Value),
    /// Everything else: sent as itself, rewritten keyword by keyword.
    Plain,
}

pub(crate) fn shape(node: &Value) -> Shape<'_> {
    let Value::Object(map) = node else {
        return if node == &Value::Bool(true) {
            Shape::Opaque
        } else {
            Shape::Plain
        };
    };
    let constrains = [
        "type",
        "$ref",
        "anyOf",
        "oneOf",
        "allOf",
        "enum",
        "const",
        "properties",
        "items",
    ]
    .iter()
    .any(|keyword| map.contains_key(*keyword));
    if !constrains {
        return Shape::Opaque;
    }
    let is_object_type = map.get("type").and_then(Value::as_str) == Some("object");
    let composed = ["allOf", "anyOf", "oneOf", "$ref"]
        .iter()
        .any(|keyword| map.contains_key(*keyword));
    if is_object_type && !map.contains_key("properties") && !composed {
        return match map.get("additionalProperties") {
            Some(Value::Bool(false)) => Shape::Plain,
            Some(values @ Value::Object(_)) => Shape::Map(values),
            _ => Shape::Opaque,
        };
    }
    Shape::Plain
}

/// The names an object schema lists under `required`.
pub(crate) fn required_names(schema: &Map<String, Value>) -> Vec<&str> {
    schema
        .get("required")
        .and_then(Value::as_array)
        .map(|names| names.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default()
}
