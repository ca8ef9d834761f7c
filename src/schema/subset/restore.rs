//! The way back: an answer written for a schema in a subset, mapped to the shape of the original
//! schema (the nulls standing for absent optional properties dropped, JSON-encoded strings and
//! key/value pair arrays decoded). Local validation then checks it against the original.

use serde_json::{Map, Value};

use super::shape::{Shape, required_names, shape};
use crate::schema::walk::{self, json_type, too_deep};

/// Maps an answer written for a transformed schema back to the shape of the original: drops the
/// nulls standing for absent optional properties and, when `decode` is set (the subset encodes
/// free-form values), decodes JSON-encoded strings and key/value pair arrays. Each null dropped
/// is noted in `repairs`.
///
/// The answer is restored in place, and the pointer of where the walk is kept in one buffer:
/// an answer that needs nothing restored (the common case) is not copied, and no pointer is
/// written out unless a repair names it.
pub fn restore(
    root: &Value,
    mut instance: Value,
    decode: bool,
    repairs: &mut Vec<String>,
) -> Value {
    Restore {
        root,
        decode,
        repairs,
        at: String::new(),
    }
    .node(root, &mut instance, 0);
    instance
}

struct Restore<'a> {
    root: &'a Value,
    decode: bool,
    repairs: &'a mut Vec<String>,
    /// The JSON pointer of the instance being restored.
    at: String,
}

impl Restore<'_> {
    fn node(&mut self, node: &Value, instance: &mut Value, depth: usize) {
        if too_deep(depth) {
            return;
        }
        if node.get("$ref").is_some() {
            let target = walk::follow(self.root, node);
            // A reference that points to nothing: the answer as it is.
            if target.get("$ref").is_none() {
                self.node(target, instance, depth + 1);
            }
            return;
        }
        if self.decode {
            match (shape(node), &*instance) {
                (Shape::Opaque, Value::String(text)) => {
                    if let Ok(decoded) = serde_json::from_str(text) {
                        *instance = decoded;
                    }
                    return;
                }
                (Shape::Map(values), Value::Array(_)) => {
                    return self.map(values, instance, depth);
                }
                _ => {}
            }
        }
        self.plain(node, instance, depth)
    }

    /// Key/value pairs made an object again, when every pair is well formed.
    fn map(&mut self, values: &Value, instance: &mut Value, depth: usize) {
        let Value::Array(pairs) = instance else {
            return;
        };
        let well_formed = pairs.iter().all(|pair| {
            pair.get("key").is_some_and(Value::is_string) && pair.get("value").is_some()
        });
        if !well_formed {
            return;
        }
        let mut object = Map::new();
        for pair in std::mem::take(pairs) {
            if let Value::Object(mut pair) = pair {
                let key = pair
                    .remove("key")
                    .and_then(|key| key.as_str().map(str::to_owned))
                    .unwrap_or_default();
                let mut value = pair.remove("value").unwrap_or(Value::Null);
                self.within(&key, |restore| restore.node(values, &mut value, depth + 1));
                object.insert(key, value);
            }
        }
        *instance = Value::Object(object);
    }

    fn plain(&mut self, node: &Value, instance: &mut Value, depth: usize) {
        if let Some(Value::Array(branches)) = node.get("allOf") {
            self.own(node, instance, depth);
            for branch in branches {
                self.node(branch, instance, depth + 1);
            }
            return;
        }
        for keyword in ["anyOf", "oneOf"] {
            if let Some(Value::Array(branches)) = node.get(keyword) {
                self.own(node, instance, depth);
                if let Some(branch) = pick_branch(self.root, branches, instance) {
                    self.node(branch, instance, depth + 1);
                }
                return;
            }
        }
        self.own(node, instance, depth)
    }

    /// Restores what the node itself says about properties and items.
    fn own(&mut self, node: &Value, instance: &mut Value, depth: usize) {
        match instance {
            Value::Object(object) => {
                let Some(Value::Object(properties)) = node.get("properties") else {
                    return;
                };
                let required = node.as_object().map(required_names).unwrap_or_default();
                object.retain(|name, value| {
                    let Some(schema) = properties.get(name) else {
                        return true;
                    };
                    self.within(name, |restore| {
                        if value.is_null()
                            && !required.contains(&name.as_str())
                            && !permits_null(restore.root, schema, depth)
                        {
                            let at = &restore.at;
                            (restore.repairs).push(format!(
                                "{at}: dropped null (an optional property left out)"
                            ));
                            return false;
                        }
                        restore.node(schema, value, depth + 1);
                        true
                    })
                });
            }
            Value::Array(items) => {
                if let Some(schema) = node.get("items")
                    && (schema.is_object() || schema.is_boolean())
                {
                    for (index, item) in items.iter_mut().enumerate() {
                        self.within(&index.to_string(), |restore| {
                            restore.node(schema, item, depth + 1)
                        });
                    }
                }
            }
            _ => {}
        }
    }

    /// What `step` gives with the pointer one token, `name`, deeper.
    fn within<T>(&mut self, name: &str, step: impl FnOnce(&mut Self) -> T) -> T {
        let length = self.at.len();
        walk::push_token(&mut self.at, name);
        let result = step(self);
        self.at.truncate(length);
        result
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
