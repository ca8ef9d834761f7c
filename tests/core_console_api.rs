//! What the web console stands on, through the HTTP API natively (its files are the
//! `structure-console` crate's, tested there): who the caller is, schema reads with an ETag and edits
//! refused with 409 when stale, checks that name each mistake's pointer, and insights counted
//! per schema from the calls the API answers.

mod support;

use mock_llm::Reply;
use serde_json::{Value, json};
use structure::http_api::{ApiResponse, handle};
use structure::ports::{MemoryKeyValue, Ports};
use support::{FixedClock, MapConfig, ScriptedTransport};

const TOKENS: &str = r#"[{"token": "admin-token", "tenant": "acme", "role": "admin"},
    {"token": "user-token", "tenant": "acme", "role": "user"},
    {"token": "other-token", "tenant": "globex", "role": "admin"}]"#;

struct Service {
    transport: ScriptedTransport,
    config: MapConfig,
    store: MemoryKeyValue,
    clock: FixedClock,
}

impl Service {
    fn new(replies: Vec<Reply>) -> Self {
        let mut config = MapConfig::local();
        config
            .values
            .insert("structure_api_tokens".into(), TOKENS.into());
        Self {
            transport: ScriptedTransport::new(replies),
            config,
            store: MemoryKeyValue::default(),
            clock: FixedClock::default(),
        }
    }

    fn call(
        &self,
        method: &str,
        path: &str,
        token: &str,
        body: Option<Value>,
        headers: &[(&str, &str)],
    ) -> ApiResponse {
        let request = support::api_request(method, path, token, body, headers);
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

fn header<'a>(response: &'a ApiResponse, name: &str) -> Option<&'a str> {
    response
        .headers
        .iter()
        .find(|(key, _)| key.eq_ignore_ascii_case(name))
        .map(|(_, value)| value.as_str())
}

#[test]
fn me_says_the_callers_tenant_and_role() {
    let service = Service::new(Vec::new());
    assert_eq!(
        json_of(&service.call("GET", "/v1/me", "user-token", None, &[])),
        json!({ "tenant": "acme", "project": null, "role": "user", "name": "token:92458bff" })
    );
    assert_eq!(
        json_of(&service.call("GET", "/v1/me", "admin-token", None, &[]))["role"],
        "admin"
    );
    assert_eq!(
        service.call("GET", "/v1/me", "nobody", None, &[]).status,
        401
    );
}

#[test]
fn a_stale_edit_is_refused_with_409_and_a_fresh_one_goes_through() {
    let service = Service::new(Vec::new());
    let schema = json!({ "type": "object", "properties": { "name": { "type": "string" } }, "required": ["name"] });
    let put = |body: Value, headers: &[(&str, &str)]| {
        service.call(
            "PUT",
            "/v1/schemas/person",
            "admin-token",
            Some(body),
            headers,
        )
    };
    let created = put(json!({ "schema": schema, "version": "1.0" }), &[]);
    assert_eq!(created.status, 200, "{:?}", json_of(&created));
    let read = service.call("GET", "/v1/schemas/person", "user-token", None, &[]);
    let etag = header(&read, "etag").unwrap().to_owned();
    assert_eq!(
        header(&created, "etag"),
        Some(etag.as_str()),
        "a PUT answers with the new ETag"
    );
    // Two editors read the same version; the first saves a minor update.
    let mut relaxed = schema.clone();
    relaxed["properties"]["email"] = json!({ "type": "string" });
    let first = put(
        json!({ "schema": relaxed, "version": "1.1" }),
        &[("if-match", &etag)],
    );
    assert_eq!(first.status, 200, "{:?}", json_of(&first));
    let second = put(
        json!({ "schema": schema, "version": "1.1", "manual": "mine" }),
        &[("if-match", &etag)],
    );
    assert_eq!(second.status, 409);
    assert_eq!(json_of(&second)["error"]["kind"], "conflict");
    let now = header(&first, "etag").unwrap();
    assert_eq!(header(&second, "etag"), Some(now));
    assert_eq!(
        json_of(&service.call("GET", "/v1/schemas/person", "user-token", None, &[]))["version"],
        "1.1",
        "nothing was undone"
    );
    let deleted_stale = service.call(
        "DELETE",
        "/v1/schemas/person",
        "admin-token",
        None,
        &[("if-match", &etag)],
    );
    assert_eq!(deleted_stale.status, 409);
    assert_eq!(
        service
            .call(
                "DELETE",
                "/v1/schemas/person",
                "admin-token",
                None,
                &[("if-match", now)]
            )
            .status,
        204
    );
    assert_eq!(
        put(json!({ "schema": schema }), &[("if-match", now)]).status,
        409,
        "gone since it was read"
    );
}

#[test]
fn a_check_names_each_mistake_at_its_pointer_and_writes_nothing() {
    let service = Service::new(Vec::new());
    let check = |body: Value| {
        json_of(&service.call(
            "PUT",
            "/v1/schemas/draft?check",
            "admin-token",
            Some(body),
            &[],
        ))
    };
    let wrong = json!({ "schema": { "type": "object", "properties": { "age": { "type": "integr" }, "tags": { "minItems": -1 } } } });
    let checked = check(wrong);
    assert_eq!(checked["ok"], false);
    let pointers: Vec<&str> = checked["problems"]
        .as_array()
        .unwrap()
        .iter()
        .map(|problem| problem["pointer"].as_str().unwrap())
        .collect();
    assert!(pointers.contains(&"/properties/age/type"), "{checked}");
    assert!(pointers.contains(&"/properties/tags/minItems"), "{checked}");
    let slip = check(
        json!({ "schema": { "type": "object", "properties": { "age": { "tpye": "integer" } } } }),
    );
    assert_eq!(slip["problems"][0]["pointer"], "/properties/age", "{slip}");
    assert!(
        slip["problems"][0]["message"]
            .as_str()
            .unwrap()
            .contains("did you mean \"type\"")
    );
    assert_eq!(
        check(json!({ "schema": { "type": "object" }, "version": "1.0" })),
        json!({ "ok": true, "problems": [] })
    );
    assert_eq!(
        service
            .call("GET", "/v1/schemas/draft", "admin-token", None, &[])
            .status,
        404,
        "a check writes nothing"
    );
    assert_eq!(
        service
            .call(
                "PUT",
                "/v1/schemas/draft?check",
                "user-token",
                Some(json!({})),
                &[]
            )
            .status,
        403
    );
}

#[test]
fn insights_count_each_schemas_calls_per_tenant_as_json_and_csv() {
    let replies = vec![
        Reply::answer(json!({ "name": 5 })),
        Reply::answer(json!({ "name": "Ada", "email": "ada@example.com" })),
        Reply::answer(json!({ "name": "Bob", "email": "bob@example.com" })),
    ];
    let service = Service::new(replies);
    let structure = |arguments: Value| {
        service.call("POST", "/v1/structure", "user-token", Some(arguments), &[])
    };
    let contact =
        |prompt: &str| json!({ "prompt": prompt, "schema": "contact", "schemaMode": "named" });
    assert_eq!(structure(contact("Ada, ada@example.com")).status, 200);
    assert_eq!(structure(contact("Bob, bob@example.com")).status, 200);
    assert_eq!(
        structure(json!({ "prompt": "x", "schema": "no-such-schema", "schemaMode": "named" }))
            .status,
        404
    );
    let report = json_of(&service.call("GET", "/v1/insights?window=24h", "user-token", None, &[]));
    assert_eq!(report["window"], "24h");
    let schemas = report["schemas"].as_array().unwrap();
    let contact = schemas
        .iter()
        .find(|schema| schema["schema"] == "contact")
        .unwrap();
    assert_eq!(contact["calls"], 2);
    assert_eq!(contact["statuses"], json!({ "ok": 2 }));
    assert_eq!(
        contact["iterations"],
        json!([{ "iterations": 1, "calls": 1 }, { "iterations": 2, "calls": 1 }])
    );
    let categories: Vec<&str> = (contact["reasons"].as_array().unwrap().iter())
        .map(|reason| reason["category"].as_str().unwrap())
        .collect();
    assert!(categories.contains(&"type"), "{contact}");
    let pointers = contact["pointers"].as_array().unwrap();
    assert!(
        pointers.contains(&json!({ "pointer": "/name", "count": 1 })),
        "{contact}"
    );
    let unknown = schemas
        .iter()
        .find(|schema| schema["schema"] == "unknown")
        .unwrap();
    assert_eq!(
        unknown["statuses"],
        json!({ "error": 1 }),
        "a made-up name is not a series of its own"
    );
    let csv = service.call(
        "GET",
        "/v1/insights?window=7d&format=csv",
        "user-token",
        None,
        &[],
    );
    assert!(
        header(&csv, "content-type")
            .unwrap()
            .starts_with("text/csv")
    );
    let text = String::from_utf8(csv.body).unwrap();
    assert!(text.starts_with("schema,calls,ok,"), "{text}");
    assert!(
        text.lines()
            .any(|line| line.starts_with("contact,2,2,0,0,0,1.50,")),
        "{text}"
    );
    let other = json_of(&service.call("GET", "/v1/insights", "other-token", None, &[]));
    assert_eq!(
        other["schemas"],
        json!([]),
        "another tenant sees none of it"
    );
    assert_eq!(
        service
            .call("GET", "/v1/insights?window=1y", "user-token", None, &[])
            .status,
        400
    );
}

#[test]
fn an_operator_turns_insights_off_and_a_wrong_value_is_named() {
    let mut service = Service::new(vec![Reply::answer(
        json!({ "name": "Ada", "email": "ada@example.com" }),
    )]);
    service
        .config
        .values
        .insert("structure_insights".into(), "off".into());
    let arguments =
        json!({ "prompt": "Ada, ada@example.com", "schema": "contact", "schemaMode": "named" });
    assert_eq!(
        service
            .call("POST", "/v1/structure", "user-token", Some(arguments), &[])
            .status,
        200
    );
    let report = json_of(&service.call("GET", "/v1/insights", "user-token", None, &[]));
    assert_eq!(report["schemas"], json!([]), "nothing counted");
    service
        .config
        .values
        .insert("structure_insights".into(), "sometimes".into());
    let refused = service.call("GET", "/v1/insights", "user-token", None, &[]);
    assert_eq!(refused.status, 500);
    let message = json_of(&refused)["error"]["message"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(
        message.contains("structure_insights is \"sometimes\"; it is on or off"),
        "{message}"
    );
}
