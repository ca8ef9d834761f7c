//! End to end through the real .wasm: every provider × delivery mode × outcome, against the mock
//! LLM speaking each provider's wire format over HTTP.

use mock_llm::MockLlm;
use mock_llm::wire::{Form, Wire};
use serde_json::{Value, json};
use structure_host::{
    CallError, ErrorKind, Request, SchemaInput, Scope, Settings, Status, Structure,
};

struct Provider {
    name: &'static str,
    wire: Wire,
    path: &'static str,
}

const PROVIDERS: &[Provider] = &[
    Provider {
        name: "openai/gpt-4.1-mini",
        wire: Wire::OpenAiChat,
        path: "/v1/chat/completions",
    },
    Provider {
        name: "openai/gpt-5-nano",
        wire: Wire::OpenAiResponses,
        path: "/v1/responses",
    },
    Provider {
        name: "anthropic/claude-sonnet-4-5",
        wire: Wire::Anthropic,
        path: "/v1/messages",
    },
    Provider {
        name: "google/gemini-2.5-flash",
        wire: Wire::Gemini,
        path: "/v1beta/models/gemini-2.5-flash:generateContent",
    },
];

const MODES: [(&str, Form); 3] = [
    ("native", Form::Text),
    ("tool", Form::Tool),
    ("prompt", Form::Text),
];

fn client(mock: &MockLlm, provider: &Provider, mode: &str) -> Structure {
    let base = format!("http://{}", mock.address());
    let mut settings = Settings::new()
        .set("structure_model", provider.name)
        .set("structure_delivery", mode)
        .set("structure_require_provider_strict_output", "false")
        .set("structure_max_retry_wait_ms", "2000")
        .set("openai_api_key", "sk-openai-secret")
        .set("openai_base_url", format!("{base}/v1"))
        .set("anthropic_api_key", "sk-ant-secret")
        .set("anthropic_base_url", base.clone())
        .set("gemini_api_key", "gemini-secret")
        .set("gemini_base_url", base);
    if provider.wire == Wire::OpenAiResponses {
        settings = settings.set("structure_openai_api", "responses");
    }
    Structure::builder().settings(settings).build().unwrap()
}

fn contact() -> Value {
    json!({ "name": "Ada Lovelace", "email": "ada@example.com" })
}

fn request(max_loops: u8) -> Request {
    Request {
        max_loops: Some(max_loops),
        ..Request::new(
            "Ada Lovelace, ada@example.com",
            SchemaInput::Named("contact".into()),
        )
    }
}

fn error_of(
    result: Result<structure_host::Outcome, CallError>,
    label: &str,
) -> structure_host::Error {
    match result {
        Err(CallError::Structure(error)) => error,
        other => panic!("{label}: expected a typed error, got {other:?}"),
    }
}

#[tokio::test]
async fn every_provider_and_mode_delivers_ok_fix_need_and_stale() {
    for provider in PROVIDERS {
        for (mode, form) in MODES {
            let label = format!("{} {mode}", provider.name);
            let mock = MockLlm::start();
            let client = client(&mock, provider, mode);
            ok_at_once_and_after_a_fix(&client, &mock, provider, (mode, form), &label).await;
            need_and_stale(&client, &mock, provider, form, &label).await;
            let requests = mock.requests();
            assert_eq!(requests.len(), 6, "{label}");
            for sent in &requests {
                assert_eq!(sent.path, provider.path, "{label}");
            }
            the_key_travels_in_the_providers_header(provider, &requests[0], &label);
        }
    }
}

/// A valid answer at once, and one after a violation fed back.
async fn ok_at_once_and_after_a_fix(
    client: &Structure,
    mock: &MockLlm,
    provider: &Provider,
    (mode, form): (&str, Form),
    label: &str,
) {
    mock.push(provider.wire.answer(form, contact()));
    let outcome = client
        .structure(&Scope::default(), &request(3))
        .await
        .unwrap();
    assert_eq!(outcome.status, Status::Ok, "{label}");
    assert_eq!(
        serde_json::from_str::<Value>(outcome.data.as_deref().unwrap()).unwrap(),
        contact(),
        "{label}"
    );
    assert_eq!(
        (outcome.iterations, outcome.usage.llm_calls),
        (1, 1),
        "{label}"
    );
    assert_eq!(outcome.trace.delivery, mode, "{label}");

    mock.push(provider.wire.answer(
        form,
        json!({ "name": "Ada Lovelace", "email": "ada at example" }),
    ));
    mock.push(provider.wire.answer(form, contact()));
    let outcome = client
        .structure(&Scope::default(), &request(3))
        .await
        .unwrap();
    assert_eq!(
        (outcome.status, outcome.iterations, outcome.usage.llm_calls),
        (Status::Ok, 2, 2),
        "{label}"
    );
}

/// The model's need, and an answer still invalid when the loops are spent.
async fn need_and_stale(
    client: &Structure,
    mock: &MockLlm,
    provider: &Provider,
    form: Form,
    label: &str,
) {
    mock.push(provider.wire.need(form, "the email address"));
    let outcome = client
        .structure(&Scope::default(), &request(3))
        .await
        .unwrap();
    assert_eq!(
        (outcome.status, outcome.need.as_deref()),
        (Status::NeedMoreInput, Some("the email address")),
        "{label}"
    );

    mock.push(provider.wire.answer(form, json!({ "name": "Ada" })));
    mock.push(
        provider
            .wire
            .answer(form, json!({ "name": "Ada", "email": "nope" })),
    );
    let outcome = client
        .structure(&Scope::default(), &request(2))
        .await
        .unwrap();
    assert_eq!(outcome.status, Status::Stale, "{label}");
    assert_eq!(outcome.errors.len(), 1, "{label}: {:?}", outcome.errors);
    assert!(
        outcome.errors[0].starts_with("/email: value must match format \"email\""),
        "{label}: {:?}",
        outcome.errors
    );
    assert!(outcome.data.is_none());
}

/// The provider's key, in the header its API reads it from.
fn the_key_travels_in_the_providers_header(
    provider: &Provider,
    headers: &mock_llm::Recorded,
    label: &str,
) {
    match provider.wire {
        Wire::OpenAiChat | Wire::OpenAiResponses => {
            assert_eq!(
                headers.header("authorization"),
                Some("Bearer sk-openai-secret"),
                "{label}"
            );
        }
        Wire::Anthropic => {
            assert_eq!(headers.header("x-api-key"), Some("sk-ant-secret"));
            assert_eq!(headers.header("anthropic-version"), Some("2023-06-01"));
        }
        Wire::Gemini => assert_eq!(headers.header("x-goog-api-key"), Some("gemini-secret")),
    }
}

#[tokio::test]
async fn refusal_truncation_and_every_error_class_are_typed() {
    for provider in PROVIDERS {
        let label = provider.name;
        let mock = MockLlm::start();
        let client = client(&mock, provider, "native");
        refusal_and_truncation_are_typed(&client, &mock, provider).await;
        client_errors_are_not_retried(&client, &mock, provider).await;
        server_errors_are_retried_then_typed(&client, &mock, provider).await;
        assert_eq!(mock.pending(), 0, "{label}: every scripted reply was used");
    }
}

/// A refusal (or a block) and an answer cut off at the output limit.
async fn refusal_and_truncation_are_typed(client: &Structure, mock: &MockLlm, provider: &Provider) {
    let label = provider.name;
    mock.push(provider.wire.refusal());
    let error = error_of(
        client.structure(&Scope::default(), &request(3)).await,
        label,
    );
    assert!(
        matches!(error.kind, ErrorKind::Refusal | ErrorKind::Blocked(_)),
        "{label}: {:?}",
        error.kind
    );
    assert_eq!(error.usage.llm_calls, 1);

    mock.push(provider.wire.truncated());
    let error = error_of(
        client.structure(&Scope::default(), &request(3)).await,
        label,
    );
    assert_eq!(
        error.kind,
        ErrorKind::Truncated,
        "{label}: {}",
        error.message
    );
}

/// 400, 401, 403, 404: a provider error at once, not retryable, its message kept, no key in it.
async fn client_errors_are_not_retried(client: &Structure, mock: &MockLlm, provider: &Provider) {
    let label = provider.name;
    for status in [400, 401, 403, 404] {
        mock.push(provider.wire.error(status, &format!("mock {status}")));
        let error = error_of(
            client.structure(&Scope::default(), &request(3)).await,
            label,
        );
        match &error.kind {
            ErrorKind::Provider(failure) => assert_eq!(
                (failure.status, failure.retryable),
                (status, false),
                "{label}"
            ),
            other => panic!("{label}: {other:?}"),
        }
        assert!(
            error.message.contains(&format!("mock {status}")),
            "{label}: {}",
            error.message
        );
        assert!(!error.message.contains("secret"), "no key in messages");
    }
}

/// 429 and 5xx: retried after the wait the provider asks; when the retries are spent, the last
/// error, marked retryable.
async fn server_errors_are_retried_then_typed(
    client: &Structure,
    mock: &MockLlm,
    provider: &Provider,
) {
    let label = provider.name;
    for status in [429, 500, 502, 503, 504, 529] {
        mock.push(
            provider
                .wire
                .error(status, "transient")
                .with_header("retry-after-ms", "10"),
        );
        mock.push(provider.wire.answer(Form::Text, contact()));
        let outcome = client
            .structure(&Scope::default(), &request(3))
            .await
            .unwrap();
        assert_eq!(
            (
                outcome.status,
                outcome.trace.retries,
                outcome.usage.llm_calls
            ),
            (Status::Ok, 1, 2),
            "{label} {status}"
        );
    }
    // Retries exhausted: the last error comes back, marked retryable.
    for _ in 0..3 {
        mock.push(
            provider
                .wire
                .error(503, "still down")
                .with_header("retry-after-ms", "10"),
        );
    }
    let error = error_of(
        client.structure(&Scope::default(), &request(3)).await,
        label,
    );
    match &error.kind {
        ErrorKind::Provider(failure) => {
            assert_eq!((failure.status, failure.retryable), (503, true), "{label}")
        }
        other => panic!("{label}: {other:?}"),
    }
    assert_eq!(error.usage.llm_calls, 3, "{label}");
}

#[tokio::test]
async fn retry_after_is_honoured() {
    for provider in PROVIDERS {
        let mock = MockLlm::start();
        let client = client(&mock, provider, "native");
        mock.push(
            provider
                .wire
                .error(429, "slow down")
                .with_header("retry-after", "1"),
        );
        mock.push(provider.wire.answer(Form::Text, contact()));
        let started = std::time::Instant::now();
        let outcome = client
            .structure(&Scope::default(), &request(3))
            .await
            .unwrap();
        assert!(
            started.elapsed() >= std::time::Duration::from_secs(1),
            "{}: waited the second asked for",
            provider.name
        );
        assert_eq!(outcome.trace.retries, 1);
    }
}

#[tokio::test]
async fn tool_mode_reminds_a_model_answering_in_plain_text_then_gives_up() {
    for provider in PROVIDERS {
        let label = provider.name;
        let mock = MockLlm::start();
        let client = client(&mock, provider, "tool");
        mock.push(
            provider
                .wire
                .content(Form::Text, "Ada Lovelace, ada@example.com"),
        );
        mock.push(provider.wire.answer(Form::Tool, contact()));
        let outcome = client
            .structure(&Scope::default(), &request(3))
            .await
            .unwrap();
        assert_eq!(
            (outcome.status, outcome.iterations, outcome.usage.llm_calls),
            (Status::Ok, 1, 2),
            "{label}"
        );
        assert!(
            outcome.trace.feedback[0]
                .contains("You answered in plain text. Call the tool __structured_output__"),
            "{label}"
        );

        for _ in 0..3 {
            mock.push(provider.wire.content(Form::Text, "I'd rather chat."));
        }
        let error = error_of(
            client.structure(&Scope::default(), &request(3)).await,
            label,
        );
        assert_eq!(error.kind, ErrorKind::StructuredOutputFailed, "{label}");
        assert_eq!(error.usage.llm_calls, 3, "{label}");
    }
}

#[tokio::test]
async fn anthropic_caches_the_system_block_holding_the_manual() {
    let mock = MockLlm::start();
    let client = client(&mock, &PROVIDERS[2], "native");
    mock.push(Wire::Anthropic.answer(Form::Text, contact()));
    // A text that gives a day relative to today: the current date is told, outside the cache.
    let today = Request {
        prompt: "Ada Lovelace wrote today: ada@example.com".into(),
        ..request(3)
    };
    client.structure(&Scope::default(), &today).await.unwrap();
    let body = mock.requests()[0].json();
    let system = body["system"].as_array().unwrap();
    assert_eq!(system[0]["cache_control"], json!({ "type": "ephemeral" }));
    assert!(
        system[0]["text"]
            .as_str()
            .unwrap()
            .contains("two-letter ISO code"),
        "the manual is in the cached block"
    );
    assert!(system[1].get("cache_control").is_none());
    assert!(
        system[1]["text"]
            .as_str()
            .unwrap()
            .starts_with("The current date and time is"),
        "the time is outside it"
    );

    mock.push(Wire::Anthropic.answer(Form::Text, contact()));
    let inline = Request::new(
        "x",
        SchemaInput::Inline(json!({ "type": "object" }).to_string()),
    );
    client.structure(&Scope::default(), &inline).await.unwrap();
    let system = mock.requests()[1].json()["system"].clone();
    assert!(
        system[0].get("cache_control").is_none(),
        "no manual, nothing worth caching"
    );
    assert_eq!(
        system.as_array().map(Vec::len),
        Some(1),
        "no date to tell: no empty block (Anthropic refuses one)"
    );
}

#[tokio::test]
async fn models_without_native_structured_output_fall_back_to_strict_tools() {
    let mock = MockLlm::start();
    let settings = Settings::new()
        .set("structure_model", "anthropic/claude-3-5-sonnet-20241022")
        .set("anthropic_api_key", "k")
        .set("anthropic_base_url", format!("http://{}", mock.address()));
    let client = Structure::builder()
        .settings(settings.clone())
        .build()
        .unwrap();
    mock.push(Wire::Anthropic.answer(Form::Tool, contact()));
    let outcome = client
        .structure(&Scope::default(), &request(3))
        .await
        .unwrap();
    assert_eq!(
        (outcome.status, outcome.trace.delivery.as_str()),
        (Status::Ok, "tool")
    );
    let body = mock.requests()[0].json();
    assert_eq!(body["tool_choice"]["name"], "__structured_output__");
    assert!(body.get("output_config").is_none());

    let forced = Structure::builder()
        .settings(settings.set("structure_delivery", "native"))
        .build()
        .unwrap();
    let error = error_of(
        forced.structure(&Scope::default(), &request(3)).await,
        "native on claude 3.5",
    );
    assert_eq!(
        error.kind,
        ErrorKind::Configuration("structure_delivery".into())
    );
}

/// A call of an inline `schema` over `prompt`.
fn inline(prompt: &str, schema: Value) -> Request {
    Request {
        prompt: prompt.into(),
        schema: SchemaInput::Inline(schema.to_string()),
        ..request(3)
    }
}

#[tokio::test]
async fn scalar_and_array_roots_run_on_every_providers_wire() {
    for provider in PROVIDERS {
        let label = provider.name;
        let mock = MockLlm::start();
        let client = client(&mock, provider, "native");

        // A classification: the root enum travels wrapped, and comes back as the value itself.
        mock.push(provider.wire.answer(Form::Text, json!({ "value": "spam" })));
        let label_schema = json!({ "enum": ["spam", "ham"], "description": "the kind of mail" });
        let outcome = client
            .structure(
                &Scope::default(),
                &inline("Buy cheap watches now!", label_schema),
            )
            .await
            .unwrap();
        assert_eq!(outcome.status, Status::Ok, "{label}: {:?}", outcome.errors);
        assert_eq!(outcome.data.as_deref(), Some("\"spam\""), "{label}");
        let sent = mock.requests()[0].body.clone();
        assert!(
            sent.contains("\"value\"") && sent.contains("\"ham\""),
            "{label}: the wrapped enum is sent: {sent}"
        );

        // An array of objects: every record, checked whole.
        let orders = json!({ "type": "array", "minItems": 1, "items": { "type": "object",
            "properties": { "order": { "type": "string" } }, "required": ["order"] } });
        mock.push(provider.wire.answer(
            Form::Text,
            json!({ "records": [{ "order": "ORD-1" }, { "order": "ORD-2" }] }),
        ));
        let outcome = client
            .structure(
                &Scope::default(),
                &inline("Orders ORD-1 and ORD-2 shipped.", orders),
            )
            .await
            .unwrap();
        assert_eq!(outcome.status, Status::Ok, "{label}: {:?}", outcome.errors);
        assert_eq!(
            serde_json::from_str::<Value>(outcome.data.as_deref().unwrap()).unwrap(),
            json!([{ "order": "ORD-1" }, { "order": "ORD-2" }]),
            "{label}"
        );
        assert_eq!(outcome.sources[1].pointer, "/1/order", "{label}");
    }
}
