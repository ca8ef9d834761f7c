//! `structure serve` as operators run it: several instances sharing one real Redis, the store
//! going away and coming back, the access log, the metrics, OTLP traces to a collector, and a
//! SIGTERM that loses no request in flight.

mod support;

use std::time::Duration;

use mock_llm::{MockLlm, Reply};
use serde_json::{Value, json};
use support::{Redis, Served, http};

const TOKENS: &str = r#"[
  {"token": "admin-acme", "tenant": "acme", "role": "admin"},
  {"token": "user-acme", "tenant": "acme", "project": "web", "role": "user"}
]"#;

fn env<'a>(mock: &'a MockLlm, store: &'a str) -> Vec<(&'static str, String)> {
    vec![
        ("STRUCTURE_MODEL", "openai/gpt-4.1-mini".to_owned()),
        ("OPENAI_BASE_URL", mock.base_url()),
        ("OPENAI_API_KEY", "sk-cluster-secret".to_owned()),
        ("STRUCTURE_API_TOKENS", TOKENS.to_owned()),
        ("STRUCTURE_STORE", store.to_owned()),
    ]
}

fn serve(env: &[(&'static str, String)], args: &[&str]) -> Served {
    let env: Vec<(&str, &str)> = env
        .iter()
        .map(|(key, value)| (*key, value.as_str()))
        .collect();
    Served::start(args, &env)
}

fn post(served: &Served, token: &str, path: &str, body: &Value) -> (u16, Value) {
    let authorization = format!("Bearer {token}");
    let (status, body) = http(
        &served.address,
        if path.starts_with("/v1/schemas/") {
            "PUT"
        } else {
            "POST"
        },
        path,
        &[
            ("authorization", &authorization),
            ("content-type", "application/json"),
        ],
        &body.to_string(),
    );
    (
        status,
        serde_json::from_str(&body).unwrap_or(Value::String(body)),
    )
}

/// `GET /metrics` with the admin token: the text, once it answered 200.
fn admin_metrics(served: &Served) -> String {
    let (status, text) = http(
        &served.address,
        "GET",
        "/metrics",
        &[("authorization", "Bearer admin-acme")],
        "",
    );
    assert_eq!(status, 200, "{text}");
    text
}

fn lead() -> Value {
    json!({ "schema": { "type": "object", "properties": { "company": { "type": "string" } }, "required": ["company"] } })
}

#[test]
fn two_instances_on_one_redis_share_the_registry_and_the_builder_cache() {
    let redis = Redis::start();
    let mock = MockLlm::start();
    let env = env(&mock, &redis.url());
    let a = serve(&env, &[]);
    let b = serve(&env, &[]);

    let (status, info) = post(&a, "admin-acme", "/v1/schemas/lead", &lead());
    assert_eq!(status, 200, "{info}");
    mock.push(Reply::answer(json!({ "company": "Fabrikam" })));
    let call =
        json!({ "prompt": "A lead from Fabrikam.", "schema": "lead", "schemaMode": "named" });
    let (status, outcome) = post(&b, "admin-acme", "/v1/structure", &call);
    assert_eq!(
        (status, outcome["status"].as_str()),
        (200, Some("ok")),
        "{outcome}"
    );
    assert_eq!(
        outcome["schemaOrigin"], "registry:tenant:acme",
        "registered on A, used on B"
    );

    // Text mode: the schema built on A is a cache hit on B, with no builder call.
    let built = json!({ "schema": { "type": "object", "properties": { "company": { "type": "string" } }, "required": ["company"] },
                        "confidence": 0.95, "clarifyingQuestions": [] });
    mock.push(Reply::text(&built.to_string()));
    mock.push(Reply::answer(json!({ "company": "Contoso" })));
    let described = json!({ "prompt": "Contoso wants a quote.", "schema": "the company asking", "schemaMode": "text" });
    let (_, first) = post(&a, "admin-acme", "/v1/structure", &described);
    assert_eq!(
        first["trace"]["schemaBuilder"]["cacheHit"], false,
        "{first}"
    );
    let calls_before = mock.requests().len();
    mock.push(Reply::answer(json!({ "company": "Contoso" })));
    let (_, second) = post(&b, "admin-acme", "/v1/structure", &described);
    assert_eq!(second["status"], "ok", "{second}");
    assert_eq!(second["trace"]["schemaBuilder"]["cacheHit"], true);
    assert_eq!(
        mock.requests().len() - calls_before,
        1,
        "0 builder calls, 1 content call"
    );
}

#[test]
fn two_instances_count_every_call_in_the_insights_when_calls_come_at_once() {
    let redis = Redis::start();
    let mock = MockLlm::start();
    mock.always(Some(Reply::answer(
        json!({ "name": "Ada", "email": "ada@example.com" }),
    )));
    let env = env(&mock, &redis.url());
    let instances = [serve(&env, &[]), serve(&env, &[])];
    let call =
        json!({ "prompt": "Ada, ada@example.com", "schema": "contact", "schemaMode": "named" });
    // 16 clients, 10 calls each, spread over both instances: many counts of one schema at once.
    let addresses = [instances[0].address.clone(), instances[1].address.clone()];
    let body = call.to_string();
    std::thread::scope(|scope| {
        for client in 0..16 {
            let (address, body) = (&addresses[client % 2], &body);
            scope.spawn(move || {
                for _ in 0..10 {
                    let headers = [
                        ("authorization", "Bearer user-acme"),
                        ("content-type", "application/json"),
                    ];
                    let (status, outcome) = http(address, "POST", "/v1/structure", &headers, body);
                    assert_eq!(status, 200, "{outcome}");
                }
            });
        }
    });
    let (status, report) = http(
        &instances[1].address,
        "GET",
        "/v1/insights?window=24h",
        &[("authorization", "Bearer user-acme")],
        "",
    );
    assert_eq!(status, 200, "{report}");
    let report: Value = serde_json::from_str(&report).unwrap();
    let contact = &report["schemas"][0];
    assert_eq!(
        (contact["schema"].as_str(), contact["calls"].as_u64()),
        (Some("contact"), Some(160)),
        "{report}"
    );
    assert_eq!(contact["statuses"], json!({ "ok": 160 }));
}

#[test]
fn a_rediss_store_is_reached_over_tls_with_the_system_trust_store() {
    let redis = Redis::start_tls();
    let mock = MockLlm::start();
    let mut env = env(&mock, &redis.url());
    // rustls-native-certs reads the trust store named here, as it would a system's own CA.
    env.push(("SSL_CERT_FILE", redis.ca_file().display().to_string()));
    let served = serve(&env, &[]);
    let (status, info) = post(&served, "admin-acme", "/v1/schemas/lead", &lead());
    assert_eq!(status, 200, "{info}");
    let (status, health) = http(&served.address, "GET", "/healthz", &[], "");
    assert_eq!(status, 200, "{health}");

    // Without the CA the server's certificate is not trusted: a storage error saying so.
    env.pop();
    env.push(("SSL_CERT_FILE", "/nonexistent-ca.pem".to_owned()));
    let untrusting = serve(&env, &[]);
    let (status, error) = post(&untrusting, "admin-acme", "/v1/schemas/lead", &lead());
    assert_eq!(
        (status, error["error"]["kind"].as_str()),
        (500, Some("storage")),
        "{error}"
    );
}

#[test]
fn redis_going_away_is_a_storage_error_and_its_return_heals_the_service() {
    let mut redis = Redis::start();
    let mock = MockLlm::start();
    let served = serve(&env(&mock, &redis.url()), &[]);
    let (status, _) = post(&served, "admin-acme", "/v1/schemas/lead", &lead());
    assert_eq!(status, 200);

    redis.stop();
    // A stranger learns that it is down, not what the store said (its address); a caller
    // with a token both.
    let (status, health) = http(&served.address, "GET", "/healthz", &[], "");
    assert_eq!(status, 503, "{health}");
    assert_eq!(
        serde_json::from_str::<Value>(&health).unwrap(),
        json!({ "status": "unavailable" })
    );
    let (status, told) = http(
        &served.address,
        "GET",
        "/healthz",
        &[("authorization", "Bearer admin-acme")],
        "",
    );
    assert_eq!(status, 503);
    let told: Value = serde_json::from_str(&told).unwrap();
    assert_eq!(told["error"]["kind"], "storage", "{told}");
    let call =
        json!({ "prompt": "A lead from Fabrikam.", "schema": "lead", "schemaMode": "named" });
    let (status, error) = post(&served, "admin-acme", "/v1/structure", &call);
    assert_eq!(
        (status, error["error"]["kind"].as_str()),
        (500, Some("storage")),
        "{error}"
    );
    assert!(mock.requests().is_empty(), "no LLM call without the store");

    redis.restart();
    let (status, _) = http(&served.address, "GET", "/healthz", &[], "");
    assert_eq!(status, 200);
    mock.push(Reply::answer(json!({ "company": "Fabrikam" })));
    let (status, outcome) = post(&served, "admin-acme", "/v1/structure", &call);
    assert_eq!(
        (status, outcome["status"].as_str()),
        (200, Some("ok")),
        "{outcome}"
    );
}

#[test]
fn the_access_log_and_the_metrics_count_exactly_what_happened() {
    let mock = MockLlm::start();
    let served = serve(&env(&mock, "memory"), &[]);
    // ok after one violation; a need; an unknown schema; a 401.
    mock.push(Reply::answer(
        json!({ "name": "Ada", "email": "not an email" }),
    ));
    mock.push(Reply::answer(
        json!({ "name": "Ada", "email": "ada@example.org" }),
    ));
    mock.push(Reply::need("the company"));
    let contact =
        json!({ "prompt": "Ada, ada@example.org", "schema": "contact", "schemaMode": "named" });
    assert_eq!(post(&served, "user-acme", "/v1/structure", &contact).0, 200);
    assert_eq!(post(&served, "user-acme", "/v1/structure", &contact).0, 200);
    let missing = json!({ "prompt": "x", "schema": "nope", "schemaMode": "named" });
    assert_eq!(post(&served, "user-acme", "/v1/structure", &missing).0, 404);
    assert_eq!(post(&served, "wrong", "/v1/structure", &contact).0, 401);

    the_access_log_holds_each_request_and_no_secret(&served.access_log());
    the_metrics_count_each_request_for_admins_only(&served);
}

/// The four requests of [`the_access_log_and_the_metrics_count_exactly_what_happened`] in the
/// access log: route, scope, status, iterations, schema, the error; no token, key or data.
fn the_access_log_holds_each_request_and_no_secret(log: &[Value]) {
    assert_eq!(log.len(), 4, "{log:?}");
    assert_eq!(
        (
            log[0]["route"].as_str(),
            log[0]["tenant"].as_str(),
            log[0]["project"].as_str()
        ),
        (Some("/v1/structure"), Some("acme"), Some("web"))
    );
    assert_eq!(
        (
            log[0]["status"].as_str(),
            log[0]["iterations"].as_u64(),
            log[0]["llmCalls"].as_u64()
        ),
        (Some("ok"), Some(2), Some(2))
    );
    assert_eq!(
        (log[0]["schema"].as_str(), log[0]["schemaOrigin"].as_str()),
        (Some("contact"), Some("registry:bundled"))
    );
    assert_eq!(log[1]["status"], "need-more-input");
    assert_eq!(
        (log[2]["code"].as_u64(), log[2]["errorKind"].as_str()),
        (Some(404), Some("schema-not-found"))
    );
    assert_eq!(
        (log[3]["code"].as_u64(), log[3]["tenant"].as_str()),
        (Some(401), None)
    );
    let all = log
        .iter()
        .map(Value::to_string)
        .collect::<Vec<_>>()
        .join("\n");
    for secret in ["sk-cluster-secret", "user-acme", "Ada", "ada@example.org"] {
        assert!(!all.contains(secret), "the log holds {secret:?}: {all}");
    }
}

/// The same four requests in the metrics, which a user's token may not read.
fn the_metrics_count_each_request_for_admins_only(served: &Served) {
    let (status, denied) = http(
        &served.address,
        "GET",
        "/metrics",
        &[("authorization", "Bearer user-acme")],
        "",
    );
    assert_eq!(status, 403, "{denied}");
    let metrics = admin_metrics(served);
    for line in [
        "structure_requests_total{tenant=\"acme\",schema=\"contact\",status=\"ok\"} 1",
        "structure_requests_total{tenant=\"acme\",schema=\"contact\",status=\"need-more-input\"} 1",
        "structure_requests_total{tenant=\"acme\",schema=\"unknown\",status=\"error\"} 1",
        "structure_requests_total{tenant=\"\",schema=\"unknown\",status=\"error\"} 1",
        "structure_errors_total{kind=\"unauthorized\"} 1",
        "structure_llm_calls_total 3",
        "structure_errors_total{kind=\"schema-not-found\"} 1",
        "structure_reasons_total{category=\"format\"} 1",
        "structure_iterations_count 2",
        "structure_request_duration_seconds_count 4",
    ] {
        assert!(
            metrics.lines().any(|found| found == line),
            "missing {line:?} in\n{metrics}"
        );
    }
}

#[test]
fn metrics_on_a_listener_of_their_own() {
    let mock = MockLlm::start();
    let port = support::free_port();
    let metrics_address = format!("127.0.0.1:{port}");
    let served = serve(
        &env(&mock, "memory"),
        &["--metrics-listen", &metrics_address],
    );
    let (status, text) = http(&metrics_address, "GET", "/metrics", &[], "");
    assert_eq!(status, 200);
    assert!(
        text.contains("# TYPE structure_requests_total counter"),
        "{text}"
    );
    let (status, _) = http(
        &served.address,
        "GET",
        "/metrics",
        &[("authorization", "Bearer admin-acme")],
        "",
    );
    assert_eq!(status, 404, "not on the API's listener then");
}

#[test]
fn names_a_caller_makes_up_add_no_metric_series() {
    let mock = MockLlm::start();
    let served = serve(&env(&mock, "memory"), &[]);
    let series = || {
        let text = admin_metrics(&served);
        let lines: Vec<String> = text
            .lines()
            .filter(|line| line.starts_with("structure_requests_total{"))
            .map(|line| line.rsplit_once(' ').unwrap().0.to_owned())
            .collect();
        lines
    };
    let named = |index: usize| json!({ "prompt": "x", "schema": format!("made-up-{index}"), "schemaMode": "named" });
    // The first of each kind makes its series; the next 999 add none.
    assert_eq!(post(&served, "wrong", "/v1/structure", &named(0)).0, 401);
    assert_eq!(
        post(&served, "user-acme", "/v1/structure", &named(0)).0,
        404
    );
    let before = series();
    for index in 1..1000 {
        assert_eq!(
            post(&served, "wrong", "/v1/structure", &named(index)).0,
            401
        );
        assert_eq!(
            post(&served, "user-acme", "/v1/structure", &named(index)).0,
            404
        );
    }
    assert_eq!(series(), before, "no series added");
    assert!(
        !before.iter().any(|line| line.contains("made-up")),
        "{before:?}"
    );
    let log = served.access_log();
    assert!(log.iter().all(|line| !line.to_string().contains("made-up")));
}

#[test]
fn sigterm_lets_every_request_in_flight_finish() {
    let mock = MockLlm::start();
    let served = serve(&env(&mock, "memory"), &["--drain-timeout", "20"]);
    let contact =
        json!({ "prompt": "Ada, ada@example.org", "schema": "contact", "schemaMode": "named" });
    for _ in 0..4 {
        mock.push(
            Reply::answer(json!({ "name": "Ada", "email": "ada@example.org" }))
                .with_delay(Duration::from_millis(1500)),
        );
    }
    let address = served.address.clone();
    let calls: Vec<_> = (0..4)
        .map(|_| {
            let address = address.clone();
            let body = contact.to_string();
            std::thread::spawn(move || {
                http(
                    &address,
                    "POST",
                    "/v1/structure",
                    &[
                        ("authorization", "Bearer user-acme"),
                        ("content-type", "application/json"),
                    ],
                    &body,
                )
            })
        })
        .collect();
    std::thread::sleep(Duration::from_millis(500));
    served.terminate();
    for call in calls {
        let (status, body) = call.join().unwrap();
        assert_eq!(status, 200, "{body}");
        assert!(body.contains("\"status\":\"ok\""), "{body}");
    }
    let mut served = served;
    let exit = served.child.wait().unwrap();
    assert_eq!(exit.code(), Some(0));
    assert!(
        std::net::TcpStream::connect(&address).is_err(),
        "no longer accepting"
    );
}

#[test]
fn traces_reach_an_otlp_collector_with_the_genai_attributes() {
    use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
    use prost::Message;

    let collector = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let endpoint = format!("http://{}", collector.local_addr().unwrap());
    let received = std::thread::spawn(move || {
        let (mut stream, _) = collector.accept().unwrap();
        let request = support::read_http_request(&mut stream);
        use std::io::Write;
        stream
            .write_all(b"HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n")
            .unwrap();
        request
    });
    let mock = MockLlm::start();
    mock.push(Reply::answer(
        json!({ "name": "Ada", "email": "not an email" }),
    ));
    mock.push(Reply::answer(
        json!({ "name": "Ada", "email": "ada@example.org" }),
    ));
    let mut env = env(&mock, "memory");
    env.push(("OTEL_EXPORTER_OTLP_ENDPOINT", endpoint));
    env.push((
        "OTEL_EXPORTER_OTLP_HEADERS",
        "api-key=secret%3D1,x-team=obs".to_owned(),
    ));
    env.push(("OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf".to_owned()));
    let served = serve(&env, &[]);
    let contact =
        json!({ "prompt": "Ada, ada@example.org", "schema": "contact", "schemaMode": "named" });
    // The caller's trace context: the request's span joins its trace, under its span.
    let (status, _) = http(
        &served.address,
        "POST",
        "/v1/structure",
        &[
            ("authorization", "Bearer user-acme"),
            ("content-type", "application/json"),
            (
                "traceparent",
                "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
            ),
        ],
        &contact.to_string(),
    );
    assert_eq!(status, 200);

    let (head, body) = received.join().unwrap();
    assert!(head.starts_with("POST /v1/traces "), "{head}");
    let head = head.to_lowercase();
    assert!(
        head.contains("api-key: secret=1") && head.contains("x-team: obs"),
        "{head}"
    );
    let export = ExportTraceServiceRequest::decode(body.as_slice()).unwrap();
    let spans = &export.resource_spans[0].scope_spans[0].spans;
    assert_eq!(spans.len(), 3, "the request and its two LLM calls");
    assert_eq!(
        (
            spans[0].trace_id.as_slice(),
            spans[0].parent_span_id.as_slice()
        ),
        (
            &[
                0x4b, 0xf9, 0x2f, 0x35, 0x77, 0xb3, 0x4d, 0xa6, 0xa3, 0xce, 0x92, 0x9d, 0x0e, 0x0e,
                0x47, 0x36
            ][..],
            &[0x00, 0xf0, 0x67, 0xaa, 0x0b, 0xa9, 0x02, 0xb7][..]
        )
    );
    the_spans_carry_the_genai_attributes(spans);
}

/// The request's span (the first) and its two LLM calls' spans under it: the outcome, the model,
/// the tokens; each call's operation and HTTP status.
fn the_spans_carry_the_genai_attributes(spans: &[opentelemetry_proto::tonic::trace::v1::Span]) {
    use opentelemetry_proto::tonic::common::v1::any_value;

    let attribute = |span: usize, key: &str| -> Option<any_value::Value> {
        spans[span]
            .attributes
            .iter()
            .find(|attribute| attribute.key == key)
            .and_then(|attribute| attribute.value.clone()?.value)
    };
    let text = |value: &str| Some(any_value::Value::StringValue(value.to_owned()));
    assert_eq!(attribute(0, "structure.status"), text("ok"));
    assert_eq!(
        attribute(0, "structure.iterations"),
        Some(any_value::Value::IntValue(2))
    );
    assert_eq!(attribute(0, "gen_ai.request.model"), text("gpt-4.1-mini"));
    assert!(
        matches!(attribute(0, "gen_ai.usage.input_tokens"), Some(any_value::Value::IntValue(n)) if n > 0)
    );
    for call in [1, 2] {
        assert_eq!(spans[call].parent_span_id, spans[0].span_id);
        assert_eq!(spans[call].trace_id, spans[0].trace_id);
        assert_eq!(attribute(call, "gen_ai.operation.name"), text("chat"));
        assert_eq!(
            attribute(call, "http.response.status_code"),
            Some(any_value::Value::IntValue(200))
        );
    }
}

#[test]
fn a_collector_that_is_down_or_refused_never_holds_up_a_request() {
    let mock = MockLlm::start();
    // A port nobody listens on, over https as hosted collectors are reached.
    let dead = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let endpoint = format!("https://{}", dead.local_addr().unwrap());
    drop(dead);
    let mut dead_env = env(&mock, "memory");
    dead_env.push(("OTEL_EXPORTER_OTLP_ENDPOINT", endpoint));
    let served = serve(&dead_env, &[]);
    let warning = served
        .stderr_lines(Duration::from_secs(10))
        .into_iter()
        .find(|line| line.contains("OTLP collector"));
    assert!(
        warning.is_some_and(|line| line.contains("requests go on")),
        "serve warns at start"
    );
    let contact =
        json!({ "prompt": "Ada, ada@example.org", "schema": "contact", "schemaMode": "named" });
    for _ in 0..3 {
        mock.push(Reply::answer(
            json!({ "name": "Ada", "email": "ada@example.org" }),
        ));
        let started = std::time::Instant::now();
        assert_eq!(post(&served, "user-acme", "/v1/structure", &contact).0, 200);
        assert!(
            started.elapsed() < Duration::from_secs(2),
            "{:?}",
            started.elapsed()
        );
    }
    let dropped = || {
        admin_metrics(&served)
            .lines()
            .find_map(|line| line.strip_prefix("structure_otlp_spans_dropped_total "))
            .map(|count| count.parse::<u64>().unwrap())
    };
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while dropped() < Some(6) && std::time::Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(200));
    }
    assert!(
        dropped() >= Some(6),
        "each request's spans, counted: {:?}",
        dropped()
    );

    // grpc is refused with what to set.
    let mut env = env(&mock, "memory");
    env.push((
        "OTEL_EXPORTER_OTLP_ENDPOINT",
        "http://127.0.0.1:4317".to_owned(),
    ));
    env.push(("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc".to_owned()));
    let refused = std::process::Command::new(env!("CARGO_BIN_EXE_structure"))
        .envs(env.iter().map(|(key, value)| (*key, value.as_str())))
        .args(["serve", "--listen", "127.0.0.1:0"])
        .output()
        .unwrap();
    assert!(!refused.status.success());
    assert!(String::from_utf8_lossy(&refused.stderr).contains("http/protobuf"));
}

/// A collector on loopback that takes every export for as long as the test runs: the bodies it
/// received, in order.
fn collector() -> (String, std::sync::Arc<std::sync::Mutex<Vec<Vec<u8>>>>) {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let endpoint = format!("http://{}", listener.local_addr().unwrap());
    let bodies = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let kept = bodies.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { return };
            let (_, body) = support::read_http_request(&mut stream);
            kept.lock().unwrap().push(body);
            use std::io::Write;
            let _ = stream.write_all(b"HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n");
        }
    });
    (endpoint, bodies)
}

/// What a prompt, a document and an answer hold never reaches the access log, stderr, the
/// metrics, the insights or the spans an operator collects — not the value a retry's feedback
/// quotes, nor a made-up schema name an error quotes (GHSA-3gh4-cghq-f8v4 was such a leak).
#[test]
fn no_prompt_document_or_answer_reaches_the_logs_metrics_or_traces() {
    use base64::Engine as _;
    let (endpoint, exported) = collector();
    let mock = MockLlm::start();
    let mut env = env(&mock, "memory");
    env.push(("OTEL_EXPORTER_OTLP_ENDPOINT", endpoint));
    env.push(("OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf".to_owned()));
    let served = serve(&env, &[]);
    // An invalid answer (its value quoted back to the model), then a valid one; the same from a
    // PDF over MCP; a schema name no registry has.
    let answers = || {
        mock.push(Reply::answer(
            json!({ "name": "Canary-Answer-Name", "email": "canary-answer-invalid" }),
        ));
        mock.push(Reply::answer(
            json!({ "name": "Canary-Answer-Name", "email": "canary-answer@example.org" }),
        ));
    };
    answers();
    let contact = json!({ "prompt": "Canary-Prompt-Words, canary-answer@example.org",
                          "schema": "contact", "schemaMode": "named" });
    assert_eq!(post(&served, "user-acme", "/v1/structure", &contact).0, 200);
    answers();
    let pdf = mock_llm::pdf::with_pages(&["Canary-Document-Words canary-answer@example.org"]);
    let document = json!({ "data": base64::engine::general_purpose::STANDARD.encode(pdf), "mediaType": "application/pdf" });
    let call = json!({ "jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": { "name": "structure",
        "arguments": { "schema": "contact", "schemaMode": "named", "document": document } } });
    let (status, answered) = post(&served, "user-acme", "/mcp", &call);
    assert_eq!(
        (status, &answered["result"]["structuredContent"]["status"]),
        (200, &json!("ok")),
        "{answered}"
    );
    let missing = json!({ "prompt": "x", "schema": "canary-schema-name", "schemaMode": "named" });
    assert_eq!(post(&served, "user-acme", "/v1/structure", &missing).0, 404);

    let (status, insights) = http(
        &served.address,
        "GET",
        "/v1/insights",
        &[("authorization", "Bearer user-acme")],
        "",
    );
    assert!(
        status == 200 && insights.contains("contact"),
        "{status}: {insights}"
    );
    let metrics = admin_metrics(&served);
    let deadline = std::time::Instant::now() + Duration::from_secs(15);
    while exported.lock().unwrap().iter().map(Vec::len).sum::<usize>() == 0
        && std::time::Instant::now() < deadline
    {
        std::thread::sleep(Duration::from_millis(100));
    }
    std::thread::sleep(Duration::from_secs(1));
    let spans: Vec<u8> = exported.lock().unwrap().concat();
    assert!(!spans.is_empty(), "no spans reached the collector");
    let stderr = served.stderr_lines(Duration::from_millis(200)).join("\n");
    let seen = [
        ("stderr", stderr.as_bytes()),
        ("metrics", metrics.as_bytes()),
        ("insights", insights.as_bytes()),
        ("spans", &spans),
    ];
    for (place, bytes) in seen {
        let text = String::from_utf8_lossy(bytes).to_lowercase();
        for canary in [
            "canary-prompt",
            "canary-document",
            "canary-answer",
            "canary-schema",
        ] {
            assert!(!text.contains(canary), "{place} holds {canary:?}: {text}");
        }
    }
    assert!(
        stderr.contains("/v1/structure") && stderr.contains("/mcp"),
        "{stderr}"
    );
}
