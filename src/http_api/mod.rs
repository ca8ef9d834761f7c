//! The HTTP API the component serves (as `wasi:http/incoming-handler`): the same on Spin and
//! under `structure serve`.
//!
//! | route | method | role | what |
//! |---|---|---|---|
//! | `/healthz` | GET | — | liveness and the store: 200, or 503 when the key-value store does not answer |
//! | `/v1/tool` | GET | user | the tool definition |
//! | `/v1/structure` | POST | user | the tool's arguments → the outcome |
//! | `/v1/schemas` | GET | user | the registry as the caller's scope sees it |
//! | `/v1/schemas/{name}` | GET | user | one schema with its manual, and its `ETag` |
//! | `/v1/schemas/{name}` | PUT, DELETE | admin | register (`?check`: check only), deregister at the caller's scope; `If-Match` or 409 ([`schemas`]) |
//! | `/v1/me` | GET | user | the caller: tenant, project, role |
//! | `/v1/insights` | GET | user | each schema's calls over `?window=24h` or `7d`, JSON or `?format=csv` ([`insights`]) |
//! | `/v1/review` | GET | reviewer | the review queue's items of `?status=pending` ([`review`]) |
//! | `/v1/review/corrections` | GET | reviewer | what reviewers corrected, per schema and field |
//! | `/v1/review/{id}` | GET, POST | reviewer | one item; `POST {"data": …}` confirms or corrects it (422 with the violations) |
//! | `/v1/review/{id}/claim` | POST | reviewer | take the item: 409 while another reviewer holds it |
//! | `/v1/review/{id}/example` | POST | admin | the reviewed data made an example of its registered schema |
//! | `/mcp` | POST | user | the Model Context Protocol ([`mcp`]) |
//!
//! The web console (`/console`) is not here: its files are the `structure-console` crate's, a
//! component of their own, so that no instance of the API carries them.
//!
//! Every error has the same body, `{"error": {"kind", "message", ...}}`, and its status: 400
//! malformed or wrongly typed input (naming the field), 401 no or an unknown token, 403 the
//! wrong role, 404 an unknown route or schema, 405 a wrong method (with `Allow`), 413 a body over
//! the limit, 415 a body that is not JSON, 422 a request the model or schema stage cannot
//! satisfy, 429/502/504 provider trouble, 500 the service's own configuration or store.

pub mod auth;
mod exchange;
pub mod insights;
pub mod mcp;
pub mod review;
pub mod schemas;

use serde_json::{Value, json};

use crate::error::StructureError;
use crate::keys;
use crate::ports::{Config, Ports};
use crate::request::StructureRequest;
use crate::schema::registry::Registry;
use crate::{api, tool_definition};
use auth::{Caller, Denied, Role};
pub use exchange::{ApiRequest, ApiResponse, status_of};

pub const DEFAULT_MAX_BODY_BYTES: usize = 1 << 20;

/// The largest body this service accepts, as `config` sets it (`structure_max_body_bytes`): the
/// component's `wasi:http` handler and `structure serve` read no more than this plus one byte.
pub fn max_body_bytes(config: &dyn Config) -> usize {
    config
        .get(keys::MAX_BODY_BYTES)
        .ok()
        .flatten()
        .and_then(|text| text.trim().parse().ok())
        .filter(|limit| *limit > 0)
        .unwrap_or(DEFAULT_MAX_BODY_BYTES)
}

/// Serves one request.
pub fn handle(request: &ApiRequest, ports: &Ports<'_>) -> ApiResponse {
    let limit = max_body_bytes(ports.config);
    if request.body.len() > limit {
        return ApiResponse::too_large(limit);
    }
    let path = request.path.split(['?', '#']).next().unwrap_or_default();
    let segments: Vec<&str> = path.trim_end_matches('/').split('/').skip(1).collect();
    let name = match route(path, &segments, &request.method) {
        Ok(name) => name,
        Err(response) => return response,
    };
    if segments == ["healthz"] {
        let authenticated =
            auth::authenticate(request.header("authorization"), ports.config).is_ok();
        return health(ports, authenticated);
    }
    let caller = match admitted_caller(request, ports) {
        Ok(caller) => caller,
        Err(response) => return response,
    };
    match json_body_of(request, &segments) {
        Ok(body) => dispatch(&segments, name, body, request, &caller, ports),
        Err(response) => response,
    }
}

/// The route at `path` (as `segments`) for `method`: the schema name in it, if any; or the 404
/// of an unknown route, the 405 (with `Allow`) of a method it does not take.
fn route<'a>(
    path: &str,
    segments: &[&'a str],
    method: &str,
) -> Result<Option<&'a str>, ApiResponse> {
    let (methods, name): (&[&str], Option<&str>) = match segments {
        ["healthz"] => (&["GET"], None),
        ["v1", "tool"] => (&["GET"], None),
        ["v1", "structure"] => (&["POST"], None),
        ["v1", "schemas"] => (&["GET"], None),
        ["v1", "schemas", name] => (&["GET", "PUT", "DELETE"], Some(*name)),
        ["v1", "me"] | ["v1", "insights"] | ["v1", "review"] => (&["GET"], None),
        ["v1", "review", "corrections"] => (&["GET"], None),
        ["v1", "review", _] => (&["GET", "POST"], None),
        ["v1", "review", _, "claim" | "example"] => (&["POST"], None),
        ["mcp"] => (&["POST"], None),
        _ => {
            return Err(ApiResponse::error(
                404,
                "not-found",
                &format!("no route {path}; see GET /v1/tool"),
                json!({}),
            ));
        }
    };
    if !methods.contains(&method) {
        return Err(ApiResponse::error(
            405,
            "method-not-allowed",
            &format!("{path} takes {}, not {method}", methods.join(", ")),
            json!({}),
        )
        .with_header("allow", &methods.join(", ")));
    }
    Ok(name)
}

/// The caller the request's token stands for, if their role may do what the request asks; else
/// the 401 of no or an unknown token, the 500 of an unusable token list, the 403 of a user's
/// token where an admin's is needed.
fn admitted_caller(request: &ApiRequest, ports: &Ports<'_>) -> Result<Caller, ApiResponse> {
    let caller = match auth::authenticate(request.header("authorization"), ports.config) {
        Ok(caller) => caller,
        Err(Denied::Unauthenticated(message)) => {
            return Err(ApiResponse::error(401, "unauthorized", &message, json!({}))
                .with_header("www-authenticate", "Bearer"));
        }
        Err(Denied::Misconfigured(message)) => {
            return Err(ApiResponse::error(
                500,
                "configuration",
                &message,
                json!({}),
            ));
        }
    };
    let needs_admin = matches!(request.method.as_str(), "PUT" | "DELETE")
        || (request.path.starts_with("/v1/review/") && request.path.ends_with("/example"));
    if needs_admin && caller.role < Role::Admin {
        return Err(ApiResponse::error(
            403,
            "forbidden",
            "registering and deregistering schemas (an example too) takes an admin token",
            json!({}),
        ));
    }
    let reviewing = request.path.starts_with("/v1/review");
    if reviewing && caller.role < Role::Reviewer {
        return Err(ApiResponse::error(
            403,
            "forbidden",
            "the review queue takes a reviewer's (or an admin's) token",
            json!({}),
        ));
    }
    Ok(caller)
}

/// The JSON body of a `POST` or `PUT` (none for the other methods), or the error response to a
/// body that is not JSON: MCP's JSON-RPC parse error on `/mcp`.
fn json_body_of(request: &ApiRequest, segments: &[&str]) -> Result<Option<Value>, ApiResponse> {
    if !matches!(request.method.as_str(), "POST" | "PUT") {
        return Ok(None);
    }
    // A claim, or an example, says all it says by its path.
    if matches!(segments, ["v1", "review", _, "claim" | "example"]) && request.body.is_empty() {
        return Ok(None);
    }
    match json_body(request) {
        Ok(body) => Ok(Some(body)),
        // JSON-RPC has its own answer to a body that is not JSON.
        Err(BodyError::NotJson(message)) if segments == ["mcp"] => Err(mcp::parse_error(&message)),
        Err(error) => Err(error.response()),
    }
}

/// The authenticated routes, once the body is read.
fn dispatch(
    segments: &[&str],
    name: Option<&str>,
    body: Option<Value>,
    request: &ApiRequest,
    caller: &Caller,
    ports: &Ports<'_>,
) -> ApiResponse {
    let scope = &caller.scope;
    match (segments, request.method.as_str(), name) {
        (["mcp"], ..) => mcp::handle(&body.unwrap_or_default(), caller, request, ports),
        (["v1", "insights"], ..) => insights::get(request, scope, ports),
        (["v1", "review"], ..) => review::list(request, caller, ports),
        (["v1", "review", "corrections"], ..) => review::corrections(caller, ports),
        (["v1", "review", id, "claim"], ..) => review::claim(id, caller, ports),
        (["v1", "review", id, "example"], ..) => review::example(id, caller, ports),
        (["v1", "review", id], "GET", _) => review::get(id, caller, ports),
        (["v1", "review", id], _, _) => review::submit(id, body.unwrap_or_default(), caller, ports),
        (["v1", "structure"], ..) => structure(body.unwrap_or_default(), scope, ports),
        (_, "GET", Some(name)) => schemas::get(name, scope, ports),
        (_, "PUT", Some(name)) => {
            schemas::put(name, body.unwrap_or_default(), request, scope, ports)
        }
        (_, "DELETE", Some(name)) => schemas::delete(name, request, scope, ports),
        (_, method, _) => respond(rest(segments, method, caller, ports)),
    }
}

/// `POST /v1/structure`: the call, counted in the insights.
fn structure(arguments: Value, scope: &crate::scope::Scope, ports: &Ports<'_>) -> ApiResponse {
    let started = ports.clock.now_unix_millis();
    let result = StructureRequest::from_tool_arguments(&arguments)
        .and_then(|request| api::structure(&request, scope, ports));
    let (response, answered) = match result {
        Ok(outcome) => {
            let answered = outcome.to_json();
            (ApiResponse::json(200, &answered), answered)
        }
        Err(error) => (ApiResponse::from_error(&error), error.to_json()),
    };
    insights::record(&arguments, &answered, started, scope, ports);
    response
}

/// `GET /healthz`: 200 when the key-value store answers (a read of a key nobody writes), 503
/// when it does not, so a load balancer takes the instance out. Only a caller with a token is
/// told the store's error: it names the store's address.
fn health(ports: &Ports<'_>, authenticated: bool) -> ApiResponse {
    match ports.key_value.get(HEALTH_PROBE_KEY) {
        Ok(_) => ApiResponse::json(200, &json!({ "status": "ok" })),
        Err(message) if authenticated => ApiResponse::json(
            503,
            &json!({ "status": "unavailable", "error": { "kind": "storage", "message": format!("the key-value store does not answer: {message}") } }),
        ),
        Err(_) => ApiResponse::json(503, &json!({ "status": "unavailable" })),
    }
}

/// The key `/healthz` reads.
const HEALTH_PROBE_KEY: &str = "healthz";

fn respond(result: Result<(u16, Value), StructureError>) -> ApiResponse {
    match result {
        Ok((204, _)) => ApiResponse::empty(204),
        Ok((status, body)) => ApiResponse::json(status, &body),
        Err(error) => ApiResponse::from_error(&error),
    }
}

/// The other routes, once the caller is known.
fn rest(
    segments: &[&str],
    method: &str,
    caller: &Caller,
    ports: &Ports<'_>,
) -> Result<(u16, Value), StructureError> {
    let scope = &caller.scope;
    match (segments, method) {
        (["v1", "tool"], _) => Ok((200, tool_definition::for_scope(ports.key_value, scope)?)),
        (["v1", "schemas"], _) => {
            let list = Registry::new(ports.key_value, scope).list()?;
            Ok((200, json!({ "schemas": list })))
        }
        (["v1", "me"], _) => {
            let role = caller.role.name();
            Ok((
                200,
                json!({ "tenant": scope.tenant, "project": scope.project, "role": role, "name": caller.name }),
            ))
        }
        _ => Err(StructureError::invalid_request("path", "no such route")),
    }
}

/// Why a body is not usable JSON.
enum BodyError {
    MediaType(String),
    NotUtf8(String),
    NotJson(String),
}

impl BodyError {
    fn response(self) -> ApiResponse {
        match self {
            BodyError::MediaType(media_type) => ApiResponse::error(
                415,
                "unsupported-media-type",
                &format!("send the body as application/json, not {media_type}"),
                json!({}),
            ),
            BodyError::NotUtf8(message) | BodyError::NotJson(message) => {
                ApiResponse::from_error(&StructureError::invalid_request("body", message))
            }
        }
    }
}

/// The body as JSON: an allowed content type (JSON, or none), UTF-8, well-formed.
fn json_body(request: &ApiRequest) -> Result<Value, BodyError> {
    if let Some(content_type) = request.header("content-type") {
        let media_type = content_type
            .split(';')
            .next()
            .unwrap_or_default()
            .trim()
            .to_ascii_lowercase();
        if media_type != "application/json" && !media_type.ends_with("+json") {
            return Err(BodyError::MediaType(media_type));
        }
    }
    let text = std::str::from_utf8(&request.body)
        .map_err(|error| BodyError::NotUtf8(format!("the body is not UTF-8: {error}")))?;
    serde_json::from_str(text)
        .map_err(|error| BodyError::NotJson(format!("the body is not valid JSON: {error}")))
}
