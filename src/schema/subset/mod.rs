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

mod lower;
mod restore;
pub mod totals;

use serde_json::{Map, Value};

pub use lower::to_subset;
pub use restore::restore;

/// Which keywords a provider takes, as a list of names separated by spaces.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Keywords {
    Only(&'static str),
    AllBut(&'static str),
}

impl Keywords {
    fn allows(self, keyword: &str) -> bool {
        match self {
            Keywords::Only(list) => lists(list, keyword),
            Keywords::AllBut(list) => !lists(list, keyword),
        }
    }
}

/// Whether `name` is one of the names in the space-separated `list`.
pub(crate) fn lists(list: &str, name: &str) -> bool {
    list.split_whitespace().any(|listed| listed == name)
}

/// What a provider's structured-output mode accepts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Subset {
    pub name: &'static str,
    pub keywords: Keywords,
    /// String formats the provider takes, separated by spaces; `None`: all.
    pub formats: Option<&'static str>,
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
    /// What the provider counts over the whole schema; a schema over it is loosened.
    pub limits: Option<totals::Limits>,
}

/// The schema as it is.
pub const FULL: Subset = Subset {
    name: "full",
    keywords: Keywords::AllBut(""),
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
    limits: None,
};

/// OpenAI's strict mode (tests/provider-api/SUBSETS.md).
pub const OPENAI_STRICT: Subset = Subset {
    name: "openai-strict",
    keywords: Keywords::Only(concat!(
        "type properties required additionalProperties items enum const anyOf ",
        "$ref description title pattern format multipleOf minimum maximum ",
        "exclusiveMinimum exclusiveMaximum minItems maxItems"
    )),
    formats: Some("date-time time date duration email hostname ipv4 ipv6 uuid"),
    closed_objects: true,
    all_required: true,
    encode_free_form: true,
    any_of_only: true,
    bare_refs: true,
    limits: Some(totals::OPENAI_LIMITS),
    ..FULL
};

/// Anthropic's structured outputs and strict tools, as Anthropic's SDK rewrites schemas: closed
/// objects (optional properties may stay optional), formats from a list, `minItems` only 0 or 1,
/// no numeric or length bounds, no patterns, no `const` or type arrays (said another way).
pub const ANTHROPIC: Subset = Subset {
    name: "anthropic",
    keywords: Keywords::Only(concat!(
        "type properties required additionalProperties items enum anyOf allOf ",
        "$ref description title format minItems"
    )),
    formats: Some("date-time time date duration email hostname uri ipv4 ipv6 uuid"),
    closed_objects: true,
    encode_free_form: true,
    max_min_items: Some(1),
    const_as_enum: true,
    type_arrays_as_any_of: true,
    recursive_refs: false,
    ..FULL
};

/// Gemini's `responseJsonSchema`: the keywords it honours, key order stated.
pub const GEMINI: Subset = Subset {
    name: "gemini",
    keywords: Keywords::Only(concat!(
        "type format title description enum items prefixItems minItems maxItems ",
        "minimum maximum anyOf oneOf properties additionalProperties required ",
        "$ref"
    )),
    bare_refs: true,
    property_ordering: true,
    const_as_enum: true,
    type_arrays_as_any_of: true,
    recursive_refs: false,
    ..FULL
};

/// Servers that turn the schema into a grammar with llama.cpp's converter, which fails on some
/// regular expressions: everything but `pattern`.
pub const GRAMMAR_WITHOUT_PATTERNS: Subset = Subset {
    name: "grammar",
    keywords: Keywords::AllBut("pattern patternProperties"),
    ..FULL
};

/// Annotations with no meaning for the model, and extensions (`x-…`, `_…`): dropped silently.
pub(crate) fn is_silent(keyword: &str) -> bool {
    matches!(
        keyword,
        "$schema" | "$id" | "$comment" | "$anchor" | "$dynamicAnchor" | "$defs" | "definitions"
    ) || keyword.starts_with("x-")
        || keyword.starts_with('_')
}

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

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

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
        assert_eq!(
            restore(&original, answer, false, &mut Vec::new()),
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
