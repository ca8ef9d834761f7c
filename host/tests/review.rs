//! The review queue through `structure serve` as operators run it: a result sent to review,
//! claimed, the service killed (`kill -9`) in the middle of the review and started again on
//! the same store — SQLite and a real Redis — and the review finished: nothing lost.

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
