//! OpenAI's strict structured-output subset, and the way back.
//!
//! Strict mode needs every object closed (`additionalProperties: false`) with every property
//! required, and accepts only some keywords. [`to_strict`] rewrites a schema node by node:
//! optional properties become nullable, `oneOf` becomes `anyOf`, `allOf` is merged, free-form
//! objects and untyped values travel as JSON-encoded strings, maps as arrays of key/value pairs,
//! and every keyword strict mode does not take moves into the description, so the model still
//! reads it. Each change is recorded. [`restore`] maps an answer back to the shape of the
//! original schema (drops the nulls the transform introduced, decodes the encodings), and local
//! validation then checks it against the original schema.

use serde_json::{Map, Value, json};

use crate::schema::checks::resolve_local;

/// Keywords strict mode accepts.
const SUPPORTED: &[&str] = &[
    "type",
    "properties",
    "required",
    "additionalProperties",
    "items",
    "enum",
    "const",
    "anyOf",
    "$ref",
    "description",
    "title",
    "pattern",
    "format",
    "multipleOf",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "minItems",
    "maxItems",
];

/// String formats strict mode accepts.
const SUPPORTED_FORMATS: &[&str] = &[
    "date-time",
    "time",
    "date",
    "duration",
    "email",
    "hostname",
    "ipv4",
    "ipv6",
    "uuid",
];

/// Annotations with no meaning for the model: dropped silently.
fn is_silent(keyword: &str) -> bool {
    matches!(
        keyword,
        "$schema" | "$id" | "$comment" | "$anchor" | "$dynamicAnchor" | "$defs" | "definitions"
    ) || keyword.starts_with("x-")
}

/// Nesting beyond this is not followed (a guard against reference cycles).
const MAX_DEPTH: usize = 128;

/// How a schema node is carried through strict mode.
enum Shape<'a> {
    /// Any value: sent as a JSON-encoded string.
    Opaque,
    /// An object whose keys are data (`additionalProperties: <schema>`, no `properties`): sent
    /// as an array of `{key, value}` pairs.
    Map(&'a Value),
    /// Everything else: sent as itself, rewritten keyword by keyword.
    Plain,
}

fn shape(node: &Value) -> Shape<'_> {
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

/// Rewrites one schema node (and everything under it) into strict mode's subset. `at` is the
/// node's location, used in the recorded transforms.
pub fn to_strict(node: &Value, at: &str, transforms: &mut Vec<String>) -> Value {
    strict_node(node, at, transforms, 0)
}

fn strict_node(node: &Value, at: &str, transforms: &mut Vec<String>, depth: usize) -> Value {
    if depth > MAX_DEPTH {
        return node.clone();
    }
    match shape(node) {
        Shape::Opaque => {
            transforms.push(format!(
                "{}: free-form value sent as a JSON-encoded string",
                show_at(at)
            ));
            let description = node.get("description").and_then(Value::as_str);
            return json!({
                "type": "string",
                "description": with_note(description, "Any JSON value, written as a JSON-encoded string."),
            });
        }
        Shape::Map(values) => {
            transforms.push(format!(
                "{}: map sent as an array of key/value pairs",
                show_at(at)
            ));
            let value = strict_node(
                values,
                &format!("{at}/additionalProperties"),
                transforms,
                depth + 1,
            );
            let description = node.get("description").and_then(Value::as_str);
            return json!({
                "type": "array",
                "description": with_note(description, "The object's entries, one {key, value} pair each."),
                "items": {
                    "type": "object",
                    "properties": { "key": { "type": "string" }, "value": value },
                    "required": ["key", "value"],
                    "additionalProperties": false,
                },
            });
        }
        Shape::Plain => {}
    }
    let Value::Object(source) = node else {
        return node.clone();
    };
    let source = merge_all_of(source, at, transforms);
    let mut out = Map::new();
    let mut moved = Vec::new();
    for (keyword, value) in &source {
        match keyword.as_str() {
            "properties" => {}
            "items" if value.is_object() || value.is_boolean() => {
                out.insert(
                    "items".into(),
                    strict_node(value, &format!("{at}/items"), transforms, depth + 1),
                );
            }
            "anyOf" | "oneOf" if value.is_array() => {
                if keyword == "oneOf" {
                    transforms.push(format!("{}: oneOf sent as anyOf", show_at(at)));
                }
                let branches =
                    value
                        .as_array()
                        .into_iter()
                        .flatten()
                        .enumerate()
                        .map(|(index, branch)| {
                            strict_node(
                                branch,
                                &format!("{at}/{keyword}/{index}"),
                                transforms,
                                depth + 1,
                            )
                        });
                out.insert("anyOf".into(), Value::Array(branches.collect()));
            }
            "format" => match value.as_str() {
                Some(format) if SUPPORTED_FORMATS.contains(&format) => {
                    out.insert(keyword.clone(), value.clone());
                }
                _ => moved.push((keyword.clone(), value.clone())),
            },
            "required" | "additionalProperties" => {}
            _ if SUPPORTED.contains(&keyword.as_str()) => {
                out.insert(keyword.clone(), value.clone());
            }
            _ if is_silent(keyword) => {}
            _ => moved.push((keyword.clone(), value.clone())),
        }
    }
    let is_object_type = source.get("type").and_then(Value::as_str) == Some("object");
    match source.get("properties") {
        Some(Value::Object(properties)) => {
            close_object(&source, properties, &mut out, at, transforms, depth)
        }
        _ if is_object_type => close_object(&source, &Map::new(), &mut out, at, transforms, depth),
        _ => {}
    }
    if out.contains_key("$ref") && out.len() > 1 {
        // A `$ref` with siblings is not accepted; the referenced schema carries the meaning.
        out.retain(|keyword, _| keyword == "$ref");
    }
    if !moved.is_empty() {
        let words: Vec<String> = moved
            .iter()
            .map(|(keyword, value)| format!("{keyword}: {value}"))
            .collect();
        transforms.push(format!(
            "{}: {} stated in the description, checked locally",
            show_at(at),
            words.join(", ")
        ));
        let description = out
            .get("description")
            .and_then(Value::as_str)
            .map(str::to_owned);
        let note = format!("Must also satisfy: {}.", words.join("; "));
        out.insert(
            "description".into(),
            Value::String(with_note(description.as_deref(), &note)),
        );
        if out.contains_key("$ref") {
            out.remove("description");
        }
    }
    Value::Object(out)
}

/// Every property listed and required; the ones the caller made optional become nullable.
fn close_object(
    source: &Map<String, Value>,
    properties: &Map<String, Value>,
    out: &mut Map<String, Value>,
    at: &str,
    transforms: &mut Vec<String>,
    depth: usize,
) {
    let required = required_names(source);
    let mut strict_properties = Map::new();
    for (name, schema) in properties {
        let location = format!("{at}/properties/{}", escape(name));
        let mut strict = strict_node(schema, &location, transforms, depth + 1);
        if !required.contains(&name.as_str()) && !permits_null_shallow(&strict) {
            transforms.push(format!(
                "{location}: optional, sent as nullable (null means absent)"
            ));
            strict = nullable(strict);
        }
        strict_properties.insert(name.clone(), strict);
    }
    if source.get("additionalProperties") != Some(&Value::Bool(false)) {
        transforms.push(format!(
            "{}: no additional properties (strict mode needs closed objects)",
            show_at(at)
        ));
    }
    out.entry("type").or_insert_with(|| json!("object"));
    out.insert(
        "required".into(),
        Value::Array(
            properties
                .keys()
                .map(|k| Value::String(k.clone()))
                .collect(),
        ),
    );
    out.insert("properties".into(), Value::Object(strict_properties));
    out.insert("additionalProperties".into(), Value::Bool(false));
}

/// The names an object schema lists under `required`.
fn required_names(schema: &Map<String, Value>) -> Vec<&str> {
    schema
        .get("required")
        .and_then(Value::as_array)
        .map(|names| names.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default()
}

/// Merges `allOf` branches that are plain object schemas into the node itself.
fn merge_all_of(
    source: &Map<String, Value>,
    at: &str,
    transforms: &mut Vec<String>,
) -> Map<String, Value> {
    let Some(Value::Array(branches)) = source.get("allOf") else {
        return source.clone();
    };
    let mergeable = branches.iter().all(|branch| {
        branch
            .as_object()
            .is_some_and(|map| !map.contains_key("$ref") && !map.contains_key("allOf"))
    });
    if !mergeable {
        return source.clone();
    }
    let mut merged = source.clone();
    merged.remove("allOf");
    for branch in branches.iter().filter_map(Value::as_object) {
        for (keyword, value) in branch {
            match (keyword.as_str(), merged.get_mut(keyword)) {
                ("properties", Some(Value::Object(existing))) => {
                    if let Value::Object(more) = value {
                        for (name, schema) in more {
                            existing
                                .entry(name.clone())
                                .or_insert_with(|| schema.clone());
                        }
                    }
                }
                ("required", Some(Value::Array(existing))) => {
                    for name in value.as_array().into_iter().flatten() {
                        if !existing.contains(name) {
                            existing.push(name.clone());
                        }
                    }
                }
                (_, None) => {
                    merged.insert(keyword.clone(), value.clone());
                }
                _ => {}
            }
        }
    }
    transforms.push(format!("{}: allOf merged into one schema", show_at(at)));
    merged
}

fn nullable(schema: Value) -> Value {
    if let Value::Object(mut map) = schema {
        let simple =
            !map.contains_key("enum") && !map.contains_key("const") && !map.contains_key("$ref");
        match map.get_mut("type") {
            Some(Value::String(ty)) if simple => {
                let ty = std::mem::take(ty);
                map.insert("type".into(), json!([ty, "null"]));
                return Value::Object(map);
            }
            Some(Value::Array(types)) if simple => {
                types.push(json!("null"));
                return Value::Object(map);
            }
            _ => {}
        }
        return json!({ "anyOf": [Value::Object(map), { "type": "null" }] });
    }
    json!({ "anyOf": [schema, { "type": "null" }] })
}

fn permits_null_shallow(schema: &Value) -> bool {
    match schema.get("type") {
        Some(Value::String(ty)) => ty == "null",
        Some(Value::Array(types)) => types.iter().any(|ty| ty == "null"),
        _ => schema
            .get("anyOf")
            .and_then(Value::as_array)
            .is_some_and(|branches| branches.iter().any(permits_null_shallow)),
    }
}

fn with_note(description: Option<&str>, note: &str) -> String {
    match description {
        Some(text) if !text.is_empty() => format!("{text}\n{note}"),
        _ => note.to_owned(),
    }
}

fn show_at(at: &str) -> &str {
    if at.is_empty() { "/" } else { at }
}

fn escape(name: &str) -> String {
    name.replace('~', "~0").replace('/', "~1")
}

/// Maps an answer written for a transformed schema back to the shape of the original: drops the
/// nulls standing for absent optional properties and, when `decode` is set (the answer came
/// through [`to_strict`]), decodes JSON-encoded strings and key/value pair arrays.
pub fn restore(root: &Value, instance: Value, decode: bool) -> Value {
    restore_node(root, root, instance, decode, 0)
}

fn restore_node(root: &Value, node: &Value, instance: Value, decode: bool, depth: usize) -> Value {
    if depth > MAX_DEPTH {
        return instance;
    }
    if let Some(Value::String(reference)) = node.get("$ref") {
        return match resolve_local(root, reference) {
            Some(target) => restore_node(root, target, instance, decode, depth + 1),
            None => instance,
        };
    }
    if decode {
        match (shape(node), instance) {
            (Shape::Opaque, Value::String(text)) => {
                return serde_json::from_str(&text).unwrap_or(Value::String(text));
            }
            (Shape::Map(values), Value::Array(pairs)) => {
                return restore_map(root, values, pairs, decode, depth);
            }
            (_, other) => return restore_plain(root, node, other, decode, depth),
        }
    }
    restore_plain(root, node, instance, decode, depth)
}

fn restore_map(
    root: &Value,
    values: &Value,
    pairs: Vec<Value>,
    decode: bool,
    depth: usize,
) -> Value {
    let well_formed = pairs
        .iter()
        .all(|pair| pair.get("key").is_some_and(Value::is_string) && pair.get("value").is_some());
    if !well_formed {
        return Value::Array(pairs);
    }
    let mut object = Map::new();
    for pair in pairs {
        if let Value::Object(mut pair) = pair {
            let key = pair
                .remove("key")
                .and_then(|key| key.as_str().map(str::to_owned))
                .unwrap_or_default();
            let value = pair.remove("value").unwrap_or(Value::Null);
            object.insert(key, restore_node(root, values, value, decode, depth + 1));
        }
    }
    Value::Object(object)
}

fn restore_plain(root: &Value, node: &Value, instance: Value, decode: bool, depth: usize) -> Value {
    if let Some(Value::Array(branches)) = node.get("allOf") {
        return branches.iter().fold(
            restore_own(root, node, instance, decode, depth),
            |instance, branch| restore_node(root, branch, instance, decode, depth + 1),
        );
    }
    for keyword in ["anyOf", "oneOf"] {
        if let Some(Value::Array(branches)) = node.get(keyword) {
            let instance = restore_own(root, node, instance, decode, depth);
            return match pick_branch(root, branches, &instance) {
                Some(branch) => restore_node(root, branch, instance, decode, depth + 1),
                None => instance,
            };
        }
    }
    restore_own(root, node, instance, decode, depth)
}

/// Restores what the node itself says about properties and items.
fn restore_own(root: &Value, node: &Value, instance: Value, decode: bool, depth: usize) -> Value {
    match instance {
        Value::Object(object) => {
            let Some(Value::Object(properties)) = node.get("properties") else {
                return Value::Object(object);
            };
            let required = node.as_object().map(required_names).unwrap_or_default();
            let mut restored = Map::new();
            for (name, value) in object {
                match properties.get(&name) {
                    Some(schema) => {
                        if value.is_null()
                            && !required.contains(&name.as_str())
                            && !permits_null(root, schema, depth)
                        {
                            continue;
                        }
                        restored.insert(name, restore_node(root, schema, value, decode, depth + 1));
                    }
                    None => {
                        restored.insert(name, value);
                    }
                }
            }
            Value::Object(restored)
        }
        Value::Array(items) => match node.get("items") {
            Some(schema) if schema.is_object() || schema.is_boolean() => Value::Array(
                items
                    .into_iter()
                    .map(|item| restore_node(root, schema, item, decode, depth + 1))
                    .collect(),
            ),
            _ => Value::Array(items),
        },
        other => other,
    }
}

/// The branch of an `anyOf`/`oneOf` an answer was written for: the first whose type fits and,
/// for objects, whose properties cover the answer's keys.
fn pick_branch<'a>(root: &'a Value, branches: &'a [Value], instance: &Value) -> Option<&'a Value> {
    let resolved = |branch: &'a Value| match branch.get("$ref").and_then(Value::as_str) {
        Some(reference) => resolve_local(root, reference).unwrap_or(branch),
        None => branch,
    };
    let fits_type = |branch: &Value| type_fits(branch, instance);
    let covers = |branch: &Value| match (instance, branch.get("properties")) {
        (Value::Object(object), Some(Value::Object(properties))) => object
            .iter()
            .all(|(key, value)| value.is_null() || properties.contains_key(key)),
        _ => true,
    };
    branches
        .iter()
        .find(|branch| {
            let target = resolved(branch);
            fits_type(target) && covers(target)
        })
        .or_else(|| branches.iter().find(|branch| fits_type(resolved(branch))))
}

fn type_fits(schema: &Value, instance: &Value) -> bool {
    let name = match instance {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(number) if number.is_i64() || number.is_u64() => "integer",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    };
    let matches = |ty: &Value| ty == name || (ty == "number" && name == "integer");
    match schema.get("type") {
        Some(Value::String(_)) => matches(schema.get("type").unwrap_or(&Value::Null)),
        Some(Value::Array(types)) => types.iter().any(matches),
        _ => true,
    }
}

/// Whether `null` is a value the schema allows, so a null in the answer is data, not absence.
fn permits_null(root: &Value, schema: &Value, depth: usize) -> bool {
    if depth > MAX_DEPTH {
        return false;
    }
    match schema {
        Value::Bool(allowed) => *allowed,
        Value::Object(map) => {
            if let Some(Value::String(reference)) = map.get("$ref") {
                return resolve_local(root, reference)
                    .is_some_and(|target| permits_null(root, target, depth + 1));
            }
            if let Some(Value::Array(options)) = map.get("enum") {
                return options.contains(&Value::Null);
            }
            if let Some(constant) = map.get("const") {
                return constant.is_null();
            }
            for keyword in ["anyOf", "oneOf"] {
                if let Some(Value::Array(branches)) = map.get(keyword) {
                    return branches
                        .iter()
                        .any(|branch| permits_null(root, branch, depth + 1));
                }
            }
            match map.get("type") {
                Some(Value::String(ty)) => ty == "null",
                Some(Value::Array(types)) => types.iter().any(|ty| ty == "null"),
                _ => true,
            }
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strict(schema: Value) -> (Value, Vec<String>) {
        let mut transforms = Vec::new();
        let out = to_strict(&schema, "", &mut transforms);
        (out, transforms)
    }

    #[test]
    fn optional_properties_become_nullable_and_every_object_is_closed() {
        let (out, transforms) = strict(json!({
            "type": "object",
            "properties": {
                "name": { "type": "string" },
                "age": { "type": "integer", "minimum": 0 },
                "role": { "enum": ["admin", "user"] },
                "address": { "type": "object", "properties": { "city": { "type": "string" } } }
            },
            "required": ["name"]
        }));
        assert_eq!(out["required"], json!(["name", "age", "role", "address"]));
        assert_eq!(out["additionalProperties"], json!(false));
        assert_eq!(out["properties"]["name"], json!({ "type": "string" }));
        assert_eq!(
            out["properties"]["age"],
            json!({ "type": ["integer", "null"], "minimum": 0 })
        );
        assert_eq!(
            out["properties"]["role"],
            json!({ "anyOf": [{ "enum": ["admin", "user"] }, { "type": "null" }] })
        );
        let address = &out["properties"]["address"]["type"];
        assert_eq!(address, &json!(["object", "null"]));
        assert_eq!(
            out["properties"]["address"]["additionalProperties"],
            json!(false)
        );
        assert_eq!(out["properties"]["address"]["required"], json!(["city"]));
        assert!(
            transforms
                .iter()
                .any(|t| t == "/properties/age: optional, sent as nullable (null means absent)")
        );
        assert!(
            transforms
                .iter()
                .any(|t| t.starts_with("/: no additional properties"))
        );
    }

    #[test]
    fn unsupported_keywords_move_into_the_description() {
        let (out, transforms) = strict(json!({
            "type": "string", "description": "A login", "minLength": 3, "format": "uri", "x-internal": true
        }));
        assert_eq!(out["type"], json!("string"));
        assert!(
            out.get("minLength").is_none()
                && out.get("format").is_none()
                && out.get("x-internal").is_none()
        );
        assert_eq!(
            out["description"],
            json!("A login\nMust also satisfy: minLength: 3; format: \"uri\".")
        );
        assert_eq!(
            transforms,
            vec!["/: minLength: 3, format: \"uri\" stated in the description, checked locally"]
        );
        let (kept, _) = strict(json!({ "type": "string", "format": "date-time", "pattern": "^2" }));
        assert_eq!(
            kept,
            json!({ "type": "string", "format": "date-time", "pattern": "^2" })
        );
    }

    #[test]
    fn one_of_becomes_any_of_and_all_of_is_merged() {
        let (out, transforms) = strict(json!({
            "oneOf": [{ "type": "string" }, { "type": "integer" }]
        }));
        assert_eq!(
            out,
            json!({ "anyOf": [{ "type": "string" }, { "type": "integer" }] })
        );
        assert_eq!(transforms, vec!["/: oneOf sent as anyOf"]);
        let (merged, _) = strict(json!({
            "type": "object",
            "allOf": [
                { "properties": { "a": { "type": "string" } }, "required": ["a"] },
                { "properties": { "b": { "type": "string" } } }
            ]
        }));
        assert_eq!(merged["required"], json!(["a", "b"]));
        assert_eq!(merged["properties"]["b"]["type"], json!(["string", "null"]));
    }

    #[test]
    fn free_form_values_and_maps_are_encoded_and_restored() {
        let original = json!({
            "type": "object",
            "properties": {
                "meta": { "type": "object" },
                "anything": {},
                "scores": { "type": "object", "additionalProperties": { "type": "integer" } },
                "note": { "type": "string" }
            },
            "required": ["meta", "anything", "scores"]
        });
        let (out, _) = strict(original.clone());
        assert_eq!(out["properties"]["meta"]["type"], json!("string"));
        assert_eq!(out["properties"]["anything"]["type"], json!("string"));
        assert_eq!(out["properties"]["scores"]["type"], json!("array"));
        assert_eq!(
            out["properties"]["scores"]["items"]["properties"]["value"],
            json!({ "type": "integer" })
        );
        let answer = json!({
            "meta": "{\"source\": \"mail\"}",
            "anything": "[1, 2]",
            "scores": [{ "key": "alice", "value": 3 }, { "key": "bob", "value": 5 }],
            "note": null
        });
        assert_eq!(
            restore(&original, answer, true),
            json!({ "meta": { "source": "mail" }, "anything": [1, 2], "scores": { "alice": 3, "bob": 5 } })
        );
    }

    #[test]
    fn restore_drops_only_the_nulls_the_transform_introduced() {
        let original = json!({
            "type": "object",
            "properties": {
                "a": { "type": "string" },
                "b": { "type": ["string", "null"] },
                "c": { "$ref": "#/$defs/c" },
                "items": { "type": "array", "items": { "$ref": "#/$defs/item" } }
            },
            "required": ["a"],
            "$defs": {
                "c": { "type": "integer" },
                "item": { "type": "object", "properties": { "x": { "type": "integer" } } }
            }
        });
        let answer =
            json!({ "a": null, "b": null, "c": null, "items": [{ "x": null }, { "x": 1 }] });
        assert_eq!(
            restore(&original, answer, false),
            json!({ "a": null, "b": null, "items": [{}, { "x": 1 }] })
        );
    }

    #[test]
    fn restore_follows_the_branch_the_answer_was_written_for() {
        let original = json!({
            "anyOf": [
                { "type": "object", "properties": { "email": { "type": "string" } }, "required": ["email"] },
                { "type": "object", "properties": { "phone": { "type": "string" }, "ext": { "type": "string" } }, "required": ["phone"] }
            ]
        });
        let answer = json!({ "phone": "123", "ext": null });
        assert_eq!(restore(&original, answer, false), json!({ "phone": "123" }));
    }

    #[test]
    fn reference_cycles_terminate() {
        let original = json!({ "$ref": "#" });
        assert_eq!(
            restore(&original, json!({ "a": 1 }), true),
            json!({ "a": 1 })
        );
        let (out, _) = strict(json!({ "$ref": "#/$defs/a", "description": "x" }));
        assert_eq!(out, json!({ "$ref": "#/$defs/a" }));
    }
}
