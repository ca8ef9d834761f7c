//! Whether a schema the schema builder wrote makes sense as a form to fill: a small model can
//! write one that is valid JSON Schema and still asks for nothing a text could give — its
//! properties named `additionalProperties` (a schema written as data), a string of at least 10
//! and at most 5 characters, an `enum` whose value its own `pattern` rejects, a required
//! property the schema forbids. Each is a violation fed back to the builder.
//!
//! ```
//! use serde_json::json;
//!
//! let built = json!({
//!     "type": "object",
//!     "properties": { "name": { "type": "string", "minLength": 10, "maxLength": 5 } }
//! });
//! let violations = structure::schema::sense::nonsense(&built);
//! assert_eq!(violations[0].pointer, "/properties/name");
//! ```

use serde_json::{Map, Value};

use crate::schema::keywords;
use crate::schema::validator::CompiledSchema;
use crate::schema::violation::{Category, Violation};
use crate::schema::walk::{self, Next};

/// Bounds that no value can meet when the first is above the second.
const BOUNDS: &[(&str, &str)] = &[
    ("minLength", "maxLength"),
    ("minimum", "maximum"),
    ("minItems", "maxItems"),
    ("minProperties", "maxProperties"),
];

/// What makes no sense in `schema`, each at the pointer of the schema that holds it.
pub fn nonsense(schema: &Value) -> Vec<Violation> {
    let mut found = Vec::new();
    walk::schemas(schema, &mut |node, at| {
        let at = if at.is_empty() { "/" } else { at };
        keyword_names(node, at, &mut found);
        crossed_bounds(node, at, &mut found);
        rejected_enum_values(node, at, &mut found);
        forbidden_required(node, at, &mut found);
        Next::Descend
    });
    found
}

fn violation(at: &str, constraint: String) -> Violation {
    Violation {
        category: Category::Schema,
        pointer: at.to_owned(),
        constraint,
        actual: None,
    }
}

/// Properties named after JSON Schema's own keywords that no one names a field: a schema
/// written where its fields belong. Keywords that are also plain words (`type`, `title`,
/// `format`, ...) are fair names.
fn keyword_names(node: &Map<String, Value>, at: &str, found: &mut Vec<Violation>) {
    let Some(Value::Object(properties)) = node.get("properties") else {
        return;
    };
    for name in properties.keys() {
        let schema_word = name.starts_with('$')
            || name.chars().any(|c| c.is_ascii_uppercase())
            || matches!(name.as_str(), "properties" | "items" | "enum" | "required");
        if schema_word && keywords::is_known(name) {
            found.push(violation(
                at,
                format!(
                    "has a property named {name:?}, a JSON Schema keyword: properties are the \
                     fields to fill, named for what they hold"
                ),
            ));
        }
    }
}

fn crossed_bounds(node: &Map<String, Value>, at: &str, found: &mut Vec<Violation>) {
    let bound = |keyword: &str| node.get(keyword).and_then(Value::as_f64);
    for (low, high) in BOUNDS {
        if let (Some(min), Some(max)) = (bound(low), bound(high))
            && min > max
        {
            found.push(violation(
                at,
                format!("has {low} {min} above {high} {max}: no value can meet both"),
            ));
            return;
        }
    }
    // An exclusive bound leaves nothing when it reaches the other bound.
    for (low, high) in [
        ("exclusiveMinimum", "maximum"),
        ("minimum", "exclusiveMaximum"),
        ("exclusiveMinimum", "exclusiveMaximum"),
    ] {
        if let (Some(min), Some(max)) = (bound(low), bound(high))
            && min >= max
        {
            found.push(violation(
                at,
                format!("has {low} {min} at or above {high} {max}: no value can meet both"),
            ));
            return;
        }
    }
}

/// `enum` values that the same schema's other keywords reject.
fn rejected_enum_values(node: &Map<String, Value>, at: &str, found: &mut Vec<Violation>) {
    let Some(Value::Array(values)) = node.get("enum") else {
        return;
    };
    let mut rest = node.clone();
    rest.remove("enum");
    // Subschemas are judged where they are; a reference means nothing out of its document.
    rest.retain(|keyword, _| walk::holds(keyword) == walk::Holds::Nothing && keyword != "$ref");
    let Ok(own) = CompiledSchema::compile(&Value::Object(rest)) else {
        return;
    };
    for value in values.iter().filter(|value| !own.is_valid(value)) {
        found.push(violation(
            at,
            format!("lists {value} in its enum, which its own other keywords reject"),
        ));
    }
}

/// Required properties an object without other properties does not declare.
fn forbidden_required(node: &Map<String, Value>, at: &str, found: &mut Vec<Violation>) {
    if node.get("additionalProperties") != Some(&Value::Bool(false)) {
        return;
    }
    let Some(Value::Array(required)) = node.get("required") else {
        return;
    };
    let declared = node.get("properties").and_then(Value::as_object);
    for name in required.iter().filter_map(Value::as_str) {
        if !declared.is_some_and(|properties| properties.contains_key(name)) {
            found.push(violation(
                at,
                format!(
                    "requires {name:?}, which it does not declare while it allows no other \
                     property"
                ),
            ));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn constraints(schema: Value) -> Vec<String> {
        nonsense(&schema)
            .into_iter()
            .map(|violation| format!("{}: {}", violation.pointer, violation.constraint))
            .collect()
    }

    #[test]
    fn the_schema_the_small_model_built_is_nonsense_on_three_counts() {
        // What SmolLM2-135M built for "a person's name and their age in years".
        let built = json!({
            "type": "object",
            "properties": {
                "type": { "type": "string" },
                "additionalProperties": {
                    "type": "string",
                    "minLength": 10,
                    "maxLength": 5,
                    "enum": ["date-time"],
                    "pattern": "^[A-Z]{2}$"
                }
            }
        });
        let found = constraints(built);
        assert_eq!(found.len(), 3, "{found:#?}");
        assert!(found[0].contains("named \"additionalProperties\""));
        assert!(found[1].contains("minLength 10 above maxLength 5"));
        assert!(found[2].contains("lists \"date-time\" in its enum"));
    }

    #[test]
    fn each_check_finds_its_own_nonsense() {
        assert_eq!(
            constraints(json!({ "type": "integer", "minimum": 5, "maximum": 1 })),
            ["/: has minimum 5 above maximum 1: no value can meet both"]
        );
        assert_eq!(
            constraints(json!({ "type": "array", "minItems": 3, "maxItems": 2 })).len(),
            1
        );
        assert_eq!(
            constraints(json!({ "type": "number", "exclusiveMinimum": 5, "maximum": 5 })),
            ["/: has exclusiveMinimum 5 at or above maximum 5: no value can meet both"]
        );
        assert_eq!(
            constraints(json!({ "type": "integer", "enum": [1, 2.5, "x"] })).len(),
            2,
            "2.5 and \"x\" are no integers"
        );
        assert_eq!(
            constraints(json!({
                "type": "object",
                "properties": { "a": { "type": "string" } },
                "required": ["a", "b"],
                "additionalProperties": false
            })),
            ["/: requires \"b\", which it does not declare while it allows no other property"]
        );
        assert_eq!(
            constraints(json!({ "properties": { "$schema": { "type": "string" } } })).len(),
            1
        );
    }

    #[test]
    fn sensible_schemas_pass_plain_word_names_included() {
        for schema in [
            json!({
                "type": "object",
                "properties": {
                    "type": { "type": "string", "enum": ["bug", "feature"] },
                    "title": { "type": "string", "minLength": 3, "maxLength": 80 },
                    "format": { "type": "string" },
                    "priority": { "type": "integer", "minimum": 1, "maximum": 5 },
                    "tags": { "type": "array", "items": { "type": "string" }, "maxItems": 3 }
                },
                "required": ["type", "title"],
                "additionalProperties": false
            }),
            json!({ "type": "object", "required": ["b"], "additionalProperties": true }),
            json!({ "type": "string", "enum": ["AB"], "pattern": "^[A-Z]{2}$" }),
            json!({ "type": "integer", "minimum": 1, "maximum": 20, "exclusiveMinimum": 3, "exclusiveMaximum": 45 }),
        ] {
            assert_eq!(
                constraints(schema.clone()),
                Vec::<String>::new(),
                "{schema}"
            );
        }
    }
}
