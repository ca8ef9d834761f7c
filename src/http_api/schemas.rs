//! `/v1/schemas/{name}`: read a schema with its manual, register, check or deregister it.
//!
//! A read answers with an `ETag` (a digest of what it shows); a `PUT` or `DELETE` that sends
//! it back as `If-Match` is refused with 409 when the schema changed in between, so that of
//! two people editing the same schema the second does not silently undo the first. `PUT
//! ...?check` checks a registration as a `PUT` would and writes nothing: every place the schema
//! breaks its meta-schema, at its pointer, or the one reason registering would fail.

use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use super::exchange::{ApiRequest, ApiResponse};
use crate::api;
use crate::error::{ErrorKind, StructureError};
use crate::ports::Ports;
use crate::schema::registry::{RegisteredSchema, Registration, Registry};
use crate::schema::rules::check::problems as rule_problems;
use crate::schema::validator::meta_problems;
use crate::scope::Scope;
use crate::settings::Settings;
use crate::settings::cascade::Cascade;

/// `GET /v1/schemas/{name}`.
pub fn get(name: &str, scope: &Scope, ports: &Ports<'_>) -> ApiResponse {
    match Registry::new(ports.key_value, scope).find(name) {
        Ok(found) => {
            let etag = etag(&found);
            let mut shown = serde_json::to_value(found.info()).unwrap_or_default();
            shown["schema"] = Value::clone(&found.schema);
            shown["manual"] = json!(found.manual);
            ApiResponse::json(200, &shown).with_header("etag", &etag)
        }
        Err(error) => ApiResponse::from_error(&error),
    }
}

/// `PUT /v1/schemas/{name}` (with `?check`, a check only).
pub fn put(
    name: &str,
    body: Value,
    request: &ApiRequest,
    scope: &Scope,
    ports: &Ports<'_>,
) -> ApiResponse {
    if request.query("check").is_some() {
        return ApiResponse::json(200, &check(name, body, scope, ports));
    }
    if let Some(conflict) = conflict(name, request, scope, ports) {
        return conflict;
    }
    let registered = registration(name, body)
        .and_then(|registration| api::register_schema(scope, registration, ports));
    match registered {
        Ok(info) => {
            let mut response =
                ApiResponse::json(200, &serde_json::to_value(info).unwrap_or_default());
            if let Ok(found) = Registry::new(ports.key_value, scope).find(name) {
                response = response.with_header("etag", &etag(&found));
            }
            response
        }
        Err(error) => ApiResponse::from_error(&error),
    }
}

/// `DELETE /v1/schemas/{name}`.
pub fn delete(name: &str, request: &ApiRequest, scope: &Scope, ports: &Ports<'_>) -> ApiResponse {
    if let Some(conflict) = conflict(name, request, scope, ports) {
        return conflict;
    }
    match Registry::new(ports.key_value, scope).deregister(name) {
        Ok(true) => ApiResponse::empty(204),
        Ok(false) => ApiResponse::from_error(&StructureError::new(
            ErrorKind::SchemaNotFound {
                name: name.to_owned(),
                suggestions: Vec::new(),
            },
            format!("{name:?} is not registered at {}", scope.own_origin()),
        )),
        Err(error) => ApiResponse::from_error(&error),
    }
}

/// The ETag of a schema as a read shows it.
fn etag(found: &RegisteredSchema) -> String {
    let shown = json!([*found.schema, found.manual, found.version, found.origin]);
    let digest = Sha256::digest(shown.to_string().as_bytes());
    let hex: String = digest[..12]
        .iter()
        .map(|byte| format!("{byte:02x}"))
        .collect();
    format!("\"{hex}\"")
}

/// The 409 of a request whose `If-Match` is not the schema's ETag now (or whose schema is gone).
fn conflict(
    name: &str,
    request: &ApiRequest,
    scope: &Scope,
    ports: &Ports<'_>,
) -> Option<ApiResponse> {
    let wanted = request.header("if-match")?.trim();
    if wanted == "*" {
        return None;
    }
    let current = Registry::new(ports.key_value, scope)
        .find(name)
        .ok()
        .map(|found| etag(&found));
    if current.as_deref() == Some(wanted) {
        return None;
    }
    let now = match &current {
        Some(etag) => format!("it is {etag} now"),
        None => "it is not in the registry now".to_owned(),
    };
    let response = ApiResponse::error(
        409,
        "conflict",
        &format!(
            "{name:?} changed since it was read (If-Match {wanted}; {now}): read it again and redo the change"
        ),
        json!({ "current": current }),
    );
    Some(match current {
        Some(etag) => response.with_header("etag", &etag),
        None => response,
    })
}

/// `{"ok", "problems": [{"pointer", "message"}]}`: what registering `body` as `name` would
/// meet, the meta-schema's complaints and the rules' problems each at its pointer.
fn check(name: &str, body: Value, scope: &Scope, ports: &Ports<'_>) -> Value {
    let problems: Vec<Value> = match body.get("schema") {
        Some(schema @ Value::Object(_)) => meta_problems(schema)
            .into_iter()
            .chain(rule_problems(schema))
            .map(|(pointer, message)| json!({ "pointer": pointer, "message": message }))
            .collect(),
        _ => Vec::new(),
    };
    if !problems.is_empty() {
        return json!({ "ok": false, "problems": problems });
    }
    let checked = registration(name, body).and_then(|registration| {
        let limits = Settings::load(&Cascade::new(ports.config))?.limits;
        Registry::new(ports.key_value, scope).check(registration, &limits)
    });
    match checked {
        Ok(()) => json!({ "ok": true, "problems": [] }),
        Err(error) => {
            let pointer = match &error.kind {
                ErrorKind::InvalidSchema { pointer } => pointer.clone().unwrap_or_default(),
                _ => String::new(),
            };
            json!({ "ok": false, "problems": [{ "pointer": pointer, "message": error.message, "kind": error.kind.name() }] })
        }
    }
}

/// `PUT /v1/schemas/{name}` takes `{"schema": {...}, "manual": "...", "version": "1.2"}`.
fn registration(name: &str, body: Value) -> Result<Registration, StructureError> {
    let Value::Object(mut fields) = body else {
        return Err(StructureError::invalid_request(
            "body",
            "the body must be a JSON object with schema, manual and version",
        ));
    };
    if let Some(unknown) = fields
        .keys()
        .find(|key| !["schema", "manual", "version"].contains(&key.as_str()))
    {
        return Err(StructureError::invalid_request(
            unknown,
            format!("unknown field {unknown:?}; the fields are schema, manual and version"),
        ));
    }
    let schema = match fields.remove("schema") {
        Some(schema @ Value::Object(_)) => schema,
        Some(_) => {
            return Err(StructureError::invalid_request(
                "schema",
                "schema must be a JSON object",
            ));
        }
        None => {
            return Err(StructureError::invalid_request(
                "schema",
                "schema is missing",
            ));
        }
    };
    let text = |field: &str, value: Option<Value>| match value {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(text)) => Ok(Some(text)),
        Some(_) => Err(StructureError::invalid_request(
            field,
            format!("{field} must be a string"),
        )),
    };
    Ok(Registration {
        name: name.to_owned(),
        schema,
        manual: text("manual", fields.remove("manual"))?,
        version: text("version", fields.remove("version"))?,
    })
}
