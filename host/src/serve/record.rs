//! What one request of `structure serve` was, read from the exchange itself: the route, the
//! caller's tenant and project (from the token, as the component reads it), the schema asked
//! for, and the outcome or error the component answered (also inside MCP's `tools/call`
//! results). The access log, the metrics and the traces are all made from it. It never holds
//! the prompt, the data, a token or a key.

use std::time::{Duration, SystemTime};

use serde_json::{Value, json};
use structure::ports::Config;
use structure::{Asked, Usage, authenticate, schema_label};

use crate::config::Settings;

/// One request, as the log, the metrics and the traces see it.
#[derive(Debug, Clone, PartialEq)]
pub struct Record {
    pub started: SystemTime,
    pub method: String,
    /// The path with names left out: `/v1/schemas/{name}`.
    pub route: String,
    /// The HTTP status code.
    pub code: u16,
    pub tenant: Option<String>,
    pub project: Option<String>,
    /// The registry name asked for once the call showed it exists (else `unknown`), or how the
    /// schema came: `inline`, `text`, `examples`.
    pub schema: Option<String>,
    pub schema_origin: Option<String>,
    /// `ok`, `need-more-input` or `stale`.
    pub status: Option<String>,
    pub iterations: Option<u32>,
    pub usage: Usage,
    /// `provider/model` as called.
    pub model: Option<String>,
    pub latency: Duration,
    pub error_kind: Option<String>,
    /// The category of each violation fed back.
    pub reasons: Vec<String>,
    /// The caller's span, when it sent a W3C `traceparent`: the request's span joins its trace.
    pub parent: Option<TraceParent>,
}

/// A W3C trace context's ids (`traceparent: 00-<trace id>-<parent id>-<flags>`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TraceParent {
    pub trace_id: [u8; 16],
    pub span_id: [u8; 8],
}

impl TraceParent {
    /// The ids of a `traceparent` header; `None` for one that is not valid (which the W3C
    /// says to ignore: the request starts a trace of its own).
    pub fn parse(header: &str) -> Option<Self> {
        let mut parts = header.trim().split('-');
        let (version, trace, span, flags) =
            (parts.next()?, parts.next()?, parts.next()?, parts.next()?);
        let valid_version =
            version.len() == 2 && version != "ff" && (version != "00" || parts.next().is_none());
        if !valid_version || flags.len() != 2 || !flags.bytes().all(|b| b.is_ascii_hexdigit()) {
            return None;
        }
        let trace_id: [u8; 16] = hex_bytes(trace)?;
        let span_id: [u8; 8] = hex_bytes(span)?;
        let zero = |bytes: &[u8]| bytes.iter().all(|byte| *byte == 0);
        (!zero(&trace_id) && !zero(&span_id)).then_some(Self { trace_id, span_id })
    }
}

/// `N` bytes written as 2N lower-case hex digits.
fn hex_bytes<const N: usize>(text: &str) -> Option<[u8; N]> {
    if text.len() != 2 * N || !text.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f')) {
        return None;
    }
    let mut bytes = [0u8; N];
    for (index, byte) in bytes.iter_mut().enumerate() {
        *byte = u8::from_str_radix(&text[2 * index..2 * index + 2], 16).ok()?;
    }
    Some(bytes)
}

/// The exchange a record is read from.
pub struct Exchange<'a> {
    pub method: &'a str,
    pub path: &'a str,
    pub authorization: Option<&'a str>,
    pub traceparent: Option<&'a str>,
    pub request_body: &'a [u8],
    pub code: u16,
    pub response_body: &'a [u8],
}

impl Record {
    /// The record of `exchange`, which started at `started` and took `latency`.
    pub fn new(
        exchange: &Exchange<'_>,
        settings: &Settings,
        started: SystemTime,
        latency: Duration,
    ) -> Self {
        let route = route(exchange.path);
        let mut record = Record {
            started,
            method: exchange.method.to_owned(),
            route,
            code: exchange.code,
            tenant: None,
            project: None,
            schema: None,
            schema_origin: None,
            status: None,
            iterations: None,
            usage: Usage::default(),
            model: None,
            latency,
            error_kind: None,
            reasons: Vec::new(),
            parent: exchange.traceparent.and_then(TraceParent::parse),
        };
        if let Ok(caller) = authenticate(exchange.authorization, &HostConfig(settings)) {
            record.tenant = Some(caller.scope.tenant);
            record.project = caller.scope.project;
        }
        let request = serde_json::from_slice::<Value>(exchange.request_body).unwrap_or_default();
        let response = serde_json::from_slice::<Value>(exchange.response_body).unwrap_or_default();
        let asked = match record.route.as_str() {
            "/v1/structure" => {
                record.read_result(&response);
                Asked::of_arguments(&request)
            }
            "/mcp" if request.get("method").and_then(Value::as_str) == Some("tools/call") => {
                record.read_result(&response["result"]["structuredContent"]);
                Asked::of_arguments(&request["params"]["arguments"])
            }
            "/v1/schemas/{name}" => {
                record.read_result(&response);
                exchange
                    .path
                    .split(['?', '#'])
                    .next()
                    .and_then(|path| path.rsplit('/').next())
                    .map(|name| Asked::Name(name.to_owned()))
            }
            _ => {
                record.read_result(&response);
                None
            }
        };
        record.schema = asked.map(|asked| record.schema_label(asked));
        record
    }

    /// An outcome's fields, or an error's kind.
    fn read_result(&mut self, result: &Value) {
        if let Some(kind) = result.pointer("/error/kind").and_then(Value::as_str) {
            self.error_kind = Some(kind.to_owned());
            self.usage = structure::outcome::usage_in(result);
            return;
        }
        let Some(status) = result.get("status").and_then(Value::as_str) else {
            return;
        };
        if !matches!(status, "ok" | "need-more-input" | "stale") {
            return;
        }
        self.status = Some(status.to_owned());
        self.iterations = result
            .get("iterations")
            .and_then(Value::as_u64)
            .map(|n| n as u32);
        self.schema_origin = text(result, "/schemaOrigin");
        self.model = text(result, "/trace/model");
        self.usage = structure::outcome::usage_in(result);
        self.reasons = result
            .pointer("/trace/reasons")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|reason| reason.get("category").and_then(Value::as_str))
            .map(str::to_owned)
            .collect();
    }

    /// What the metrics and the log call the schema, as the insights do
    /// ([`structure::schema_label`]), and only for an authenticated caller; a schema
    /// route's name once the route answered 2xx.
    fn schema_label(&self, asked: Asked) -> String {
        let named = matches!(asked, Asked::Name(_));
        if named && self.tenant.is_none() {
            return "unknown".to_owned();
        }
        match (asked, self.route.as_str()) {
            (Asked::Name(name), "/v1/schemas/{name}") if (200..300).contains(&self.code) => name,
            (Asked::Name(_), "/v1/schemas/{name}") => "unknown".to_owned(),
            (asked, _) => schema_label(
                asked,
                self.schema_origin.as_deref(),
                self.error_kind.as_deref(),
            ),
        }
    }

    /// The status the metrics count it under: the outcome's, `error`, or `http-<code>` for the
    /// routes that have no outcome.
    pub fn status_label(&self) -> String {
        match (&self.status, &self.error_kind) {
            (Some(status), _) => status.clone(),
            (None, Some(_)) => "error".to_owned(),
            (None, None) => format!("http-{}", self.code),
        }
    }

    /// One JSON line for the access log.
    pub fn log_line(&self) -> String {
        let time = self
            .started
            .duration_since(SystemTime::UNIX_EPOCH)
            .map(|since| since.as_millis() as u64)
            .unwrap_or_default();
        json!({
            "time": structure::time::rfc3339(time),
            "method": self.method,
            "route": self.route,
            "code": self.code,
            "tenant": self.tenant,
            "project": self.project,
            "schema": self.schema,
            "schemaOrigin": self.schema_origin,
            "status": self.status,
            "iterations": self.iterations,
            "llmCalls": self.usage.llm_calls,
            "promptTokens": self.usage.prompt_tokens,
            "completionTokens": self.usage.completion_tokens,
            "cachedPromptTokens": self.usage.cached_prompt_tokens,
            "latencyMs": (self.latency.as_secs_f64() * 1000.0 * 10.0).round() / 10.0,
            "errorKind": self.error_kind,
        })
        .to_string()
    }
}

/// The host's settings as the core's config port, for reading tokens as the component does.
pub(super) struct HostConfig<'a>(pub(super) &'a Settings);

impl Config for HostConfig<'_> {
    fn get(&self, key: &str) -> Result<Option<String>, String> {
        Ok(self.0.get(key).map(str::to_owned))
    }
}

/// The path with names left out.
fn route(path: &str) -> String {
    let path = path.split(['?', '#']).next().unwrap_or_default();
    let segments: Vec<&str> = path.trim_end_matches('/').split('/').skip(1).collect();
    match segments.as_slice() {
        ["v1", "schemas", _] => "/v1/schemas/{name}".to_owned(),
        [] => "/".to_owned(),
        _ => path.trim_end_matches('/').to_owned(),
    }
}

fn text(value: &Value, pointer: &str) -> Option<String> {
    value
        .pointer(pointer)
        .and_then(Value::as_str)
        .map(str::to_owned)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_structure_call_is_read_from_its_exchange_without_its_text() {
        let settings = Settings::new().set(
            "structure_api_tokens",
            r#"[{"token": "t-1", "tenant": "acme", "project": "web", "role": "user"}]"#,
        );
        let request =
            json!({ "prompt": "Ada, ada@example.org", "schema": "contact", "schemaMode": "named" });
        let response = json!({
            "status": "ok", "data": { "name": "Ada" }, "sources": [], "schemaOrigin": "registry:bundled",
            "iterations": 2, "usage": { "llmCalls": 2, "promptTokens": 100, "completionTokens": 20, "cachedPromptTokens": 0 },
            "trace": { "model": "openai/gpt-4.1-mini", "reasons": [{ "iteration": 1, "pointer": "/email", "category": "format" }] }
        });
        let (request, response) = (request.to_string(), response.to_string());
        let exchange = Exchange {
            method: "POST",
            path: "/v1/structure?x=1",
            authorization: Some("Bearer t-1"),
            traceparent: None,
            request_body: request.as_bytes(),
            code: 200,
            response_body: response.as_bytes(),
        };
        let record = Record::new(
            &exchange,
            &settings,
            SystemTime::UNIX_EPOCH,
            Duration::from_millis(12),
        );
        assert_eq!(
            (record.tenant.as_deref(), record.project.as_deref()),
            (Some("acme"), Some("web"))
        );
        assert_eq!(record.schema.as_deref(), Some("contact"));
        assert_eq!(
            (record.status.as_deref(), record.iterations),
            (Some("ok"), Some(2))
        );
        assert_eq!(record.usage.prompt_tokens, 100);
        assert_eq!(record.reasons, ["format"]);
        let line = record.log_line();
        assert!(!line.contains("Ada") && !line.contains("t-1"), "{line}");
        assert_eq!(route("/v1/schemas/lead"), "/v1/schemas/{name}");
    }

    #[test]
    fn a_schema_name_is_a_label_only_once_the_call_showed_it_exists() {
        let settings = Settings::new().set(
            "structure_api_tokens",
            r#"[{"token": "t-1", "tenant": "acme", "role": "admin"}]"#,
        );
        let label = |method: &str,
                     path: &str,
                     token: Option<&str>,
                     request: Value,
                     code: u16,
                     response: Value| {
            let (request, response) = (request.to_string(), response.to_string());
            let exchange = Exchange {
                method,
                path,
                authorization: token,
                traceparent: None,
                request_body: request.as_bytes(),
                code,
                response_body: response.as_bytes(),
            };
            Record::new(&exchange, &settings, SystemTime::UNIX_EPOCH, Duration::ZERO).schema
        };
        let named = json!({ "prompt": "p", "schema": "x-7f3a", "schemaMode": "named" });
        let not_found = json!({ "error": { "kind": "schema-not-found" } });
        let ok = json!({ "status": "ok", "schemaOrigin": "registry:tenant" });
        let provider = json!({ "error": { "kind": "provider" } });
        let unauthorized = json!({ "error": { "kind": "unauthorized" } });
        let cases = [
            (None, named.clone(), 401, unauthorized.clone(), "unknown"),
            (Some("Bearer t-1"), named.clone(), 404, not_found, "unknown"),
            (Some("Bearer t-1"), named.clone(), 200, ok.clone(), "x-7f3a"),
            (Some("Bearer t-1"), named.clone(), 502, provider, "x-7f3a"),
            (Some("Bearer wrong"), named, 200, ok, "unknown"),
            (
                None,
                json!({ "prompt": "p", "schema": {} }),
                401,
                unauthorized.clone(),
                "inline",
            ),
            (
                None,
                json!({ "prompt": "p", "schema": "a", "schemaMode": "text" }),
                401,
                unauthorized,
                "text",
            ),
        ];
        for (token, request, code, response, expected) in cases {
            let found = label(
                "POST",
                "/v1/structure",
                token,
                request.clone(),
                code,
                response,
            );
            assert_eq!(found.as_deref(), Some(expected), "{token:?} {request}");
        }
        let route = |token, code| {
            label(
                "GET",
                "/v1/schemas/x-7f3a",
                token,
                Value::Null,
                code,
                Value::Null,
            )
        };
        assert_eq!(route(Some("Bearer t-1"), 200).as_deref(), Some("x-7f3a"));
        assert_eq!(route(Some("Bearer t-1"), 404).as_deref(), Some("unknown"));
        assert_eq!(route(None, 401).as_deref(), Some("unknown"));
    }

    #[test]
    fn a_traceparent_is_read_as_the_w3c_says() {
        let parent =
            TraceParent::parse("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01").unwrap();
        assert_eq!(parent.trace_id[0], 0x4b);
        assert_eq!(parent.span_id[7], 0xb7);
        for invalid in [
            "00-00000000000000000000000000000000-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",
            "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
            "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra",
            "00-4bf92f3577b34da6a3ce929d0e0e47-00f067aa0ba902b7-01",
            "garbage",
        ] {
            assert_eq!(TraceParent::parse(invalid), None, "{invalid}");
        }
        assert!(
            TraceParent::parse("01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-later")
                .is_some(),
            "a later version may add fields"
        );
    }
}
