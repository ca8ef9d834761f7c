//! Secrets never come out: the provider key and the API tokens appear in no result, error, log
//! line, trace or stored entry — even when the provider quotes the key back in its error, as
//! OpenAI does. Every surface is exercised with canary values and every output scanned.

use std::io::Read;
use std::process::{Command, Stdio};
use std::sync::Arc;

use mock_llm::{MockLlm, Reply};
use serde_json::{Value, json};
use structure_host::{
    KeyValueStore, MemoryStore, Request, SchemaInput, Scope, Settings, Structure,
};

const KEY: &str = "sk-canary-3f9a1c7e5b2d4f60aa";
const ADMIN_TOKEN: &str = "tok-canary-admin-8e1b5d02";
const USER_TOKEN: &str = "tok-canary-user-71c4a9f3";

fn tokens() -> String {
    json!([
        { "token": ADMIN_TOKEN, "tenant": "acme", "role": "admin" },
        { "token": USER_TOKEN, "tenant": "acme", "role": "user" }
    ])
    .to_string()
}

/// The provider's 401, quoting the key it was sent.
fn echoing_401() -> Reply {
    Reply::error(
        401,
        "invalid_api_key",
        &format!(
            "Incorrect API key provided: {KEY}. You can find your API key at https://platform.openai.com."
        ),
    )
}

fn valid() -> Value {
    json!({ "userId": "mike", "action": "broke_build", "timestamp": "2026-05-06T14:30:00Z", "status": "failure" })
}

fn assert_clean(surface: &str, text: &str) {
    for secret in [KEY, ADMIN_TOKEN, USER_TOKEN] {
        assert!(!text.contains(secret), "{surface} shows a secret: {text}");
    }
    // Nor a recognisable part of one.
    assert!(!text.contains("3f9a1c7e5b2d4f60"), "{surface}: {text}");
}

fn settings(mock: &MockLlm) -> Settings {
    Settings::new()
        .set("structure_model", "openai/gpt-4.1-mini")
        .set("openai_base_url", mock.base_url())
        .set("openai_api_key", KEY)
        .set("structure_api_tokens", tokens())
}

#[tokio::test]
async fn the_library_api_never_shows_a_secret() {
    let mock = MockLlm::start();
    let store = Arc::new(MemoryStore::default());
    let client = Structure::builder()
        .settings(settings(&mock))
        .key_value(store.clone())
        .build()
        .unwrap();
    let scope = Scope::default();
    let clean_request = Request::new(
        "Mike broke the build",
        SchemaInput::Named("user-action-record".into()),
    );

    mock.push(echoing_401());
    let error = client.structure(&scope, &clean_request).await.unwrap_err();
    assert_clean("a provider error", &format!("{error} {error:?}"));

    mock.push(Reply::answer(
        json!({ "userId": "mike", "action": "x", "timestamp": "then", "status": "failure" }),
    ));
    mock.push(Reply::answer(valid()));
    let outcome = client.structure(&scope, &clean_request).await.unwrap();
    assert_clean("an outcome and its trace", &format!("{outcome:?}"));

    mock.push(Reply::error(
        500,
        "server_error",
        &format!("upstream said {KEY}"),
    ));
    let tool = client
        .call_tool(&scope, &json!({ "prompt": "p", "schema": "user-action-record", "schemaMode": "named", "settings": { "maxLoops": 1 } }))
        .await;
    assert_clean("the tool form", &format!("{tool:?}"));
    assert_clean(
        "the settings",
        &client.get_settings(&scope).await.unwrap().to_string(),
    );
    assert_clean(
        "the tool definition",
        &client.tool_definition().await.unwrap().to_string(),
    );

    for key in store.keys_after(None, 1000).unwrap() {
        let value = store.get(&key).unwrap().unwrap_or_default();
        assert_clean(
            "the key-value store",
            &format!("{key} {}", String::from_utf8_lossy(&value)),
        );
    }
    // The key did go where it belongs: to the provider, in the header.
    let sent = mock.requests();
    assert_eq!(
        sent[0].header("authorization"),
        Some(format!("Bearer {KEY}").as_str())
    );
}

#[test]
fn the_command_never_shows_a_secret() {
    let mock = MockLlm::start();
    let run = |args: &[&str]| {
        let output = Command::new(env!("CARGO_BIN_EXE_structure"))
            .args(args)
            .args(["--store", "memory"])
            .env("STRUCTURE_MODEL", "openai/gpt-4.1-mini")
            .env("OPENAI_BASE_URL", mock.base_url())
            .env("OPENAI_API_KEY", KEY)
            .env("STRUCTURE_API_TOKENS", tokens())
            .output()
            .unwrap();
        format!(
            "{}\n{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        )
    };
    mock.push(echoing_401());
    assert_clean(
        "structure run, provider error",
        &run(&[
            "run",
            "--schema",
            "user-action-record",
            "Mike broke the build",
        ]),
    );
    mock.push(Reply::answer(valid()));
    assert_clean(
        "structure run",
        &run(&[
            "run",
            "--schema",
            "user-action-record",
            "Mike broke the build",
        ]),
    );
    assert_clean("structure settings get", &run(&["settings", "get"]));
    assert_clean("structure schemas list", &run(&["schemas", "list"]));
    assert_clean("a usage error", &run(&["run", "--no-such-flag"]));
}

/// The address `structure serve` says it serves on, read from its stderr (kept in `log`).
fn serving_address(stderr: &mut std::process::ChildStderr, log: &mut Vec<u8>) -> String {
    loop {
        let mut byte = [0u8; 1];
        assert_eq!(
            stderr.read(&mut byte).unwrap(),
            1,
            "serve exited: {}",
            String::from_utf8_lossy(log)
        );
        log.push(byte[0]);
        let text = String::from_utf8_lossy(log);
        if let Some(rest) = text.split("serving http://").nth(1)
            && rest.contains(' ')
        {
            return rest.split_whitespace().next().unwrap().to_owned();
        }
    }
}

/// One request to the service at `address`, with `token` if any: the whole response, as text.
fn exchange(
    address: &str,
    method: &str,
    path: &str,
    token: Option<&str>,
    body: Option<Value>,
) -> String {
    let mut stream = std::net::TcpStream::connect(address).unwrap();
    let body = body.map(|body| body.to_string()).unwrap_or_default();
    let auth = token
        .map(|token| format!("authorization: Bearer {token}\r\n"))
        .unwrap_or_default();
    use std::io::Write;
    write!(
        stream,
        "{method} {path} HTTP/1.1\r\nhost: x\r\n{auth}content-type: application/json\r\nmcp-protocol-version: 2025-06-18\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut response = String::new();
    stream.read_to_string(&mut response).unwrap();
    response
}

#[test]
fn the_service_never_shows_a_secret() {
    let mock = MockLlm::start();
    let mut child = Command::new(env!("CARGO_BIN_EXE_structure"))
        .args(["serve", "--listen", "127.0.0.1:0", "--store", "memory"])
        .env("STRUCTURE_MODEL", "openai/gpt-4.1-mini")
        .env("OPENAI_BASE_URL", mock.base_url())
        .env("OPENAI_API_KEY", KEY)
        .env("STRUCTURE_API_TOKENS", tokens())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stderr = child.stderr.take().unwrap();
    let mut log = Vec::new();
    let address = serving_address(&mut stderr, &mut log);
    let exchange = |method: &str, path: &str, token: Option<&str>, body: Option<Value>| {
        exchange(&address, method, path, token, body)
    };
    mock.push(echoing_401());
    let call = json!({ "prompt": "Mike broke the build", "schema": "user-action-record", "schemaMode": "named" });
    let mut responses = vec![
        exchange(
            "POST",
            "/v1/structure",
            Some(USER_TOKEN),
            Some(call.clone()),
        ),
        exchange(
            "POST",
            "/v1/structure",
            Some("tok-wrong"),
            Some(call.clone()),
        ),
        exchange("POST", "/v1/structure", None, Some(call.clone())),
        exchange(
            "PUT",
            "/v1/schemas/x",
            Some(USER_TOKEN),
            Some(json!({ "schema": {} })),
        ),
        exchange("GET", "/v1/schemas", Some(ADMIN_TOKEN), None),
        exchange("GET", "/v1/tool", Some(USER_TOKEN), None),
    ];
    mock.push(echoing_401());
    responses.push(exchange(
        "POST",
        "/mcp",
        Some(USER_TOKEN),
        Some(json!({ "jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": { "name": "structure", "arguments": call } })),
    ));
    responses.push(exchange(
        "POST",
        "/mcp",
        Some(USER_TOKEN),
        Some(json!({ "jsonrpc": "2.0", "id": 2, "method": "nope" })),
    ));
    child.kill().unwrap();
    child.wait().unwrap();
    stderr.read_to_end(&mut log).unwrap();
    for response in &responses {
        assert_clean("an HTTP response", response);
    }
    assert!(
        responses[0].contains("401") || responses[0].contains("provider"),
        "{}",
        responses[0]
    );
    assert_clean("the service's log", &String::from_utf8_lossy(&log));
}
