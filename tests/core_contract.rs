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
        json!([{ "required": ["prompt"], "properties": { "prompt": { "pattern": "\\S" } } }, { "required": ["document"] }])
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

/// A clock the test moves: a call's "now" is wherever it stands.
#[derive(Default)]
struct MovableClock(std::cell::Cell<u64>);

impl structure::ports::Clock for MovableClock {
    fn now_unix_millis(&self) -> u64 {
        self.0.get()
    }

    fn sleep(&self, _: std::time::Duration) {}
}

/// The spec's defaults, each held by what a call does: `maxLoops` 3 (§2.1), a built schema
/// cached 7 days and used only when its builder was at least 0.8 sure (§5).
#[test]
fn the_specs_defaults_hold() {
    let key_value = structure::ports::MemoryKeyValue::default();
    let clock = MovableClock::default();
    let config = MapConfig::local();
    let call = |arguments: Value, replies: Vec<Reply>| {
        let transport = ScriptedTransport::new(replies);
        let ports = structure::ports::Ports {
            transport: &transport,
            config: &config,
            key_value: &key_value,
            clock: &clock,
        };
        let result = structure::call_tool(&arguments, &structure::Scope::default(), &ports);
        (result.unwrap(), transport.count())
    };
    // Three answers, three reasons, then stale: the fourth answer is never asked for.
    let schema = json!({ "type": "object", "properties": { "n": { "type": "integer", "maximum": 5 } }, "required": ["n"] });
    // (Each answer other than the one before: a model that repeats itself is stale sooner.)
    let invalid = |n: u32| Reply::answer(json!({ "n": n }));
    let (result, calls) = call(
        json!({ "prompt": "n", "schema": schema }),
        vec![
            invalid(9),
            invalid(8),
            invalid(7),
            Reply::answer(json!({ "n": 1 })),
        ],
    );
    assert_eq!(
        (
            result["status"].as_str(),
            result["iterations"].as_u64(),
            calls
        ),
        (Some("stale"), Some(3), 3)
    );
    assert_eq!(structure::request::DEFAULT_MAX_LOOPS, 3);

    let built = |confidence: f64| {
        let schema = json!({ "type": "object", "properties": [{ "key": "n", "value": { "type": "integer" } }], "required": ["n"] });
        Reply::text(
            &json!({ "schema": schema, "confidence": confidence, "clarifyingQuestions": [] })
                .to_string(),
        )
    };
    let described =
        |words: &str| json!({ "prompt": "four", "schema": words, "schemaMode": "text" });
    // Under 0.8 sure: need-more-input before any content call; at 0.8 the schema is used.
    let (result, calls) = call(described("a count n"), vec![built(0.79)]);
    assert_eq!(
        (result["status"].as_str(), calls),
        (Some("need-more-input"), 1),
        "{result}"
    );
    let (result, _) = call(
        described("a number n"),
        vec![built(0.8), Reply::answer(json!({ "n": 4 }))],
    );
    assert_eq!(result["status"], "ok", "{result}");
    // Built at 0: the cache answers until 7 days have passed, and not after.
    let seven_days = 7 * 24 * 60 * 60 * 1000;
    clock.0.set(seven_days - 1);
    let (result, calls) = call(
        described("a number n"),
        vec![Reply::answer(json!({ "n": 4 }))],
    );
    assert_eq!(
        (
            result["trace"]["schemaBuilder"]["cacheHit"].as_bool(),
            calls
        ),
        (Some(true), 1)
    );
    clock.0.set(seven_days);
    let (result, calls) = call(
        described("a number n"),
        vec![built(0.9), Reply::answer(json!({ "n": 4 }))],
    );
    assert_eq!(
        (
            result["trace"]["schemaBuilder"]["cacheHit"].as_bool(),
            calls
        ),
        (Some(false), 2)
    );
}

/// The arguments' schema (`definition.json`) says what the reader (`from_tool_arguments`, which
/// gives each refusal its typed error) takes: the same verdict on each case, every property the
/// schema names one the reader knows.
#[test]
fn the_parameters_schema_and_the_argument_reader_agree() {
    let parameters = validator(&tool_definition()["parameters"]);
    let document = json!({ "data": "SGVsbG8=", "mediaType": "text/plain" });
    let cases = [
        json!({ "prompt": "p", "schema": {} }),
        json!({ "prompt": "", "schema": {} }),
        json!({ "prompt": " \n", "schema": {} }),
        json!({ "prompt": "", "schema": {}, "document": document }),
        json!({ "schema": {}, "document": document }),
        json!({ "schema": {} }),
        json!({ "prompt": "p" }),
        json!({ "prompt": 5, "schema": {} }),
        json!({ "prompt": "p", "schema": {}, "maxloops": 3 }),
        json!({ "prompt": "p", "schema": {}, "maxLoops": 10, "records": true, "returnText": false }),
        json!({ "prompt": "p", "schema": {}, "maxLoops": 11 }),
        json!({ "prompt": "p", "schema": {}, "maxLoops": 0 }),
        json!({ "prompt": "p", "schema": {}, "records": "yes" }),
        json!({ "prompt": "p", "schema": {}, "schemaMode": "yaml" }),
        json!({ "prompt": "p", "schema": "contact", "schemaMode": "named" }),
        json!({ "prompt": "p", "schema": [{ "a": 1 }], "schemaMode": "examples" }),
        json!({ "prompt": "p", "schema": 42 }),
        json!({ "prompt": "p", "schema": {}, "settings": "fast" }),
        json!({ "schema": {}, "document": { "mediaType": "text/plain" } }),
        json!({ "schema": {}, "document": { "data": "SGVsbG8=", "pages": 2 } }),
        json!({ "schema": {}, "document": { "data": "SGVsbG8=", "name": "notes.txt" } }),
    ];
    for arguments in cases {
        let read = StructureRequest::from_tool_arguments(&arguments);
        assert_eq!(
            parameters.is_valid(&arguments),
            read.is_ok(),
            "{arguments}: {:?}",
            read.err()
        );
    }
    let named = tool_definition()["parameters"]["properties"]
        .as_object()
        .unwrap()
        .clone();
    for name in named.keys() {
        let mut arguments = json!({ "prompt": "p", "schema": {} });
        arguments[name] = json!(-1);
        let error = StructureRequest::from_tool_arguments(&arguments).err();
        let message = error.map(|error| error.message).unwrap_or_default();
        assert!(
            !message.starts_with("unknown argument"),
            "{name}: {message}"
        );
    }
}

/// The registry names the description of `schema` lists stay within their bound, the rest
/// counted: a tenant with thousands of schemas does not send them all with every `tools/list`.
#[test]
fn the_listed_registry_names_are_bounded() {
    let names: Vec<String> = (0..1000)
        .map(|index| format!("a-schema-named-{index:04}"))
        .collect();
    let names: Vec<&str> = names.iter().map(String::as_str).collect();
    let definition = structure::tool_definition::tool_definition_naming(&names);
    let description = definition["parameters"]["properties"]["schema"]["oneOf"][1]["description"]
        .as_str()
        .unwrap();
    let bound = structure::tool_definition::MAX_LISTED_NAMES_CHARS;
    assert!(description.len() < bound + 300, "{}", description.len());
    assert!(
        description.contains("a-schema-named-0000,"),
        "{description}"
    );
    let listed = description.matches("a-schema-named-").count();
    assert!(
        description.ends_with(&format!(
            "and {} more (the registry lists every one).",
            1000 - listed
        )),
        "{description}"
    );
}
