//! Faults, end to end through the real component in wasmtime: the mock LLM answers late, cuts
//! the connection, drips, sends garbage, invalid UTF-8 or 50 MB; the key-value store fails.
//! Each gives its typed outcome — no panic, no trap — and nothing half-written is kept.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use mock_llm::{Fault, MockLlm, Reply};
use serde_json::{Value, json};
use structure_host::{
    CallError, ErrorKind, KeyValueStore, MemoryStore, Outcome, Request, SchemaInput, Scope,
    Settings, Status, Structure,
};

fn client(mock: &MockLlm, extra: &[(&str, &str)]) -> Structure {
    client_with_store(mock, extra, Arc::new(MemoryStore::default()))
}

fn client_with_store(
    mock: &MockLlm,
    extra: &[(&str, &str)],
    store: Arc<dyn KeyValueStore>,
) -> Structure {
    let mut settings = Settings::new()
        .set("structure_model", "openai/gpt-4.1-mini")
        .set("openai_base_url", mock.base_url())
        .set("openai_api_key", "sk-faults")
        .set("structure_max_retries", "0");
    for (key, value) in extra {
        settings = settings.set(*key, *value);
    }
    Structure::builder()
        .settings(settings)
        .key_value(store)
        .build()
        .unwrap()
}

fn request() -> Request {
    Request::new(
        "Mike broke the build at 2:30 pm on 6 May 2026",
        SchemaInput::Named("user-action-record".into()),
    )
}

fn valid() -> Value {
    json!({ "userId": "mike", "action": "broke_build", "timestamp": "2026-05-06T14:30:00Z", "status": "failure" })
}

async fn fails_with(client: &Structure, expected: fn(&ErrorKind) -> bool) -> String {
    match client.structure(&Scope::default(), &request()).await {
        Err(CallError::Structure(error)) => {
            assert!(
                expected(&error.kind),
                "unexpected {:?}: {}",
                error.kind,
                error.message
            );
            assert!(error.usage.llm_calls >= 1, "the attempt is counted");
            error.message
        }
        Err(CallError::Host(error)) => panic!("the component trapped: {error:#}"),
        Ok(outcome) => panic!("expected an error, got {:?}", outcome.status),
    }
}

fn transport(kind: &ErrorKind) -> bool {
    matches!(kind, ErrorKind::Transport)
}

fn invalid_response(kind: &ErrorKind) -> bool {
    matches!(kind, ErrorKind::InvalidResponse)
}

#[tokio::test]
async fn an_answer_later_than_the_timeout_is_a_transport_error() {
    let mock = MockLlm::start();
    let client = client(&mock, &[("structure_request_timeout_ms", "300")]);
    mock.push(Reply::answer(valid()).with_delay(Duration::from_secs(3)));
    let started = Instant::now();
    let message = fails_with(&client, transport).await;
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "gave up at the timeout: {message}"
    );
}

#[tokio::test]
async fn a_connection_reset_mid_body_is_a_transport_error() {
    let mock = MockLlm::start();
    let client = client(&mock, &[]);
    mock.push(Reply::answer(valid()).with_fault(Fault::Reset { after_bytes: 40 }));
    fails_with(&client, transport).await;
}

#[tokio::test]
async fn garbage_and_invalid_utf8_are_invalid_responses() {
    let mock = MockLlm::start();
    let client = client(&mock, &[]);
    mock.push(Reply::bytes(200, b"\x00\x01garbage{{{".to_vec()));
    let message = fails_with(&client, invalid_response).await;
    assert!(message.contains("not JSON"), "{message}");
    mock.push(Reply::bytes(200, vec![0xff, 0xfe, b'{', 0xc3, 0x28, b'}']));
    fails_with(&client, invalid_response).await;
    // Valid JSON, but not the wire format.
    mock.push(Reply::raw(200, r#"{"choices": "none"}"#));
    fails_with(&client, invalid_response).await;
}

#[tokio::test]
async fn a_50_mb_body_is_refused_by_its_length_or_while_reading() {
    let mock = MockLlm::start();
    let client = client(&mock, &[]);
    let huge = format!("{{\"padding\": \"{}\"}}", "x".repeat(50 << 20));
    // Announced with a content-length: refused before reading.
    mock.push(Reply::raw(200, &huge));
    let message = fails_with(&client, transport).await;
    assert!(
        message.contains("structure_max_response_bytes"),
        "{message}"
    );
    // Not announced (chunked): reading stops at the limit.
    mock.push(Reply::raw(200, &huge).with_fault(Fault::Chunked {
        chunk_bytes: 1 << 20,
    }));
    let message = fails_with(&client, transport).await;
    assert!(
        message.contains("structure_max_response_bytes"),
        "{message}"
    );
}

#[tokio::test]
async fn a_slow_drip_is_cut_off_at_the_request_timeout() {
    let mock = MockLlm::start();
    let client = client(&mock, &[("structure_request_timeout_ms", "1000")]);
    // Each byte in time for the between-bytes timeout, the whole far too late.
    mock.push(Reply::answer(valid()).with_fault(Fault::Drip {
        chunk_bytes: 1,
        every_ms: 50,
    }));
    let started = Instant::now();
    fails_with(&client, transport).await;
    assert!(started.elapsed() < Duration::from_secs(10));
}

#[tokio::test]
async fn a_burst_of_5xx_is_retried_and_a_longer_one_reported() {
    let mock = MockLlm::start();
    let client = client(&mock, &[("structure_max_retries", "3")]);
    let unavailable =
        || Reply::error(503, "overloaded", "try later").with_header("retry-after-ms", "10");
    for _ in 0..3 {
        mock.push(unavailable());
    }
    mock.push(Reply::answer(valid()));
    let outcome: Outcome = client
        .structure(&Scope::default(), &request())
        .await
        .unwrap();
    assert_eq!(
        (
            outcome.status,
            outcome.trace.retries,
            outcome.usage.llm_calls
        ),
        (Status::Ok, 3, 4)
    );

    for _ in 0..4 {
        mock.push(unavailable());
    }
    match client.structure(&Scope::default(), &request()).await {
        Err(CallError::Structure(error)) => match error.kind {
            ErrorKind::Provider(failure) => {
                assert_eq!((failure.status, failure.retryable), (503, true))
            }
            other => panic!("{other:?}"),
        },
        other => panic!("{:?}", other.map(|outcome| outcome.status)),
    }
}

/// A store whose reads or writes fail when switched on.
#[derive(Default)]
struct FlakyStore {
    inner: MemoryStore,
    reads_fail: AtomicBool,
    writes_fail: AtomicBool,
}

impl KeyValueStore for FlakyStore {
    fn get(&self, key: &str) -> Result<Option<Vec<u8>>, String> {
        if self.reads_fail.load(Ordering::SeqCst) {
            return Err("the disk is gone".into());
        }
        self.inner.get(key)
    }
    fn set(&self, key: &str, value: &[u8]) -> Result<(), String> {
        if self.writes_fail.load(Ordering::SeqCst) {
            return Err("the disk is full".into());
        }
        self.inner.set(key, value)
    }
    fn delete(&self, key: &str) -> Result<(), String> {
        self.inner.delete(key)
    }
    fn keys_after(&self, after: Option<&str>, limit: usize) -> Result<Vec<String>, String> {
        self.inner.keys_after(after, limit)
    }
    fn compare_and_swap(
        &self,
        key: &str,
        expected: Option<&[u8]>,
        value: &[u8],
    ) -> Result<bool, String> {
        if self.writes_fail.load(Ordering::SeqCst) {
            return Err("the disk is full".into());
        }
        self.inner.compare_and_swap(key, expected, value)
    }
}

fn built(schema: &Value) -> Reply {
    // The builder's strict form writes properties as key/value pairs.
    let properties: Vec<Value> = schema["properties"]
        .as_object()
        .unwrap()
        .iter()
        .map(|(key, value)| json!({ "key": key, "value": value }))
        .collect();
    let mut strict = schema.clone();
    strict["properties"] = json!(properties);
    Reply::text(
        &json!({ "schema": strict, "confidence": 0.95, "clarifyingQuestions": [] }).to_string(),
    )
}

fn described() -> Request {
    Request::new(
        "Ada, ada@example.org",
        SchemaInput::Described("A person's name and email.".into()),
    )
}

#[tokio::test]
async fn a_failing_store_is_a_cache_miss_for_the_builder_and_an_error_for_the_registry() {
    let mock = MockLlm::start();
    let store = Arc::new(FlakyStore::default());
    let client = client_with_store(&mock, &[], store.clone());
    let schema = json!({ "type": "object", "properties": { "name": { "type": "string" }, "email": { "type": "string" } }, "required": ["name", "email"], "additionalProperties": false });
    let person = json!({ "name": "Ada", "email": "ada@example.org" });

    // Writes fail: the call still succeeds, nothing is cached.
    store.writes_fail.store(true, Ordering::SeqCst);
    mock.push(built(&schema));
    mock.push(Reply::answer(person.clone()));
    let outcome = client
        .structure(&Scope::default(), &described())
        .await
        .unwrap();
    assert_eq!(outcome.status, Status::Ok);
    assert_eq!(
        store.inner.keys_after(None, 100).unwrap(),
        Vec::<String>::new(),
        "nothing half-written"
    );

    // Writes work again: the next call builds and caches.
    store.writes_fail.store(false, Ordering::SeqCst);
    mock.push(built(&schema));
    mock.push(Reply::answer(person.clone()));
    let outcome = client
        .structure(&Scope::default(), &described())
        .await
        .unwrap();
    assert!(!outcome.trace.schema_builder.unwrap().cache_hit);

    // A corrupt entry is a miss, and is replaced.
    let key = store
        .inner
        .keys_after(None, 10)
        .unwrap()
        .into_iter()
        .find(|key| key.contains("builder-cache/"))
        .unwrap();
    store.inner.set(&key, b"{\"schema\": tru").unwrap();
    mock.push(built(&schema));
    mock.push(Reply::answer(person.clone()));
    let outcome = client
        .structure(&Scope::default(), &described())
        .await
        .unwrap();
    assert!(!outcome.trace.schema_builder.unwrap().cache_hit);
    let repaired: Value = serde_json::from_slice(&store.inner.get(&key).unwrap().unwrap()).unwrap();
    assert!(
        repaired["schema"].is_object(),
        "the corrupt entry was rewritten whole"
    );

    // Reads fail: the settings and the registry cannot be read, which is a storage error.
    store.reads_fail.store(true, Ordering::SeqCst);
    match client.structure(&Scope::default(), &request()).await {
        Err(CallError::Structure(error)) => {
            assert!(matches!(error.kind, ErrorKind::Storage), "{error:?}")
        }
        other => panic!("{:?}", other.map(|outcome| outcome.status)),
    }
    assert_eq!(mock.pending(), 0);
}

#[tokio::test]
async fn a_model_that_stays_down_escalates_and_the_answer_carries_its_confidence() {
    let mock = MockLlm::start();
    let client = client(
        &mock,
        &[
            ("structure_escalate", "openai/gpt-4.1"),
            ("structure_logprobs", "on"),
        ],
    );
    mock.push(Reply::error(503, "overloaded", "try later"));
    mock.push(Reply::answer(valid()).with_token_probability(1.0));
    let outcome = client
        .structure(&Scope::default(), &request())
        .await
        .unwrap();
    assert_eq!(outcome.status, Status::Ok);
    let attempts: Vec<(&str, &str)> = (outcome.trace.attempts.iter())
        .map(|attempt| (attempt.model.as_str(), attempt.outcome.as_str()))
        .collect();
    assert_eq!(
        attempts,
        [
            ("openai/gpt-4.1-mini", "provider"),
            ("openai/gpt-4.1", "ok")
        ]
    );
    assert_eq!(outcome.usage.llm_calls, 2);
    let requests = mock.requests();
    assert_eq!(requests[1].json()["model"], "gpt-4.1");
    assert_eq!(requests[1].json()["logprobs"], true);
    assert!(!outcome.sources.is_empty());
    assert!(
        (outcome.sources.iter()).all(|source| source.confidence == Some(1.0)),
        "{:?}",
        outcome.sources
    );
    let json = outcome.to_json();
    assert_eq!(json["trace"]["attempts"][1]["model"], "openai/gpt-4.1");
    assert_eq!(json["sources"][0]["confidence"], 1.0);

    // A first model whose answer stays invalid: the second is told what it broke.
    let invalid = json!({ "userId": "mike", "action": "broke_build", "timestamp": "yesterday", "status": "failure" });
    mock.push(Reply::answer(invalid.clone()));
    mock.push(Reply::answer(invalid));
    mock.push(Reply::answer(valid()));
    let outcome = client
        .structure(&Scope::default(), &request())
        .await
        .unwrap();
    assert_eq!(outcome.status, Status::Ok);
    let attempts: Vec<&str> = (outcome.trace.attempts.iter())
        .map(|attempt| attempt.outcome.as_str())
        .collect();
    assert_eq!(attempts, ["stale", "ok"]);
    let told = mock.requests().last().unwrap().json()["messages"][0]["content"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(told.contains("/timestamp"), "{told}");
}
