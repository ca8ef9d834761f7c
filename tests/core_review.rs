//! Review (`structure_review`): a result with a value in doubt goes to the tenant's queue in the
//! store and still answers at once; a reviewer (and only a reviewer or an admin) lists, claims
//! (one reviewer at a time) and confirms or corrects it, an edit that breaks the schema or a
//! rule refused with each violation at its pointer; the reviewed result comes out valid.

mod support;

use mock_llm::Reply;
use serde_json::{Value, json};
use structure::http_api::{ApiResponse, handle};
use structure::ports::{
    Clock, HttpRequest, HttpResponse, MemoryKeyValue, Ports, Transport, TransportError,
};
use support::{MapConfig, ScriptedTransport, chat_reply};

const TOKENS: &str = r#"[{"token": "ada", "tenant": "acme", "role": "reviewer", "name": "Ada"},
    {"token": "bob", "tenant": "acme", "role": "reviewer", "name": "Bob"},
    {"token": "user-token", "tenant": "acme", "role": "user"},
    {"token": "boss", "tenant": "acme", "role": "admin"},
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

/// The model's transport, and a webhook receiver at `https://hooks.example/` answering each
/// delivery with the next of `statuses` (a connection refused for 0).
struct WithHooks {
    model: ScriptedTransport,
    statuses: std::cell::RefCell<Vec<u16>>,
    delivered: std::cell::RefCell<Vec<HttpRequest>>,
}

impl Transport for WithHooks {
    fn send(&self, request: &HttpRequest) -> Result<HttpResponse, TransportError> {
        if !request.url.starts_with("https://hooks.example/") {
            return self.model.send(request);
        }
        self.delivered.borrow_mut().push(request.clone());
        match self.statuses.borrow_mut().remove(0) {
            0 => Err(TransportError::retryable("connection refused")),
            status => Ok(HttpResponse {
                status,
                headers: Vec::new(),
                body: Vec::new(),
            }),
        }
    }
}

struct Service {
    transport: WithHooks,
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
            transport: WithHooks {
                model: ScriptedTransport::new(replies),
                statuses: Default::default(),
                delivered: Default::default(),
            },
            config,
            store: MemoryKeyValue::default(),
            clock: MovingClock::default(),
        }
    }

    fn call(&self, method: &str, path: &str, token: &str, body: Option<Value>) -> ApiResponse {
        let request = support::api_request(method, path, token, body, &[]);
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

/// A call whose result goes to review; the item's id.
fn queued(service: &Service) -> String {
    let result = structure_call(service, "user-token");
    result["review"]["id"]
        .as_str()
        .expect("sent to review")
        .to_owned()
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
    let id = queued(&service);
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
    assert_eq!(
        json_of(&response)["error"]["problems"],
        json!([{ "pointer": "/", "message": "tax must not exceed total" }])
    );
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
    // The correction counts: the schema's reviews, the field, from what to what.
    let corrections = json_of(&service.call("GET", "/v1/review/corrections", "bob", None));
    assert_eq!(
        corrections["schemas"],
        json!([{ "schema": "inline", "reviewed": 1, "corrected": 1, "fields": [
            { "pointer": "/total", "corrected": 1, "changes": [{ "from": 120.5, "to": 125.5 }] }
        ] }])
    );
    assert_eq!(
        service
            .call("GET", "/v1/review/corrections", "user-token", None)
            .status,
        403
    );
}

#[test]
fn a_claim_left_for_half_an_hour_may_be_taken() {
    let service = Service::new(vec![unsure_answer()], "doubtful");
    let id = queued(&service);
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
    let id = queued(&service);
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
                        let transport = WithHooks {
                            model: transport,
                            statuses: Default::default(),
                            delivered: Default::default(),
                        };
                        let clock = support::FixedClock::default();
                        let ports = Ports {
                            transport: &transport,
                            config,
                            key_value: store,
                            clock: &clock,
                        };
                        let path = format!("/v1/review/{id}/claim");
                        let request = support::api_request("POST", &path, token, None, &[]);
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

#[test]
fn the_reviewed_result_goes_to_the_webhook_signed_and_retried_while_the_receiver_fails() {
    let mut service = Service::new(vec![unsure_answer()], "doubtful");
    let hook = [
        ("structure_review_webhook", "https://hooks.example/review"),
        ("structure_review_webhook_secret", "s3cret"),
    ];
    for (key, value) in hook {
        service.config.values.insert(key.into(), value.into());
    }
    // The receiver is down once, then answers 503, then takes it.
    *service.transport.statuses.borrow_mut() = vec![0, 503, 204];
    let id = queued(&service);
    service.call("POST", &format!("/v1/review/{id}/claim"), "ada", None);
    let corrected = json!({ "data": { "vendor": "Acme Tools", "total": 125.5, "tax": 20.1 } });
    let reviewed =
        json_of(&service.call("POST", &format!("/v1/review/{id}"), "ada", Some(corrected)));
    assert_eq!(reviewed["delivery"]["status"], "delivered", "{reviewed:#}");
    assert_eq!(reviewed["delivery"]["attempts"], 3);
    let delivered = service.transport.delivered.borrow();
    assert_eq!(delivered.len(), 3);
    let sent = &delivered[2];
    let body: Value = serde_json::from_slice(&sent.body).unwrap();
    assert_eq!(
        (body["event"].as_str(), body["id"].as_str()),
        (Some("review.reviewed"), Some(id.as_str()))
    );
    assert_eq!(body["result"]["data"]["total"], json!(125.5));
    assert_eq!(body["result"]["review"]["status"], "reviewed");
    support::assert_published(&body["result"]);
    // The signature: HMAC-SHA256 of the body under the secret, as a receiver checks it.
    let signature = (sent.headers.iter())
        .find(|(name, _)| name == "x-structure-signature")
        .map(|(_, value)| value.clone())
        .unwrap();
    assert_eq!(
        signature,
        format!("sha256={}", hmac_hex(b"s3cret", &sent.body))
    );
}

#[test]
fn a_receiver_that_refuses_the_delivery_is_not_asked_again_and_the_review_stays() {
    let mut service = Service::new(vec![unsure_answer()], "doubtful");
    service.config.values.insert(
        "structure_review_webhook".into(),
        "https://hooks.example/r".into(),
    );
    *service.transport.statuses.borrow_mut() = vec![400];
    let id = queued(&service);
    service.call("POST", &format!("/v1/review/{id}/claim"), "ada", None);
    let edit = json!({ "data": { "vendor": "Acme Tools", "total": 120.5, "tax": 20.1 } });
    let reviewed = json_of(&service.call("POST", &format!("/v1/review/{id}"), "ada", Some(edit)));
    assert_eq!(
        (
            reviewed["status"].as_str(),
            reviewed["delivery"]["status"].as_str()
        ),
        (Some("reviewed"), Some("failed"))
    );
    assert_eq!(reviewed["delivery"]["error"], "the receiver answered 400");
    assert_eq!(service.transport.delivered.borrow().len(), 1);
}

/// HMAC-SHA256 as a webhook receiver computes it (RFC 2104, with the sha2 crate).
fn hmac_hex(key: &[u8], data: &[u8]) -> String {
    use sha2::{Digest, Sha256};
    let mut block = [0u8; 64];
    block[..key.len()].copy_from_slice(key);
    let inner = Sha256::new()
        .chain_update(block.map(|b| b ^ 0x36))
        .chain_update(data)
        .finalize();
    let outer = Sha256::new()
        .chain_update(block.map(|b| b ^ 0x5c))
        .chain_update(inner)
        .finalize();
    outer.iter().map(|b| format!("{b:02x}")).collect()
}

#[test]
fn an_admin_makes_a_correction_an_example_of_its_registered_schema() {
    let service = Service::new(vec![unsure_answer(), unsure_answer()], "doubtful");
    let registered = json!({ "schema": invoice(), "version": "1.0" });
    assert_eq!(
        service
            .call("PUT", "/v1/schemas/invoice", "boss", Some(registered))
            .status,
        200
    );
    let body = json!({ "prompt": TEXT, "schema": "invoice", "schemaMode": "named" });
    let result = json_of(&service.call("POST", "/v1/structure", "user-token", Some(body)));
    let id = result["review"]["id"].as_str().unwrap().to_owned();
    let example = format!("/v1/review/{id}/example");
    assert_eq!(
        service.call("POST", &example, "boss", None).status,
        409,
        "not reviewed yet"
    );
    service.call("POST", &format!("/v1/review/{id}/claim"), "ada", None);
    let corrected = json!({ "vendor": "Acme Tools", "total": 125.5, "tax": 20.1 });
    let saved = service.call(
        "POST",
        &format!("/v1/review/{id}"),
        "ada",
        Some(json!({ "data": corrected })),
    );
    assert_eq!(saved.status, 200);
    assert_eq!(
        service.call("POST", &example, "ada", None).status,
        403,
        "a reviewer registers nothing"
    );
    let made = json_of(&service.call("POST", &example, "boss", None));
    assert_eq!(made["schema"]["version"], "1.1", "{made}");
    let schema = json_of(&service.call("GET", "/v1/schemas/invoice", "user-token", None));
    assert_eq!(schema["schema"]["examples"], json!([corrected]));
    // An item whose schema was inline has no schema to keep it.
    let inline = queued(&service);
    service.call("POST", &format!("/v1/review/{inline}/claim"), "ada", None);
    service.call(
        "POST",
        &format!("/v1/review/{inline}"),
        "ada",
        Some(json!({ "data": corrected })),
    );
    let refused = service.call(
        "POST",
        &format!("/v1/review/{inline}/example"),
        "boss",
        None,
    );
    assert_eq!(refused.status, 409);
    assert!(String::from_utf8_lossy(&refused.body).contains("given inline"));
}

#[test]
fn a_queue_holds_what_the_operator_allows_and_lets_old_items_go() {
    let mut service = Service::new(
        vec![unsure_answer(), unsure_answer(), unsure_answer()],
        "doubtful",
    );
    for (key, value) in [
        ("structure_review_max_items", "1"),
        ("structure_review_keep_days", "2"),
    ] {
        service.config.values.insert(key.into(), value.into());
    }
    let first = structure_call(&service, "user-token")["review"]["id"].clone();
    let body = json!({ "prompt": TEXT, "schema": invoice() });
    let full = service.call("POST", "/v1/structure", "user-token", Some(body));
    assert_eq!(full.status, 500);
    let error = json_of(&full)["error"].clone();
    assert_eq!(error["key"], "structure_review_max_items", "{error}");
    assert!(error["message"].as_str().unwrap().contains("holds 1 items"));
    assert_eq!(error["usage"]["llmCalls"], 1, "what the call spent is said");
    // Three days on, the first item has expired: room again, and the list lets it go.
    service.clock.0.set(3 * 24 * 60 * 60 * 1000);
    let next = structure_call(&service, "user-token")["review"]["id"].clone();
    let listed = json_of(&service.call("GET", "/v1/review", "ada", None));
    let ids: Vec<&Value> = listed["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|item| &item["id"])
        .collect();
    assert_eq!(ids, [&next]);
    assert_ne!(first, next);
}

#[test]
fn a_pdfs_item_keeps_the_pdf_while_open_and_lets_it_go_once_reviewed() {
    use base64::Engine as _;
    let service = Service::new(vec![unsure_answer()], "all");
    let pdf = mock_llm::pdf::with_pages(&["Invoice from Acme Tools. Total 120.50, tax 20.10."]);
    let data = base64::engine::general_purpose::STANDARD.encode(&pdf);
    let body = json!({ "prompt": "", "schema": invoice(),
        "document": { "mediaType": "application/pdf", "data": data } });
    let result = json_of(&service.call("POST", "/v1/structure", "user-token", Some(body)));
    let id = result["review"]["id"]
        .as_str()
        .expect("sent to review")
        .to_owned();
    let claimed = json_of(&service.call("POST", &format!("/v1/review/{id}/claim"), "ada", None));
    assert_eq!(
        claimed["document"],
        json!({ "mediaType": "application/pdf", "data": data })
    );
    let edit = json!({ "data": { "vendor": "Acme Tools", "total": 120.5, "tax": 20.1 } });
    let reviewed = json_of(&service.call("POST", &format!("/v1/review/{id}"), "ada", Some(edit)));
    assert_eq!(reviewed["status"], "reviewed");
    assert!(reviewed.get("document").is_none());
}
