//! The tool's contract: requests as the tool definition describes them, results as its
//! `returns` describes them, and a clear typed error for every malformed request.

mod support;

use mock_llm::Reply;
use serde_json::{Value, json};
use structure::{ErrorKind, SchemaInput, StructureRequest, tool_definition};
use support::{MapConfig, ScriptedTransport, errors, ports, validator};

fn invalid_field(arguments: Value) -> (String, String) {
    match StructureRequest::from_tool_arguments(&arguments) {
        Err(error) => match error.kind {
            ErrorKind::InvalidRequest { field } => (field, error.message),
            other => panic!("expected invalid-request, got {other:?}"),
        },
        Ok(request) => panic!("expected an error for {arguments}, got {request:?}"),
    }
}

#[test]
fn tool_arguments_are_read_as_the_tool_definition_says() {
    let schema = json!({ "type": "object" });
    let request =
        StructureRequest::from_tool_arguments(&json!({ "prompt": "p", "schema": schema })).unwrap();
    assert_eq!(request.schema, SchemaInput::Inline(schema.clone()));
    assert_eq!(request.max_loops, None, "the maxLoops setting decides");
    // An object is always inline, whatever schemaMode says.
    let request = StructureRequest::from_tool_arguments(
        &json!({ "prompt": "p", "schema": schema, "schemaMode": "named" }),
    )
    .unwrap();
    assert_eq!(request.schema, SchemaInput::Inline(schema.clone()));
    let request = StructureRequest::from_tool_arguments(
        &json!({ "prompt": "p", "schema": " contact ", "schemaMode": "named", "maxLoops": 10 }),
    )
    .unwrap();
    assert_eq!(
        (request.schema, request.max_loops),
        (SchemaInput::Named("contact".into()), Some(10))
    );
    let request = StructureRequest::from_tool_arguments(
        &json!({ "prompt": "p", "schema": "a name and an age", "schemaMode": "text" }),
    )
    .unwrap();
    assert_eq!(
        request.schema,
        SchemaInput::Described("a name and an age".into())
    );
    // LLM tool callers often send the schema serialised as a string.
    let request = StructureRequest::from_tool_arguments(
        &json!({ "prompt": "p", "schema": "{\"type\":\"object\"}" }),
    )
    .unwrap();
    assert_eq!(request.schema, SchemaInput::Inline(schema));
}

#[test]
fn every_malformed_argument_names_its_field() {
    let cases = [
        (json!("not an object"), "arguments"),
        (json!({ "schema": {} }), "prompt"),
        (json!({ "prompt": "", "schema": {} }), "prompt"),
        (json!({ "prompt": "  \n", "schema": {} }), "prompt"),
        (json!({ "prompt": 5, "schema": {} }), "prompt"),
        (json!({ "prompt": "p" }), "schema"),
        (json!({ "prompt": "p", "schema": 42 }), "schema"),
        (json!({ "prompt": "p", "schema": [] }), "schema"),
        (json!({ "prompt": "p", "schema": "contact" }), "schema"),
        (
            json!({ "prompt": "p", "schema": "", "schemaMode": "named" }),
            "schema",
        ),
        (
            json!({ "prompt": "p", "schema": {}, "schemaMode": "yaml" }),
            "schemaMode",
        ),
        (
            json!({ "prompt": "p", "schema": {}, "schemaMode": 1 }),
            "schemaMode",
        ),
        (
            json!({ "prompt": "p", "schema": {}, "maxLoops": 0 }),
            "maxLoops",
        ),
        (
            json!({ "prompt": "p", "schema": {}, "maxLoops": 11 }),
            "maxLoops",
        ),
        (
            json!({ "prompt": "p", "schema": {}, "maxLoops": -1 }),
            "maxLoops",
        ),
        (
            json!({ "prompt": "p", "schema": {}, "maxLoops": 2.5 }),
            "maxLoops",
        ),
        (
            json!({ "prompt": "p", "schema": {}, "maxLoops": "3" }),
            "maxLoops",
        ),
        (
            json!({ "prompt": "p", "schema": {}, "maxLoops": 300 }),
            "maxLoops",
        ),
        (
            json!({ "prompt": "p", "schema": {}, "maxloops": 3 }),
            "maxloops",
        ),
    ];
    for (arguments, field) in cases {
        let (got, message) = invalid_field(arguments.clone());
        assert_eq!(got, field, "{arguments}: {message}");
        assert!(message.len() > 10, "{message}");
    }
    let (_, message) = invalid_field(json!({ "prompt": "p", "schema": {}, "maxLoops": "3" }));
    assert_eq!(
        message,
        "maxLoops must be an integer from 1 to 10, not a string"
    );
}

#[test]
fn the_tool_definition_is_the_spec_tool_with_json_schemas() {
    let definition = tool_definition();
    assert_eq!(definition["name"], "structure");
    // A schema, and a prompt or a document (or both).
    assert_eq!(definition["parameters"]["required"], json!(["schema"]));
    assert_eq!(
        definition["parameters"]["anyOf"],
        json!([{ "required": ["prompt"] }, { "required": ["document"] }])
    );
    assert_eq!(
        definition["parameters"]["properties"]["schemaMode"]["enum"],
        json!(["json", "named", "text", "examples"])
    );
    let settings = &definition["parameters"]["properties"]["settings"]["properties"];
    let mut names: Vec<&str> = settings
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    names.sort();
    let mut overridable: Vec<&str> = structure::settings::OVERRIDABLE
        .iter()
        .map(|(name, _)| *name)
        .collect();
    overridable.sort();
    assert_eq!(
        names, overridable,
        "the tool definition lists exactly the overridable settings"
    );
    assert_eq!(
        definition["parameters"]["properties"]["maxLoops"]["maximum"],
        10
    );
    let schema_names = definition["parameters"]["properties"]["schema"]["oneOf"][1]["description"]
        .as_str()
        .unwrap();
    assert!(schema_names.contains("user-action-record") && schema_names.contains("insight-record"));
    let parameters = validator(&definition["parameters"]);
    assert!(parameters.is_valid(
        &json!({ "prompt": "x", "schema": "contact", "schemaMode": "named", "maxLoops": 2 })
    ));
    assert!(!parameters.is_valid(&json!({ "prompt": "x", "schema": 1 })));
    assert!(!parameters.is_valid(&json!({ "prompt": "x", "schema": {}, "maxLoops": 11 })));
}

/// Every outcome the core produces conforms to the tool definition's `returns`, including the
/// "present iff" rules for data, need and errors.
#[test]
fn outcomes_conform_to_the_returns_schema() {
    let returns = validator(&tool_definition()["returns"]);
    let schema = json!({
        "type": "object",
        "properties": { "n": { "type": "integer", "maximum": 5 } },
        "required": ["n"]
    });
    let scripts = [
        vec![Reply::answer(json!({ "n": 1 }))],
        vec![Reply::need("the number")],
        vec![
            Reply::answer(json!({ "n": 9 })),
            Reply::answer(json!({ "n": 7 })),
        ],
    ];
    let mut statuses = Vec::new();
    for replies in scripts {
        let transport = ScriptedTransport::new(replies);
        let config = MapConfig::local();
        let outcome = structure::call_tool(
            &json!({ "prompt": "n", "schema": schema, "maxLoops": 2 }),
            &structure::Scope::default(),
            &ports(&transport, &config),
        )
        .unwrap();
        assert_eq!(
            errors(&returns, &outcome),
            Vec::<String>::new(),
            "{outcome:#}"
        );
        statuses.push(outcome["status"].as_str().unwrap().to_owned());
    }
    assert_eq!(statuses, ["ok", "need-more-input", "stale"]);
    // Text mode adds the schema builder's trace.
    let built = json!({ "schema": { "type": "object", "properties": [{ "key": "n", "value": { "type": "integer" } }], "required": ["n"] }, "confidence": 0.9, "clarifyingQuestions": [] });
    let transport = ScriptedTransport::new([
        Reply::text(&built.to_string()),
        Reply::answer(json!({ "n": 4 })),
    ]);
    let config = MapConfig::local();
    let outcome = structure::call_tool(
        &json!({ "prompt": "four", "schema": "a number n", "schemaMode": "text" }),
        &structure::Scope::default(),
        &ports(&transport, &config),
    )
    .unwrap();
    assert_eq!(
        errors(&returns, &outcome),
        Vec::<String>::new(),
        "{outcome:#}"
    );
    assert_eq!(outcome["trace"]["schemaBuilder"]["cacheHit"], false);
    let wrong = json!({ "status": "stale", "data": {}, "schemaOrigin": "inline", "iterations": 1,
        "usage": { "llmCalls": 1, "promptTokens": 0, "completionTokens": 0, "cachedPromptTokens": 0 },
        "trace": { "model": "m", "providerProfile": "p", "schemaTransforms": [], "repairs": [], "feedback": [] } });
    assert!(
        !returns.is_valid(&wrong),
        "a stale result with data must not conform"
    );
}

#[test]
fn errors_serialise_with_their_kind_details_message_and_usage() {
    let error = StructureRequest::from_tool_arguments(
        &json!({ "prompt": "p", "schema": {}, "maxLoops": 0 }),
    )
    .unwrap_err();
    assert_eq!(
        error.to_json(),
        json!({ "error": {
            "kind": "invalid-request", "field": "maxLoops",
            "message": "maxLoops must be an integer from 1 to 10, not 0",
            "usage": { "llmCalls": 0, "promptTokens": 0, "completionTokens": 0, "cachedPromptTokens": 0 }
        } })
    );
}
