//! Lowering a schema into a provider's subset, node by node and keyword family by keyword
//! family: free-form values encoded, equivalent forms (`const`, type lists), `allOf` merged,
//! subschemas lowered, objects closed (optional properties nullable where all must be
//! required), property order stated, and every keyword the subset does not take moved into the
//! description. Each change is recorded for the trace.

use serde_json::{Map, Value, json};

use super::accepted::{Subset, is_silent, lists};
use super::shape::{Shape, required_names, shape};
use crate::schema::keywords;
use crate::schema::rules::keyword::KEYWORDS as RULE_KEYWORDS;
use crate::schema::walk::{escape, too_deep};

/// Rewrites one schema node (and everything under it) into `subset`. `at` is the node's
/// location, used in the recorded transforms.
pub fn to_subset(node: &Value, subset: &Subset, at: &str, transforms: &mut Vec<String>) -> Value {
    Rewrite { subset, transforms }.node(node, at, 0)
}

struct Rewrite<'a> {
    subset: &'a Subset,
    transforms: &'a mut Vec<String>,
}

/// Keywords the subset does not take, with their values: stated in the description instead.
type Moved = Vec<(String, Value)>;

/// Rules across fields as the model reads them (no provider takes the keywords, and they are
/// checked locally): each rule's message, or the rule itself.
fn rules_said(rules: &Value) -> Moved {
    let said = |rule: &Value| {
        (rule.get("message").or_else(|| rule.get("rule")))
            .and_then(Value::as_str)
            .map(|text| ("rule".to_owned(), Value::String(text.to_owned())))
    };
    (rules.as_array().into_iter().flatten())
        .filter_map(said)
        .collect()
}

impl Rewrite<'_> {
    fn record(&mut self, at: &str, what: &str) {
        self.transforms.push(format!("{}: {what}", show_at(at)));
    }

    fn node(&mut self, node: &Value, at: &str, depth: usize) -> Value {
        if too_deep(depth) {
            return node.clone();
        }
        if self.subset.encode_free_form
            && let Some(encoded) = self.encoded(node, at, depth)
        {
            return encoded;
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
        let (mut out, moved) = self.keywords(source, at, depth);
        if self.subset.closed_objects {
            let is_object_type = source.get("type").and_then(Value::as_str) == Some("object");
            match source.get("properties") {
                Some(Value::Object(properties)) => {
                    self.close_object(source, properties, &mut out, at, depth)
                }
                _ if is_object_type => self.close_object(source, &Map::new(), &mut out, at, depth),
                _ => {}
            }
        } else if self.subset.all_required {
            self.require_all(source, &mut out, at);
        }
        if self.subset.property_ordering {
            order_properties(&mut out);
        }
        if self.subset.bare_refs && out.contains_key("$ref") && out.len() > 1 {
            // The referenced schema carries the meaning; siblings of `$ref` are not accepted.
            out.retain(|keyword, _| keyword == "$ref");
        }
        if !moved.is_empty() {
            self.state_moved(&mut out, &moved, at);
        }
        Value::Object(out)
    }

    /// A value no closed schema can describe, in the form the subset carries it: any value as a
    /// JSON-encoded string, a map as an array of `{key, value}` pairs. `None` for the rest.
    fn encoded(&mut self, node: &Value, at: &str, depth: usize) -> Option<Value> {
        let description = node.get("description").and_then(Value::as_str);
        match shape(node) {
            Shape::Opaque => {
                self.record(at, "free-form value sent as a JSON-encoded string");
                Some(json!({
                    "type": "string",
                    "description": with_note(description, "Any JSON value, written as a JSON-encoded string."),
                }))
            }
            Shape::Map(values) => {
                self.record(at, "map sent as an array of key/value pairs");
                let value = self.node(values, &format!("{at}/additionalProperties"), depth + 1);
                Some(json!({
                    "type": "array",
                    "description": with_note(description, "The object's entries, one {key, value} pair each."),
                    "items": {
                        "type": "object",
                        "properties": { "key": { "type": "string" }, "value": value },
                        "required": ["key", "value"],
                        "additionalProperties": false,
                    },
                }))
            }
            Shape::Plain => None,
        }
    }

    /// Each keyword of `source` as the subset takes it: subschemas lowered, the rest kept,
    /// dropped (annotations with no meaning for the model) or moved.
    fn keywords(
        &mut self,
        source: &Map<String, Value>,
        at: &str,
        depth: usize,
    ) -> (Map<String, Value>, Moved) {
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
                "additionalProperties" | "items"
                    if value.is_object() || (keyword == "items" && *value == Value::Bool(true)) =>
                {
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
                    (Some(format), Some(formats)) if lists(formats, format) => {
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
                _ if RULE_KEYWORDS.contains(&keyword.as_str()) => moved.extend(rules_said(value)),
                _ if is_silent(keyword) => {}
                _ if self.subset.keywords.allows(keyword) => {
                    out.insert(keyword.clone(), value.clone());
                }
                _ => moved.push((keyword.clone(), value.clone())),
            }
        }
        (out, moved)
    }

    /// Moves the keywords the subset does not take into the description, where the model still
    /// reads them: constraints (checked locally all the same), and annotations JSON Schema does
    /// not define (they check nothing).
    fn state_moved(&mut self, out: &mut Map<String, Value>, moved: &Moved, at: &str) {
        let (constraints, annotations): (Vec<_>, Vec<_>) = moved
            .iter()
            .partition(|(keyword, _)| keywords::is_known(keyword) || keyword == "rule");
        let words = |moved: &[&(String, Value)]| -> Vec<String> {
            moved
                .iter()
                .map(|(keyword, value)| format!("{keyword}: {value}"))
                .collect()
        };
        let mut notes = Vec::new();
        for (moved, what, said) in [
            (&constraints, "checked locally", "Must also satisfy"),
            (&annotations, "annotations", "Notes"),
        ] {
            if moved.is_empty() {
                continue;
            }
            let words = words(moved);
            self.record(
                at,
                &format!("{} stated in the description, {what}", words.join(", ")),
            );
            notes.push(format!("{said}: {}.", words.join("; ")));
        }
        if !(self.subset.bare_refs && out.contains_key("$ref")) {
            let description = out
                .get("description")
                .and_then(Value::as_str)
                .map(str::to_owned);
            out.insert(
                "description".into(),
                Value::String(with_note(description.as_deref(), &notes.join("\n"))),
            );
        }
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
        // A property whose schema is `false` can never be there: a closed object leaves it out.
        let properties: Map<String, Value> = properties
            .iter()
            .filter(|(name, schema)| {
                let never = **schema == Value::Bool(false);
                if never {
                    let location = format!("{at}/properties/{}", escape(name));
                    self.record(&location, "a property that can never be present, left out");
                }
                !never
            })
            .map(|(name, schema)| (name.clone(), schema.clone()))
            .collect();
        let properties = &properties;
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

    /// Lists every property of the lowered object `out` in `required`, the optional ones (of
    /// `source`) nullable, leaving the object open as it was: a grammar that puts the required
    /// properties first then writes them all in the schema's own order.
    fn require_all(&mut self, source: &Map<String, Value>, out: &mut Map<String, Value>, at: &str) {
        let required = required_names(source);
        let Some(Value::Object(properties)) = out.get_mut("properties") else {
            return;
        };
        let mut listed = Vec::with_capacity(properties.len());
        for (name, schema) in properties.iter_mut() {
            // A property that can never be present is not asked for.
            if *schema == Value::Bool(false) {
                continue;
            }
            listed.push(Value::String(name.clone()));
            // `true` and `{}` take null as they are.
            let anything = *schema == Value::Bool(true) || *schema == json!({});
            if !required.contains(&name.as_str()) && !anything && !permits_null_shallow(schema) {
                let location = format!("{at}/properties/{}", escape(name));
                self.record(&location, "optional, sent as nullable (null means absent)");
                *schema = nullable(std::mem::take(schema));
            }
        }
        out.insert("required".into(), Value::Array(listed));
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

/// Gemini's `propertyOrdering`: the order the properties are written in.
fn order_properties(out: &mut Map<String, Value>) {
    if let Some(Value::Object(properties)) = out.get("properties")
        && properties.len() > 1
    {
        let order: Vec<Value> = properties
            .keys()
            .map(|name| Value::String(name.clone()))
            .collect();
        out.insert("propertyOrdering".into(), Value::Array(order));
    }
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
