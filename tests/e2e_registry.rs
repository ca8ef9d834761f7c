//! End to end through the real .wasm: the registry cascade and its versioning, tenant
//! isolation, SKILL.md import, the schema builder (text mode) and its cache, schemas from
//! examples, and the settings cascade.

use std::sync::Arc;

use mock_llm::{MockLlm, Reply};
use serde_json::{Value, json};
use structure_host::{
    CallError, ErrorKind, KeyValueStore, MemoryStore, Registration, Request, SchemaInput, Scope,
    Settings, Status, Structure,
};

fn client_with_store(mock: &MockLlm, store: Arc<dyn KeyValueStore>) -> Structure {
    let settings = Settings::new()
        .set("structure_model", "openai/host-model")
        .set("openai_base_url", mock.base_url())
        .set("openai_api_key", "sk-e2e");
    Structure::builder()
        .settings(settings)
        .key_value(store)
        .build()
        .unwrap()
}

fn client(mock: &MockLlm) -> Structure {
    client_with_store(mock, Arc::new(MemoryStore::default()))
}

fn registration(name: &str, schema: Value, version: Option<&str>) -> Registration {
    Registration {
        name: name.into(),
        schema: schema.to_string(),
        manual: Some(format!("Manual of {name}.")),
        version: version.map(str::to_owned),
    }
}

fn person(required: &[&str]) -> Value {
    json!({
        "type": "object",
        "properties": { "name": { "type": "string" }, "email": { "type": "string", "format": "email" } },
        "required": required,
    })
}

fn request(schema: SchemaInput) -> Request {
    Request::new("Ada Lovelace, ada@example.com", schema)
}

fn error_of<T: std::fmt::Debug>(result: Result<T, CallError>) -> structure_host::Error {
    match result {
        Err(CallError::Structure(error)) => error,
        other => panic!("expected a typed error, got {other:?}"),
    }
}

#[tokio::test]
async fn the_cascade_is_project_then_tenant_then_bundled_with_exact_origins() {
    let mock = MockLlm::start();
    let client = client(&mock);
    let tenant = Scope::tenant("acme");
    let project = Scope::project("acme", "web");
    let other_project = Scope::project("acme", "mobile");

    let origin = |scope: &Scope| {
        let scope = scope.clone();
        let client = &client;
        async move {
            client
                .get_schema(&scope, "contact")
                .await
                .unwrap()
                .info
                .origin
        }
    };
    assert_eq!(origin(&project).await, "bundled");
    client
        .register_schema(&tenant, &registration("contact", person(&["name"]), None))
        .await
        .unwrap();
    assert_eq!(origin(&project).await, "tenant:acme");
    let info = client
        .register_schema(&project, &registration("contact", person(&["email"]), None))
        .await
        .unwrap();
    assert_eq!(info.origin, "project:web");
    assert_eq!(origin(&project).await, "project:web");
    assert_eq!(origin(&other_project).await, "tenant:acme");
    assert_eq!(origin(&Scope::default()).await, "bundled");

    // The content stage reports the same origin and sees the project's manual.
    mock.push(Reply::answer(json!({ "email": "ada@example.com" })));
    let outcome = client
        .structure(&project, &request(SchemaInput::Named("contact".into())))
        .await
        .unwrap();
    assert_eq!(
        (outcome.status, outcome.schema_origin.as_str()),
        (Status::Ok, "registry:project:web")
    );
    assert!(mock.requests()[0].body.contains("Manual of contact."));

    let listed = client.list_schemas(&project).await.unwrap();
    let contact = listed.iter().find(|info| info.name == "contact").unwrap();
    assert_eq!(contact.origin, "project:web");
    assert_eq!(listed.len(), 5, "overrides replace, they do not add");

    // Removing an override uncovers the level below; bundled schemas cannot be removed.
    assert!(client.deregister_schema(&project, "contact").await.unwrap());
    assert_eq!(origin(&project).await, "tenant:acme");
    assert!(!client.deregister_schema(&project, "contact").await.unwrap());
    assert!(client.deregister_schema(&tenant, "contact").await.unwrap());
    assert_eq!(origin(&project).await, "bundled");
    assert!(!client.deregister_schema(&tenant, "contact").await.unwrap());
}

#[tokio::test]
async fn one_tenant_can_never_read_list_shadow_or_delete_anothers_schemas() {
    let mock = MockLlm::start();
    let client = client(&mock);
    let (a, b) = (Scope::tenant("tenant-a"), Scope::tenant("tenant-b"));
    client
        .register_schema(&a, &registration("invoice", person(&["name"]), None))
        .await
        .unwrap();
    client
        .register_schema(&a, &registration("contact", person(&["name"]), None))
        .await
        .unwrap();

    let error = error_of(client.get_schema(&b, "invoice").await);
    assert!(matches!(error.kind, ErrorKind::SchemaNotFound(_)));
    assert!(
        !error
            .message
            .contains("invoice\" in the registry; did you mean"),
        "no hint from another tenant"
    );
    let names: Vec<String> = client
        .list_schemas(&b)
        .await
        .unwrap()
        .into_iter()
        .map(|info| info.name)
        .collect();
    assert!(!names.contains(&"invoice".to_owned()));
    assert_eq!(
        client.get_schema(&b, "contact").await.unwrap().info.origin,
        "bundled"
    );
    assert!(!client.deregister_schema(&b, "invoice").await.unwrap());
    client
        .register_schema(&b, &registration("invoice", person(&["email"]), None))
        .await
        .unwrap();
    let a_invoice: Value =
        serde_json::from_str(&client.get_schema(&a, "invoice").await.unwrap().schema).unwrap();
    assert_eq!(
        a_invoice["required"],
        json!(["name"]),
        "b's registration did not touch a's"
    );
    // A project of tenant b cannot reach tenant a either.
    let error = error_of(
        client
            .structure(
                &Scope::project("tenant-b", "x"),
                &request(SchemaInput::Named("nope".into())),
            )
            .await,
    );
    assert!(matches!(error.kind, ErrorKind::SchemaNotFound(_)));
    assert!(mock.requests().is_empty());
}

#[tokio::test]
async fn versions_only_move_forward_and_minor_updates_only_relax() {
    let mock = MockLlm::start();
    let client = client(&mock);
    let scope = Scope::tenant("acme");
    let register = |schema: Value, version: &str| {
        let registration = registration("lead", schema, Some(version));
        let client = &client;
        let scope = scope.clone();
        async move { client.register_schema(&scope, &registration).await }
    };
    assert_eq!(
        register(person(&["name", "email"]), "1.0")
            .await
            .unwrap()
            .version,
        "1.0"
    );
    assert_eq!(
        register(person(&["name", "email"]), "1.0")
            .await
            .unwrap()
            .version,
        "1.0",
        "idempotent"
    );
    assert_eq!(
        register(person(&["name"]), "1.1").await.unwrap().version,
        "1.1",
        "relaxing is a minor update"
    );
    let breaking = [
        (
            person(&["name", "email"]),
            "1.2",
            "\"email\" became required",
        ),
        (
            json!({ "type": "object", "properties": { "name": { "type": "string", "maxLength": 3 } }, "required": ["name"] }),
            "1.2",
            "property \"email\" was removed",
        ),
        (person(&["name"]), "2.0", "needs a new name (e.g. lead-v2)"),
        (person(&[]), "1.1", "already registered with another schema"),
        (person(&["name"]), "1.0", "would go back"),
        (person(&["name"]), "one", "must be MAJOR.MINOR"),
    ];
    for (schema, version, text) in breaking {
        let error = error_of(register(schema, version).await);
        assert!(
            matches!(error.kind, ErrorKind::InvalidRequest(_)),
            "{text}: {:?}",
            error.kind
        );
        assert!(error.message.contains(text), "{text}: {}", error.message);
    }
    assert_eq!(
        client
            .get_schema(&scope, "lead")
            .await
            .unwrap()
            .info
            .version,
        "1.1"
    );
    assert!(register(person(&["name"]), "2.0").await.is_err());
    let v2 = client
        .register_schema(
            &scope,
            &registration("lead-v2", person(&["name", "email"]), Some("2.0")),
        )
        .await
        .unwrap();
    assert_eq!(v2.name, "lead-v2");
}

#[tokio::test]
async fn registrations_are_checked_and_bad_ones_change_nothing() {
    let mock = MockLlm::start();
    let client = client(&mock);
    let scope = Scope::tenant("acme");
    let bad = [
        (
            registration("../etc", person(&[]), None),
            "not a valid schema name",
        ),
        (
            registration("Upper", person(&[]), None),
            "not a valid schema name",
        ),
        (
            registration("x", json!({ "$ref": "#" }), None),
            "reference back to itself",
        ),
        (
            registration(
                "x",
                json!({ "type": "object", "properties": { "a": { "$ref": "https://x.io/s.json" } } }),
                None,
            ),
            "external reference",
        ),
        (
            registration(
                "x",
                json!({ "type": "object", "properties": { "a": { "type": "strin" } } }),
                None,
            ),
            "does not compile",
        ),
    ];
    for (registration, text) in bad {
        let error = error_of(client.register_schema(&scope, &registration).await);
        assert!(error.message.contains(text), "{text}: {}", error.message);
    }
    let mut not_json = registration("x", json!({}), None);
    not_json.schema = "{ nope".into();
    assert_eq!(
        error_of(client.register_schema(&scope, &not_json).await).kind,
        ErrorKind::InvalidRequest("schema".into())
    );
    let error = error_of(
        client
            .register_schema(
                &Scope::tenant("../other"),
                &registration("x", person(&[]), None),
            )
            .await,
    );
    assert_eq!(error.kind, ErrorKind::InvalidRequest("tenant".into()));
    assert_eq!(
        client.list_schemas(&scope).await.unwrap().len(),
        5,
        "nothing was registered"
    );
}

#[tokio::test]
async fn a_skill_folder_registers_its_output_schema_with_the_body_as_manual() {
    let mock = MockLlm::start();
    let client = client(&mock);
    let scope = Scope::tenant("acme");
    let folder = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(folder.path().join("resources")).unwrap();
    std::fs::write(
        folder.path().join("SKILL.md"),
        "---\nname: data-analysis\ndescription: Analyze datasets.\noutput_schema_file: resources/analysis.schema.json\n---\n\n# Data Analysis\n\nReturn structured findings.\n",
    )
    .unwrap();
    std::fs::write(
        folder.path().join("resources/analysis.schema.json"),
        json!({ "type": "object", "required": ["summary"], "properties": { "summary": { "type": "string" } } }).to_string(),
    )
    .unwrap();
    let info = client.register_skill(&scope, folder.path()).await.unwrap();
    assert_eq!(
        (info.name.as_str(), info.origin.as_str(), info.has_manual),
        ("data-analysis", "tenant:acme", true)
    );
    let found = client.get_schema(&scope, "data-analysis").await.unwrap();
    assert_eq!(
        found.manual.as_deref(),
        Some("# Data Analysis\n\nReturn structured findings.")
    );

    let inline = tempfile::tempdir().unwrap();
    std::fs::write(
        inline.path().join("SKILL.md"),
        "---\nname: extract-entities\noutput_schema:\n  type: object\n  required: [entities]\n  properties:\n    entities: { type: array, items: { type: string } }\n---\nExtract.\n",
    )
    .unwrap();
    assert_eq!(
        client
            .register_skill(&scope, inline.path())
            .await
            .unwrap()
            .name,
        "extract-entities"
    );

    let escaping = tempfile::tempdir().unwrap();
    std::fs::write(
        escaping.path().join("SKILL.md"),
        "---\nname: sneaky\noutput_schema_file: ../../etc/passwd\n---\n",
    )
    .unwrap();
    let error = error_of(client.register_skill(&scope, escaping.path()).await);
    assert!(
        error
            .message
            .contains("relative path inside the skill's folder"),
        "{}",
        error.message
    );
}

/// A schema as OpenAI's strict mode carries it: `properties` maps as `{key, value}` pairs.
fn strict_form(schema: &Value) -> Value {
    match schema {
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(key, value)| {
                    let value = match (key.as_str(), value) {
                        ("properties", Value::Object(properties)) => Value::Array(
                            properties.iter().map(|(name, schema)| json!({ "key": name, "value": strict_form(schema) })).collect(),
                        ),
                        ("items", item) => strict_form(item),
                        _ => value.clone(),
                    };
                    (key.clone(), value)
                })
                .collect(),
        ),
        other => other.clone(),
    }
}

fn built(schema: &Value, confidence: f64, questions: &[&str]) -> Reply {
    Reply::text(&json!({ "schema": strict_form(schema), "confidence": confidence, "clarifyingQuestions": questions }).to_string())
}

fn described(text: &str) -> Request {
    request(SchemaInput::Described(text.into()))
}

#[tokio::test]
async fn the_schema_builder_builds_caches_and_asks() {
    let mock = MockLlm::start();
    let store = Arc::new(MemoryStore::default());
    let client = client_with_store(&mock, store.clone());
    let scope = Scope::tenant("acme");
    let schema = json!({
        "type": "object",
        "properties": { "name": { "type": "string", "description": "Full name" }, "email": { "type": "string", "format": "email" } },
        "required": ["name", "email"],
        "additionalProperties": false
    });

    the_builder_builds_the_schema_with_the_fast_model(&client, &mock, &scope, &schema).await;
    the_cache_answers_per_tenant(&client, &mock, &scope, &schema).await;
    an_expired_or_corrupt_entry_is_a_miss(&client, &mock, &store, &scope, &schema).await;
    assert_eq!(mock.pending(), 0);
}

/// A description's first call: the builder's call, then the content stage's, both counted.
async fn the_builder_builds_the_schema_with_the_fast_model(
    client: &Structure,
    mock: &MockLlm,
    scope: &Scope,
    schema: &Value,
) {
    mock.push(built(schema, 0.95, &[]));
    mock.push(Reply::answer(
        json!({ "name": "Ada Lovelace", "email": "ada@example.com" }),
    ));
    let outcome = client
        .structure(scope, &described("A person's name and email address."))
        .await
        .unwrap();
    assert_eq!(
        (outcome.status, outcome.schema_origin.as_str()),
        (Status::Ok, "inferred")
    );
    let builder = outcome.trace.schema_builder.clone().unwrap();
    assert!(!builder.cache_hit);
    assert_eq!(
        serde_json::from_str::<Value>(builder.schema.as_deref().unwrap()).unwrap(),
        *schema
    );
    assert_eq!(
        (outcome.usage.llm_calls, builder.usage.llm_calls),
        (2, 1),
        "builder calls count in the usage"
    );
    let builder_request = mock.requests()[0].json();
    assert_eq!(
        builder_request["model"], "gpt-4.1-mini",
        "schemaBuilderModel defaults to the fast alias (spec §7.2)"
    );
    assert!(
        builder_request["messages"][0]["content"]
            .as_str()
            .unwrap()
            .starts_with("Convert the following description to JSON Schema 2020-12.")
    );
}

/// Reworded only by case, whitespace and punctuation spacing: the cache answers; another tenant
/// has its own cache.
async fn the_cache_answers_per_tenant(
    client: &Structure,
    mock: &MockLlm,
    scope: &Scope,
    schema: &Value,
) {
    mock.push(Reply::answer(
        json!({ "name": "Alan Turing", "email": "alan@example.com" }),
    ));
    let outcome = client
        .structure(scope, &described("  a PERSON'S name  and email address . "))
        .await
        .unwrap();
    assert_eq!(outcome.status, Status::Ok);
    assert!(outcome.trace.schema_builder.as_ref().unwrap().cache_hit);
    assert_eq!(
        (outcome.usage.llm_calls, mock.requests().len()),
        (1, 3),
        "no builder call on a hit, counted at the mock"
    );

    // Another tenant has its own cache.
    mock.push(built(schema, 0.95, &[]));
    mock.push(Reply::answer(
        json!({ "name": "Ada", "email": "ada@example.com" }),
    ));
    let outcome = client
        .structure(
            &Scope::tenant("other"),
            &described("A person's name and email address."),
        )
        .await
        .unwrap();
    assert!(!outcome.trace.schema_builder.unwrap().cache_hit);
}

/// An expired entry is a miss and is overwritten; so is a corrupt one.
async fn an_expired_or_corrupt_entry_is_a_miss(
    client: &Structure,
    mock: &MockLlm,
    store: &MemoryStore,
    scope: &Scope,
    schema: &Value,
) {
    let keys = store.keys_after(None, 100).unwrap();
    let key = keys
        .iter()
        .find(|key| key.starts_with("t/acme/builder-cache/"))
        .unwrap()
        .clone();
    let mut entry: Value = serde_json::from_slice(&store.get(&key).unwrap().unwrap()).unwrap();
    entry["expiresAtMillis"] = json!(1);
    store.set(&key, entry.to_string().as_bytes()).unwrap();
    mock.push(built(schema, 0.95, &[]));
    mock.push(Reply::answer(
        json!({ "name": "Ada", "email": "ada@example.com" }),
    ));
    let outcome = client
        .structure(scope, &described("A person's name and email address."))
        .await
        .unwrap();
    assert!(!outcome.trace.schema_builder.unwrap().cache_hit);
    let renewed: Value = serde_json::from_slice(&store.get(&key).unwrap().unwrap()).unwrap();
    assert!(renewed["expiresAtMillis"].as_u64().unwrap() > 1_700_000_000_000);
    store.set(&key, b"{ corrupt").unwrap();
    mock.push(built(schema, 0.95, &[]));
    mock.push(Reply::answer(
        json!({ "name": "Ada", "email": "ada@example.com" }),
    ));
    let outcome = client
        .structure(scope, &described("A person's name and email address."))
        .await
        .unwrap();
    assert_eq!(
        outcome.status,
        Status::Ok,
        "a corrupt entry is a miss, never an error"
    );
}

#[tokio::test]
async fn low_confidence_or_a_question_asks_before_any_content_call() {
    let mock = MockLlm::start();
    let client = client(&mock);
    let scope = Scope::tenant("acme");
    let schema = json!({ "type": "object", "properties": { "thing": { "type": "string" } } });

    mock.push(built(&schema, 0.4, &[]));
    let outcome = client.structure(&scope, &described("stuff")).await.unwrap();
    assert_eq!(outcome.status, Status::NeedMoreInput);
    assert!(
        outcome
            .need
            .unwrap()
            .contains("ambiguous (the builder is 40 % sure)")
    );
    assert_eq!((outcome.usage.llm_calls, outcome.iterations), (1, 0));

    mock.push(built(
        &schema,
        0.9,
        &["Which fields of the order do you need?"],
    ));
    let outcome = client
        .structure(&scope, &described("an order"))
        .await
        .unwrap();
    assert_eq!(
        (outcome.status, outcome.need.as_deref()),
        (
            Status::NeedMoreInput,
            Some("Which fields of the order do you need?")
        )
    );
    assert_eq!(
        mock.requests().len(),
        2,
        "no content call, and nothing cached: the next call asks again"
    );

    // The threshold is a setting.
    mock.push(built(&schema, 0.4, &[]));
    mock.push(Reply::answer(json!({ "thing": "x" })));
    let mut relaxed = described("stuff");
    relaxed.settings = Some(json!({ "confidenceThreshold": 0.3 }).to_string());
    assert_eq!(
        client.structure(&scope, &relaxed).await.unwrap().status,
        Status::Ok
    );
}

#[tokio::test]
async fn a_builder_answer_breaking_the_meta_schema_is_fed_back_then_stale() {
    let mock = MockLlm::start();
    let client = client(&mock);
    let scope = Scope::tenant("acme");
    let good = json!({ "type": "object", "properties": { "name": { "type": "string" } }, "required": ["name"] });
    let bad = json!({ "type": "object", "properties": { "name": { "type": "text" } } });

    mock.push(built(&bad, 0.9, &[]));
    mock.push(built(&good, 0.9, &[]));
    mock.push(Reply::answer(json!({ "name": "Ada" })));
    let outcome = client
        .structure(&scope, &described("a name"))
        .await
        .unwrap();
    assert_eq!((outcome.status, outcome.usage.llm_calls), (Status::Ok, 3));
    let second = mock.requests()[1].json();
    let reason = second["messages"].as_array().unwrap().last().unwrap()["content"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(
        reason.starts_with("The previous output did not conform to the schema:"),
        "{reason}"
    );

    mock.push(built(&bad, 0.9, &[]));
    mock.push(Reply::text("not even JSON"));
    let outcome = client
        .structure(&scope, &described("another name"))
        .await
        .unwrap();
    assert_eq!(
        (outcome.status, outcome.iterations, outcome.usage.llm_calls),
        (Status::Stale, 0, 2)
    );
    assert!(
        outcome.errors[0].starts_with("schema builder: /: the answer must be one JSON object"),
        "{:?}",
        outcome.errors
    );
    assert!(outcome.data.is_none());
}

#[tokio::test]
async fn examples_give_a_schema_without_a_builder_call() {
    let mock = MockLlm::start();
    let client = client(&mock);
    mock.push(Reply::answer(
        json!({ "name": "Ada", "born": "1815-12-10" }),
    ));
    let outcome = client
        .call_tool(
            &Scope::default(),
            &json!({
                "prompt": "Ada Lovelace was born on 10 December 1815.",
                "schema": [{ "name": "Alan", "born": "1912-06-23" }, { "name": "Grace", "born": "1906-12-09" }],
                "schemaMode": "examples"
            }),
        )
        .await
        .unwrap();
    assert_eq!(
        (outcome["status"].as_str(), outcome["schemaOrigin"].as_str()),
        (Some("ok"), Some("inferred"))
    );
    assert_eq!(outcome["usage"]["llmCalls"], 1);
    let sent = mock.requests()[0].json().to_string();
    assert!(
        sent.contains("\"format\":\"date\""),
        "the inferred format is sent: {sent}"
    );
}

#[tokio::test]
async fn settings_cascade_from_host_to_tenant_to_project_to_call() {
    let mock = MockLlm::start();
    let client = client(&mock);
    let tenant = Scope::tenant("acme");
    let project = Scope::project("acme", "web");
    let model_used =
        |scope: Scope, overrides: Option<Value>| model_used(&client, &mock, scope, overrides);
    assert_eq!(model_used(project.clone(), None).await, "host-model");
    client
        .set_settings(
            &tenant,
            &json!({ "model": "openai/tenant-model", "maxLoops": 5 }),
        )
        .await
        .unwrap();
    assert_eq!(model_used(project.clone(), None).await, "tenant-model");
    client
        .set_settings(&project, &json!({ "model": "openai/project-model" }))
        .await
        .unwrap();
    assert_eq!(model_used(project.clone(), None).await, "project-model");
    assert_eq!(
        model_used(Scope::project("acme", "mobile"), None).await,
        "tenant-model"
    );
    assert_eq!(
        model_used(
            project.clone(),
            Some(json!({ "model": "openai/call-model" }))
        )
        .await,
        "call-model"
    );
    assert_eq!(
        model_used(Scope::tenant("other"), None).await,
        "host-model",
        "settings never cross tenants"
    );

    let described = client.get_settings(&project).await.unwrap();
    assert_eq!(described["effective"]["model"], "openai/project-model");
    assert_eq!(
        described["effective"]["maxLoops"], 5,
        "inherited from the tenant"
    );
    assert_eq!(
        described["overrides"],
        json!({ "model": "openai/project-model" })
    );

    secrets_and_endpoints_come_only_from_the_host(&client, &tenant).await;
    client.set_settings(&project, &json!({})).await.unwrap();
    assert_eq!(
        model_used(project, None).await,
        "tenant-model",
        "an empty object clears the level"
    );
}

/// The model a `contact` call at `scope` (with per-call `overrides`) is sent with.
async fn model_used(
    client: &Structure,
    mock: &MockLlm,
    scope: Scope,
    overrides: Option<Value>,
) -> String {
    mock.push(Reply::answer(
        json!({ "name": "Ada", "email": "ada@example.com" }),
    ));
    let mut request = request(SchemaInput::Named("contact".into()));
    request.settings = overrides.map(|value| value.to_string());
    client.structure(&scope, &request).await.unwrap();
    mock.requests().last().unwrap().json()["model"]
        .as_str()
        .unwrap()
        .to_owned()
}

/// Secrets, endpoints and values out of range are refused, as a tenant's settings and per call.
async fn secrets_and_endpoints_come_only_from_the_host(client: &Structure, tenant: &Scope) {
    for forbidden in [
        json!({ "openaiApiKey": "sk-evil" }),
        json!({ "openai_base_url": "https://evil.example" }),
        json!({ "maxLoops": 42 }),
    ] {
        let error = error_of(client.set_settings(tenant, &forbidden).await);
        assert_eq!(
            error.kind,
            ErrorKind::InvalidRequest("settings".into()),
            "{forbidden}"
        );
        let mut call = request(SchemaInput::Named("contact".into()));
        call.settings = Some(forbidden.to_string());
        let error = error_of(client.structure(tenant, &call).await);
        assert!(
            matches!(
                error.kind,
                ErrorKind::InvalidRequest(_) | ErrorKind::Configuration(_)
            ),
            "{forbidden}: {:?}",
            error.kind
        );
    }
}
