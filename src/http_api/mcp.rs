//! The Model Context Protocol over Streamable HTTP (`POST /mcp`): JSON-RPC 2.0, one message per
//! request, one JSON response per request (no SSE, no sessions).
//!
//! Both eras of the protocol are served, chosen per message: the handshake era (`initialize`,
//! protocol versions 2025-11-25, 2025-06-18, 2025-03-26, 2024-11-05) and the stateless era
//! (2026-07-28: `server/discover`, the version in every request's `_meta` and headers, `resultType`
//! on every result, cache hints on list and read results). The tool is `structure`, its input and
//! output schemas the tool definition's; the registry's schemas are resources
//! (`structure://schemas/<name>`). Tool failures are results with `isError`, protocol failures
//! JSON-RPC errors.

use base64::Engine;
use serde_json::{Map, Value, json};

use crate::http_api::auth::Caller;
use crate::http_api::exchange::{ApiRequest, ApiResponse};
use crate::ports::Ports;
use crate::request::StructureRequest;
use crate::schema::registry::Registry;
use crate::{api, tool_definition};

/// The stateless protocol version.
pub const MODERN: &str = "2026-07-28";
/// Handshake-era versions, newest first.
pub const LEGACY: [&str; 4] = ["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"];
const VERSION_META: &str = "io.modelcontextprotocol/protocolVersion";
const RESOURCE_PREFIX: &str = "structure://schemas/";
const SCHEMA_MIME: &str = "application/schema+json";

const PARSE_ERROR: i64 = -32700;
const INVALID_REQUEST: i64 = -32600;
const METHOD_NOT_FOUND: i64 = -32601;
const INVALID_PARAMS: i64 = -32602;
const RESOURCE_NOT_FOUND: i64 = -32002;
const HEADER_MISMATCH: i64 = -32020;
const UNSUPPORTED_VERSION: i64 = -32022;

/// Which protocol era a message speaks.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Era {
    Legacy,
    Modern,
}

/// A protocol failure: its HTTP status and JSON-RPC error.
struct Failure {
    status: u16,
    code: i64,
    message: String,
    data: Option<Value>,
}

fn failure(status: u16, code: i64, message: impl Into<String>) -> Failure {
    Failure {
        status,
        code,
        message: message.into(),
        data: None,
    }
}

/// Serves one JSON-RPC message (the body is already JSON; a body that is not was answered by
/// the HTTP layer).
pub fn handle(
    body: &Value,
    caller: &Caller,
    request: &ApiRequest,
    ports: &Ports<'_>,
) -> ApiResponse {
    let Value::Object(message) = body else {
        let reason = if body.is_array() {
            "batches are not supported: send one message per request"
        } else {
            "a JSON-RPC message is an object"
        };
        return error_response(&Value::Null, failure(400, INVALID_REQUEST, reason));
    };
    let id = message.get("id").cloned();
    let method = message.get("method").and_then(Value::as_str);
    let (Some(method), Some(id)) = (method, id.clone()) else {
        // Notifications and the client's responses are accepted without an answer.
        if message.get("jsonrpc") == Some(&json!("2.0"))
            && (method.is_some() || message.contains_key("result") || message.contains_key("error"))
        {
            return ApiResponse::empty(202);
        }
        return error_response(
            &id.unwrap_or(Value::Null),
            failure(400, INVALID_REQUEST, "not a JSON-RPC 2.0 request"),
        );
    };
    if message.get("jsonrpc") != Some(&json!("2.0")) || !(id.is_string() || id.is_number()) {
        return error_response(
            &id,
            failure(
                400,
                INVALID_REQUEST,
                "not a JSON-RPC 2.0 request (jsonrpc \"2.0\" and a string or number id)",
            ),
        );
    }
    let params = message.get("params").cloned().unwrap_or_else(|| json!({}));
    let era = match era_of(method, &params, request) {
        Ok(era) => era,
        Err(failure) => return error_response(&id, failure),
    };
    match dispatch(method, &params, era, caller, request, ports) {
        Ok(mut result) => {
            if era == Era::Modern {
                result.insert("resultType".into(), json!("complete"));
                result.insert(
                    "_meta".into(),
                    json!({ "io.modelcontextprotocol/serverInfo": server_info() }),
                );
            }
            ApiResponse::json(
                200,
                &json!({ "jsonrpc": "2.0", "id": id, "result": result }),
            )
        }
        Err(failure) => error_response(&id, failure),
    }
}

fn error_response(id: &Value, failure: Failure) -> ApiResponse {
    let mut error = json!({ "code": failure.code, "message": failure.message });
    if let Some(data) = failure.data {
        error["data"] = data;
    }
    ApiResponse::json(
        failure.status,
        &json!({ "jsonrpc": "2.0", "id": id, "error": error }),
    )
}

/// The era of a message, its headers checked against it.
fn era_of(method: &str, params: &Value, request: &ApiRequest) -> Result<Era, Failure> {
    let header_version = request.header("mcp-protocol-version").map(str::trim);
    let meta_version = params
        .pointer(&format!("/_meta/{}", VERSION_META.replace('/', "~1")))
        .and_then(Value::as_str);
    if method == "initialize" || meta_version.is_none() {
        return match header_version {
            Some(version)
                if method != "initialize" && !LEGACY.contains(&version) && version != MODERN =>
            {
                Err(failure(
                    400,
                    INVALID_REQUEST,
                    format!("unsupported MCP-Protocol-Version {version:?}"),
                ))
            }
            _ => Ok(Era::Legacy),
        };
    }
    let version = meta_version.unwrap_or_default();
    if version != MODERN {
        let mut unsupported = failure(
            400,
            UNSUPPORTED_VERSION,
            format!("protocol version {version:?} is not supported"),
        );
        unsupported.data = Some(json!({ "supported": supported_versions(), "requested": version }));
        return Err(unsupported);
    }
    if header_version != Some(MODERN) {
        return Err(failure(
            400,
            HEADER_MISMATCH,
            "the MCP-Protocol-Version header must match the request's protocol version",
        ));
    }
    if request.header("mcp-method").map(str::trim) != Some(method) {
        return Err(failure(
            400,
            HEADER_MISMATCH,
            "the Mcp-Method header must name the request's method",
        ));
    }
    let named = match method {
        "tools/call" => params.get("name"),
        "resources/read" => params.get("uri"),
        _ => None,
    };
    if let Some(Value::String(named)) = named
        && request
            .header("mcp-name")
            .map(decode_header_value)
            .as_deref()
            != Some(named.as_str())
    {
        return Err(failure(
            400,
            HEADER_MISMATCH,
            "the Mcp-Name header must name the tool or resource",
        ));
    }
    Ok(Era::Modern)
}

/// `=?base64?<base64 of UTF-8>?=` → its text; anything else as it is.
fn decode_header_value(value: &str) -> String {
    let value = value.trim();
    value
        .strip_prefix("=?base64?")
        .and_then(|rest| rest.strip_suffix("?="))
        .and_then(|encoded| {
            base64::engine::general_purpose::STANDARD
                .decode(encoded)
                .ok()
        })
        .and_then(|bytes| String::from_utf8(bytes).ok())
        .unwrap_or_else(|| value.to_owned())
}

fn supported_versions() -> Vec<&'static str> {
    let mut versions = vec![MODERN];
    versions.extend(LEGACY);
    versions
}

fn server_info() -> Value {
    json!({ "name": "structure", "title": "structure", "version": env!("CARGO_PKG_VERSION") })
}

const INSTRUCTIONS: &str = "Call the structure tool to turn free text into a JSON object that validates \
    against a JSON Schema: an inline schema, a registry name (schemaMode named; the registry's schemas \
    are listed as resources) or a description (schemaMode text). A need-more-input result says what to \
    ask the user.";

/// Cache hints for list and read results (2026-07-28): answers depend on the caller's token.
fn cacheable(mut result: Map<String, Value>, era: Era) -> Map<String, Value> {
    if era == Era::Modern {
        result.insert("ttlMs".into(), json!(0));
        result.insert("cacheScope".into(), json!("private"));
    }
    result
}

fn object(value: Value) -> Map<String, Value> {
    match value {
        Value::Object(map) => map,
        _ => Map::new(),
    }
}

fn dispatch(
    method: &str,
    params: &Value,
    era: Era,
    caller: &Caller,
    request: &ApiRequest,
    ports: &Ports<'_>,
) -> Result<Map<String, Value>, Failure> {
    let capabilities = json!({ "tools": { "listChanged": false }, "resources": { "subscribe": false, "listChanged": false } });
    match (method, era) {
        ("initialize", _) => {
            let asked = params
                .get("protocolVersion")
                .and_then(Value::as_str)
                .unwrap_or_default();
            let version = LEGACY
                .iter()
                .find(|version| **version == asked)
                .copied()
                .unwrap_or(LEGACY[0]);
            Ok(object(json!({
                "protocolVersion": version,
                "capabilities": capabilities,
                "serverInfo": server_info(),
                "instructions": INSTRUCTIONS,
            })))
        }
        ("server/discover", _) => Ok(cacheable(
            object(
                json!({ "supportedVersions": supported_versions(), "capabilities": capabilities, "instructions": INSTRUCTIONS }),
            ),
            era,
        )),
        ("ping", Era::Legacy) => Ok(Map::new()),
        ("tools/list", _) => {
            let definition = tool_definition::for_scope(ports.key_value, &caller.scope)
                .map_err(|error| failure(200, -32603, error.message))?;
            Ok(cacheable(
                object(json!({ "tools": [tool(definition)] })),
                era,
            ))
        }
        ("tools/call", _) => call_tool(params, caller, ports),
        ("resources/list", _) => {
            let schemas = Registry::new(ports.key_value, &caller.scope)
                .list()
                .map_err(|error| failure(200, -32603, error.message))?;
            let resources: Vec<Value> = schemas
                .into_iter()
                .map(|info| {
                    json!({
                        "uri": format!("{RESOURCE_PREFIX}{}", info.name),
                        "name": info.name,
                        "title": info.title,
                        "description": info.description,
                        "mimeType": SCHEMA_MIME,
                    })
                })
                .collect();
            Ok(cacheable(object(json!({ "resources": resources })), era))
        }
        ("resources/templates/list", _) => {
            Ok(cacheable(object(json!({ "resourceTemplates": [] })), era))
        }
        ("resources/read", _) => read_resource(params, era, caller, ports),
        (other, Era::Modern) => {
            let _ = request;
            Err(failure(
                404,
                METHOD_NOT_FOUND,
                format!("method {other:?} not found"),
            ))
        }
        (other, Era::Legacy) => Err(failure(
            200,
            METHOD_NOT_FOUND,
            format!("method {other:?} not found"),
        )),
    }
}

/// The tool as MCP lists it: the tool definition's description and schemas.
fn tool(definition: Value) -> Value {
    json!({
        "name": definition["name"],
        "title": "Structure text into validated JSON",
        "description": definition["description"],
        "inputSchema": definition["parameters"],
        "outputSchema": definition["returns"],
        "annotations": { "readOnlyHint": true, "destructiveHint": false, "idempotentHint": false, "openWorldHint": true },
    })
}

fn call_tool(
    params: &Value,
    caller: &Caller,
    ports: &Ports<'_>,
) -> Result<Map<String, Value>, Failure> {
    let name = params
        .get("name")
        .and_then(Value::as_str)
        .unwrap_or_default();
    if name != "structure" {
        return Err(failure(
            200,
            INVALID_PARAMS,
            format!("Unknown tool: {name}"),
        ));
    }
    let arguments = params
        .get("arguments")
        .cloned()
        .unwrap_or_else(|| json!({}));
    let started = ports.clock.now_unix_millis();
    let result = StructureRequest::from_tool_arguments(&arguments)
        .and_then(|request| api::structure(&request, &caller.scope, ports));
    let answered = match &result {
        Ok(outcome) => outcome.to_json(),
        Err(error) => error.to_json(),
    };
    super::insights::record(&arguments, &answered, started, &caller.scope, ports);
    Ok(match result {
        Ok(_) => {
            let structured = answered;
            object(json!({
                "content": [{ "type": "text", "text": structured.to_string() }],
                "structuredContent": structured,
                "isError": false,
            }))
        }
        Err(error) => object(json!({
            "content": [{ "type": "text", "text": error.message }],
            "structuredContent": answered,
            "isError": true,
        })),
    })
}

fn read_resource(
    params: &Value,
    era: Era,
    caller: &Caller,
    ports: &Ports<'_>,
) -> Result<Map<String, Value>, Failure> {
    let uri = params
        .get("uri")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let not_found = || {
        let (status, code) = if era == Era::Modern {
            (200, INVALID_PARAMS)
        } else {
            (200, RESOURCE_NOT_FOUND)
        };
        let mut missing = failure(status, code, format!("Resource not found: {uri}"));
        missing.data = Some(json!({ "uri": uri }));
        missing
    };
    let name = uri.strip_prefix(RESOURCE_PREFIX).ok_or_else(not_found)?;
    let found = Registry::new(ports.key_value, &caller.scope)
        .find(name)
        .map_err(|_| not_found())?;
    Ok(cacheable(
        object(
            json!({ "contents": [{ "uri": uri, "mimeType": SCHEMA_MIME, "text": found.schema.to_string() }] }),
        ),
        era,
    ))
}

/// JSON-RPC's answer to a body that is not JSON.
pub fn parse_error(message: &str) -> ApiResponse {
    error_response(&Value::Null, failure(400, PARSE_ERROR, message))
}
