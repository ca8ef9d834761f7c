//! What a call's schema is called in the insights, the metrics and the access log: its name
//! only once the call has shown the name is one (an outcome from the registry, or an error of a
//! stage after the schema resolved), else `unknown`; a schema not asked by name is called by
//! how it was given (`inline`, `text`, `examples`). So a caller cannot add series by sending
//! made-up names.

use serde_json::Value;

use crate::request::SchemaInput;

/// How a call asks for its schema.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Asked {
    /// By a registry name, as the caller wrote it.
    Name(String),
    /// `inline`, `text` or `examples`.
    Way(&'static str),
}

impl Asked {
    /// How a checked request's `schema` asks for it.
    pub fn of_input(schema: &SchemaInput) -> Self {
        match schema {
            SchemaInput::Named(name) => Asked::Name(name.trim().to_owned()),
            SchemaInput::Described(_) => Asked::Way("text"),
            SchemaInput::Examples(_) => Asked::Way("examples"),
            SchemaInput::Inline(_) => Asked::Way("inline"),
        }
    }

    /// How the tool arguments `arguments` ask for their schema (none when they name none).
    pub fn of_arguments(arguments: &Value) -> Option<Self> {
        let mode = arguments.get("schemaMode").and_then(Value::as_str);
        Some(match (arguments.get("schema")?, mode) {
            (Value::String(name), Some("named")) => Asked::Name(name.trim().to_owned()),
            (_, Some("text")) => Asked::Way("text"),
            (_, Some("examples")) => Asked::Way("examples"),
            _ => Asked::Way("inline"),
        })
    }
}

/// The errors of the stages after the schema was resolved: a call that ends in one of them
/// named a schema that exists.
pub const AFTER_RESOLVING: &[&str] = &[
    "provider",
    "transport",
    "refusal",
    "blocked",
    "truncated",
    "invalid-response",
    "structured-output-failed",
    "budget-exhausted",
];

/// The label of a call that asked as `asked` and ended with `schema_origin` (an outcome's) or
/// `error_kind` (an error's).
pub fn schema_label(asked: Asked, schema_origin: Option<&str>, error_kind: Option<&str>) -> String {
    match asked {
        Asked::Way(way) => way.to_owned(),
        Asked::Name(name) => {
            let resolved = schema_origin.is_some_and(|origin| origin.starts_with("registry"))
                || error_kind.is_some_and(|kind| AFTER_RESOLVING.contains(&kind));
            if resolved { name } else { "unknown".to_owned() }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_checked_request_asks_as_its_arguments_do() {
        use crate::request::SchemaInput;
        let described = SchemaInput::Described("a contact".into());
        assert_eq!(Asked::of_input(&described), Asked::Way("text"));
        let named = SchemaInput::Named(" contact ".into());
        assert_eq!(Asked::of_input(&named), Asked::Name("contact".into()));
        assert_eq!(
            Asked::of_input(&SchemaInput::Inline(json!({}))),
            Asked::Way("inline")
        );
        assert_eq!(
            Asked::of_input(&SchemaInput::Examples(vec![])),
            Asked::Way("examples")
        );
    }

    #[test]
    fn a_name_is_a_label_only_once_it_resolved() {
        let named =
            Asked::of_arguments(&json!({ "schema": " contact ", "schemaMode": "named" })).unwrap();
        assert_eq!(named, Asked::Name("contact".into()));
        assert_eq!(
            schema_label(named.clone(), Some("registry:bundled"), None),
            "contact"
        );
        assert_eq!(
            schema_label(named.clone(), None, Some("provider")),
            "contact"
        );
        assert_eq!(
            schema_label(named.clone(), None, Some("schema-not-found")),
            "unknown"
        );
        assert_eq!(schema_label(named, Some("inferred"), None), "unknown");
        for (arguments, way) in [
            (json!({ "schema": {"type": "object"} }), "inline"),
            (
                json!({ "schema": "a person", "schemaMode": "text" }),
                "text",
            ),
            (
                json!({ "schema": [{}], "schemaMode": "examples" }),
                "examples",
            ),
        ] {
            assert_eq!(
                schema_label(Asked::of_arguments(&arguments).unwrap(), None, None),
                way
            );
        }
        assert_eq!(Asked::of_arguments(&json!({ "prompt": "p" })), None);
    }
}
