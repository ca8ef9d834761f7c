//! Review (`structure_review`): a result with a value in doubt goes to the tenant's queue in the
//! store and still answers at once; a reviewer (and only a reviewer or an admin) lists, claims
//! (one reviewer at a time) and confirms or corrects it, an edit that breaks the schema or a
//! rule refused with each violation at its pointer; the reviewed result comes out valid.

mod support;

use mock_llm::Reply;
use serde_json::{Value, json};
use structure::http_api::{ApiRequest, ApiResponse, handle};
use structure::ports::{Clock, MemoryKeyValue, Ports};
use support::{MapConfig, ScriptedTransport, chat_reply};

const TOKENS: &str = r#"[{"token": "ada", "tenant": "acme", "role": "reviewer", "name": "Ada"},
    {"token": "bob", "tenant": "acme", "role": "reviewer", "name": "Bob"},
    {"token": "user-token", "tenant": "acme", "role": "user"},
    {"token": "other", "tenant": "globex", "role": "admin"}]"#;

/// A clock a test moves on.
#[derive(Default)]
struct MovingClock(std::cell::Cell<u64>);

impl Clock for MovingClock {
    fn now_unix_millis(&self) -> u64 {
        1_778_077_800_000 + self.0.get()
    }

    fn sleep(&self, _: std::time::Duration) {}
}

struct Service {
    transport: ScriptedTransport,
    config: MapConfig,
    store: MemoryKeyValue,
    clock: MovingClock,
}

impl Service {
    fn new(replies: Vec<Reply>, review: &str) -> Self {
        let mut config = MapConfig::local();
        config
            .values
            .insert("structure_api_tokens".into(), TOKENS.into());
        config
            .values
            .insert("structure_review".into(), review.into());
        Self {
            transport: ScriptedTransport::new(replies),
            config,
            store: MemoryKeyValue::default(),
            clock: MovingClock::default(),
        }
    }

    fn call(&self, method: &str, path: &str, token: &str, body: Option<Value>) -> ApiResponse {
        let request = ApiRequest {
            method: method.into(),
            path: path.into(),
            headers: vec![("authorization".to_owned(), format!("Bearer {token}"))],
            body: body
                .map(|body| body.to_string().into_bytes())
                .unwrap_or_default(),
        };
        let ports = Ports {
            transport: &self.transport,
            config: &self.config,
            key_value: &self.store,
            clock: &self.clock,
        };
        handle(&request, &ports)
    }
}

fn json_of(response: &ApiResponse) -> Value {
    serde_json::from_slice(&response.body).unwrap_or(Value::Null)
}

fn invoice() -> Value {
    json!({
        "type": "object",
        "properties": {
            "vendor": { "type": "string" },
            "total": { "type": "number", "minimum": 0 },
            "tax": { "type": "number", "minimum": 0 }
        },
        "required": ["vendor", "total", "tax"],
        "additionalProperties": false,
        "x-kubernetes-validations": [{ "rule": "self.tax <= self.total", "message": "tax must not exceed total" }]
    })
}

/// The model reads the vendor surely, the total and the tax less so (0.75: kept, under 0.8).
fn unsure_answer() -> Reply {
    chat_reply(&[
        ("{\"answer\": {\"vendor\": ", 0.99),
        ("\"Acme Tools\"", 0.99),
        (", \"total\": ", 0.99),
        ("120.5", 0.75),
        (", \"tax\": ", 0.99),
        ("20.1", 0.72),
        ("}}", 0.99),
    ])
}

const TEXT: &str = "Invoice from Acme Tools. Total 120.50, of which tax 20.10.";

fn structure_call(service: &Service, token: &str) -> Value {
    let body = json!({ "prompt": TEXT, "schema": invoice() });
    let response = service.call("POST", "/v1/structure", token, Some(body));
    assert_eq!(
        response.status,
        200,
        "{}",
        String::from_utf8_lossy(&response.body)
    );
    json_of(&response)
}

#[test]
fn a_result_with_values_in_doubt_goes_to_review_and_still_answers_at_once() {
    let service = Service::new(vec![unsure_answer()], "doubtful");
    let result = structure_call(&service, "user-token");
    assert_eq!(result["status"], "ok");
    assert_eq!(result["data"]["vendor"], "Acme Tools");
    let review = &result["review"];
    assert_eq!(review["status"], "pending");
    let pointers: Vec<&str> = (review["fields"].as_array().unwrap().iter())
        .map(|field| field["pointer"].as_str().unwrap())
        .collect();
    assert_eq!(pointers, ["/total", "/tax"]);
    assert!(
        review["fields"][0]["reason"]
            .as_str()
            .unwrap()
            .contains("confidence 0.75, under 0.8")
    );
    support::assert_published(&result);

    // The queue, to a reviewer of the tenant; not to a user, nor to another tenant.
    let listed = json_of(&service.call("GET", "/v1/review?status=pending", "ada", None));
    assert_eq!(listed["items"][0]["id"], review["id"]);
    assert_eq!(
        service.call("GET", "/v1/review", "user-token", None).status,
        403
    );
    let elsewhere = json_of(&service.call("GET", "/v1/review", "other", None));
    assert_eq!(elsewhere["items"], json!([]));
    let id = review["id"].as_str().unwrap();
    let item = json_of(&service.call("GET", &format!("/v1/review/{id}"), "ada", None));
    assert_eq!(
        (item["text"].as_str(), item["status"].as_str()),
        (Some(TEXT), Some("pending"))
    );
    assert_eq!(
        service
            .call("GET", &format!("/v1/review/{id}"), "other", None)
            .status,
        404
    );
}

#[test]
fn sure_results_go_out_unless_all_are_reviewed_and_a_schema_may_ask_for_review() {
    let sure = || {
        chat_reply(&[(
            "{\"answer\": {\"vendor\": \"Acme Tools\", \"total\": 120.5, \"tax\": 20.1}}",
            0.99,
        )])
    };
    let doubtful = Service::new(vec![sure()], "doubtful");
    assert!(
        structure_call(&doubtful, "user-token")
            .get("review")
            .is_none()
    );
    let all = Service::new(vec![sure()], "all");
    let result = structure_call(&all, "user-token");
    assert_eq!(
        (
            result["review"]["status"].as_str(),
            &result["review"]["fields"]
        ),
        (Some("pending"), &json!([]))
    );
    // Review off in the settings, asked for by the schema.
    let off = Service::new(vec![unsure_answer()], "off");
    let mut schema = invoice();
    schema["x-structure-review"] = json!("doubtful");
    let body = json!({ "prompt": TEXT, "schema": schema });
    let result = json_of(&off.call("POST", "/v1/structure", "user-token", Some(body)));
    assert_eq!(result["review"]["status"], "pending", "{result:#}");
}

#[test]
fn one_reviewer_at_a_time_an_invalid_edit_refused_at_its_pointer_and_the_reviewed_result_valid() {
    let service = Service::new(vec![unsure_answer()], "doubtful");
    let id = structure_call(&service, "user-token")["review"]["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let claim = format!("/v1/review/{id}/claim");
    let item = format!("/v1/review/{id}");
    // Submitting unclaimed is refused; Ada claims; Bob is refused while she holds it.
    let edit = json!({ "data": { "vendor": "Acme Tools", "total": 120.5, "tax": 20.1 } });
    assert_eq!(
        service
            .call("POST", &item, "ada", Some(edit.clone()))
            .status,
        409
    );
    let claimed = json_of(&service.call("POST", &claim, "ada", None));
    assert_eq!(
        (claimed["status"].as_str(), claimed["claim"]["by"].as_str()),
        (Some("claimed"), Some("Ada"))
    );
    let refused = service.call("POST", &claim, "bob", None);
    assert_eq!(refused.status, 409);
    assert_eq!(json_of(&refused)["error"]["claim"]["by"], "Ada");
    // An edit that breaks the schema, then one that breaks the rule: refused, nothing saved.
    let negative = json!({ "data": { "vendor": "Acme Tools", "total": -1, "tax": 20.1 } });
    let response = service.call("POST", &item, "ada", Some(negative));
    assert_eq!(response.status, 422);
    assert_eq!(
        json_of(&response)["error"]["problems"][0]["pointer"],
        "/total"
    );
    let over = json!({ "data": { "vendor": "Acme Tools", "total": 12.05, "tax": 20.1 } });
    let response = service.call("POST", &item, "ada", Some(over));
    assert_eq!(response.status, 422);
    assert!(String::from_utf8_lossy(&response.body).contains("tax must not exceed total"));
    assert_eq!(
        json_of(&service.call("GET", &item, "ada", None))["status"],
        "claimed"
    );
    // The correction: the total was 125.5.
    let corrected = json!({ "data": { "vendor": "Acme Tools", "total": 125.5, "tax": 20.1 } });
    let reviewed = json_of(&service.call("POST", &item, "ada", Some(corrected)));
    assert_eq!(reviewed["status"], "reviewed");
    assert_eq!(reviewed["reviewed"]["by"], "Ada");
    assert_eq!(reviewed["reviewed"]["corrected"], json!(["/total"]));
    let out = &reviewed["reviewedResult"];
    assert_eq!(
        (out["status"].as_str(), &out["data"]["total"]),
        (Some("ok"), &json!(125.5))
    );
    assert_eq!(out["review"]["status"], "reviewed");
    // Reviewed is final; the list of reviewed items holds it.
    assert_eq!(service.call("POST", &claim, "bob", None).status, 409);
    let done = json_of(&service.call("GET", "/v1/review?status=reviewed", "bob", None));
    assert_eq!(done["items"][0]["id"], json!(id));
}

#[test]
fn a_claim_left_for_half_an_hour_may_be_taken() {
    let service = Service::new(vec![unsure_answer()], "doubtful");
    let id = structure_call(&service, "user-token")["review"]["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let claim = format!("/v1/review/{id}/claim");
    assert_eq!(service.call("POST", &claim, "ada", None).status, 200);
    service.clock.0.set(29 * 60 * 1000);
    assert_eq!(service.call("POST", &claim, "bob", None).status, 409);
    service.clock.0.set(31 * 60 * 1000);
    let taken = json_of(&service.call("POST", &claim, "bob", None));
    assert_eq!(taken["claim"]["by"], "Bob");
}

#[test]
fn two_reviewers_claiming_at_once_one_wins() {
    let service = Service::new(vec![unsure_answer()], "doubtful");
    let id = structure_call(&service, "user-token")["review"]["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let store = &service.store;
    let config = &service.config;
    for _ in 0..20 {
        // Each round: the item back to pending, then both claim together.
        let key = format!("t/acme/review/{id}");
        let stored = structure::ports::KeyValue::get(store, &key)
            .unwrap()
            .unwrap();
        let mut item: Value = serde_json::from_slice(&stored).unwrap();
        item["status"] = json!("pending");
        item.as_object_mut().unwrap().remove("claim");
        structure::ports::KeyValue::set(store, &key, item.to_string().as_bytes()).unwrap();
        let statuses: Vec<u16> = std::thread::scope(|threads| {
            let claims: Vec<_> = ["ada", "bob"]
                .into_iter()
                .map(|token| {
                    let id = &id;
                    threads.spawn(move || {
                        let transport = ScriptedTransport::new(Vec::new());
                        let clock = support::FixedClock::default();
                        let ports = Ports {
                            transport: &transport,
                            config,
                            key_value: store,
                            clock: &clock,
                        };
                        let request = ApiRequest {
                            method: "POST".into(),
                            path: format!("/v1/review/{id}/claim"),
                            headers: vec![("authorization".to_owned(), format!("Bearer {token}"))],
                            body: Vec::new(),
                        };
                        handle(&request, &ports).status
                    })
                })
                .collect();
            claims
                .into_iter()
                .map(|claim| claim.join().unwrap())
                .collect()
        });
        let mut sorted = statuses.clone();
        sorted.sort_unstable();
        assert_eq!(sorted, [200, 409], "{statuses:?}");
    }
}
