//! The way back: an answer written for a schema in a subset, mapped to the shape of the original
//! schema (the nulls standing for absent optional properties dropped, JSON-encoded strings and
//! key/value pair arrays decoded). Local validation then checks it against the original.

use serde_json::{Map, Value};

use super::shape::{Shape, required_names, shape};
use crate::schema::walk::{self, escape, json_type, too_deep};

/// Maps an answer written for a transformed schema back to the shape of the original: drops the
/// nulls standing for absent optional properties and, when `decode` is set (the subset encodes
/// free-form values), decodes JSON-encoded strings and key/value pair arrays. Each null dropped
/// is noted in `repairs`.
pub fn restore(root: &Value, instance: Value, decode: bool, repairs: &mut Vec<String>) -> Value {
    Restore {
        root,
        decode,
        repairs,
    }
    .node(root, instance, "", 0)
}

struct Restore<'a> {
    root: &'a Value,
    decode: bool,
    repairs: &'a mut Vec<String>,
}

impl Restore<'_> {
    fn node(&mut self, node: &Value, instance: Value, at: &str, depth: usize) -> Value {
        if too_deep(depth) {
            return instance;
        }
        if node.get("$ref").is_some() {
            let target = walk::follow(self.root, node);
            return match target.get("$ref") {
                // A reference that points to nothing: the answer as it is.
                Some(_) => instance,
                None => self.node(target, instance, at, depth + 1),
            };
        }
        if self.decode {
            match (shape(node), instance) {
                (Shape::Opaque, Value::String(text)) => {
                    return serde_json::from_str(&text).unwrap_or(Value::String(text));
                }
                (Shape::Map(values), Value::Array(pairs)) => {
                    return self.map(values, pairs, at, depth);
                }
                (_, other) => return self.plain(node, other, at, depth),
            }
        }
        self.plain(node, instance, at, depth)
    }

    fn map(&mut self, values: &Value, pairs: Vec<Value>, at: &str, depth: usize) -> Value {
        let well_formed = pairs.iter().all(|pair| {
            pair.get("key").is_some_and(Value::is_string) && pair.get("value").is_some()
        });
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
                let here = format!("{at}/{}", escape(&key));
                let value = self.node(values, value, &here, depth + 1);
                object.insert(key, value);
            }
        }
        Value::Object(object)
    }

    fn plain(&mut self, node: &Value, instance: Value, at: &str, depth: usize) -> Value {
        if let Some(Value::Array(branches)) = node.get("allOf") {
            let own = self.own(node, instance, at, depth);
            return branches.iter().fold(own, |instance, branch| {
                self.node(branch, instance, at, depth + 1)
            });
        }
        for keyword in ["anyOf", "oneOf"] {
            if let Some(Value::Array(branches)) = node.get(keyword) {
                let instance = self.own(node, instance, at, depth);
                return match pick_branch(self.root, branches, &instance) {
                    Some(branch) => self.node(branch, instance, at, depth + 1),
                    None => instance,
                };
            }
        }
        self.own(node, instance, at, depth)
    }

    /// Restores what the node itself says about properties and items.
    fn own(&mut self, node: &Value, instance: Value, at: &str, depth: usize) -> Value {
        match instance {
            Value::Object(object) => {
                let Some(Value::Object(properties)) = node.get("properties") else {
                    return Value::Object(object);
                };
                let required = node.as_object().map(required_names).unwrap_or_default();
                let mut restored = Map::new();
                for (name, value) in object {
                    let here = format!("{at}/{}", escape(&name));
                    match properties.get(&name) {
                        Some(schema) => {
                            if value.is_null()
                                && !required.contains(&name.as_str())
                                && !permits_null(self.root, schema, depth)
                            {
                                self.repairs.push(format!(
                                    "{here}: dropped null (an optional property left out)"
                                ));
                                continue;
                            }
                            let value = self.node(schema, value, &here, depth + 1);
                            restored.insert(name, value);
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
                        .enumerate()
                        .map(|(index, item)| {
                            self.node(schema, item, &format!("{at}/{index}"), depth + 1)
                        })
                        .collect(),
                ),
                _ => Value::Array(items),
            },
            other => other,
        }
    }
}

/// The branch of an `anyOf`/`oneOf` an answer was written for: the first whose type fits and,
/// for objects, whose properties cover the answer's keys.
fn pick_branch<'a>(root: &'a Value, branches: &'a [Value], instance: &Value) -> Option<&'a Value> {
    let resolved = |branch: &'a Value| walk::follow(root, branch);
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
    let name = json_type(instance);
    let matches = |ty: &Value| ty == name || (ty == "number" && name == "integer");
    match schema.get("type") {
        Some(Value::String(_)) => matches(schema.get("type").unwrap_or(&Value::Null)),
        Some(Value::Array(types)) => types.iter().any(matches),
        _ => true,
    }
}

/// Whether `null` is a value the schema allows, so a null in the answer is data, not absence.
fn permits_null(root: &Value, schema: &Value, depth: usize) -> bool {
    if too_deep(depth) {
        return false;
    }
    match schema {
        Value::Bool(allowed) => *allowed,
        Value::Object(map) => {
            if map.contains_key("$ref") {
                let target = walk::follow(root, schema);
                return target.get("$ref").is_none() && permits_null(root, target, depth + 1);
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
