//! End to end: the real .wasm component, run by the wasmtime host, against the mock LLM server
//! over real HTTP.

mod support;

use mock_llm::{MockLlm, Reply};
use serde_json::{Value, json};
use structure_host::{
    CallError, ErrorKind, Request, SchemaInput, Scope, Settings, Status, Structure,
};

fn client(mock: &MockLlm) -> Structure {
    client_with(mock, &[])
}

fn client_with(mock: &MockLlm, extra: &[(&str, &str)]) -> Structure {
    support::host_client(mock, extra)
}

fn user_action() -> Value {
    json!({ "userId": "mike", "action": "broke_build", "timestamp": "2026-05-06T14:30:00Z", "status": "failure" })
}

/// A text that holds a contact's email, so grounding lets the call reach the model.
const CONTACT_TEXT: &str = "Ada Lovelace, ada@example.com";

fn named(prompt: &str, name: &str) -> Request {
    Request::new(prompt, SchemaInput::Named(name.into()))
}

fn inline(schema: impl Into<String>) -> Request {
    Request::new("x", SchemaInput::Inline(schema.into()))
}

fn structure_error(result: Result<structure_host::Outcome, CallError>) -> structure_host::Error {
    match result {
        Err(CallError::Structure(error)) => error,
        Err(CallError::Host(error)) => panic!("the host failed: {error:#}"),
        Ok(outcome) => panic!("expected an error, got {outcome:?}"),
    }
}

#[tokio::test]
async fn ok_on_the_first_try_makes_one_llm_call() {
    let mock = MockLlm::start();
    mock.push(Reply::answer(json!({ "userId": "mike", "action": "broke_build", "timestamp": "2026-05-06T14:30:00Z", "status": "failure", "tags": null })));
    let outcome = client(&mock)
        .structure(
            &Scope::default(),
            &named("Mike broke the build at 2:30 pm", "user-action-record"),
        )
        .await
        .unwrap();
    assert_eq!(outcome.status, Status::Ok);
    assert_eq!(
        serde_json::from_str::<Value>(outcome.data.as_deref().unwrap()).unwrap(),
        user_action()
    );
    assert_eq!((outcome.iterations, outcome.usage.llm_calls), (1, 1));
    assert_eq!(outcome.schema_origin, "registry:bundled");
    let requests = mock.requests();
    assert_eq!(requests.len(), 1);
    assert_eq!(requests[0].path, "/v1/chat/completions");
    assert_eq!(
        requests[0].header("authorization"),
        Some("Bearer sk-e2e-secret")
    );
    assert_eq!(requests[0].header("content-type"), Some("application/json"));
    assert_eq!(requests[0].json()["model"], "gpt-4.1-mini");
    assert_eq!(
        requests[0].json()["response_format"]["json_schema"]["strict"],
        true
    );
}

#[tokio::test]
async fn one_violation_then_a_fix_takes_exactly_two_calls() {
    let mock = MockLlm::start();
    mock.push(Reply::answer(json!({ "userId": "m", "action": "broke_build", "timestamp": "today", "status": "failure" })));
    mock.push(Reply::answer(user_action()));
    let outcome = client(&mock)
        .structure(
            &Scope::default(),
            &named("Mike broke the build", "user-action-record"),
        )
        .await
        .unwrap();
    assert_eq!(outcome.status, Status::Ok);
    assert_eq!((outcome.iterations, outcome.usage.llm_calls), (2, 2));
    let requests = mock.requests();
    assert_eq!(requests.len(), 2);
    let messages = requests[1].json()["messages"].as_array().unwrap().clone();
    assert_eq!(messages.len(), 4);
    assert_eq!(messages[2]["role"], "assistant");
    let reason = messages[3]["content"].as_str().unwrap();
    assert!(
        reason
            .contains("- /userId: value must match pattern \"^[a-zA-Z0-9_-]{3,16}$\" (was \"m\")"),
        "{reason}"
    );
    assert!(
        reason.contains("- /timestamp: value must match format \"date-time\""),
        "{reason}"
    );
    assert_eq!(outcome.trace.feedback, vec![reason.to_owned()]);
}

#[tokio::test]
async fn need_more_input_and_stale_through_the_tool_form() {
    let mock = MockLlm::start();
    let client = client(&mock);
    mock.push(Reply::need("when the build broke"));
    let outcome = client
        .call_tool(&Scope::default(), &json!({ "prompt": "Mike broke the build", "schema": "user-action-record", "schemaMode": "named" }))
        .await
        .unwrap();
    assert_eq!(outcome["status"], "need-more-input");
    assert_eq!(outcome["need"], "when the build broke");
    assert!(outcome.get("data").is_none() && outcome.get("partial").is_none());

    // Short of what the schema asks, the records the text holds cross with the question.
    mock.push(Reply::answer(json!({ "records": [{ "order": "ORD-1" }] })));
    let schema = json!({ "type": "array", "minItems": 2, "items": { "type": "object",
        "properties": { "order": { "type": "string" } }, "required": ["order"] } });
    let outcome = client
        .call_tool(
            &Scope::default(),
            &json!({ "prompt": "Order ORD-1 shipped.", "schema": schema }),
        )
        .await
        .unwrap();
    assert_eq!(outcome["status"], "need-more-input", "{outcome}");
    assert_eq!(outcome["partial"], json!([{ "order": "ORD-1" }]));
    assert_eq!(outcome["sources"][0]["pointer"], "/0/order");
    assert!(outcome.get("data").is_none());

    mock.push(Reply::answer(json!({ "userId": "mike" })));
    mock.push(Reply::answer(json!({ "userId": "mike", "action": "x", "timestamp": "2026-05-06T14:30:00Z", "status": "oops" })));
    let outcome = client
        .call_tool(&Scope::default(), &json!({ "prompt": "Mike broke the build", "schema": "user-action-record", "schemaMode": "named", "maxLoops": 2 }))
        .await
        .unwrap();
    assert_eq!(outcome["status"], "stale");
    assert_eq!(
        outcome["errors"],
        json!(["/status: value must be one of \"success\", \"failure\" (was \"oops\")"])
    );
    assert_eq!(outcome["iterations"], 2);
    assert!(outcome.get("data").is_none());
    assert_eq!(mock.requests().len(), 4);
}

#[tokio::test]
async fn refusal_and_truncation_are_typed_errors() {
    let mock = MockLlm::start();
    let client = client(&mock);
    mock.push(Reply::refusal("I can't help with that."));
    let error = structure_error(
        client
            .structure(&Scope::default(), &named(CONTACT_TEXT, "contact"))
            .await,
    );
    assert_eq!(error.kind, ErrorKind::Refusal);
    assert_eq!(
        error.message,
        "the model refused to answer: I can't help with that."
    );
    assert_eq!(error.usage.llm_calls, 1);

    mock.push(Reply::truncated("{\"answer\": {\"name\": \"Ad"));
    let error = structure_error(
        client
            .structure(&Scope::default(), &named(CONTACT_TEXT, "contact"))
            .await,
    );
    assert_eq!(error.kind, ErrorKind::Truncated);
    assert_eq!(mock.requests().len(), 2);
}

#[tokio::test]
async fn provider_errors_keep_status_message_and_retryability() {
    let mock = MockLlm::start();
    let client = client_with(&mock, &[("structure_max_retries", "0")]);
    for (status, kind, retryable) in [
        (400, "invalid_request_error", false),
        (401, "invalid_api_key", false),
        (429, "rate_limit_exceeded", true),
        (500, "server_error", true),
    ] {
        mock.push(Reply::error(status, kind, &format!("mock says {status}")));
        let error = structure_error(
            client
                .structure(&Scope::default(), &named(CONTACT_TEXT, "contact"))
                .await,
        );
        match error.kind {
            ErrorKind::Provider(failure) => {
                assert_eq!(
                    (failure.status, failure.retryable, failure.code.as_deref()),
                    (status, retryable, Some(kind))
                );
            }
            other => panic!("expected a provider error, got {other:?}"),
        }
        assert!(
            error
                .message
                .contains(&format!("answered {status}: mock says {status}")),
            "{}",
            error.message
        );
        assert!(!error.message.contains("sk-e2e-secret"));
    }
    assert_eq!(mock.requests().len(), 4, "no retries when none are allowed");
}

#[tokio::test]
async fn rate_limits_are_retried_after_the_wait_the_provider_asks_for() {
    let mock = MockLlm::start();
    mock.push(
        Reply::error(429, "rate_limit_exceeded", "slow down").with_header("retry-after-ms", "300"),
    );
    mock.push(Reply::answer(user_action()));
    let started = std::time::Instant::now();
    let outcome = client(&mock)
        .structure(
            &Scope::default(),
            &named("Mike broke the build", "user-action-record"),
        )
        .await
        .unwrap();
    assert!(
        started.elapsed() >= std::time::Duration::from_millis(300),
        "the component waited"
    );
    assert_eq!(outcome.status, Status::Ok);
    assert_eq!(
        (
            outcome.iterations,
            outcome.usage.llm_calls,
            outcome.trace.retries
        ),
        (1, 2, 1)
    );
    assert_eq!(mock.requests().len(), 2);
}

#[tokio::test]
async fn schema_errors_come_back_before_any_http_request() {
    let mock = MockLlm::start();
    let client = client(&mock);
    let error = structure_error(
        client
            .structure(&Scope::default(), &named("x", "user-action-recrod"))
            .await,
    );
    match &error.kind {
        ErrorKind::SchemaNotFound(not_found) => {
            assert_eq!(not_found.name, "user-action-recrod");
            assert_eq!(not_found.suggestions, vec!["user-action-record".to_owned()]);
        }
        other => panic!("expected schema-not-found, got {other:?}"),
    }
    let external = json!({ "type": "object", "properties": { "a": { "$ref": "https://example.com/a.json" } } });
    let error = structure_error(
        client
            .structure(&Scope::default(), &inline(external.to_string()))
            .await,
    );
    // Where in the schema, as data: no caller reads it out of the message.
    assert_eq!(
        error.kind,
        ErrorKind::InvalidSchema(Some("/properties/a/$ref".into()))
    );
    assert!(
        error
            .message
            .contains("external reference \"https://example.com/a.json\""),
        "{}",
        error.message
    );

    let invalid = json!({ "type": "object", "properties": { "a": { "type": "strin" } } });
    let error = structure_error(
        client
            .structure(&Scope::default(), &inline(invalid.to_string()))
            .await,
    );
    assert_eq!(
        error.kind,
        ErrorKind::InvalidSchema(Some("/properties/a/type".into()))
    );
    assert!(
        error.message.contains("does not compile"),
        "{}",
        error.message
    );

    let error = structure_error(
        client
            .structure(&Scope::default(), &inline("{not json"))
            .await,
    );
    assert_eq!(error.kind, ErrorKind::InvalidRequest("schema".into()));
    let error = structure_error(
        client
            .structure(
                &Scope::default(),
                &Request {
                    max_loops: Some(0),
                    ..Request::new(CONTACT_TEXT, SchemaInput::Named("contact".into()))
                },
            )
            .await,
    );
    assert_eq!(error.kind, ErrorKind::InvalidRequest("maxLoops".into()));
    assert!(mock.requests().is_empty(), "no request reached the LLM");
}

#[tokio::test]
async fn transport_faults_are_typed_errors() {
    let mock = MockLlm::start();
    mock.push(Reply::answer(user_action()).with_delay(std::time::Duration::from_secs(5)));
    let client = client_with(&mock, &[("structure_request_timeout_ms", "300")]);
    let started = std::time::Instant::now();
    let error = structure_error(
        client
            .structure(&Scope::default(), &named("x", "user-action-record"))
            .await,
    );
    assert_eq!(error.kind, ErrorKind::Transport);
    assert!(
        error.message.contains("within the request timeout"),
        "{}",
        error.message
    );
    assert!(
        started.elapsed() < std::time::Duration::from_secs(4),
        "the timeout applies"
    );

    mock.push(Reply::raw(200, "{\"choices\": [ this is not json"));
    let error = structure_error(
        client_with(&mock, &[])
            .structure(&Scope::default(), &named("x", "user-action-record"))
            .await,
    );
    assert_eq!(error.kind, ErrorKind::InvalidResponse);

    let closed = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap()
    };
    let settings = Settings::new()
        .set("structure_model", "ollama/x")
        .set("openai_base_url", format!("http://{closed}/v1"));
    let error = structure_error(
        Structure::builder()
            .settings(settings)
            .build()
            .unwrap()
            .structure(&Scope::default(), &named(CONTACT_TEXT, "contact"))
            .await,
    );
    assert_eq!(error.kind, ErrorKind::Transport);
    assert!(
        error.message.starts_with(&format!(
            "could not reach http://{closed}/v1/chat/completions: "
        )),
        "{}",
        error.message
    );
}

#[tokio::test]
async fn a_missing_key_says_what_to_set() {
    let settings = Settings::new().set("structure_model", "openai/gpt-4.1-mini");
    let error = structure_error(
        Structure::builder()
            .settings(settings)
            .build()
            .unwrap()
            .structure(&Scope::default(), &named(CONTACT_TEXT, "contact"))
            .await,
    );
    assert_eq!(
        error.kind,
        ErrorKind::Configuration("openai_api_key".into())
    );
    assert!(
        error.message.contains("set OPENAI_API_KEY"),
        "{}",
        error.message
    );
}

#[tokio::test]
async fn the_tool_definition_and_registry_come_from_the_component() {
    let mock = MockLlm::start();
    let client = client(&mock);
    let definition = client.tool_definition().await.unwrap();
    assert_eq!(definition, structure::tool_definition());
    let schemas = client.list_schemas(&Scope::default()).await.unwrap();
    let names: Vec<&str> = schemas.iter().map(|info| info.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "contact",
            "insight-record",
            "knowledge-triple",
            "support-ticket",
            "user-action-record"
        ]
    );
    assert!(
        schemas
            .iter()
            .all(|info| info.origin == "bundled" && info.has_manual && info.version == "1.0")
    );
}

fn audit(prompt: &str) -> Request {
    named(prompt, "user-action-record")
}

#[tokio::test]
async fn connections_to_the_provider_are_kept_alive_across_calls_and_instances() {
    let mock = MockLlm::start();
    let client = client(&mock);
    for _ in 0..3 {
        mock.push(Reply::answer(user_action()));
        let outcome = client
            .structure(&Scope::default(), &audit("Mike broke the build"))
            .await
            .unwrap();
        assert_eq!(outcome.status, Status::Ok);
    }
    assert_eq!(
        mock.connections(),
        1,
        "three calls, each in a fresh instance, over one connection"
    );
}

#[tokio::test]
async fn a_connection_the_provider_closed_is_replaced() {
    let mock = MockLlm::start();
    let client = client(&mock);
    for _ in 0..3 {
        mock.push(Reply::answer(user_action()).with_header("connection", "close"));
        let outcome = client
            .structure(&Scope::default(), &audit("Mike broke the build"))
            .await
            .unwrap();
        assert_eq!(outcome.status, Status::Ok);
    }
    assert_eq!(mock.connections(), 3);
}

#[tokio::test]
async fn a_reused_instance_serves_call_after_call_and_calls_made_together() {
    let mock = MockLlm::start();
    let settings = Settings::new()
        .set("structure_model", "openai/gpt-4.1-mini")
        .set("openai_base_url", mock.base_url())
        .set("openai_api_key", "sk-e2e-secret");
    let client = Structure::builder()
        .settings(settings)
        .reuse_instance(true)
        .build()
        .unwrap();
    let scope = Scope::default();
    mock.push(Reply::answer(user_action()));
    mock.push(Reply::need("when it happened"));
    mock.push(Reply::answer(json!({ "userId": "x" })));
    let statuses = [
        client
            .structure(&scope, &audit("Mike broke the build"))
            .await
            .unwrap()
            .status,
        client
            .structure(&scope, &audit("Mike broke it"))
            .await
            .unwrap()
            .status,
        client
            .structure(
                &scope,
                &Request {
                    max_loops: Some(1),
                    ..audit("x")
                },
            )
            .await
            .unwrap()
            .status,
    ];
    assert_eq!(statuses, [Status::Ok, Status::NeedMoreInput, Status::Stale]);

    mock.push(Reply::answer(user_action()).with_delay(std::time::Duration::from_millis(50)));
    mock.push(Reply::answer(user_action()));
    let (first_request, second_request) = (audit("first"), audit("second"));
    let (first, second) = tokio::join!(
        client.structure(&scope, &first_request),
        client.structure(&scope, &second_request)
    );
    assert_eq!(
        (first.unwrap().status, second.unwrap().status),
        (Status::Ok, Status::Ok)
    );
    assert_eq!(mock.requests().len(), 5);
}

#[tokio::test]
async fn a_ref_to_a_live_server_is_refused_and_never_fetched() {
    let mock = MockLlm::start();
    let client = client(&mock);
    for reference in [
        format!("{}/schemas/contact.json", mock.base_url()),
        format!("{}/schemas/contact.json#/properties/name", mock.base_url()),
        "file:///etc/passwd".to_owned(),
    ] {
        let request = Request::new(
            "Ada",
            SchemaInput::Inline(
                json!({ "type": "object", "properties": { "who": { "$ref": reference } } })
                    .to_string(),
            ),
        );
        match client.structure(&Scope::default(), &request).await {
            Err(CallError::Structure(error)) => {
                assert_eq!(
                    error.kind,
                    ErrorKind::InvalidSchema(Some("/properties/who/$ref".into())),
                    "{reference}"
                )
            }
            other => panic!("{reference}: {:?}", other.map(|outcome| outcome.status)),
        }
    }
    assert!(mock.requests().is_empty(), "nothing was fetched");
}

/// A schema for the grounding tests: a name the text must hold, and a summary marked derived.
const PERSON: &str = r#"{"type": "object", "properties": {
    "name": {"type": "string"},
    "city": {"type": "string"},
    "summary": {"type": "string", "x-structure-derived": true}
}, "required": ["name", "city", "summary"]}"#;

#[tokio::test]
async fn require_mode_feeds_an_ungrounded_value_back_and_takes_the_fixed_answer() {
    let mock = MockLlm::start();
    mock.push(Reply::answer(
        json!({ "name": "John Smith", "city": "München", "summary": "A customer in Munich" }),
    ));
    mock.push(Reply::answer(
        json!({ "name": "Jürgen Groß", "city": "München", "summary": "A customer in Munich" }),
    ));
    let request = Request {
        settings: Some(json!({ "grounding": "require" }).to_string()),
        ..Request::new(
            "Kunde: Jürgen Groß aus München 🎉",
            SchemaInput::Inline(PERSON.into()),
        )
    };
    let outcome = client(&mock)
        .structure(&Scope::default(), &request)
        .await
        .unwrap();
    assert_eq!(outcome.status, Status::Ok);
    assert_eq!((outcome.iterations, outcome.usage.llm_calls), (2, 2));
    assert_eq!(
        outcome.trace.feedback[0].lines().nth(1),
        Some(
            "- /name: \"John Smith\" does not appear in the text; copy the value as the text \
             writes it, or answer with _need if the text does not give it"
        ),
        "the summary is marked derived: only the name is fed back"
    );
    let sent = mock.requests()[1].json();
    let fed_back = sent["messages"].as_array().unwrap().last().unwrap()["content"].to_string();
    assert!(fed_back.contains("John Smith"), "{fed_back}");
    // The sources of the fixed answer: offsets in code points and UTF-16 units.
    let name = outcome
        .sources
        .iter()
        .find(|source| source.pointer == "/name")
        .unwrap();
    let span = name.span.as_ref().unwrap();
    assert_eq!(
        (span.start, span.end, span.text.as_str()),
        (7, 18, "Jürgen Groß")
    );
    let city = outcome
        .sources
        .iter()
        .find(|source| source.pointer == "/city")
        .unwrap();
    assert_eq!(city.span.as_ref().unwrap().start, 23);
    let summary = outcome
        .sources
        .iter()
        .find(|source| source.pointer == "/summary")
        .unwrap();
    assert_eq!(summary.matched, structure_host::SourceMatch::Derived);
    assert_eq!(outcome.to_json()["sources"][0]["match"], "exact");
}

#[tokio::test]
async fn require_mode_ends_stale_when_the_value_stays_ungrounded() {
    let mock = MockLlm::start();
    for name in ["John Smith", "Jane Doe"] {
        mock.push(Reply::answer(
            json!({ "name": name, "city": "Berlin", "summary": "x" }),
        ));
    }
    let request = Request {
        max_loops: Some(2),
        settings: Some(json!({ "grounding": "require" }).to_string()),
        ..Request::new(
            "A customer wrote in from Berlin.",
            SchemaInput::Inline(PERSON.into()),
        )
    };
    let outcome = client(&mock)
        .structure(&Scope::default(), &request)
        .await
        .unwrap();
    assert_eq!(outcome.status, Status::Stale);
    assert!(outcome.data.is_none() && outcome.sources.is_empty());
    assert!(
        outcome.errors[0].contains("\"Jane Doe\" does not appear in the text"),
        "{:?}",
        outcome.errors
    );
    // Report mode (the default) keeps the same answer, with its provenance.
    mock.push(Reply::answer(
        json!({ "name": "John Smith", "city": "Berlin", "summary": "x" }),
    ));
    let report = Request {
        settings: None,
        records: false,
        document: None,
        return_text: false,
        ..request
    };
    let outcome = client(&mock)
        .structure(&Scope::default(), &report)
        .await
        .unwrap();
    assert_eq!(outcome.status, Status::Ok);
    let derived: Vec<&str> = outcome
        .sources
        .iter()
        .filter(|source| source.matched == structure_host::SourceMatch::Derived)
        .map(|source| source.pointer.as_str())
        .collect();
    assert_eq!(derived, ["/name", "/summary"]);
}
