//! The schema stage: inline schemas checked before any LLM call, the bundled registry, the
//! meta-schema, and validation with formats asserted.

mod support;

use serde_json::{Value, json};
use structure::ports::MemoryKeyValue;
use structure::schema::TargetSchema;
use structure::schema::registry::Registry;
use structure::schema::registry::{self, META_SCHEMA};
use structure::{ErrorKind, SchemaInput, StructureError};
use support::{MapConfig, ScriptedTransport, bundled, bundled_names, ports, root};

/// The schema stage with an empty store: the bundled registry only.
fn resolve(input: &SchemaInput) -> Result<TargetSchema, StructureError> {
    let store = MemoryKeyValue::default();
    let scope = structure::Scope::default();
    structure::schema::resolve(
        input,
        &Registry::new(&store, &scope),
        &structure::limits::CallLimits::default(),
    )
}

fn inline(schema: Value) -> Result<TargetSchema, StructureError> {
    resolve(&SchemaInput::Inline(schema))
}

fn invalid_schema_message(schema: Value) -> String {
    match inline(schema.clone()) {
        Err(StructureError {
            kind: ErrorKind::InvalidSchema { .. },
            message,
            ..
        }) => message,
        Err(other) => panic!("expected invalid-schema for {schema}, got {other:?}"),
        Ok(_) => panic!("expected invalid-schema for {schema}"),
    }
}

#[test]
fn every_root_some_value_satisfies_is_accepted() {
    use structure::schema::root::{Root, classify};
    for (schema, root) in [
        (json!({ "type": "object" }), Root::Object),
        (json!({ "type": ["object", "null"] }), Root::Object),
        (
            json!({ "properties": { "a": { "type": "string" } } }),
            Root::Object,
        ),
        (json!({}), Root::Object),
        (
            json!({ "anyOf": [{ "type": "object" }, { "type": "string" }] }),
            Root::Object,
        ),
        (
            json!({ "$ref": "#/$defs/thing", "$defs": { "thing": { "type": "object" } } }),
            Root::Object,
        ),
        (
            json!({ "allOf": [{ "type": "object" }, { "required": ["a"] }] }),
            Root::Object,
        ),
        (
            json!({ "type": "array", "items": { "type": "object" } }),
            Root::Records,
        ),
        (
            json!({ "type": "array", "items": { "$ref": "#/definitions/o" }, "definitions": { "o": { "type": "object" } } }),
            Root::Records,
        ),
        (
            json!({ "type": "array", "items": { "type": "string" } }),
            Root::Wrapped,
        ),
        (
            json!({ "type": "array", "items": { "properties": { "a": {} }, "required": ["a"] } }),
            Root::Records,
        ),
        (
            json!({ "type": "array", "prefixItems": [{ "type": "object" }], "items": { "type": "object" } }),
            Root::Wrapped,
        ),
        (json!({ "type": "string" }), Root::Wrapped),
        (json!({ "enum": ["a", "b"] }), Root::Wrapped),
        (json!({ "const": 3 }), Root::Wrapped),
        (
            json!({ "anyOf": [{ "type": "string" }, { "type": "number" }] }),
            Root::Wrapped,
        ),
        (
            json!({ "$ref": "#/$defs/n", "$defs": { "n": { "type": "number" } } }),
            Root::Wrapped,
        ),
    ] {
        assert!(inline(schema.clone()).is_ok(), "{schema}");
        assert_eq!(classify(&schema).unwrap(), root, "{schema}");
    }
    for schema in [
        json!({ "$ref": "#" }),
        json!({ "$ref": "#/$defs/a", "$defs": { "a": { "$ref": "#/$defs/b" }, "b": { "$ref": "#/$defs/a" } } }),
    ] {
        assert!(invalid_schema_message(schema).contains("reference back to itself"));
    }
}

#[test]
fn external_references_are_rejected_before_any_call() {
    for (schema, reference) in [
        (
            json!({ "type": "object", "properties": { "a": { "$ref": "https://example.com/a.json" } } }),
            "https://example.com/a.json",
        ),
        (
            json!({ "type": "object", "properties": { "a": { "$ref": "http://example.com/a.json#/x" } } }),
            "http://example.com/a.json#/x",
        ),
        (
            json!({ "type": "object", "properties": { "a": { "$ref": "file:///etc/passwd" } } }),
            "file:///etc/passwd",
        ),
        (
            json!({ "type": "object", "$defs": { "b": { "items": { "$ref": "other.json#/b" } } } }),
            "other.json#/b",
        ),
        (
            json!({ "type": "object", "properties": { "a": { "$dynamicRef": "https://example.com/x" } } }),
            "https://example.com/x",
        ),
    ] {
        let message = invalid_schema_message(schema);
        assert!(
            message.contains(&format!("external reference {reference:?}")),
            "{message}"
        );
    }
    // Whole call: the error comes back and no request is made.
    let transport = ScriptedTransport::new([]);
    let config = MapConfig::local();
    let arguments = json!({ "prompt": "x", "schema": { "type": "object", "properties": { "a": { "$ref": "https://evil.example/s.json" } } } });
    let error = structure::call_tool(
        &arguments,
        &structure::Scope::default(),
        &ports(&transport, &config),
    )
    .unwrap_err();
    assert_eq!(
        error.kind,
        ErrorKind::InvalidSchema {
            pointer: Some("/properties/a/$ref".into())
        }
    );
    assert_eq!(transport.count(), 0);
}

#[test]
fn same_document_references_work() {
    let target = inline(json!({
        "type": "object",
        "properties": {
            "home": { "$ref": "#/$defs/address" },
            "work": { "$ref": "#/definitions/address" },
            "tree": { "$ref": "#/$defs/node" },
            "same": { "$ref": "#/properties/home" }
        },
        "$defs": {
            "address": { "type": "object", "properties": { "city": { "type": "string" } }, "required": ["city"] },
            "node": { "type": "object", "properties": { "children": { "type": "array", "items": { "$ref": "#/$defs/node" } } } }
        },
        "definitions": { "address": { "type": "object", "required": ["street"] } }
    }))
    .unwrap();
    assert!(target.compiled.is_valid(&json!({ "home": { "city": "Bern" }, "work": { "street": "Main" }, "tree": { "children": [{ "children": [] }] } })));
    let violations = target.compiled.violations(
        &json!({ "home": {}, "tree": { "children": [{ "children": 1 }] }, "same": { "city": 2 } }),
    );
    let text: Vec<String> = violations.iter().map(ToString::to_string).collect();
    assert!(
        text.contains(&"/home/city: required property is missing".to_owned()),
        "{text:?}"
    );
    assert!(
        text.contains(&"/tree/children/0/children: value must be an array (was 1)".to_owned()),
        "{text:?}"
    );
    assert!(
        text.contains(&"/same/city: value must be a string (was 2)".to_owned()),
        "{text:?}"
    );
}

#[test]
fn invalid_schemas_get_an_error_naming_the_problem() {
    let message = invalid_schema_message(
        json!({ "type": "object", "properties": { "a": { "type": "strin" } } }),
    );
    assert!(
        message.contains("does not compile") && message.contains("strin"),
        "{message}"
    );
    let message = invalid_schema_message(
        json!({ "type": "object", "properties": { "a": { "minLength": -1 } } }),
    );
    assert!(message.contains("does not compile"), "{message}");
    let message = invalid_schema_message(
        json!({ "type": "object", "properties": { "a": { "pattern": "([a-z" } } }),
    );
    assert!(message.contains("does not compile"), "{message}");
    let message = invalid_schema_message(
        json!({ "type": "object", "properties": { "a": { "$ref": "#/$defs/missing" } } }),
    );
    assert!(message.contains("points to nothing"), "{message}");
}

#[test]
fn older_drafts_are_honoured_through_schema() {
    // Draft 4 writes exclusiveMinimum as a boolean next to minimum; 2020-12 rejects that form.
    let draft4 = json!({
        "$schema": "http://json-schema.org/draft-04/schema#",
        "type": "object",
        "properties": { "n": { "type": "number", "minimum": 0, "exclusiveMinimum": true } }
    });
    let target = inline(draft4.clone()).unwrap();
    assert!(!target.compiled.is_valid(&json!({ "n": 0 })));
    assert!(target.compiled.is_valid(&json!({ "n": 0.5 })));
    let mut modern = draft4;
    modern.as_object_mut().unwrap().remove("$schema");
    assert!(inline(modern).is_err());
}

#[test]
fn formats_are_asserted() {
    let target = inline(json!({
        "type": "object",
        "properties": {
            "when": { "type": "string", "format": "date-time" },
            "day": { "type": "string", "format": "date" },
            "mail": { "type": "string", "format": "email" },
            "link": { "type": "string", "format": "uri" },
            "id": { "type": "string", "format": "uuid" }
        }
    }))
    .unwrap();
    assert!(target.compiled.is_valid(&json!({
        "when": "2026-05-06T14:30:00Z", "day": "2026-05-06", "mail": "ada@example.com",
        "link": "https://example.com/x", "id": "3f2504e0-4f89-41d3-9a0c-0305e82c3301"
    })));
    for (field, bad) in [
        ("when", "today 2:30"),
        ("day", "06.05.2026"),
        ("mail", "ada at example"),
        ("link", "not a uri"),
        ("id", "1234"),
    ] {
        let violations = target.compiled.violations(&json!({ field: bad }));
        assert_eq!(violations.len(), 1, "{field}");
        let text = violations[0].to_string();
        assert!(
            text.starts_with(&format!("/{field}: value must match format")),
            "{text}"
        );
        assert!(text.ends_with(&format!("(was \"{bad}\")")), "{text}");
    }
}

#[test]
fn violations_are_described_as_spec_4_1_writes_them() {
    let target = inline(json!({
        "type": "object",
        "properties": {
            "priority": { "type": "integer", "maximum": 5 },
            "tags": { "type": "array", "items": { "type": "string", "pattern": "^[a-z][a-z0-9-]+$" }, "maxItems": 3 },
            "status": { "enum": ["success", "failure"] },
            "name": { "type": "string", "minLength": 2 }
        },
        "required": ["priority", "status"],
        "additionalProperties": false
    }))
    .unwrap();
    let violations = target.compiled.violations(&json!({
        "priority": 7, "tags": ["ok", "fine", "Camel-Case", "x1"], "name": "A", "extra": 1
    }));
    let mut lines: Vec<String> = violations.iter().map(ToString::to_string).collect();
    lines.sort();
    assert_eq!(
        lines,
        vec![
            "/extra: property is not allowed here: remove it",
            "/name: value must be at least 2 characters long (was \"A\")",
            "/priority: value must be ≤ 5 (was 7)",
            "/status: required property is missing",
            "/tags/2: value must match pattern \"^[a-z][a-z0-9-]+$\" (was \"Camel-Case\")",
            "/tags: array must have at most 3 items (was 4 items)",
        ]
    );
}

#[test]
fn named_schemas_come_from_the_bundled_registry_with_their_manual() {
    let target = resolve(&SchemaInput::Named("user-action-record".into())).unwrap();
    assert_eq!(target.origin, "registry:bundled");
    assert!(
        target
            .manual
            .as_deref()
            .unwrap()
            .contains("verb-phrase in past tense")
    );
    assert_eq!(*target.schema, bundled("user-action-record"));
}

#[test]
fn unknown_names_list_close_matches() {
    let error = resolve(&SchemaInput::Named("user-action-recrod".into()))
        .err()
        .unwrap();
    assert_eq!(
        error.kind,
        ErrorKind::SchemaNotFound {
            name: "user-action-recrod".into(),
            suggestions: vec!["user-action-record".into()]
        }
    );
    assert!(
        error.message.contains("did you mean user-action-record?"),
        "{}",
        error.message
    );
    let error = resolve(&SchemaInput::Named("invoice".into()))
        .err()
        .unwrap();
    assert!(
        error.message.contains("available: contact, insight-record"),
        "{}",
        error.message
    );
}

#[test]
fn names_that_could_climb_a_path_are_invalid_requests() {
    for name in [
        "../etc/passwd",
        "a/b",
        "..",
        "UPPER",
        "_meta-schema",
        "a..b",
        &"x".repeat(65),
    ] {
        let error = resolve(&SchemaInput::Named(name.to_owned())).err().unwrap();
        assert_eq!(
            error.kind,
            ErrorKind::InvalidRequest {
                field: "schema".into()
            },
            "{name}"
        );
    }
}

#[test]
fn every_file_in_schemas_is_bundled_and_usable() {
    let mut files: Vec<String> = std::fs::read_dir(root().join("schemas"))
        .unwrap()
        .map(|entry| entry.unwrap().file_name().into_string().unwrap())
        .filter(|name| !name.starts_with('_'))
        .collect();
    files.sort();
    assert_eq!(files, registry::bundled_file_names());
    let names = bundled_names();
    assert!(names.len() >= 5, "{names:?}");
    let store = MemoryKeyValue::default();
    let listed: Vec<String> = Registry::new(&store, &structure::Scope::default())
        .list()
        .unwrap()
        .into_iter()
        .map(|info| info.name)
        .collect();
    assert_eq!(listed, names);
    for name in names {
        let target = resolve(&SchemaInput::Named(name.clone())).unwrap();
        assert_eq!(
            target.schema["title"],
            Value::String(name.clone()),
            "title of {name}"
        );
        assert!(
            target.schema["description"].is_string(),
            "description of {name}"
        );
        assert!(target.manual.is_some(), "manual of {name}");
    }
}

#[test]
fn the_meta_schema_accepts_the_simplified_subset_and_rejects_the_rest() {
    let meta_schema: Value = serde_json::from_str(META_SCHEMA).unwrap();
    let meta = inline(meta_schema).unwrap();
    let good = json!({
        "type": "object",
        "properties": {
            "name": { "type": "string", "minLength": 1 },
            "priority": { "type": "integer", "minimum": 1, "maximum": 5 },
            "tags": { "type": "array", "items": { "type": "string", "enum": ["a", "b"] }, "uniqueItems": true },
            "owner": { "type": "object", "properties": { "email": { "type": "string", "format": "email" } }, "required": ["email"], "additionalProperties": false }
        },
        "required": ["name", "priority"],
        "additionalProperties": false
    });
    assert_eq!(meta.compiled.violations(&good), vec![]);
    // Every schema the meta-schema accepts is itself a usable target schema.
    assert!(inline(good).is_ok());
    for bad in [
        json!({ "type": "string" }),
        json!({ "type": "object", "properties": { "a": { "type": "strin" } } }),
        json!({ "type": "object", "properties": { "a": { "type": "string", "format": "phone" } } }),
        json!({ "type": "object", "properties": { "a": { "$ref": "https://x" } } }),
        json!({ "type": "object", "properties": { "a": { "oneOf": [] } } }),
    ] {
        assert!(!meta.compiled.is_valid(&bad), "{bad}");
    }
}

#[test]
fn a_bare_pointer_reference_is_read_as_the_fragment_it_means() {
    let schema = json!({
        "type": "object",
        "properties": {
            "ipmi": { "type": "object", "properties": { "host": { "type": "string" } } },
            "backup": { "$ref": "/properties/ipmi" }
        }
    });
    let target = inline(schema).unwrap();
    assert_eq!(
        target.schema["properties"]["backup"]["$ref"],
        "#/properties/ipmi"
    );
    assert!(
        target.warnings.iter().any(|warning| warning.starts_with(
            "/properties/backup/$ref: $ref \"/properties/ipmi\" is read as \"#/properties/ipmi\""
        )),
        "{:?}",
        target.warnings
    );
    assert!(
        !target
            .compiled
            .is_valid(&json!({ "backup": { "host": 5 } }))
    );
    // A bare pointer to nothing is no reference into the schema: refused as leaving it.
    let message = invalid_schema_message(
        json!({ "type": "object", "properties": { "a": { "$ref": "/nowhere" } } }),
    );
    assert!(message.contains("\"/nowhere\""), "{message}");
}

#[test]
fn a_reference_to_nothing_names_itself_and_where_it_is() {
    let message = invalid_schema_message(json!({
        "type": "object",
        "properties": { "a": { "$ref": "#/definitions/missing" } },
        "definitions": { "present": { "type": "string" } }
    }));
    assert_eq!(
        message,
        "$ref \"#/definitions/missing\" at /properties/a/$ref points to nothing in the schema: no /definitions/missing in it"
    );
}
