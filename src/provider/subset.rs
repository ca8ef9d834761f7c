//! The JSON Schema subset each provider accepts, and the way back.
//!
//! A [`Subset`] says which keywords and formats a provider takes and what its structured-output
//! mode demands: OpenAI's strict mode wants every object closed (`additionalProperties: false`)
//! with every property required; Anthropic closes every object too; Gemini honours a list of
//! keywords; llama.cpp's grammar converter fails on some regular expressions. [`to_subset`]
//! rewrites a schema node by node: optional properties become nullable where all must be
//! required, `oneOf` becomes `anyOf`, `allOf` is merged, free-form objects and untyped values
//! travel as JSON-encoded strings and maps as arrays of key/value pairs where objects must be
//! closed, and every keyword the provider does not take moves into the description, so the
//! model still reads it. Each change is recorded. [`restore`] maps an answer back to the shape
//! of the original schema (drops the nulls the transform introduced, decodes the encodings), and
//! local validation then checks it against the original schema.

use serde_json::{Map, Value, json};

use crate::schema::checks::resolve_local;
use crate::schema::violation::escape;

/// Which keywords a provider takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Keywords {
    Only(&'static [&'static str]),
    AllBut(&'static [&'static str]),
}

impl Keywords {
    fn allows(self, keyword: &str) -> bool {
        match self {
            Keywords::Only(list) => list.contains(&keyword),
            Keywords::AllBut(list) => !list.contains(&keyword),
        }
    }
}

/// What a provider's structured-output mode accepts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Subset {
    pub name: &'static str,
    pub keywords: Keywords,
    /// String formats the provider takes; `None`: all.
    pub formats: Option<&'static [&'static str]>,
    /// Every object gets `additionalProperties: false`.
    pub closed_objects: bool,
    /// Every property is listed in `required`; optional ones become nullable.
    pub all_required: bool,
    /// Values no closed schema can describe (free-form objects, untyped values, maps) travel
    /// encoded: as JSON strings, maps as `{key, value}` pairs.
    pub encode_free_form: bool,
    /// `oneOf` is sent as `anyOf`, `allOf` merged into its node.
    pub any_of_only: bool,
    /// A `$ref` may not have siblings.
    pub bare_refs: bool,
    /// `minItems` above this moves into the description.
    pub max_min_items: Option<u64>,
    /// Objects list their property order in `propertyOrdering` (Gemini).
    pub property_ordering: bool,
    /// `const: v` is sent as `enum: [v]`, which says the same.
    pub const_as_enum: bool,
    /// `type: [a, b]` is sent as `anyOf: [{type: a, ...}, {type: b, ...}]`, which says the same.
    pub type_arrays_as_any_of: bool,
    /// The provider takes recursive schemas; without it, recursion is unrolled a few levels.
    pub recursive_refs: bool,
}

/// OpenAI's strict mode (tests/provider-api/SUBSETS.md).
pub const OPENAI_STRICT: Subset = Subset {
    name: "openai-strict",
    keywords: Keywords::Only(&[
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
    ]),
    formats: Some(&[
        "date-time",
        "time",
        "date",
        "duration",
        "email",
        "hostname",
        "ipv4",
        "ipv6",
        "uuid",
    ]),
    closed_objects: true,
    all_required: true,
    encode_free_form: true,
    any_of_only: true,
    bare_refs: true,
    max_min_items: None,
    property_ordering: false,
    const_as_enum: false,
    type_arrays_as_any_of: false,
    recursive_refs: true,
};

/// Anthropic's structured outputs and strict tools, as Anthropic's SDK rewrites schemas: closed
/// objects (optional properties may stay optional), formats from a list, `minItems` only 0 or 1,
/// no numeric or length bounds, no patterns, no `const` or type arrays (said another way).
pub const ANTHROPIC: Subset = Subset {
    name: "anthropic",
    keywords: Keywords::Only(&[
        "type",
        "properties",
        "required",
        "additionalProperties",
        "items",
        "enum",
        "anyOf",
        "allOf",
        "$ref",
        "description",
        "title",
        "format",
        "minItems",
    ]),
    formats: Some(&[
        "date-time",
        "time",
        "date",
        "duration",
        "email",
        "hostname",
        "uri",
        "ipv4",
        "ipv6",
        "uuid",
    ]),
    closed_objects: true,
    all_required: false,
    encode_free_form: true,
    any_of_only: false,
    bare_refs: false,
    max_min_items: Some(1),
    property_ordering: false,
    const_as_enum: true,
    type_arrays_as_any_of: true,
    recursive_refs: false,
};

/// Gemini's `responseJsonSchema`: the keywords it honours, key order stated.
pub const GEMINI: Subset = Subset {
    name: "gemini",
    keywords: Keywords::Only(&[
        "type",
        "format",
        "title",
        "description",
        "enum",
        "items",
        "prefixItems",
        "minItems",
        "maxItems",
        "minimum",
        "maximum",
        "anyOf",
        "oneOf",
        "properties",
        "additionalProperties",
        "required",
        "$ref",
    ]),
    formats: None,
    closed_objects: false,
    all_required: false,
    encode_free_form: false,
    any_of_only: false,
    bare_refs: true,
    max_min_items: None,
    property_ordering: true,
    const_as_enum: true,
    type_arrays_as_any_of: true,
    recursive_refs: false,
};

/// Servers that turn the schema into a grammar with llama.cpp's converter, which fails on some
/// regular expressions: everything but `pattern`.
pub const GRAMMAR_WITHOUT_PATTERNS: Subset = Subset {
    name: "grammar",
    keywords: Keywords::AllBut(&["pattern", "patternProperties"]),
    formats: None,
    closed_objects: false,
    all_required: false,
    encode_free_form: false,
    any_of_only: false,
    bare_refs: false,
    max_min_items: None,
    property_ordering: false,
    const_as_enum: false,
    type_arrays_as_any_of: false,
    recursive_refs: true,
};

/// The schema as it is.
pub const FULL: Subset = Subset {
    name: "full",
    keywords: Keywords::AllBut(&[]),
    formats: None,
    closed_objects: false,
    all_required: false,
    encode_free_form: false,
    any_of_only: false,
    bare_refs: false,
    max_min_items: None,
    property_ordering: false,
    const_as_enum: false,
    type_arrays_as_any_of: false,
    recursive_refs: true,
};

/// Annotations with no meaning for the model: dropped silently.
fn is_silent(keyword: &str) -> bool {
    matches!(
        keyword,
        "$schema" | "$id" | "$comment" | "$anchor" | "$dynamicAnchor" | "$defs" | "definitions"
    ) || keyword.starts_with("x-")
}

/// Nesting beyond this is not followed (a guard against reference cycles).
const MAX_DEPTH: usize = 128;

/// How a schema node is carried through a subset that encodes free-form values.
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

/// Rewrites one schema node (and everything under it) into `subset`. `at` is the node's
/// location, used in the recorded transforms.
pub fn to_subset(node: &Value, subset: &Subset, at: &str, transforms: &mut Vec<String>) -> Value {
    Rewrite { subset, transforms }.node(node, at, 0)
}

struct Rewrite<'a> {
    subset: &'a Subset,
    transforms: &'a mut Vec<String>,
}

impl Rewrite<'_> {
    fn record(&mut self, at: &str, what: &str) {
        self.transforms.push(format!("{}: {what}", show_at(at)));
    }

    fn node(&mut self, node: &Value, at: &str, depth: usize) -> Value {
        if depth > MAX_DEPTH {
            return node.clone();
        }
        if self.subset.encode_free_form {
            match shape(node) {
                Shape::Opaque => {
                    self.record(at, "free-form value sent as a JSON-encoded string");
                    let description = node.get("description").and_then(Value::as_str);
                    return json!({
                        "type": "string",
                        "description": with_note(description, "Any JSON value, written as a JSON-encoded string."),
                    });
                }
                Shape::Map(values) => {
                    self.record(at, "map sent as an array of key/value pairs");
                    let value = self.node(values, &format!("{at}/additionalProperties"), depth + 1);
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
        }
        let Value::Object(source) = node else {
            return node.clone();
        };
        if let Some(rewritten) = self.equivalent(source, at) {
            return self.node(&rewritten, at, depth + 1);
        }
        let merged;
        let source = if self.subset.any_of_only {
            merged = self.merge_all_of(source, at);
            &merged
        } else {
            source
        };
        let mut out = Map::new();
        let mut moved = Vec::new();
        for (keyword, value) in source {
            match keyword.as_str() {
                "properties" | "required" | "additionalProperties"
                    if self.subset.closed_objects => {}
                "properties" => {
                    if let Value::Object(properties) = value {
                        let properties = properties.iter().map(|(name, schema)| {
                            let location = format!("{at}/properties/{}", escape(name));
                            (name.clone(), self.node(schema, &location, depth + 1))
                        });
                        out.insert(keyword.clone(), Value::Object(properties.collect()));
                    }
                }
                "additionalProperties" | "items" if value.is_object() => {
                    let location = format!("{at}/{keyword}");
                    out.insert(keyword.clone(), self.node(value, &location, depth + 1));
                }
                "anyOf" | "oneOf" | "allOf" | "prefixItems"
                    if value.is_array() && self.subset.keywords.allows(keyword) =>
                {
                    let branches = self.branches(value, at, keyword, depth);
                    out.insert(keyword.clone(), branches);
                }
                "oneOf" if value.is_array() && self.subset.any_of_only => {
                    self.record(at, "oneOf sent as anyOf");
                    let branches = self.branches(value, at, keyword, depth);
                    out.insert("anyOf".to_owned(), branches);
                }
                "format" => match (value.as_str(), self.subset.formats) {
                    (Some(_), None) => {
                        out.insert(keyword.clone(), value.clone());
                    }
                    (Some(format), Some(formats)) if formats.contains(&format) => {
                        out.insert(keyword.clone(), value.clone());
                    }
                    _ => moved.push((keyword.clone(), value.clone())),
                },
                "minItems"
                    if self
                        .subset
                        .max_min_items
                        .is_some_and(|limit| value.as_u64().is_none_or(|n| n > limit)) =>
                {
                    moved.push((keyword.clone(), value.clone()));
                }
                _ if is_silent(keyword) => {}
                _ if self.subset.keywords.allows(keyword) => {
                    out.insert(keyword.clone(), value.clone());
                }
                _ => moved.push((keyword.clone(), value.clone())),
            }
        }
        if self.subset.closed_objects {
            let is_object_type = source.get("type").and_then(Value::as_str) == Some("object");
            match source.get("properties") {
                Some(Value::Object(properties)) => {
                    self.close_object(source, properties, &mut out, at, depth)
                }
                _ if is_object_type => self.close_object(source, &Map::new(), &mut out, at, depth),
                _ => {}
            }
        }
        if self.subset.property_ordering
            && let Some(Value::Object(properties)) = out.get("properties")
            && properties.len() > 1
        {
            let order: Vec<Value> = properties
                .keys()
                .map(|name| Value::String(name.clone()))
                .collect();
            out.insert("propertyOrdering".into(), Value::Array(order));
        }
        if self.subset.bare_refs && out.contains_key("$ref") && out.len() > 1 {
            // The referenced schema carries the meaning; siblings of `$ref` are not accepted.
            out.retain(|keyword, _| keyword == "$ref");
        }
        if !moved.is_empty() {
            let words: Vec<String> = moved
                .iter()
                .map(|(keyword, value)| format!("{keyword}: {value}"))
                .collect();
            self.record(
                at,
                &format!(
                    "{} stated in the description, checked locally",
                    words.join(", ")
                ),
            );
            if !(self.subset.bare_refs && out.contains_key("$ref")) {
                let description = out
                    .get("description")
                    .and_then(Value::as_str)
                    .map(str::to_owned);
                let note = format!("Must also satisfy: {}.", words.join("; "));
                out.insert(
                    "description".into(),
                    Value::String(with_note(description.as_deref(), &note)),
                );
            }
        }
        Value::Object(out)
    }

    /// The same constraint in a form the subset takes: `const` as a one-value `enum`, a type
    /// array as an `anyOf` of single types. `None` when nothing needs saying another way.
    fn equivalent(&mut self, source: &Map<String, Value>, at: &str) -> Option<Value> {
        if self.subset.const_as_enum && source.contains_key("const") && !source.contains_key("enum")
        {
            let mut rewritten = source.clone();
            let constant = rewritten.remove("const").unwrap_or(Value::Null);
            rewritten.insert("enum".into(), json!([constant]));
            self.record(at, "const sent as a one-value enum");
            return Some(Value::Object(rewritten));
        }
        if self.subset.type_arrays_as_any_of
            && let Some(Value::Array(types)) = source.get("type")
        {
            let mut rest = source.clone();
            rest.remove("type");
            let branches: Vec<Value> = types
                .iter()
                .map(|ty| {
                    if ty == "null" {
                        json!({ "type": "null" })
                    } else {
                        let mut branch = rest.clone();
                        branch.insert("type".into(), ty.clone());
                        Value::Object(branch)
                    }
                })
                .collect();
            self.record(at, "type list sent as anyOf");
            return Some(json!({ "anyOf": branches }));
        }
        None
    }

    fn branches(&mut self, value: &Value, at: &str, keyword: &str, depth: usize) -> Value {
        let branches = value.as_array().into_iter().flatten().enumerate();
        Value::Array(
            branches
                .map(|(index, branch)| {
                    self.node(branch, &format!("{at}/{keyword}/{index}"), depth + 1)
                })
                .collect(),
        )
    }

    /// Closes the object; with `all_required`, lists every property as required and makes the
    /// optional ones nullable.
    fn close_object(
        &mut self,
        source: &Map<String, Value>,
        properties: &Map<String, Value>,
        out: &mut Map<String, Value>,
        at: &str,
        depth: usize,
    ) {
        let required = required_names(source);
        let mut closed = Map::new();
        for (name, schema) in properties {
            let location = format!("{at}/properties/{}", escape(name));
            let mut schema = self.node(schema, &location, depth + 1);
            if self.subset.all_required
                && !required.contains(&name.as_str())
                && !permits_null_shallow(&schema)
            {
                self.record(&location, "optional, sent as nullable (null means absent)");
                schema = nullable(schema);
            }
            closed.insert(name.clone(), schema);
        }
        if source.get("additionalProperties") != Some(&Value::Bool(false)) {
            self.record(
                at,
                "no additional properties (the provider needs closed objects)",
            );
        }
        out.entry("type").or_insert_with(|| json!("object"));
        let listed: Vec<Value> = if self.subset.all_required {
            properties
                .keys()
                .map(|name| Value::String(name.clone()))
                .collect()
        } else {
            required
                .iter()
                .filter(|name| properties.contains_key(**name))
                .map(|name| json!(name))
                .collect()
        };
        if self.subset.all_required || !listed.is_empty() {
            out.insert("required".into(), Value::Array(listed));
        }
        out.insert("properties".into(), Value::Object(closed));
        out.insert("additionalProperties".into(), Value::Bool(false));
    }

    /// Merges `allOf` branches that are plain object schemas into the node itself.
    fn merge_all_of(&mut self, source: &Map<String, Value>, at: &str) -> Map<String, Value> {
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
        self.record(at, "allOf merged into one schema");
        merged
    }
}

/// The names an object schema lists under `required`.
fn required_names(schema: &Map<String, Value>) -> Vec<&str> {
    schema
        .get("required")
        .and_then(Value::as_array)
        .map(|names| names.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default()
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

/// Maps an answer written for a transformed schema back to the shape of the original: drops the
/// nulls standing for absent optional properties and, when `decode` is set (the subset encodes
/// free-form values), decodes JSON-encoded strings and key/value pair arrays.
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
        subset(schema, &OPENAI_STRICT)
    }

    fn subset(schema: Value, subset: &Subset) -> (Value, Vec<String>) {
        let mut transforms = Vec::new();
        let out = to_subset(&schema, subset, "", &mut transforms);
        (out, transforms)
    }

    #[test]
    fn anthropic_closes_objects_but_keeps_optional_properties_optional() {
        let (out, transforms) = subset(
            json!({
                "type": "object",
                "properties": {
                    "tags": { "type": "array", "items": { "type": "string", "pattern": "^[a-z]+$" }, "minItems": 2, "maxItems": 5 },
                    "score": { "type": "number", "minimum": 0, "maximum": 1 },
                    "site": { "type": "string", "format": "uri" },
                    "meta": { "type": "object" }
                },
                "required": ["score"]
            }),
            &ANTHROPIC,
        );
        assert_eq!(out["required"], json!(["score"]));
        assert_eq!(out["additionalProperties"], json!(false));
        assert_eq!(
            out["properties"]["site"],
            json!({ "type": "string", "format": "uri" })
        );
        assert_eq!(
            out["properties"]["score"]["type"],
            json!("number"),
            "not made nullable"
        );
        assert_eq!(
            out["properties"]["score"]["description"],
            json!("Must also satisfy: minimum: 0; maximum: 1.")
        );
        let tags = &out["properties"]["tags"];
        assert!(tags.get("minItems").is_none() && tags.get("maxItems").is_none());
        assert_eq!(
            tags["items"]["description"],
            json!("Must also satisfy: pattern: \"^[a-z]+$\".")
        );
        assert_eq!(
            out["properties"]["meta"]["type"],
            json!("string"),
            "free-form objects travel as JSON strings"
        );
        assert!(
            transforms
                .iter()
                .any(|t| t.contains("minItems: 2, maxItems: 5")),
            "{transforms:?}"
        );
        let (kept, _) = subset(
            json!({ "type": "array", "items": { "type": "string" }, "minItems": 1 }),
            &ANTHROPIC,
        );
        assert_eq!(kept["minItems"], json!(1));
    }

    #[test]
    fn gemini_states_the_property_order_and_keeps_open_objects() {
        let (out, transforms) = subset(
            json!({
                "type": "object",
                "properties": { "b": { "type": "string", "minLength": 2 }, "a": { "type": "integer" } },
                "required": ["b"]
            }),
            &GEMINI,
        );
        assert_eq!(out["propertyOrdering"], json!(["b", "a"]));
        assert_eq!(out["required"], json!(["b"]));
        assert!(out.get("additionalProperties").is_none());
        assert_eq!(
            out["properties"]["b"],
            json!({ "type": "string", "description": "Must also satisfy: minLength: 2." })
        );
        assert_eq!(transforms.len(), 1);
    }

    #[test]
    fn the_grammar_subset_only_moves_patterns() {
        let schema = json!({
            "type": "object",
            "properties": { "id": { "type": "string", "pattern": "^\\d+$", "minLength": 2 }, "x": {} },
            "additionalProperties": true
        });
        let (out, transforms) = subset(schema, &GRAMMAR_WITHOUT_PATTERNS);
        assert_eq!(
            out,
            json!({
                "type": "object",
                "properties": { "id": { "type": "string", "minLength": 2, "description": "Must also satisfy: pattern: \"^\\\\d+$\"." }, "x": {} },
                "additionalProperties": true
            })
        );
        assert_eq!(transforms.len(), 1);
        let full =
            json!({ "type": "object", "x-note": 1, "properties": { "a": { "pattern": "x" } } });
        assert_eq!(
            subset(full, &FULL).0,
            json!({ "type": "object", "properties": { "a": { "pattern": "x" } } })
        );
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
