//! The review queue through `structure serve` as operators run it: a result sent to review,
//! claimed, the service killed (`kill -9`) in the middle of the review and started again on
//! the same store — SQLite and a real Redis — and the review finished: nothing lost; and a
//! batch whose results wait for review, written as reviewed once people have reviewed them.

mod support;

use mock_llm::{MockLlm, Reply};
use serde_json::{Value, json};
use support::{Redis, Served, http};

const TOKENS: &str = r#"[
  {"token": "user", "tenant": "acme", "role": "user"},
  {"token": "ada", "tenant": "acme", "role": "reviewer", "name": "Ada"}
]"#;

fn serve(mock: &MockLlm, store: &str) -> Served {
    let base_url = mock.base_url();
    let env = [
        ("STRUCTURE_MODEL", "openai/gpt-4.1-mini"),
        ("OPENAI_BASE_URL", base_url.as_str()),
        ("OPENAI_API_KEY", "sk-review"),
        ("STRUCTURE_API_TOKENS", TOKENS),
        ("STRUCTURE_REVIEW", "all"),
        ("STRUCTURE_STORE", store),
    ];
    Served::start(&[], &env)
}

fn call(
    served: &Served,
    method: &str,
    path: &str,
    token: &str,
    body: Option<Value>,
) -> (u16, Value) {
    let authorization = format!("Bearer {token}");
    let body = body.map(|body| body.to_string()).unwrap_or_default();
    let headers = [
        ("authorization", authorization.as_str()),
        ("content-type", "application/json"),
    ];
    let (status, text) = http(&served.address, method, path, &headers, &body);
    (status, serde_json::from_str(&text).unwrap_or(Value::Null))
}

fn kill(served: &Served) {
    let status = std::process::Command::new("kill")
        .args(["-KILL", &served.child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
}

/// Sends a result to review, claims it, kills the service, starts it again on `store`, and
/// finishes the review there.
fn a_review_outlives_the_service(store: &str) {
    let mock = MockLlm::start();
    mock.push(Reply::answer(
        json!({ "vendor": "Acme Tools", "total": 120.5 }),
    ));
    let schema = json!({ "type": "object", "required": ["vendor", "total"],
        "properties": { "vendor": { "type": "string" }, "total": { "type": "number" } } });
    let body = json!({ "prompt": "Acme Tools, total 120.50", "schema": schema });
    let served = serve(&mock, store);
    let (status, result) = call(&served, "POST", "/v1/structure", "user", Some(body));
    assert_eq!(status, 200, "{result}");
    let id = result["review"]["id"]
        .as_str()
        .expect("sent to review")
        .to_owned();
    let (status, claimed) = call(
        &served,
        "POST",
        &format!("/v1/review/{id}/claim"),
        "ada",
        None,
    );
    assert_eq!((status, claimed["status"].as_str()), (200, Some("claimed")));
    kill(&served);

    let again = serve(&mock, store);
    let (_, listed) = call(&again, "GET", "/v1/review?status=claimed", "ada", None);
    assert_eq!(listed["items"][0]["id"], json!(id), "{listed}");
    let corrected = json!({ "data": { "vendor": "Acme Tools", "total": 125.5 } });
    let (status, reviewed) = call(
        &again,
        "POST",
        &format!("/v1/review/{id}"),
        "ada",
        Some(corrected),
    );
    assert_eq!(status, 200, "{reviewed}");
    let (_, item) = call(&again, "GET", &format!("/v1/review/{id}"), "ada", None);
    assert_eq!(item["reviewed"]["by"], "Ada");
    assert_eq!(item["reviewedResult"]["data"]["total"], json!(125.5));
    again.terminate();
}

#[test]
fn a_review_outlives_a_killed_service_on_sqlite() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("store.db");
    a_review_outlives_the_service(path.to_str().unwrap());
}

#[test]
fn a_review_outlives_a_killed_service_on_redis() {
    let redis = Redis::start();
    a_review_outlives_the_service(&redis.url());
}

/// `structure` with `args`, the model at `mock`, every result sent to review, on `store`.
fn command(mock: &MockLlm, store: &str, args: &[&str]) -> std::process::Output {
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_structure"))
        .args(args)
        .args(["--store", store, "--tenant", "acme"])
        .env("STRUCTURE_MODEL", "openai/gpt-4.1-mini")
        .env("OPENAI_BASE_URL", mock.base_url())
        .env("OPENAI_API_KEY", "sk-review")
        .env("STRUCTURE_REVIEW", "all")
        .env_remove("STRUCTURE_STORE")
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    output
}

fn lines(path: &std::path::Path) -> Vec<Value> {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    text.lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect()
}

#[test]
fn a_batchs_results_are_written_as_reviewed_once_reviewed() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store.db");
    let store = store.to_str().unwrap();
    let (input, output, reviewed) = (
        dir.path().join("in.jsonl"),
        dir.path().join("out.jsonl"),
        dir.path().join("reviewed.jsonl"),
    );
    std::fs::write(&input, "{\"id\": \"a\", \"prompt\": \"Acme Tools, 120.50\"}\n{\"id\": \"b\", \"prompt\": \"Bolt Inc, 9.00\"}\n").unwrap();
    let mock = MockLlm::start();
    mock.push(Reply::answer(
        json!({ "vendor": "Acme Tools", "total": 120.5 }),
    ));
    mock.push(Reply::answer(json!({ "vendor": "Bolt Inc", "total": 9 })));
    let schema = r#"{"type": "object", "required": ["vendor", "total"], "properties": {"vendor": {"type": "string"}, "total": {"type": "number"}}}"#;
    let (input_arg, output_arg) = (input.to_str().unwrap(), output.to_str().unwrap());
    command(
        &mock,
        store,
        &[
            "batch", input_arg, "-o", output_arg, "--schema", schema, "--jobs", "1",
        ],
    );
    let results = lines(&output);
    assert_eq!(results.len(), 2);
    let item_of = |id: &str| {
        let line = results.iter().find(|line| line["id"] == id).unwrap();
        line["review"]["id"]
            .as_str()
            .expect("sent to review")
            .to_owned()
    };
    let reviewed_arg = reviewed.to_str().unwrap();
    let first = command(
        &mock,
        store,
        &["review", "results", output_arg, "-o", reviewed_arg],
    );
    assert!(
        String::from_utf8_lossy(&first.stderr)
            .contains("0 written (0 of them reviewed), 2 still waiting")
    );
    assert!(
        lines(&reviewed).is_empty(),
        "nothing is written before it is reviewed"
    );

    // A reviewer corrects item a on the service sharing the store.
    correct(
        &mock,
        store,
        &item_of("a"),
        json!({ "vendor": "Acme Tools", "total": 125.5 }),
    );

    let second = command(
        &mock,
        store,
        &["review", "results", output_arg, "-o", reviewed_arg],
    );
    assert!(
        String::from_utf8_lossy(&second.stderr)
            .contains("1 written (1 of them reviewed), 1 still waiting")
    );
    let written = lines(&reviewed);
    assert_eq!(written.len(), 1);
    assert_eq!(
        (written[0]["id"].as_str(), written[0]["status"].as_str()),
        (Some("a"), Some("ok"))
    );
    assert_eq!(written[0]["data"]["total"], json!(125.5));
    assert_eq!(written[0]["review"]["status"], "reviewed");
    // Run again: nothing new, nothing twice.
    command(
        &mock,
        store,
        &["review", "results", output_arg, "-o", reviewed_arg],
    );
    assert_eq!(lines(&reviewed).len(), 1);
}

/// A reviewer claims item `id` on a service on `store` and saves `data` as its review.
fn correct(mock: &MockLlm, store: &str, id: &str, data: Value) {
    let served = serve(mock, store);
    call(
        &served,
        "POST",
        &format!("/v1/review/{id}/claim"),
        "ada",
        None,
    );
    let body = json!({ "data": data });
    let (status, reviewed) = call(
        &served,
        "POST",
        &format!("/v1/review/{id}"),
        "ada",
        Some(body),
    );
    assert_eq!(status, 200, "{reviewed}");
    served.terminate();
}
