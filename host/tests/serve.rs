//! `structure serve`: every route and error code of the HTTP API, authentication and scope
//! isolation, and the MCP endpoint, through the real component served over HTTP.

mod support;

use std::time::Duration;

use mock_llm::{MockLlm, Reply};
use serde_json::{Value, json};
use structure_host::{Settings, Structure};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

const TOKENS: &str = r#"[
  {"token": "admin-a", "tenant": "tenant-a", "role": "admin"},
  {"token": "user-a", "tenant": "tenant-a", "project": "web", "role": "user"},
  {"token": "admin-b", "tenant": "tenant-b", "role": "admin"}
]"#;

struct Served {
    address: std::net::SocketAddr,
    _task: tokio::task::JoinHandle<()>,
}

async fn serve(mock: &MockLlm, extra: &[(&str, &str)]) -> Served {
    let mut settings = Settings::new()
        .set("structure_model", "openai/gpt-4.1-mini")
        .set("openai_base_url", mock.base_url())
        .set("openai_api_key", "sk-serve-secret")
        .set("structure_api_tokens", TOKENS);
    for (key, value) in extra {
        settings = settings.set(*key, *value);
    }
    let client = Structure::builder().settings(settings).build().unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    let task = tokio::spawn(async move {
        let _ = client
            .serve(
                listener,
                structure_host::ServeOptions::default().access_log(false),
            )
            .await;
    });
    Served {
        address,
        _task: task,
    }
}

struct Response {
    status: u16,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
}

impl Response {
    fn json(&self) -> Value {
        serde_json::from_slice(&self.body)
            .unwrap_or_else(|_| panic!("not JSON: {}", String::from_utf8_lossy(&self.body)))
    }

    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(key, _)| key.eq_ignore_ascii_case(name))
            .map(|(_, value)| value.as_str())
    }
}

/// One HTTP/1.1 exchange with raw bytes, so any body (invalid UTF-8, oversized) can be sent.
async fn send(
    served: &Served,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &[u8],
) -> Response {
    let mut stream = tokio::net::TcpStream::connect(served.address)
        .await
        .unwrap();
    let head = support::request_head(method, path, headers, body.len());
    stream.write_all(head.as_bytes()).await.unwrap();
    stream.write_all(body).await.unwrap();
    let mut raw = Vec::new();
    stream.read_to_end(&mut raw).await.unwrap();
    let split = raw
        .windows(4)
        .position(|window| window == b"\r\n\r\n")
        .expect("a full response");
    let head = String::from_utf8_lossy(&raw[..split]).into_owned();
    let mut lines = head.lines();
    let status = lines.next().unwrap()[9..12].parse().unwrap();
    let headers = lines
        .filter_map(|line| line.split_once(':'))
        .map(|(name, value)| (name.trim().to_owned(), value.trim().to_owned()))
        .collect();
    Response {
        status,
        headers,
        body: raw[split + 4..].to_vec(),
    }
}

async fn call(
    served: &Served,
    method: &str,
    path: &str,
    token: Option<&str>,
    body: Option<Value>,
) -> Response {
    let authorization = token.map(|token| format!("Bearer {token}"));
    let mut headers = vec![("content-type", "application/json")];
    if let Some(authorization) = &authorization {
        headers.push(("authorization", authorization.as_str()));
    }
    let body = body.map(|body| body.to_string()).unwrap_or_default();
    send(served, method, path, &headers, body.as_bytes()).await
}

fn error_kind(response: &Response) -> String {
    response.json()["error"]["kind"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

#[tokio::test]
async fn every_route_and_every_error_code() {
    let mock = MockLlm::start();
    let served = serve(&mock, &[("structure_max_body_bytes", "4096")]).await;
    the_reading_routes_answer(&served).await;
    structure_answers_an_outcome(&served, &mock).await;
    an_admin_registers_and_deregisters(&served).await;
    every_error_has_its_status_and_body(&served).await;
    assert_eq!(mock.pending(), 0);
    for sent in mock.requests() {
        assert!(
            !String::from_utf8_lossy(&sent.body.clone().into_bytes()).contains("admin-a"),
            "tokens never reach the LLM"
        );
    }
}

/// `/healthz`, the tool definition, the schema list and one schema.
async fn the_reading_routes_answer(served: &Served) {
    let health = call(served, "GET", "/healthz", None, None).await;
    assert_eq!(
        (health.status, health.json()),
        (200, json!({ "status": "ok" }))
    );

    let tool = call(served, "GET", "/v1/tool", Some("user-a"), None).await;
    assert_eq!(
        (tool.status, tool.json()["name"].clone()),
        (200, json!("structure"))
    );
    assert_eq!(tool.header("content-type"), Some("application/json"));
    let list = call(served, "GET", "/v1/schemas", Some("user-a"), None).await;
    assert_eq!(
        (
            list.status,
            list.json()["schemas"].as_array().unwrap().len()
        ),
        (200, 5)
    );
    let one = call(served, "GET", "/v1/schemas/contact", Some("user-a"), None).await;
    assert_eq!(
        (one.status, one.json()["origin"].clone()),
        (200, json!("bundled"))
    );
    assert!(
        one.json()["manual"]
            .as_str()
            .unwrap()
            .contains("two-letter ISO code")
    );
}

/// `POST /v1/structure`: an outcome, `ok` or a need.
async fn structure_answers_an_outcome(served: &Served, mock: &MockLlm) {
    mock.push(Reply::answer(
        json!({ "name": "Ada Lovelace", "email": "ada@example.com" }),
    ));
    let body = json!({ "prompt": "Ada Lovelace, ada@example.com", "schema": "contact", "schemaMode": "named" });
    let ok = call(
        served,
        "POST",
        "/v1/structure",
        Some("user-a"),
        Some(body.clone()),
    )
    .await;
    assert_eq!((ok.status, ok.json()["status"].clone()), (200, json!("ok")));
    mock.push(Reply::need("the email"));
    let need = call(
        served,
        "POST",
        "/v1/structure",
        Some("user-a"),
        Some(body.clone()),
    )
    .await;
    assert_eq!(
        (need.status, need.json()["need"].clone()),
        (200, json!("the email"))
    );
}

/// `PUT` and `DELETE` on `/v1/schemas/{name}` with an admin's token; a second delete is a 404.
async fn an_admin_registers_and_deregisters(served: &Served) {
    let lead = json!({ "schema": { "type": "object", "properties": { "name": { "type": "string" } } }, "manual": "Leads.", "version": "1.0" });
    let put = call(
        served,
        "PUT",
        "/v1/schemas/lead",
        Some("admin-a"),
        Some(lead.clone()),
    )
    .await;
    assert_eq!(
        (put.status, put.json()["origin"].clone()),
        (200, json!("tenant:tenant-a"))
    );
    let delete = call(served, "DELETE", "/v1/schemas/lead", Some("admin-a"), None).await;
    assert_eq!((delete.status, delete.body.len()), (204, 0));
    let again = call(served, "DELETE", "/v1/schemas/lead", Some("admin-a"), None).await;
    assert_eq!(
        (again.status, error_kind(&again)),
        (404, "schema-not-found".to_owned())
    );
}

/// Every error, on every route: its status, its kind, a message, JSON; `WWW-Authenticate` on a
/// 401, `Allow` on a 405, the field of a wrongly typed argument.
async fn every_error_has_its_status_and_body(served: &Served) {
    let lead = json!({ "schema": { "type": "object", "properties": { "name": { "type": "string" } } }, "manual": "Leads.", "version": "1.0" });
    let cases: Vec<(Response, u16, &str)> = vec![
        (call(served, "GET", "/v1/schemas", None, None).await, 401, "unauthorized"),
        (call(served, "GET", "/v1/schemas", Some("wrong"), None).await, 401, "unauthorized"),
        (call(served, "POST", "/mcp", None, Some(json!({}))).await, 401, "unauthorized"),
        (call(served, "PUT", "/v1/schemas/lead", Some("user-a"), Some(lead.clone())).await, 403, "forbidden"),
        (call(served, "DELETE", "/v1/schemas/contact", Some("user-a"), None).await, 403, "forbidden"),
        (call(served, "GET", "/v2/nothing", Some("user-a"), None).await, 404, "not-found"),
        (call(served, "GET", "/v1/schemas/nope", Some("user-a"), None).await, 404, "schema-not-found"),
        (call(served, "POST", "/v1/tool", Some("user-a"), None).await, 405, "method-not-allowed"),
        (call(served, "GET", "/mcp", Some("user-a"), None).await, 405, "method-not-allowed"),
        (call(served, "POST", "/v1/structure", Some("user-a"), Some(json!({ "prompt": "x".repeat(5000), "schema": "contact" }))).await, 413, "payload-too-large"),
        (send(served, "POST", "/v1/structure", &[("authorization", "Bearer user-a"), ("content-type", "text/plain")], b"{}").await, 415, "unsupported-media-type"),
        (send(served, "POST", "/v1/structure", &[("authorization", "Bearer user-a")], b"{ not json").await, 400, "invalid-request"),
        (send(served, "POST", "/v1/structure", &[("authorization", "Bearer user-a")], b"{\"prompt\": \"\xff\xfe\"}").await, 400, "invalid-request"),
        (call(served, "POST", "/v1/structure", Some("user-a"), Some(json!({ "prompt": "x", "schema": "contact", "schemaMode": "named", "maxLoops": "3" }))).await, 400, "invalid-request"),
        (call(served, "POST", "/v1/structure", Some("user-a"), Some(json!({ "prompt": "x", "schema": { "$ref": "#" } }))).await, 422, "invalid-schema"),
        (call(served, "PUT", "/v1/schemas/Bad..Name", Some("admin-a"), Some(lead.clone())).await, 400, "invalid-request"),
        (call(served, "PUT", "/v1/schemas/lead", Some("admin-a"), Some(json!({ "schema": "no" }))).await, 400, "invalid-request"),
    ];
    for (response, status, kind) in cases {
        assert_eq!(
            (response.status, error_kind(&response)),
            (status, kind.to_owned()),
            "{}",
            String::from_utf8_lossy(&response.body)
        );
        assert!(
            response.json()["error"]["message"]
                .as_str()
                .is_some_and(|message| !message.is_empty())
        );
        assert_eq!(response.header("content-type"), Some("application/json"));
    }
    let unauthorized = call(served, "GET", "/v1/schemas", None, None).await;
    assert_eq!(unauthorized.header("www-authenticate"), Some("Bearer"));
    let wrong_method = call(served, "DELETE", "/v1/tool", Some("user-a"), None).await;
    assert_eq!(wrong_method.header("allow"), Some("GET"));
    let wrong_type = call(
        served,
        "POST",
        "/v1/structure",
        Some("user-a"),
        Some(json!({ "prompt": "x", "schema": "contact", "schemaMode": "named", "maxLoops": "3" })),
    )
    .await;
    assert_eq!(wrong_type.json()["error"]["field"], "maxLoops");
}

#[tokio::test]
async fn the_scope_comes_from_the_token_never_from_the_body() {
    let mock = MockLlm::start();
    let served = serve(&mock, &[]).await;
    let secret =
        json!({ "schema": { "type": "object", "properties": { "salary": { "type": "number" } } } });
    assert_eq!(
        call(
            &served,
            "PUT",
            "/v1/schemas/payroll",
            Some("admin-b"),
            Some(secret)
        )
        .await
        .status,
        200
    );

    another_tenants_schema_is_out_of_reach(&served).await;
    nor_through_mcp(&served).await;
    a_schema_of_the_same_name_shadows_nothing(&served).await;
    assert_eq!(mock.requests().len(), 0, "no LLM call on the way");
    // The project token sees its tenant's schemas; registrations by the tenant admin reach it.
    let lead = json!({ "schema": { "type": "object" } });
    call(
        &served,
        "PUT",
        "/v1/schemas/lead",
        Some("admin-a"),
        Some(lead),
    )
    .await;
    let seen = call(&served, "GET", "/v1/schemas/lead", Some("user-a"), None).await;
    assert_eq!(
        (seen.status, seen.json()["origin"].clone()),
        (200, json!("tenant:tenant-a"))
    );
}

/// Tenant B's `payroll`, out of reach of tenant A's tokens: not read, listed, deleted or used,
/// and not by naming B's tenant in the body either.
async fn another_tenants_schema_is_out_of_reach(served: &Served) {
    for token in ["admin-a", "user-a"] {
        let read = call(served, "GET", "/v1/schemas/payroll", Some(token), None).await;
        assert_eq!(read.status, 404, "{token}");
        let list = call(served, "GET", "/v1/schemas", Some(token), None).await;
        assert!(!list.json().to_string().contains("payroll"), "{token}");
        let delete = call(
            served,
            "DELETE",
            "/v1/schemas/payroll",
            Some("admin-a"),
            None,
        )
        .await;
        assert_eq!(delete.status, 404);
    }
    // A tenant named in the body is an unknown argument, not a way in.
    let sneaky = call(
        served,
        "POST",
        "/v1/structure",
        Some("user-a"),
        Some(json!({ "prompt": "x", "schema": "payroll", "schemaMode": "named", "tenant": "tenant-b" })),
    )
    .await;
    assert_eq!(
        (sneaky.status, sneaky.json()["error"]["field"].clone()),
        (400, json!("tenant"))
    );
    let shadow = call(
        served,
        "POST",
        "/v1/structure",
        Some("user-a"),
        Some(json!({ "prompt": "x", "schema": "payroll", "schemaMode": "named" })),
    )
    .await;
    assert_eq!(
        (shadow.status, error_kind(&shadow)),
        (404, "schema-not-found".to_owned())
    );
    assert_eq!(
        call(served, "GET", "/v1/schemas/payroll", Some("admin-b"), None)
            .await
            .status,
        200,
        "b still has it"
    );
}

/// Through MCP, tenant A neither lists, reads nor uses B's schema.
async fn nor_through_mcp(served: &Served) {
    let listed = mcp_as_user_a(served, rpc(1, "resources/list", json!({}))).await;
    assert!(listed["result"]["resources"].is_array(), "{listed}");
    assert!(!listed.to_string().contains("payroll"), "{listed}");
    let read = mcp_as_user_a(
        served,
        rpc(
            2,
            "resources/read",
            json!({ "uri": "structure://schemas/payroll" }),
        ),
    )
    .await;
    assert!(
        read["error"].is_object() || read["result"]["isError"] == true,
        "{read}"
    );
    assert!(!read.to_string().contains("salary"), "{read}");
    let used = mcp_as_user_a(served, rpc(3, "tools/call", json!({ "name": "structure", "arguments": { "prompt": "x", "schema": "payroll", "schemaMode": "named" } }))).await;
    assert_eq!(used["result"]["isError"], true, "{used}");
    assert!(used.to_string().contains("schema-not-found"), "{used}");
    let tools = mcp_as_user_a(served, rpc(4, "tools/list", json!({}))).await;
    assert!(
        tools["result"]["tools"][0]["inputSchema"].is_object(),
        "{tools}"
    );
    assert!(!tools.to_string().contains("payroll"), "{tools}");
}

/// The schema names MCP's tool description lists for tenant A's user: the bundled ones and
/// the ones its tenant registered.
async fn listed_names(served: &Served) -> String {
    let tools = mcp_as_user_a(served, rpc(5, "tools/list", json!({}))).await;
    let pointer = "/result/tools/0/inputSchema/properties/schema/oneOf/1/description";
    tools
        .pointer(pointer)
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned()
}

/// A's own `payroll` shadows nothing of B's, and goes again.
async fn a_schema_of_the_same_name_shadows_nothing(served: &Served) {
    let mine =
        json!({ "schema": { "type": "object", "properties": { "bonus": { "type": "number" } } } });
    assert_eq!(
        call(
            served,
            "PUT",
            "/v1/schemas/payroll",
            Some("admin-a"),
            Some(mine)
        )
        .await
        .status,
        200
    );
    let theirs = call(served, "GET", "/v1/schemas/payroll", Some("admin-b"), None).await;
    assert!(
        theirs.json()["schema"]["properties"]["salary"].is_object(),
        "B's schema is unchanged"
    );
    let names = listed_names(served).await;
    assert!(
        names.contains("payroll") && names.contains("contact"),
        "{names}"
    );
    assert_eq!(
        call(
            served,
            "DELETE",
            "/v1/schemas/payroll",
            Some("admin-a"),
            None
        )
        .await
        .status,
        204
    );
    assert_eq!(
        call(served, "GET", "/v1/schemas/payroll", Some("admin-b"), None)
            .await
            .status,
        200
    );
    assert!(!listed_names(served).await.contains("payroll"));
}

/// An MCP request as tenant A's user, in the 2025-06-18 protocol: the JSON answered.
async fn mcp_as_user_a(served: &Served, body: Value) -> Value {
    let response = send(
        served,
        "POST",
        "/mcp",
        &[
            ("authorization", "Bearer user-a"),
            ("content-type", "application/json"),
            ("mcp-protocol-version", "2025-06-18"),
        ],
        body.to_string().as_bytes(),
    )
    .await;
    response.json()
}

#[tokio::test]
async fn without_tokens_nothing_but_health_answers_unless_auth_is_off() {
    let mock = MockLlm::start();
    let settings = Settings::new()
        .set("structure_model", "ollama/x")
        .set("openai_base_url", mock.base_url());
    let client = Structure::builder()
        .settings(settings.clone())
        .build()
        .unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let served = Served {
        address: listener.local_addr().unwrap(),
        _task: tokio::spawn(async move {
            let _ = client
                .serve(
                    listener,
                    structure_host::ServeOptions::default().access_log(false),
                )
                .await;
        }),
    };
    let denied = call(&served, "GET", "/v1/tool", None, None).await;
    assert_eq!(denied.status, 401);
    assert!(
        denied.json()["error"]["message"]
            .as_str()
            .unwrap()
            .contains("set structure_api_tokens")
    );
    assert_eq!(
        call(&served, "GET", "/healthz", None, None).await.status,
        200
    );

    let open = Structure::builder()
        .settings(settings.set("structure_api_auth", "none"))
        .build()
        .unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let served = Served {
        address: listener.local_addr().unwrap(),
        _task: tokio::spawn(async move {
            let _ = open
                .serve(
                    listener,
                    structure_host::ServeOptions::default().access_log(false),
                )
                .await;
        }),
    };
    assert_eq!(
        call(&served, "GET", "/v1/tool", None, None).await.status,
        200
    );
}

#[tokio::test]
async fn concurrent_requests_each_get_their_own_instance() {
    let mock = MockLlm::start();
    let served = serve(&mock, &[]).await;
    for _ in 0..8 {
        mock.push(
            Reply::answer(json!({ "name": "Ada", "email": "ada@example.com" }))
                .with_delay(std::time::Duration::from_millis(200)),
        );
    }
    let body =
        json!({ "prompt": "Ada, ada@example.com", "schema": "contact", "schemaMode": "named" });
    let served = std::sync::Arc::new(served);
    let handles: Vec<_> = (0..8)
        .map(|_| {
            let (served, body) = (served.clone(), body.clone());
            tokio::spawn(async move {
                call(&served, "POST", "/v1/structure", Some("user-a"), Some(body)).await
            })
        })
        .collect();
    let mut responses = Vec::new();
    for handle in handles {
        responses.push(handle.await.unwrap());
    }
    assert!(
        responses
            .iter()
            .all(|response| response.status == 200 && response.json()["status"] == "ok")
    );
    // Served concurrently: the model's slow answers overlapped (a server taking one request at a
    // time would never have two at the mock at once), whatever the machine's load.
    assert!(
        mock.max_in_flight() > 1,
        "one request at a time: {} in flight at most",
        mock.max_in_flight()
    );
}

fn rpc(id: u64, method: &str, params: Value) -> Value {
    json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params })
}

#[tokio::test]
async fn mcp_in_both_protocol_eras() {
    let mock = MockLlm::start();
    let served = serve(&mock, &[]).await;
    the_handshake_era_initializes_and_calls_the_tool(&served, &mock).await;
    the_handshake_era_reads_resources_and_refuses_unknown_methods(&served).await;
    malformed_messages_are_json_rpc_errors(&served).await;
    the_stateless_era_discovers_and_lists(&served).await;
    the_stateless_era_calls_and_refuses_what_does_not_match(&served, &mock).await;
}

/// An MCP request as tenant A's user with `headers`.
async fn post(served: &Served, body: Value, headers: Vec<(&'static str, String)>) -> Response {
    let mut all: Vec<(&str, String)> = vec![
        ("authorization", "Bearer user-a".to_owned()),
        ("content-type", "application/json".to_owned()),
    ];
    all.extend(headers);
    let borrowed: Vec<(&str, &str)> = all
        .iter()
        .map(|(name, value)| (*name, value.as_str()))
        .collect();
    send(
        served,
        "POST",
        "/mcp",
        &borrowed,
        body.to_string().as_bytes(),
    )
    .await
}

/// The handshake era (2025-06-18): `initialize`, `notifications/initialized`, `tools/list`,
/// `tools/call` with an outcome, with a failure (a result), of an unknown tool (an error).
async fn the_handshake_era_initializes_and_calls_the_tool(served: &Served, mock: &MockLlm) {
    let init = post(served, rpc(1, "initialize", json!({ "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": { "name": "t", "version": "1" } })), vec![]).await;
    let result = &init.json()["result"];
    assert_eq!(
        (
            result["protocolVersion"].clone(),
            result["serverInfo"]["name"].clone()
        ),
        (json!("2025-06-18"), json!("structure"))
    );
    assert!(
        result["capabilities"]["tools"].is_object()
            && result["capabilities"]["resources"].is_object()
    );
    let initialized = post(
        served,
        json!({ "jsonrpc": "2.0", "method": "notifications/initialized" }),
        vec![],
    )
    .await;
    assert_eq!((initialized.status, initialized.body.len()), (202, 0));
    let tools = post(
        served,
        rpc(2, "tools/list", json!({})),
        vec![("mcp-protocol-version", "2025-06-18".into())],
    )
    .await
    .json();
    let tool = &tools["result"]["tools"][0];
    assert_eq!(tool["name"], "structure");
    assert_eq!(tool["inputSchema"]["type"], "object");
    assert_eq!(tool["outputSchema"]["type"], "object");
    mock.push(Reply::answer(
        json!({ "name": "Ada", "email": "ada@example.com" }),
    ));
    let called = post(served, rpc(3, "tools/call", json!({ "name": "structure", "arguments": { "prompt": "Ada, ada@example.com", "schema": "contact", "schemaMode": "named" } })), vec![]).await.json();
    let result = &called["result"];
    assert_eq!(
        (
            result["isError"].clone(),
            result["structuredContent"]["status"].clone()
        ),
        (json!(false), json!("ok"))
    );
    assert_eq!(
        serde_json::from_str::<Value>(result["content"][0]["text"].as_str().unwrap()).unwrap(),
        result["structuredContent"]
    );
    let failed = post(served, rpc(4, "tools/call", json!({ "name": "structure", "arguments": { "prompt": "x", "schema": "nope", "schemaMode": "named" } })), vec![]).await.json();
    assert_eq!(
        failed["result"]["isError"], true,
        "tool failures are results"
    );
    let unknown_tool = post(
        served,
        rpc(5, "tools/call", json!({ "name": "other", "arguments": {} })),
        vec![],
    )
    .await
    .json();
    assert_eq!(unknown_tool["error"]["code"], -32602);
}

/// The handshake era's resources (the registry's schemas), `ping`, and an unknown method.
async fn the_handshake_era_reads_resources_and_refuses_unknown_methods(served: &Served) {
    let resources = post(served, rpc(6, "resources/list", json!({})), vec![])
        .await
        .json();
    let uris: Vec<String> = resources["result"]["resources"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["uri"].as_str().unwrap().to_owned())
        .collect();
    assert!(uris.contains(&"structure://schemas/contact".to_owned()));
    let read = post(
        served,
        rpc(
            7,
            "resources/read",
            json!({ "uri": "structure://schemas/contact" }),
        ),
        vec![],
    )
    .await
    .json();
    let schema: Value =
        serde_json::from_str(read["result"]["contents"][0]["text"].as_str().unwrap()).unwrap();
    assert_eq!(schema["title"], "contact");
    let missing = post(
        served,
        rpc(
            8,
            "resources/read",
            json!({ "uri": "structure://schemas/none" }),
        ),
        vec![],
    )
    .await
    .json();
    assert_eq!(missing["error"]["code"], -32002);
    assert_eq!(
        post(served, rpc(9, "ping", json!({})), vec![]).await.json()["result"],
        json!({})
    );
    assert_eq!(
        post(served, rpc(10, "nope/nothing", json!({})), vec![])
            .await
            .json()["error"]["code"],
        -32601
    );
}

/// A batch and a body that is not JSON.
async fn malformed_messages_are_json_rpc_errors(served: &Served) {
    let batch = post(served, json!([rpc(1, "ping", json!({}))]), vec![]).await;
    assert_eq!(
        (batch.status, batch.json()["error"]["code"].clone()),
        (400, json!(-32600))
    );
    let garbage = send(
        served,
        "POST",
        "/mcp",
        &[("authorization", "Bearer user-a")],
        b"{nope",
    )
    .await;
    assert_eq!(
        (garbage.status, garbage.json()["error"]["code"].clone()),
        (400, json!(-32700))
    );
}

/// The stateless era (2026-07-28): `server/discover` and `tools/list`, private to the caller.
async fn the_stateless_era_discovers_and_lists(served: &Served) {
    let meta = stateless_meta();
    let discover = post(
        served,
        rpc(11, "server/discover", json!({ "_meta": meta })),
        stateless_headers("server/discover", vec![]),
    )
    .await
    .json();
    let result = &discover["result"];
    assert_eq!(result["resultType"], "complete");
    assert!(
        result["supportedVersions"]
            .as_array()
            .unwrap()
            .contains(&json!("2026-07-28"))
    );
    assert_eq!(
        (result["ttlMs"].clone(), result["cacheScope"].clone()),
        (json!(0), json!("private"))
    );
    let listed = post(
        served,
        rpc(12, "tools/list", json!({ "_meta": meta })),
        stateless_headers("tools/list", vec![]),
    )
    .await
    .json();
    assert_eq!(
        (
            listed["result"]["resultType"].clone(),
            listed["result"]["cacheScope"].clone()
        ),
        (json!("complete"), json!("private"))
    );
}

/// The stateless era's `tools/call`, with its `Mcp-Name` header, without it (a mismatch), an
/// unsupported version, and a method the era removed.
async fn the_stateless_era_calls_and_refuses_what_does_not_match(served: &Served, mock: &MockLlm) {
    let meta = stateless_meta();
    mock.push(Reply::answer(
        json!({ "name": "Ada", "email": "ada@example.com" }),
    ));
    let call_params = json!({ "_meta": meta, "name": "structure", "arguments": { "prompt": "Ada, ada@example.com", "schema": "contact", "schemaMode": "named" } });
    let called = post(
        served,
        rpc(13, "tools/call", call_params.clone()),
        stateless_headers(
            "tools/call",
            vec![("mcp-name", "=?base64?c3RydWN0dXJl?=".into())],
        ),
    )
    .await
    .json();
    assert_eq!(called["result"]["structuredContent"]["status"], "ok");
    let mismatch = post(
        served,
        rpc(14, "tools/call", call_params),
        stateless_headers("tools/call", vec![]),
    )
    .await;
    assert_eq!(
        (mismatch.status, mismatch.json()["error"]["code"].clone()),
        (400, json!(-32020))
    );
    let old = post(
        served,
        rpc(
            15,
            "tools/list",
            json!({ "_meta": { "io.modelcontextprotocol/protocolVersion": "2099-01-01" } }),
        ),
        vec![],
    )
    .await;
    assert_eq!(
        (old.status, old.json()["error"]["code"].clone()),
        (400, json!(-32022))
    );
    let gone = post(
        served,
        rpc(16, "ping", json!({ "_meta": meta })),
        stateless_headers("ping", vec![]),
    )
    .await;
    assert_eq!(
        (gone.status, gone.json()["error"]["code"].clone()),
        (404, json!(-32601))
    );
}

/// The meta every request of the stateless era (2026-07-28) carries.
fn stateless_meta() -> Value {
    json!({ "io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {} })
}

/// The headers of a stateless-era request for `method`, and `extra`.
fn stateless_headers(
    method: &'static str,
    extra: Vec<(&'static str, String)>,
) -> Vec<(&'static str, String)> {
    let mut headers = vec![
        ("mcp-protocol-version", "2026-07-28".to_owned()),
        ("mcp-method", method.to_owned()),
    ];
    headers.extend(extra);
    headers
}

/// The workspace's folder.
fn workspace() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// A Python with the official MCP SDK: `STRUCTURE_TEST_PYTHON`, else the virtual environment
/// `scripts/install-test-deps` makes in `target/mcp-venv` from `tests/mcp/requirements.txt`.
fn python_with_mcp_sdk() -> String {
    if let Ok(python) = std::env::var("STRUCTURE_TEST_PYTHON") {
        return python;
    }
    let python = workspace().join("target/mcp-venv/bin/python");
    let has_sdk = std::process::Command::new(&python)
        .args(["-c", "import mcp.client"])
        .output()
        .is_ok_and(|output| output.status.success());
    assert!(
        has_sdk,
        "{} has no MCP SDK: run scripts/install-test-deps",
        python.display()
    );
    python.to_string_lossy().into_owned()
}

/// The tool calls each official client makes beyond its first, and the model's answers to them
/// in turn: a PDF (pages, boxes, confidences, page sizes), a call whose values the model was
/// unsure of (confidences, form confidence, values dropped for it), and an error result.
fn sdk_calls(mock: &MockLlm) -> tempfile::NamedTempFile {
    use base64::Engine as _;
    let person = json!({ "type": "object", "properties": { "name": { "type": "string" }, "age": { "type": "integer" } } });
    let pdf = mock_llm::pdf::with_pages(&["Name: Ada Lovelace", "Age: 36"]);
    let data = base64::engine::general_purpose::STANDARD.encode(pdf);
    let calls = json!([
        { "name": "a PDF", "status": "ok", "arguments": {
            "schema": person, "returnText": true,
            "document": { "data": data, "mediaType": "application/pdf" } } },
        { "name": "values the model was unsure of", "status": "ok", "arguments": {
            "prompt": "Ada Lovelace, 36", "schema": person, "settings": { "minConfidence": 0.6 } } },
        { "name": "an unknown schema", "status": "error:schema-not-found", "arguments": {
            "prompt": "x", "schema": "contakt", "schemaMode": "named" } }
    ]);
    mock.push(
        Reply::answer(json!({ "name": "Ada Lovelace", "age": 36 })).with_token_probability(0.9),
    );
    mock.push(
        Reply::answer(json!({ "name": "Ada Lovelace", "age": 36 })).with_token_probability(0.5),
    );
    let file = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(file.path(), calls.to_string()).unwrap();
    file
}

/// Runs `program` with `args`, asserting it succeeded: its report otherwise.
async fn assert_runs(program: &str, args: &[&std::ffi::OsStr]) {
    let output = tokio::process::Command::new(program)
        .args(args)
        .output()
        .await
        .unwrap_or_else(|error| panic!("{program}: {error}"));
    let report = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(output.status.success(), "{program} {args:?}:\n{report}");
}

/// The official MCP Python SDK as a real client, in both of its connection modes: it checks
/// every result against the tool's `outputSchema` (and refused a PDF's before it was true).
#[tokio::test]
async fn the_official_mcp_python_client_works() {
    let python = tokio::task::spawn_blocking(python_with_mcp_sdk)
        .await
        .unwrap();
    let mock = MockLlm::start();
    let served = serve(&mock, &[]).await;
    let script = workspace().join("tests/mcp/client_check.py");
    let url = format!("http://{}/mcp", served.address);
    for mode in ["auto", "legacy"] {
        mock.push(Reply::answer(
            json!({ "name": "Ada Lovelace", "email": "ada@example.com" }),
        ));
        let calls = sdk_calls(&mock);
        let args = [
            script.as_os_str(),
            url.as_ref(),
            "user-a".as_ref(),
            "--mode".as_ref(),
            mode.as_ref(),
            "--calls".as_ref(),
            calls.path().as_os_str(),
        ];
        assert_runs(&python, &args).await;
    }
}

/// The official MCP TypeScript SDKs as real clients (`tests/mcp/client_check.mjs`; the packages
/// `scripts/install-test-deps` installs): the 1.x line, which also checks an error's result
/// against the `outputSchema`, and the 2.x one, which asserts formats and negotiates the
/// stateless era.
#[tokio::test]
async fn the_official_mcp_typescript_clients_work() {
    let script = workspace().join("tests/mcp/client_check.mjs");
    assert!(
        workspace()
            .join("tests/mcp/node_modules/@modelcontextprotocol/sdk")
            .exists(),
        "the MCP TypeScript SDKs are not installed: run scripts/install-test-deps"
    );
    let mock = MockLlm::start();
    let served = serve(&mock, &[]).await;
    let url = format!("http://{}/mcp", served.address);
    for line in ["v1", "v2"] {
        let calls = sdk_calls(&mock);
        let args = [
            script.as_os_str(),
            url.as_ref(),
            "user-a".as_ref(),
            line.as_ref(),
            calls.path().as_os_str(),
        ];
        assert_runs("node", &args).await;
    }
}

#[tokio::test]
async fn records_over_the_http_api_and_mcp() {
    let mock = MockLlm::start();
    mock.read_orders(mock_llm::orders::Reader::records(Duration::ZERO));
    let served = serve(&mock, &[]).await;
    let text = "Order ORD-0001 was placed by Ada Lovelace for 3 units. \
                Order ORD-0002 was placed by Alan Turing.";
    let arguments =
        json!({ "prompt": text, "schema": mock_llm::orders::order_schema(), "records": true });
    let response = call(
        &served,
        "POST",
        "/v1/structure",
        Some("user-a"),
        Some(arguments.clone()),
    )
    .await;
    let result = response.json();
    assert_eq!(response.status, 200, "{result}");
    assert_eq!(result["data"][0]["order"], "ORD-0001");
    assert_eq!(result["incomplete"][0]["record"]["order"], "ORD-0002");

    let tools = call(
        &served,
        "POST",
        "/mcp",
        Some("user-a"),
        Some(rpc(1, "tools/list", json!({}))),
    )
    .await;
    assert_eq!(
        tools.json()["result"]["tools"][0]["inputSchema"]["properties"]["records"]["type"],
        "boolean"
    );
    let called = call(
        &served,
        "POST",
        "/mcp",
        Some("user-a"),
        Some(rpc(
            2,
            "tools/call",
            json!({ "name": "structure", "arguments": arguments }),
        )),
    )
    .await
    .json();
    let content = &called["result"]["structuredContent"];
    assert_eq!(content["data"], result["data"], "{called}");
    assert_eq!(content["incomplete"], result["incomplete"]);
}

#[tokio::test]
async fn a_word_document_a_web_page_and_an_image_over_the_http_api() {
    use base64::Engine as _;
    let mock = MockLlm::start();
    let served = serve(&mock, &[]).await;
    let encode = |bytes: &[u8]| base64::engine::general_purpose::STANDARD.encode(bytes);
    let docx = mock_llm::docx::with_paragraphs(&["Invoice INV-7", "Total: 12.50 EUR"]);
    let html = b"<!doctype html><p>Invoice INV-7</p><p>Total: <b>12.50 EUR</b></p>";
    let png = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR";
    let schema = json!({ "type": "object", "properties": { "total": { "type": "string" } } });
    for (document, spanned) in [
        (
            json!({ "name": "invoice.docx", "data": encode(&docx) }),
            true,
        ),
        (
            json!({ "mediaType": "text/html", "data": encode(html) }),
            true,
        ),
        (json!({ "data": encode(png) }), false),
    ] {
        mock.push(Reply::answer(json!({ "total": "12.50 EUR" })));
        let arguments = json!({ "document": document, "schema": schema, "returnText": true });
        let response = call(
            &served,
            "POST",
            "/v1/structure",
            Some("user-a"),
            Some(arguments),
        )
        .await;
        let result = response.json();
        assert_eq!(response.status, 200, "{result}");
        assert_eq!(result["data"]["total"], "12.50 EUR");
        let source = &result["sources"][0];
        match spanned {
            true => assert_eq!(source["match"], "exact", "{result}"),
            false => assert_eq!(source["match"], "derived", "{result}"),
        }
    }
    let sent: Value = serde_json::from_str(&mock.requests().last().unwrap().body).unwrap();
    assert_eq!(sent["messages"][1]["content"][1]["type"], "image_url");
}

#[tokio::test]
async fn a_pdf_over_the_http_api_and_mcp_and_one_that_cannot_be_read() {
    use base64::Engine as _;
    let mock = MockLlm::start();
    let served = serve(&mock, &[]).await;
    let pdf = mock_llm::pdf::with_pages(&["Agreement.", "Signed by Zoë Kim."]);
    let document = json!({
        "mediaType": "application/pdf",
        "data": base64::engine::general_purpose::STANDARD.encode(&pdf),
    });
    let schema = json!({ "type": "object", "properties": { "signer": { "type": "string" } } });
    let arguments = json!({ "document": document, "schema": schema, "returnText": true });
    mock.push(Reply::answer(json!({ "signer": "Zoë Kim" })));
    let response = call(
        &served,
        "POST",
        "/v1/structure",
        Some("user-a"),
        Some(arguments.clone()),
    )
    .await;
    let result = response.json();
    assert_eq!(response.status, 200, "{result}");
    assert_eq!(result["sources"][0]["page"], 2);
    assert_eq!(result["sources"][0]["boxes"][0]["top"], 63.31, "{result}");
    assert_eq!(result["trace"]["pageSizes"][1]["height"], 792.0);
    assert!(
        result["text"]
            .as_str()
            .unwrap()
            .contains("Signed by Zoë Kim.")
    );

    mock.push(Reply::answer(json!({ "signer": "Zoë Kim" })));
    let called = call(
        &served,
        "POST",
        "/mcp",
        Some("user-a"),
        Some(rpc(
            3,
            "tools/call",
            json!({ "name": "structure", "arguments": arguments }),
        )),
    )
    .await
    .json();
    assert_eq!(
        called["result"]["structuredContent"]["sources"][0]["page"], 2,
        "{called}"
    );
    assert_eq!(
        called["result"]["structuredContent"]["sources"][0]["boxes"],
        result["sources"][0]["boxes"]
    );

    // A scan, for a model that does not read PDFs as pictures: 422, the reason, what to do; a
    // document over the limit: 413.
    let scan = json!({
        "document": {
            "mediaType": "application/pdf",
            "data": base64::engine::general_purpose::STANDARD.encode(mock_llm::pdf::without_text(1)),
        },
        "schema": schema,
        "settings": { "model": "openai/local" },
    });
    let response = call(&served, "POST", "/v1/structure", Some("user-a"), Some(scan)).await;
    assert_eq!(response.status, 422);
    assert_eq!(error_kind(&response), "invalid-document");
    assert!(
        response.json()["error"]["message"]
            .as_str()
            .unwrap()
            .contains("OCR")
    );
    let tight = serve(&mock, &[("structure_max_document_bytes", "100")]).await;
    let response = call(
        &tight,
        "POST",
        "/v1/structure",
        Some("user-a"),
        Some(json!({ "document": document, "schema": schema })),
    )
    .await;
    assert_eq!(response.status, 413);
    assert_eq!(response.json()["error"]["reason"], "too-large");
}
