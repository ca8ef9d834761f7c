//! The catalogue of bad input: every kind gets its own typed error — naming the field or the
//! setting — before any LLM call, and leaves the key-value store exactly as it was. Also: the
//! limits, patterns built for catastrophic backtracking, and the call's time limit.

mod support;

use mock_llm::Reply;
use serde_json::{Value, json};
use structure::ports::{Clock, MemoryKeyValue, Ports};
use structure::schema::registry::Registration;
use structure::{ErrorKind, Scope, StructureError, StructureRequest};
use support::{FixedClock, MapConfig, ScriptedTransport};

/// What a case must come back with: the error kind's name and its field or setting.
fn kind_of(error: &StructureError) -> String {
    match &error.kind {
        ErrorKind::InvalidRequest { field } => format!("invalid-request:{field}"),
        ErrorKind::InvalidSchema { .. } => "invalid-schema".to_owned(),
        ErrorKind::SchemaNotFound { .. } => "schema-not-found".to_owned(),
        ErrorKind::Configuration { key } => format!("configuration:{key}"),
        other => format!("{other:?}"),
    }
}

fn deep_schema(levels: usize) -> Value {
    (0..levels).fold(
        json!({ "type": "string" }),
        |inner, _| json!({ "type": "object", "properties": { "a": inner } }),
    )
}

/// Tool-call arguments, each of them wrong in one way, with the error it must give and a piece
/// of its message.
fn catalogue() -> Vec<Case> {
    let object = json!({ "type": "object", "properties": { "a": { "type": "string" } } });
    [
        argument_cases(&object),
        loop_mode_and_name_cases(&object),
        settings_cases(&object),
        schema_cases(),
        schema_limit_cases(),
    ]
    .concat()
}

/// A case of the catalogue: what is wrong, the arguments, the error kind, a piece of its message.
type Case = (&'static str, Value, &'static str, &'static str);

/// The arguments themselves: the prompt, the schema's form, records mode, and arguments that are not an object or not known.
fn argument_cases(object: &Value) -> Vec<Case> {
    vec![
        (
            "empty prompt",
            json!({ "prompt": "  ", "schema": object }),
            "invalid-request:prompt",
            "empty",
        ),
        (
            "prompt over the limit",
            json!({ "prompt": "x".repeat(300), "schema": object }),
            "invalid-request:prompt",
            "structure_max_prompt_bytes",
        ),
        (
            "schema neither object nor text",
            json!({ "prompt": "p", "schema": 5 }),
            "invalid-request:schema",
            "schema",
        ),
        (
            "schema an array",
            json!({ "prompt": "p", "schema": [] }),
            "invalid-request:schema",
            "schema",
        ),
        (
            "schema text that is not JSON",
            json!({ "prompt": "p", "schema": "{nope" }),
            "invalid-request:schema",
            "schema",
        ),
        (
            "records asked of an array root, which is records already",
            json!({ "prompt": "p", "schema": { "type": "array", "items": { "type": "object" } }, "records": true }),
            "invalid-request:records",
            "records mode by itself",
        ),
        (
            "an unknown argument",
            json!({ "prompt": "p", "schema": object, "max_loops": 2 }),
            "invalid-request:max_loops",
            "unknown argument",
        ),
        (
            "arguments not an object",
            json!(["p"]),
            "invalid-request:arguments",
            "object",
        ),
    ]
}

/// `maxLoops` out of its range or of the wrong type, an unknown `schemaMode`, names that are not a registered schema's.
fn loop_mode_and_name_cases(object: &Value) -> Vec<Case> {
    vec![
        (
            "maxLoops 0",
            json!({ "prompt": "p", "schema": object, "maxLoops": 0 }),
            "invalid-request:maxLoops",
            "maxLoops",
        ),
        (
            "maxLoops 11",
            json!({ "prompt": "p", "schema": object, "maxLoops": 11 }),
            "invalid-request:maxLoops",
            "maxLoops",
        ),
        (
            "maxLoops -1",
            json!({ "prompt": "p", "schema": object, "maxLoops": -1 }),
            "invalid-request:maxLoops",
            "maxLoops",
        ),
        (
            "maxLoops \"3\"",
            json!({ "prompt": "p", "schema": object, "maxLoops": "3" }),
            "invalid-request:maxLoops",
            "maxLoops",
        ),
        (
            "maxLoops 2.5",
            json!({ "prompt": "p", "schema": object, "maxLoops": 2.5 }),
            "invalid-request:maxLoops",
            "maxLoops",
        ),
        (
            "an unknown schemaMode",
            json!({ "prompt": "p", "schema": "contact", "schemaMode": "yaml" }),
            "invalid-request:schemaMode",
            "yaml",
        ),
        (
            "a name climbing out",
            json!({ "prompt": "p", "schema": "../t/other/schemas/x", "schemaMode": "named" }),
            "invalid-request:schema",
            "not a valid schema name",
        ),
        (
            "a name that is not registered",
            json!({ "prompt": "p", "schema": "contakt", "schemaMode": "named" }),
            "schema-not-found",
            "did you mean",
        ),
    ]
}

/// Per-call settings a call may not set, or not in that form.
fn settings_cases(object: &Value) -> Vec<Case> {
    vec![
        (
            "a secret set per call",
            json!({ "prompt": "p", "schema": object, "settings": { "openaiApiKey": "sk-other" } }),
            "invalid-request:settings",
            "openaiApiKey",
        ),
        (
            "an endpoint set per call",
            json!({ "prompt": "p", "schema": object, "settings": { "openai_base_url": "http://evil.example" } }),
            "invalid-request:settings",
            "",
        ),
        (
            "settings not an object",
            json!({ "prompt": "p", "schema": object, "settings": [] }),
            "invalid-request:settings",
            "settings",
        ),
    ]
}

/// Schemas that cannot be used: reference cycles, misspelt or wrongly typed keywords, a bad pattern, references outside the schema.
fn schema_cases() -> Vec<Case> {
    vec![
        (
            "a reference cycle",
            json!({ "prompt": "p", "schema": { "$ref": "#" } }),
            "invalid-schema",
            "",
        ),
        (
            "mutually recursive references only",
            json!({ "prompt": "p", "schema": { "$defs": { "a": { "$ref": "#/$defs/b" }, "b": { "$ref": "#/$defs/a" } }, "$ref": "#/$defs/a" } }),
            "invalid-schema",
            "",
        ),
        (
            "a misspelt keyword",
            json!({ "prompt": "p", "schema": { "properties": { "a": {} }, "tpye": "object" } }),
            "invalid-schema",
            "did you mean \"type\"",
        ),
        (
            "a misspelt format",
            json!({ "prompt": "p", "schema": { "type": "object", "properties": { "a": { "type": "string", "format": "emial" } } } }),
            "invalid-schema",
            "emial",
        ),
        (
            "a pattern that is not a regex",
            json!({ "prompt": "p", "schema": { "type": "object", "properties": { "a": { "type": "string", "pattern": "([" } } } }),
            "invalid-schema",
            "",
        ),
        (
            "a wrongly typed keyword",
            json!({ "prompt": "p", "schema": { "type": "object", "minProperties": "2" } }),
            "invalid-schema",
            "minProperties",
        ),
        (
            "$ref over http",
            json!({ "prompt": "p", "schema": { "type": "object", "properties": { "a": { "$ref": "http://127.0.0.1:9/schema.json" } } } }),
            "invalid-schema",
            "external reference",
        ),
        (
            "$ref to a file",
            json!({ "prompt": "p", "schema": { "type": "object", "properties": { "a": { "$ref": "file:///etc/passwd" } } } }),
            "invalid-schema",
            "external reference",
        ),
        (
            "$ref to another document",
            json!({ "prompt": "p", "schema": { "type": "object", "properties": { "a": { "$ref": "other.json#/a" } } } }),
            "invalid-schema",
            "external reference",
        ),
    ]
}

/// Schemas over a limit: enum values, depth, properties, size.
fn schema_limit_cases() -> Vec<Case> {
    vec![
        (
            "a huge enum",
            json!({ "prompt": "p", "schema": { "type": "object", "properties": { "a": { "enum": (0..1001).collect::<Vec<_>>() } } } }),
            "invalid-schema",
            "structure_max_enum_values",
        ),
        (
            "deep nesting",
            json!({ "prompt": "p", "schema": deep_schema(40) }),
            "invalid-schema",
            "structure_max_schema_depth",
        ),
        (
            "too many properties",
            json!({ "prompt": "p", "schema": { "type": "object", "properties": (0..30).map(|i| (format!("p{i}"), json!({}))).collect::<serde_json::Map<_, _>>() } }),
            "invalid-schema",
            "structure_max_schema_properties",
        ),
        (
            "a schema over the size limit",
            json!({ "prompt": "p", "schema": { "type": "object", "description": "d".repeat(5000) } }),
            "invalid-schema",
            "structure_max_schema_bytes",
        ),
    ]
}

/// Ports over a store of the test's own, to compare before and after.
struct Fixture {
    transport: ScriptedTransport,
    config: MapConfig,
    key_value: MemoryKeyValue,
    clock: FixedClock,
}

impl Default for Fixture {
    fn default() -> Self {
        Self {
            transport: ScriptedTransport::default(),
            config: config(),
            key_value: MemoryKeyValue::default(),
            clock: FixedClock::default(),
        }
    }
}

impl Fixture {
    fn ports(&self) -> Ports<'_> {
        Ports {
            transport: &self.transport,
            config: &self.config,
            key_value: &self.key_value,
            clock: &self.clock,
        }
    }
}

fn config() -> MapConfig {
    MapConfig::with(&[
        ("structure_model", "openai/test-model"),
        ("openai_base_url", "http://127.0.0.1:9/v1"),
        ("structure_max_prompt_bytes", "256"),
        ("structure_max_schema_bytes", "4096"),
        ("structure_max_schema_properties", "20"),
    ])
}

fn overrides(value: Value) -> serde_json::Map<String, Value> {
    value.as_object().cloned().expect("an object")
}

/// A store holding a registered schema and settings, so that "changes nothing" is tested
/// against something.
fn seeded(ports: &Ports<'_>, scope: &Scope) {
    structure::register_schema(
        scope,
        Registration {
            name: "lead".into(),
            schema: json!({ "type": "object", "properties": { "company": { "type": "string" } } }),
            manual: Some("A sales lead.".into()),
            version: None,
        },
        ports,
    )
    .unwrap();
    structure::set_settings(scope, &overrides(json!({ "maxLoops": 2 })), ports).unwrap();
}

#[test]
fn every_kind_of_bad_input_gets_its_typed_error_and_changes_nothing() {
    let fixture = Fixture::default();
    let (ports, transport, key_value) = (fixture.ports(), &fixture.transport, &fixture.key_value);
    let scope = Scope::new("acme", Some("crm")).unwrap();
    seeded(&ports, &scope);
    let before = key_value.snapshot();
    for (what, arguments, kind, says) in catalogue() {
        let error = match structure::call_tool(&arguments, &scope, &ports) {
            Err(error) => error,
            Ok(outcome) => panic!("{what}: expected an error, got {outcome}"),
        };
        assert_eq!(kind_of(&error), kind, "{what}: {}", error.message);
        assert!(
            error.message.contains(says),
            "{what}: {:?} does not say {says:?}",
            error.message
        );
        assert_eq!(transport.count(), 0, "{what}: no LLM call");
        assert!(key_value.snapshot() == before, "{what}: the store changed");
    }
}

#[test]
fn bad_registrations_and_settings_change_nothing() {
    let fixture = Fixture::default();
    let (ports, transport, key_value) = (fixture.ports(), &fixture.transport, &fixture.key_value);
    let scope = Scope::new("acme", None).unwrap();
    seeded(&ports, &scope);
    let before = key_value.snapshot();
    let registration = |name: &str, schema: Value, version: Option<&str>| Registration {
        name: name.into(),
        schema,
        manual: None,
        version: version.map(Into::into),
    };
    let object = json!({ "type": "object" });
    let cases: Vec<(&str, Result<(), StructureError>, &str)> = vec![
        ("a name with ../", structure::register_schema(&scope, registration("../b", object.clone(), None), &ports).map(drop), "invalid-request:schema"),
        ("an upper-case name", structure::register_schema(&scope, registration("Lead", object.clone(), None), &ports).map(drop), "invalid-request:schema"),
        ("a non-object schema", structure::register_schema(&scope, registration("x", json!("s"), None), &ports).map(drop), "invalid-request:schema"),
        ("a schema with an external $ref", structure::register_schema(&scope, registration("x", json!({ "type": "object", "properties": { "a": { "$ref": "https://example.com/s" } } }), None), &ports).map(drop), "invalid-schema"),
        ("a misspelt keyword", structure::register_schema(&scope, registration("x", json!({ "properties": {}, "tpye": "object" }), None), &ports).map(drop), "invalid-schema"),
        ("a bad version", structure::register_schema(&scope, registration("x", object.clone(), Some("one")), &ports).map(drop), "invalid-request:version"),
        ("a breaking minor update", structure::register_schema(&scope, registration("lead", json!({ "type": "object", "properties": { "company": { "type": "integer" } } }), Some("1.1")), &ports).map(drop), "invalid-request:version"),
        ("deregistering a climbing name", structure::deregister_schema(&scope, "../../x", &ports).map(drop), "invalid-request:schema"),
        ("an unknown setting", structure::set_settings(&scope, &overrides(json!({ "maxLoop": 2 })), &ports), "invalid-request:settings"),
        ("a setting out of range", structure::set_settings(&scope, &overrides(json!({ "maxLoops": 99 })), &ports), "invalid-request:settings"),
        ("a secret as a setting", structure::set_settings(&scope, &overrides(json!({ "openaiApiKey": "sk" })), &ports), "invalid-request:settings"),
    ];
    for (what, result, kind) in cases {
        let error = result
            .err()
            .unwrap_or_else(|| panic!("{what}: expected an error"));
        assert_eq!(kind_of(&error), kind, "{what}: {}", error.message);
        assert!(key_value.snapshot() == before, "{what}: the store changed");
    }
    assert_eq!(transport.count(), 0);
}

#[test]
fn patterns_built_to_backtrack_are_bounded_and_never_pass() {
    // Nested quantifiers (run by the linear-time engine) and a back-reference (run by the
    // backtracking one, up to its limit).
    for (pattern, subject) in [
        ("^(a+)+$", format!("{}!", "a".repeat(40))),
        (
            "^(([a-z])+.)+[A-Z]([a-z])+$",
            format!("{}!", "a".repeat(40)),
        ),
        ("^((a|a)*)\\1$", format!("{}b", "a".repeat(40))),
        ("^(?=(a+)+b)", format!("{}c", "a".repeat(40))),
    ] {
        let schema = json!({ "type": "object", "properties": { "s": { "type": "string", "pattern": pattern } }, "required": ["s"] });
        let transport = ScriptedTransport::new([Reply::answer(json!({ "s": subject }))]);
        let config = MapConfig::local();
        let key_value = MemoryKeyValue::default();
        let clock = FixedClock::default();
        let ports = Ports {
            transport: &transport,
            config: &config,
            key_value: &key_value,
            clock: &clock,
        };
        let started = std::time::Instant::now();
        let outcome = structure::call_tool(
            &json!({ "prompt": "p", "schema": schema, "maxLoops": 1 }),
            &Scope::default(),
            &ports,
        )
        .unwrap();
        assert_eq!(outcome["status"], "stale", "{pattern}: {outcome}");
        // A guard against a hang, not a benchmark.
        assert!(
            started.elapsed() < std::time::Duration::from_secs(20),
            "{pattern}"
        );
    }
}

/// A clock whose time passes only when the test says: each LLM request "takes" `per_request`.
struct SlowProvider {
    now: std::cell::Cell<u64>,
}

impl Clock for SlowProvider {
    fn now_unix_millis(&self) -> u64 {
        let now = self.now.get();
        // Every reading after a request sees 200 s more: requests are slow.
        self.now.set(now + 100_000);
        now
    }

    fn sleep(&self, duration: std::time::Duration) {
        self.now.set(self.now.get() + duration.as_millis() as u64);
    }
}

#[test]
fn a_call_stops_when_its_time_is_up() {
    let schema = json!({ "type": "object", "properties": { "n": { "type": "integer", "minimum": 1 } }, "required": ["n"] });
    let transport = ScriptedTransport::new([
        Reply::answer(json!({ "n": 0 })),
        Reply::answer(json!({ "n": 0 })),
        Reply::answer(json!({ "n": 1 })),
    ]);
    let config = MapConfig::with(&[
        ("structure_model", "openai/test-model"),
        ("openai_base_url", "http://127.0.0.1:9/v1"),
        ("structure_call_timeout_ms", "250000"),
    ]);
    let key_value = MemoryKeyValue::default();
    let clock = SlowProvider {
        now: 1_000_000.into(),
    };
    let ports = Ports {
        transport: &transport,
        config: &config,
        key_value: &key_value,
        clock: &clock,
    };
    let request =
        StructureRequest::from_tool_arguments(&json!({ "prompt": "p", "schema": schema })).unwrap();
    let error = structure::structure(&request, &Scope::default(), &ports).unwrap_err();
    assert!(
        matches!(error.kind, ErrorKind::BudgetExhausted),
        "{error:?}"
    );
    assert!(
        error.message.contains("structure_call_timeout_ms"),
        "{}",
        error.message
    );
    assert!(transport.count() < 3, "no request after the deadline");
    assert_eq!(
        error.usage.llm_calls as usize,
        transport.count(),
        "what was spent is reported"
    );
    // Each request was given no more than the time left.
    for sent in transport.requests.borrow().iter() {
        assert!(sent.timeout <= std::time::Duration::from_millis(250_000));
    }
}
