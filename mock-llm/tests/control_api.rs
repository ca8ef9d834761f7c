//! The mock as other languages' tests use it: scripted and inspected over HTTP.

use std::io::{Read, Write};
use std::net::TcpStream;

use mock_llm::MockLlm;
use serde_json::{Value, json};

/// One HTTP/1.1 exchange; returns the status and the body.
fn http(mock: &MockLlm, method: &str, path: &str, body: &str) -> (u16, String) {
    let mut stream = TcpStream::connect(mock.address()).unwrap();
    write!(
        stream,
        "{method} {path} HTTP/1.1\r\nhost: mock\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut response = String::new();
    stream.read_to_string(&mut response).unwrap();
    let status = response[9..12].parse().unwrap();
    let body = response
        .split_once("\r\n\r\n")
        .map(|(_, body)| body.to_owned())
        .unwrap_or_default();
    (status, body)
}

#[test]
fn replies_are_queued_served_in_order_and_requests_recorded() {
    let mock = MockLlm::start();
    let first = json!({ "status": 200, "body": "{\"first\":true}" });
    let second = json!({ "status": 503, "body": "busy", "headers": [["retry-after", "1"]] });
    assert_eq!(
        http(&mock, "POST", "/_mock/replies", &first.to_string()).0,
        200
    );
    assert_eq!(
        http(&mock, "POST", "/_mock/replies", &second.to_string()).0,
        200
    );
    assert_eq!(mock.pending(), 2);

    assert_eq!(
        http(&mock, "POST", "/v1/chat/completions", "{\"n\":1}"),
        (200, "{\"first\":true}".to_owned())
    );
    assert_eq!(
        http(&mock, "POST", "/v1/chat/completions", "{\"n\":2}"),
        (503, "busy".to_owned())
    );
    let (status, body) = http(&mock, "POST", "/v1/chat/completions", "{\"n\":3}");
    assert_eq!(
        status, 500,
        "an empty script is an error, never a made-up answer"
    );
    assert!(body.contains("no scripted reply left"));

    let (_, recorded) = http(&mock, "GET", "/_mock/requests", "");
    let recorded: Value = serde_json::from_str(&recorded).unwrap();
    let bodies: Vec<&str> = recorded
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["body"].as_str().unwrap())
        .collect();
    assert_eq!(bodies, ["{\"n\":1}", "{\"n\":2}", "{\"n\":3}"]);
    assert_eq!(recorded[0]["path"], "/v1/chat/completions");

    assert_eq!(http(&mock, "POST", "/_mock/reset", "").0, 200);
    assert!(mock.requests().is_empty());
    let (status, body) = http(&mock, "POST", "/_mock/replies", "{\"status\": \"x\"}");
    assert_eq!(status, 400);
    assert!(body.contains("invalid_reply"));
}

#[test]
fn browsers_may_call_it() {
    let mock = MockLlm::start();
    let mut stream = TcpStream::connect(mock.address()).unwrap();
    stream
        .write_all(b"OPTIONS /v1/chat/completions HTTP/1.1\r\nhost: mock\r\norigin: http://localhost:5173\r\nconnection: close\r\n\r\n")
        .unwrap();
    let mut response = String::new();
    stream.read_to_string(&mut response).unwrap();
    assert!(response.starts_with("HTTP/1.1 204"), "{response}");
    assert!(
        response
            .to_ascii_lowercase()
            .contains("access-control-allow-origin: *"),
        "{response}"
    );
}

#[test]
fn an_always_reply_serves_when_the_queue_is_empty_until_cleared() {
    let mock = MockLlm::start();
    let always = json!({ "status": 200, "body": "{\"always\":1}" });
    assert_eq!(
        http(&mock, "POST", "/_mock/always", &always.to_string()).0,
        200
    );
    let queued = json!({ "status": 200, "body": "{\"queued\":1}" });
    http(&mock, "POST", "/_mock/replies", &queued.to_string());
    let bodies: Vec<String> = (0..3)
        .map(|_| http(&mock, "POST", "/v1/chat/completions", "{}").1)
        .collect();
    assert_eq!(
        bodies,
        ["{\"queued\":1}", "{\"always\":1}", "{\"always\":1}"],
        "the queue first, then the standing reply"
    );
    assert_eq!(http(&mock, "POST", "/_mock/always", "null").0, 200);
    assert_eq!(http(&mock, "POST", "/v1/chat/completions", "{}").0, 500);
    assert_eq!(mock.requests().len(), 4);
}

#[test]
fn the_order_reader_answers_from_the_text_in_either_form() {
    let mock = MockLlm::start();
    let (status, planted) = http(
        &mock,
        "POST",
        "/_mock/orders/text",
        &json!({ "chars": 3000, "orders": 2 }).to_string(),
    );
    assert_eq!(status, 200);
    let planted: Value = serde_json::from_str(&planted).unwrap();
    assert_eq!(planted["planted"], json!(["ORD-0001", "ORD-0002"]));
    assert_eq!(planted["schema"]["required"][0], "order");
    let text = planted["text"].as_str().unwrap();

    let ask = |content: String| {
        let body = json!({ "messages": [{ "role": "user", "content": content }] });
        let (_, reply) = http(&mock, "POST", "/v1/chat/completions", &body.to_string());
        let reply: Value = serde_json::from_str(&reply).unwrap();
        let content = reply["choices"][0]["message"]["content"].as_str().unwrap();
        let usage = reply["usage"]["prompt_tokens"].as_u64().unwrap();
        (serde_json::from_str::<Value>(content).unwrap(), usage)
    };
    let reader = json!({ "form": "records" }).to_string();
    assert_eq!(http(&mock, "POST", "/_mock/orders", &reader).0, 200);
    let (answer, prompt_tokens) = ask(text.to_owned());
    let records = answer["answer"]["records"].as_array().unwrap();
    assert_eq!(records.len(), 2);
    assert!(
        prompt_tokens > 700,
        "a token per four bytes of request: {prompt_tokens}"
    );

    let reader = json!({ "form": "langextract" }).to_string();
    assert_eq!(http(&mock, "POST", "/_mock/orders", &reader).0, 200);
    let prompt = format!(
        "Extract orders.\nQ: Order ORD-9999 was placed by Example for 2 units.\nA: {{}}\nQ: {text}\nA: "
    );
    let (answer, _) = ask(prompt);
    let extractions = answer["extractions"].as_array().unwrap();
    assert_eq!(
        extractions.len(),
        2,
        "the example's order is not read: {answer}"
    );
    assert_eq!(extractions[0]["order"], "ORD-0001");
    assert_eq!(extractions[0]["order_attributes"]["quantity"], "1");
    assert_eq!(
        http(&mock, "POST", "/_mock/orders", "{\"form\": \"yaml\"}").0,
        400
    );
}
