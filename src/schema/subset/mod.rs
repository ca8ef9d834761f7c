//! The JSON Schema subset each provider accepts, and the way back: [`lower`] rewrites a schema
//! into a subset, [`restore`] maps an answer back to the original shape.
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

pub mod accepted;
mod lower;
mod restore;
pub mod shape;
pub mod totals;

pub use accepted::{
    ANTHROPIC, FULL, GEMINI, GRAMMAR_WITHOUT_PATTERNS, Keywords, OPENAI_STRICT, Subset,
};
pub use lower::to_subset;
pub use restore::restore;

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Value, json};

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
    fn the_grammar_subset_moves_patterns_and_lists_every_property_in_order() {
        let schema = json!({
            "type": "object",
            "properties": {
                "id": { "type": "string", "pattern": "^\\d+$", "minLength": 2 },
                "x": {},
                "name": { "type": "string" }
            },
            "required": ["name"],
            "additionalProperties": true
        });
        let (out, transforms) = subset(schema, &GRAMMAR_WITHOUT_PATTERNS);
        // llama.cpp's grammar writes the required properties first: all required, the optional
        // ones nullable, the model meets them in the schema's order; the object stays open.
        assert_eq!(
            out,
            json!({
                "type": "object",
                "properties": {
                    "id": { "type": ["string", "null"], "minLength": 2, "description": "Must also satisfy: pattern: \"^\\\\d+$\"." },
                    "x": {},
                    "name": { "type": "string" }
                },
                "required": ["id", "x", "name"],
                "additionalProperties": true
            })
        );
        assert_eq!(
            transforms,
            [
                "/properties/id: pattern: \"^\\\\d+$\" stated in the description, checked locally",
                "/properties/id: optional, sent as nullable (null means absent)"
            ]
        );
        let order: Vec<&String> = out["properties"].as_object().unwrap().keys().collect();
        assert_eq!(order, ["id", "x", "name"]);
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
            restore(&original, answer, true, &mut Vec::new()),
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
        let mut repairs = Vec::new();
        assert_eq!(
            restore(&original, answer, false, &mut repairs),
            json!({ "a": null, "b": null, "items": [{}, { "x": 1 }] })
        );
        // Each repair names where it was made, however deep, and only there.
        assert_eq!(
            repairs,
            [
                "/c: dropped null (an optional property left out)",
                "/items/0/x: dropped null (an optional property left out)"
            ]
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
        assert_eq!(
            restore(&original, answer, false, &mut Vec::new()),
            json!({ "phone": "123" })
        );
    }

    #[test]
    fn reference_cycles_terminate() {
        let original = json!({ "$ref": "#" });
        assert_eq!(
            restore(&original, json!({ "a": 1 }), true, &mut Vec::new()),
            json!({ "a": 1 })
        );
        let (out, _) = strict(json!({ "$ref": "#/$defs/a", "description": "x" }));
        assert_eq!(out, json!({ "$ref": "#/$defs/a" }));
    }
}
