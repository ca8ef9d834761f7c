//! Helpers shared by the integration tests: ports over plain values, fixtures, and a checker
//! of OpenAI's strict structured-output rules.
#![allow(dead_code)]

use std::cell::RefCell;
use std::collections::{HashMap, VecDeque};
use std::path::PathBuf;

use mock_llm::Reply;
use serde_json::Value;
use structure::ports::{
    Clock, Config, HttpRequest, HttpResponse, MemoryKeyValue, Ports, Transport, TransportError,
};

pub mod contract_model;
pub mod every_result;
pub mod layering;
mod strict;
#[allow(unused_imports)]
pub use strict::strict_violations;

/// A transport that answers with scripted replies and records every request. What a client
/// asks a server about itself before the first call (its model list, ...) is answered as an
/// OpenAI endpoint answers it — 404 — and recorded apart, in `probes`.
#[derive(Default)]
pub struct ScriptedTransport {
    replies: RefCell<VecDeque<Result<Reply, TransportError>>>,
    pub requests: RefCell<Vec<HttpRequest>>,
    pub probes: RefCell<Vec<HttpRequest>>,
}

/// The answer to `request` when it asks a server about itself rather than a model (see
/// `structure::provider::server`): a 404, as an endpoint that is only OpenAI's API gives.
pub fn probe_answer(request: &HttpRequest) -> Option<HttpResponse> {
    let model_request = request.method == "POST"
        && [
            "/chat/completions",
            "/responses",
            "/messages",
            ":generateContent",
        ]
        .iter()
        .any(|end| request.url.ends_with(end));
    (!model_request).then(|| HttpResponse {
        status: 404,
        headers: Vec::new(),
        body: br#"{"error": {"message": "not found", "type": "not_found"}}"#.to_vec(),
    })
}

impl ScriptedTransport {
    pub fn new(replies: impl IntoIterator<Item = Reply>) -> Self {
        Self {
            replies: RefCell::new(replies.into_iter().map(Ok).collect()),
            requests: RefCell::default(),
            probes: RefCell::default(),
        }
    }

    pub fn fail_next(&self, message: &str) {
        self.replies
            .borrow_mut()
            .push_front(Err(TransportError::new(message)));
    }

    pub fn fail_next_retryable(&self, message: &str) {
        self.replies
            .borrow_mut()
            .push_front(Err(TransportError::retryable(message)));
    }

    /// The JSON body of request `index`.
    pub fn body(&self, index: usize) -> Value {
        serde_json::from_slice(&self.requests.borrow()[index].body)
            .expect("request bodies are JSON")
    }

    pub fn count(&self) -> usize {
        self.requests.borrow().len()
    }
}

impl Transport for ScriptedTransport {
    fn send(&self, request: &HttpRequest) -> Result<HttpResponse, TransportError> {
        if let Some(answer) = probe_answer(request) {
            self.probes.borrow_mut().push(request.clone());
            return Ok(answer);
        }
        self.requests.borrow_mut().push(request.clone());
        let reply = self
            .replies
            .borrow_mut()
            .pop_front()
            .expect("the test scripted fewer replies than the code made requests")?;
        Ok(HttpResponse {
            status: reply.status,
            headers: reply.headers,
            body: reply.body.into_bytes(),
        })
    }
}

/// Config values from a map; `failing` makes every read fail.
#[derive(Default)]
pub struct MapConfig {
    pub values: HashMap<String, String>,
    pub failing: bool,
}

impl MapConfig {
    pub fn with(pairs: &[(&str, &str)]) -> Self {
        Self {
            values: pairs
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            failing: false,
        }
    }

    /// An OpenAI-compatible local server: no key needed.
    pub fn local() -> Self {
        Self::with(&[
            ("structure_model", "openai/test-model"),
            ("openai_base_url", "http://127.0.0.1:9/v1"),
        ])
    }
}

impl Config for MapConfig {
    fn get(&self, key: &str) -> Result<Option<String>, String> {
        if self.failing {
            return Err("the config store is down".to_owned());
        }
        Ok(self.values.get(key).cloned())
    }
}

/// 2026-05-06T14:30:00Z, and sleeps that only record their length.
#[derive(Default)]
pub struct FixedClock {
    pub slept: RefCell<Vec<std::time::Duration>>,
}

impl Clock for FixedClock {
    fn now_unix_millis(&self) -> u64 {
        1_778_077_800_000
    }

    fn sleep(&self, duration: std::time::Duration) {
        self.slept.borrow_mut().push(duration);
    }
}

pub fn ports<'a>(transport: &'a ScriptedTransport, config: &'a MapConfig) -> Ports<'a> {
    ports_with_clock(transport, config, Box::leak(Box::default()))
}

pub fn ports_with_clock<'a>(
    transport: &'a ScriptedTransport,
    config: &'a MapConfig,
    clock: &'a FixedClock,
) -> Ports<'a> {
    static KEY_VALUE: std::sync::LazyLock<MemoryKeyValue> =
        std::sync::LazyLock::new(MemoryKeyValue::default);
    Ports {
        transport,
        config,
        key_value: &*KEY_VALUE,
        clock,
    }
}

/// A prompt holding a value of each copied format the test schemas use (see
/// `structure::content::grounding`), so that every call reaches the model and grounded enums
/// travel in the requests.
pub const TEXT_WITH_COPIED_VALUES: &str = "Order 17: three ABC-1234. Ada, ada@example.com, \
     https://example.com/ada, 123e4567-e89b-12d3-a456-426614174000.";

pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// A file under `tests/provider-api/`, as JSON.
pub fn provider_api(path: &str) -> Value {
    let path = root().join("tests/provider-api").join(path);
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|error| panic!("{}: {error}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|error| panic!("{}: {error}", path.display()))
}

/// A bundled schema from `schemas/`.
pub fn bundled(name: &str) -> Value {
    let path = root().join("schemas").join(format!("{name}.json"));
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// The names of the bundled schemas (not the meta-schema).
pub fn bundled_names() -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(root().join("schemas"))
        .unwrap()
        .filter_map(|entry| entry.ok()?.file_name().into_string().ok())
        .filter_map(|name| name.strip_suffix(".json").map(str::to_owned))
        .filter(|name| !name.starts_with('_'))
        .collect();
    names.sort();
    names
}

/// Compiles a schema with the same validator the product uses (for conformance checks).
pub fn validator(schema: &Value) -> jsonschema::Validator {
    jsonschema::options()
        .should_validate_formats(true)
        .build(schema)
        .unwrap_or_else(|error| panic!("test schema does not compile: {error}"))
}

/// The validation errors of `instance`, as text.
pub fn errors(validator: &jsonschema::Validator, instance: &Value) -> Vec<String> {
    validator
        .iter_errors(instance)
        .map(|error| format!("{}: {error}", error.instance_path()))
        .collect()
}

/// The host (the real component in wasmtime) against `mock`, as OpenAI, with `extra` settings.
pub fn host_client(mock: &mock_llm::MockLlm, extra: &[(&str, &str)]) -> structure_host::Structure {
    let mut settings = structure_host::Settings::new()
        .set("structure_model", "openai/gpt-4.1-mini")
        .set("openai_base_url", mock.base_url())
        .set("openai_api_key", "sk-e2e-secret");
    for (key, value) in extra {
        settings = settings.set(*key, *value);
    }
    structure_host::Structure::builder()
        .settings(settings)
        .build()
        .expect("the component loads")
}

/// A chat answer written with these tokens, each of its probability (as `logprobs`).
pub fn chat_reply(tokens: &[(&str, f64)]) -> Reply {
    let content: String = tokens.iter().map(|(text, _)| *text).collect();
    let list: Vec<Value> = (tokens.iter())
        .map(|(text, p)| serde_json::json!({ "token": text, "logprob": p.ln(), "bytes": text.as_bytes() }))
        .collect();
    Reply::raw(
        200,
        &serde_json::json!({
            "choices": [{
                "message": { "role": "assistant", "content": content },
                "finish_reason": "stop",
                "logprobs": { "content": list }
            }],
            "usage": { "prompt_tokens": 100, "completion_tokens": 20 }
        })
        .to_string(),
    )
}

/// `text` structured against the inline `schema` with `config`, the model's `replies` in turn:
/// the outcome, and the transport with the requests it was sent.
pub fn run_inline(
    text: &str,
    schema: Value,
    config: &[(&str, &str)],
    replies: Vec<Reply>,
) -> (structure::Outcome, ScriptedTransport) {
    let transport = ScriptedTransport::new(replies);
    let config = MapConfig::with(config);
    let request =
        structure::StructureRequest::new(text, structure::SchemaInput::Inline(schema), None)
            .unwrap();
    let outcome = structure::structure(
        &request,
        &structure::Scope::default(),
        &ports(&transport, &config),
    )
    .unwrap();
    assert_published(&outcome.to_json());
    (outcome, transport)
}

/// Holds a result (an outcome's JSON, or an error's) to the schema the tool definition
/// publishes as its `returns`: the helpers the tests share call it on every result they make.
pub fn assert_published(result: &Value) {
    static RETURNS: std::sync::LazyLock<jsonschema::Validator> =
        std::sync::LazyLock::new(|| validator(&structure::tool_definition()["returns"]));
    let wrong = errors(&RETURNS, result);
    assert!(
        wrong.is_empty(),
        "the published returns refuses {wrong:?}: {result:#}"
    );
}

/// An HTTP API request with a bearer `token`, `headers` besides, and `body` as JSON.
pub fn api_request(
    method: &str,
    path: &str,
    token: &str,
    body: Option<Value>,
    headers: &[(&str, &str)],
) -> structure::http_api::ApiRequest {
    let mut all = vec![("authorization".to_owned(), format!("Bearer {token}"))];
    all.extend((headers.iter()).map(|(name, value)| (name.to_string(), value.to_string())));
    structure::http_api::ApiRequest {
        method: method.into(),
        path: path.into(),
        headers: all,
        body: (body.map(|body| body.to_string().into_bytes())).unwrap_or_default(),
    }
}
