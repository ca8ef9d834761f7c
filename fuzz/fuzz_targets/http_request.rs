//! The HTTP API and MCP on any request: a response with a status and, for errors, the JSON
//! error body — never a panic. Input: a method byte, then `path\nheader: value\n...\n\nbody`.
#![no_main]

use libfuzzer_sys::fuzz_target;
use structure::http_api::{ApiRequest, handle};
use structure::ports::{
    Clock, Config, HttpRequest, HttpResponse, MemoryKeyValue, Ports, Transport, TransportError,
};

struct Open;
impl Config for Open {
    fn get(&self, key: &str) -> Result<Option<String>, String> {
        Ok(match key {
            "structure_api_auth" => Some("none".to_owned()),
            "structure_model" => Some("llamacpp/smollm2".to_owned()),
            "structure_max_body_bytes" => Some("65536".to_owned()),
            _ => None,
        })
    }
}

/// Answers every LLM request with an empty object, as a model would.
struct Model;
impl Transport for Model {
    fn send(&self, _: &HttpRequest) -> Result<HttpResponse, TransportError> {
        let body = r#"{"choices":[{"index":0,"finish_reason":"stop","message":{"role":"assistant","content":"{\"answer\":{}}"}}],"usage":{"prompt_tokens":1,"completion_tokens":1}}"#;
        Ok(HttpResponse { status: 200, headers: vec![], body: body.as_bytes().to_vec() })
    }
}

struct Still;
impl Clock for Still {
    fn now_unix_millis(&self) -> u64 {
        1_778_077_800_000
    }
    fn sleep(&self, _: std::time::Duration) {}
}

const METHODS: &[&str] = &["GET", "POST", "PUT", "DELETE", "OPTIONS", "PATCH"];

fuzz_target!(|data: &[u8]| {
    let [method, rest @ ..] = data else {
        return;
    };
    let (head, body) = match rest.windows(2).position(|pair| pair == b"\n\n") {
        Some(at) => (&rest[..at], &rest[at + 2..]),
        None => (rest, &[][..]),
    };
    let head = String::from_utf8_lossy(head);
    let mut lines = head.lines();
    let path = lines.next().unwrap_or("/").to_owned();
    let headers = lines
        .filter_map(|line| line.split_once(':'))
        .map(|(name, value)| (name.trim().to_owned(), value.trim().to_owned()))
        .collect();
    let request = ApiRequest {
        method: METHODS[*method as usize % METHODS.len()].to_owned(),
        path,
        headers,
        body: body.to_vec(),
    };
    let key_value = MemoryKeyValue::default();
    let ports = Ports { transport: &Model, config: &Open, key_value: &key_value, clock: &Still };
    let response = handle(&request, &ports);
    assert!((100..600).contains(&response.status));
    if response.status >= 400 && request.method != "OPTIONS" {
        let body: serde_json::Value = serde_json::from_slice(&response.body).expect("errors are JSON");
        assert!(body.get("error").is_some() || body.get("jsonrpc").is_some(), "{body}");
    }
});
