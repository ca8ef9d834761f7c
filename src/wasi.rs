//! The WebAssembly component: the exported `structure:tool/structuring` interface, and the
//! ports implemented over WASI (`wasi:http/outgoing-handler`, `wasi:config/store`,
//! `wasi:keyvalue/store`). All WASI and wit-bindgen glue lives in this module.

use std::cell::OnceCell;
use std::time::Duration;

use crate::http_api::{ApiRequest, ApiResponse};
use crate::ports::{
    Config, HttpRequest, HttpResponse, KeyValue, Ports, SystemClock, Transport, TransportError,
};
use crate::{
    Answer, ErrorKind, Outcome, SchemaInput, Scope, StructureError, StructureRequest, Usage,
};
use serde_json::{Map, Value};

wit_bindgen::generate!({
    world: "structure",
    path: "wit",
    generate_all,
});

use exports::structure::tool::structuring as api;
use wasi::http::types as http;
use wasi::io::streams::StreamError;

struct Component;

export!(Component);

impl api::Guest for Component {
    fn structure(scope: api::Scope, request: api::Request) -> Result<api::Outcome, api::Error> {
        let scope = to_scope(scope)?;
        let schema = match request.schema {
            api::SchemaInput::Inline(text) => SchemaInput::Inline(parse_json("schema", &text)?),
            api::SchemaInput::Named(name) => SchemaInput::Named(name),
            api::SchemaInput::Described(text) => SchemaInput::Described(text),
            api::SchemaInput::Examples(text) => match parse_json("schema", &text)? {
                Value::Array(examples) => SchemaInput::Examples(examples),
                example => SchemaInput::Examples(vec![example]),
            },
        };
        let settings = match request.settings {
            None => Map::new(),
            Some(text) => match parse_json("settings", &text)? {
                Value::Object(settings) => settings,
                _ => {
                    return Err(invalid(
                        "settings",
                        "settings must be a JSON object of overrides",
                    ));
                }
            },
        };
        let request = StructureRequest::new(request.prompt, schema, request.max_loops)
            .map_err(to_wit_error)?
            .with_settings(settings);
        with_ports(|ports| crate::structure(&request, &scope, ports))
            .map(to_wit_outcome)
            .map_err(to_wit_error)
    }

    fn call_tool(scope: api::Scope, arguments: String) -> Result<String, api::Error> {
        let scope = to_scope(scope)?;
        let arguments = parse_json("arguments", &arguments)?;
        with_ports(|ports| crate::call_tool(&arguments, &scope, ports))
            .map(|outcome| outcome.to_string())
            .map_err(to_wit_error)
    }

    fn tool_definition() -> String {
        crate::tool_definition().to_string()
    }

    fn list_schemas(scope: api::Scope) -> Result<Vec<api::SchemaInfo>, api::Error> {
        let scope = to_scope(scope)?;
        with_ports(|ports| crate::list_schemas(&scope, ports))
            .map(|list| list.into_iter().map(to_wit_info).collect())
            .map_err(to_wit_error)
    }

    fn get_schema(scope: api::Scope, name: String) -> Result<api::RegisteredSchema, api::Error> {
        let scope = to_scope(scope)?;
        with_ports(|ports| crate::get_schema(&scope, &name, ports))
            .map(|found| api::RegisteredSchema {
                info: to_wit_info(found.info()),
                schema: found.schema.to_string(),
                manual: found.manual,
            })
            .map_err(to_wit_error)
    }

    fn register_schema(
        scope: api::Scope,
        registration: api::Registration,
    ) -> Result<api::SchemaInfo, api::Error> {
        let scope = to_scope(scope)?;
        let registration = crate::Registration {
            name: registration.name,
            schema: parse_json("schema", &registration.schema)?,
            manual: registration.manual,
            version: registration.version,
        };
        with_ports(|ports| crate::register_schema(&scope, registration, ports))
            .map(to_wit_info)
            .map_err(to_wit_error)
    }

    fn register_skill(scope: api::Scope, skill: api::Skill) -> Result<api::SchemaInfo, api::Error> {
        let scope = to_scope(scope)?;
        let skill = crate::SkillFiles {
            skill_md: skill.skill_md,
            files: skill.files,
        };
        with_ports(|ports| crate::register_skill(&scope, &skill, ports))
            .map(to_wit_info)
            .map_err(to_wit_error)
    }

    fn deregister_schema(scope: api::Scope, name: String) -> Result<bool, api::Error> {
        let scope = to_scope(scope)?;
        with_ports(|ports| crate::deregister_schema(&scope, &name, ports)).map_err(to_wit_error)
    }

    fn get_settings(scope: api::Scope) -> Result<String, api::Error> {
        let scope = to_scope(scope)?;
        with_ports(|ports| crate::settings_of(&scope, ports))
            .map(|settings| settings.to_string())
            .map_err(to_wit_error)
    }

    fn set_settings(scope: api::Scope, overrides: String) -> Result<(), api::Error> {
        let scope = to_scope(scope)?;
        let Value::Object(overrides) = parse_json("settings", &overrides)? else {
            return Err(invalid(
                "settings",
                "settings must be a JSON object of overrides",
            ));
        };
        with_ports(|ports| crate::set_settings(&scope, &overrides, ports)).map_err(to_wit_error)
    }
}

fn to_scope(scope: api::Scope) -> Result<Scope, api::Error> {
    Scope::new(&scope.tenant, scope.project.as_deref()).map_err(to_wit_error)
}

fn parse_json(field: &str, text: &str) -> Result<Value, api::Error> {
    serde_json::from_str(text)
        .map_err(|error| invalid(field, &format!("{field} is not valid JSON: {error}")))
}

fn invalid(field: &str, message: &str) -> api::Error {
    to_wit_error(StructureError::invalid_request(field, message))
}

fn to_wit_info(info: crate::SchemaInfo) -> api::SchemaInfo {
    api::SchemaInfo {
        name: info.name,
        title: info.title,
        description: info.description,
        version: info.version,
        origin: info.origin,
        has_manual: info.has_manual,
    }
}

impl exports::wasi::http::incoming_handler::Guest for Component {
    fn handle(request: http::IncomingRequest, response_out: http::ResponseOutparam) {
        let response = with_ports(|ports| {
            let limit = crate::http_api::max_body_bytes(ports);
            match read_request(request, limit) {
                Ok(request) => crate::http_api::handle(&request, ports),
                Err(response) => response,
            }
        });
        send_response(response, response_out);
    }
}

/// The incoming request, its body read up to `limit` bytes (a larger one is a 413 at once).
fn read_request(request: http::IncomingRequest, limit: usize) -> Result<ApiRequest, ApiResponse> {
    let method = match request.method() {
        http::Method::Get => "GET".to_owned(),
        http::Method::Head => "HEAD".to_owned(),
        http::Method::Post => "POST".to_owned(),
        http::Method::Put => "PUT".to_owned(),
        http::Method::Delete => "DELETE".to_owned(),
        http::Method::Connect => "CONNECT".to_owned(),
        http::Method::Options => "OPTIONS".to_owned(),
        http::Method::Trace => "TRACE".to_owned(),
        http::Method::Patch => "PATCH".to_owned(),
        http::Method::Other(other) => other,
    };
    let path = request.path_with_query().unwrap_or_else(|| "/".to_owned());
    let headers = request
        .headers()
        .entries()
        .into_iter()
        .map(|(name, value)| (name, String::from_utf8_lossy(&value).into_owned()))
        .collect();
    let unreadable = |message: &str| {
        ApiResponse::from_error(&StructureError::invalid_request(
            "body",
            format!("the request body could not be read: {message}"),
        ))
    };
    let body = request
        .consume()
        .map_err(|()| unreadable("it was already taken"))?;
    let mut bytes = Vec::new();
    {
        let stream = body
            .stream()
            .map_err(|()| unreadable("its stream was already taken"))?;
        loop {
            match stream.blocking_read(64 * 1024) {
                Ok(chunk) => {
                    bytes.extend_from_slice(&chunk);
                    if bytes.len() > limit {
                        return Err(ApiResponse::too_large(limit));
                    }
                }
                Err(StreamError::Closed) => break,
                Err(StreamError::LastOperationFailed(error)) => {
                    return Err(unreadable(&error.to_debug_string()));
                }
            }
        }
    }
    drop(http::IncomingBody::finish(body));
    Ok(ApiRequest {
        method,
        path,
        headers,
        body: bytes,
    })
}

fn send_response(response: ApiResponse, out: http::ResponseOutparam) {
    let headers = http::Fields::new();
    for (name, value) in &response.headers {
        let _ = headers.append(name, value.as_bytes());
    }
    let _ = headers.append("content-length", response.body.len().to_string().as_bytes());
    let outgoing = http::OutgoingResponse::new(headers);
    let _ = outgoing.set_status_code(response.status);
    let Ok(body) = outgoing.body() else {
        return;
    };
    http::ResponseOutparam::set(out, Ok(outgoing));
    if write_body(&body, &response.body).is_ok() {
        let _ = http::OutgoingBody::finish(body, None);
    }
}

/// The ports of one call, over WASI.
fn with_ports<R>(call: impl FnOnce(&Ports<'_>) -> R) -> R {
    let key_value = WasiKeyValue::default();
    call(&Ports {
        transport: &WasiTransport,
        config: &WasiConfig,
        key_value: &key_value,
        clock: &SystemClock,
    })
}

fn to_wit_usage(usage: Usage) -> api::Usage {
    api::Usage {
        llm_calls: usage.llm_calls,
        prompt_tokens: usage.prompt_tokens,
        completion_tokens: usage.completion_tokens,
        cached_prompt_tokens: usage.cached_prompt_tokens,
    }
}

fn to_wit_outcome(outcome: Outcome) -> api::Outcome {
    let (status, data, need, errors) = match outcome.answer {
        Answer::Ok(data) => (api::Status::Ok, Some(data.to_string()), None, Vec::new()),
        Answer::NeedMoreInput(need) => (api::Status::NeedMoreInput, None, Some(need), Vec::new()),
        Answer::Stale(errors) => (api::Status::Stale, None, None, errors),
    };
    api::Outcome {
        status,
        data,
        need,
        errors,
        schema_origin: outcome.schema_origin,
        iterations: outcome.iterations,
        usage: to_wit_usage(outcome.usage),
        trace: api::Trace {
            model: outcome.trace.model,
            provider_profile: outcome.trace.provider_profile,
            delivery: outcome.trace.delivery,
            schema_transforms: outcome.trace.schema_transforms,
            repairs: outcome.trace.repairs,
            feedback: outcome.trace.feedback,
            retries: outcome.trace.retries,
            schema_builder: outcome
                .trace
                .schema_builder
                .map(|builder| api::BuilderTrace {
                    model: builder.model,
                    cache_hit: builder.cache_hit,
                    usage: to_wit_usage(builder.usage),
                    schema: builder.schema.map(|schema| schema.to_string()),
                }),
        },
    }
}

fn to_wit_error(error: StructureError) -> api::Error {
    let kind = match error.kind {
        ErrorKind::InvalidRequest { field } => api::ErrorKind::InvalidRequest(field),
        ErrorKind::SchemaNotFound { name, suggestions } => {
            api::ErrorKind::SchemaNotFound(api::NotFound { name, suggestions })
        }
        ErrorKind::InvalidSchema => api::ErrorKind::InvalidSchema,
        ErrorKind::Configuration { key } => api::ErrorKind::Configuration(key),
        ErrorKind::Provider {
            status,
            retryable,
            code,
        } => api::ErrorKind::Provider(api::ProviderFailure {
            status,
            retryable,
            code,
        }),
        ErrorKind::Transport => api::ErrorKind::Transport,
        ErrorKind::Refusal => api::ErrorKind::Refusal,
        ErrorKind::Blocked { reason } => api::ErrorKind::Blocked(reason),
        ErrorKind::Truncated => api::ErrorKind::Truncated,
        ErrorKind::InvalidResponse => api::ErrorKind::InvalidResponse,
        ErrorKind::StructuredOutputFailed => api::ErrorKind::StructuredOutputFailed,
        ErrorKind::BudgetExhausted => api::ErrorKind::BudgetExhausted,
        ErrorKind::Storage => api::ErrorKind::Storage,
        ErrorKind::Unsupported => api::ErrorKind::Unsupported,
    };
    api::Error {
        kind,
        message: error.message,
        usage: to_wit_usage(error.usage),
    }
}

/// Settings and secrets from `wasi:config/store` (Spin variables, the host's settings).
struct WasiConfig;

impl Config for WasiConfig {
    fn get(&self, key: &str) -> Result<Option<String>, String> {
        wasi::config::store::get(key).map_err(|error| match error {
            wasi::config::store::Error::Upstream(message)
            | wasi::config::store::Error::Io(message) => message,
        })
    }
}

/// The host's `wasi:keyvalue` store named `default` (as Spin provides it), opened on first use.
#[derive(Default)]
struct WasiKeyValue {
    bucket: OnceCell<Result<wasi::keyvalue::store::Bucket, String>>,
}

impl WasiKeyValue {
    fn bucket(&self) -> Result<&wasi::keyvalue::store::Bucket, String> {
        self.bucket
            .get_or_init(|| {
                wasi::keyvalue::store::open("default").map_err(|error| describe_store(&error))
            })
            .as_ref()
            .map_err(Clone::clone)
    }
}

impl KeyValue for WasiKeyValue {
    fn get(&self, key: &str) -> Result<Option<Vec<u8>>, String> {
        self.bucket()?
            .get(key)
            .map_err(|error| describe_store(&error))
    }

    fn set(&self, key: &str, value: &[u8]) -> Result<(), String> {
        self.bucket()?
            .set(key, value)
            .map_err(|error| describe_store(&error))
    }

    fn delete(&self, key: &str) -> Result<(), String> {
        self.bucket()?
            .delete(key)
            .map_err(|error| describe_store(&error))
    }
}

fn describe_store(error: &wasi::keyvalue::store::Error) -> String {
    match error {
        wasi::keyvalue::store::Error::NoSuchStore => {
            "the host has no key-value store named \"default\"".to_owned()
        }
        wasi::keyvalue::store::Error::AccessDenied => {
            "access to the key-value store was denied".to_owned()
        }
        wasi::keyvalue::store::Error::Other(message) => message.clone(),
    }
}

/// `wasi:http` output streams accept at most this much per write.
const WRITE_CHUNK: usize = 4096;

/// LLM requests through `wasi:http/outgoing-handler`, blocking.
struct WasiTransport;

impl Transport for WasiTransport {
    fn send(&self, request: &HttpRequest) -> Result<HttpResponse, TransportError> {
        let started = std::time::Instant::now();
        let parts = request.url_parts().map_err(TransportError::new)?;
        let headers = http::Fields::new();
        for (name, value) in &request.headers {
            headers.append(name, value.as_bytes()).map_err(|error| {
                TransportError::new(format!("header {name} refused: {error:?}"))
            })?;
        }
        headers
            .append("content-length", request.body.len().to_string().as_bytes())
            .map_err(|error| {
                TransportError::new(format!("header content-length refused: {error:?}"))
            })?;
        let outgoing = http::OutgoingRequest::new(headers);
        let method = match request.method {
            "GET" => http::Method::Get,
            _ => http::Method::Post,
        };
        let scheme = if parts.https {
            http::Scheme::Https
        } else {
            http::Scheme::Http
        };
        let accepted = outgoing.set_method(&method).is_ok()
            && outgoing.set_scheme(Some(&scheme)).is_ok()
            && outgoing.set_authority(Some(&parts.authority)).is_ok()
            && outgoing
                .set_path_with_query(Some(&parts.path_and_query))
                .is_ok();
        if !accepted {
            return Err(TransportError::new(format!(
                "the host refused the request line for {}",
                request.url
            )));
        }
        let body = outgoing
            .body()
            .map_err(|()| TransportError::new("the request body was already taken"))?;
        let future = wasi::http::outgoing_handler::handle(outgoing, Some(options(request.timeout)))
            .map_err(|code| TransportError::new(describe(&code)))?;
        write_body(&body, &request.body)?;
        http::OutgoingBody::finish(body, None)
            .map_err(|code| TransportError::new(describe(&code)))?;
        let response = loop {
            match future.get() {
                Some(Ok(Ok(response))) => break response,
                Some(Ok(Err(code))) => return Err(TransportError::new(describe(&code))),
                Some(Err(())) => return Err(TransportError::new("the response was already taken")),
                None => future.subscribe().block(),
            }
        };
        let status = response.status();
        let headers: Vec<(String, String)> = response
            .headers()
            .entries()
            .into_iter()
            .map(|(name, value)| (name, String::from_utf8_lossy(&value).into_owned()))
            .collect();
        let declared = headers
            .iter()
            .find(|(name, _)| name.eq_ignore_ascii_case("content-length"))
            .and_then(|(_, value)| value.trim().parse::<u64>().ok());
        if declared.is_some_and(|length| length > request.max_response_bytes as u64) {
            return Err(TransportError::new(format!(
                "the response is longer than {} bytes ({})",
                request.max_response_bytes,
                crate::settings::keys::MAX_RESPONSE_BYTES
            )));
        }
        // A body that drips in just fast enough for the between-bytes timeout still has to
        // arrive within the request's time.
        let deadline = started + request.timeout;
        let body = read_body(response, request.max_response_bytes, deadline)?;
        Ok(HttpResponse {
            status,
            headers,
            body,
        })
    }
}

/// Timeouts for one request; a host that does not support an option keeps its own.
fn options(timeout: Duration) -> http::RequestOptions {
    let options = http::RequestOptions::new();
    let nanos = u64::try_from(timeout.as_nanos()).unwrap_or(u64::MAX);
    let connect = nanos.min(30_000_000_000);
    let _ = options.set_connect_timeout(Some(connect));
    let _ = options.set_first_byte_timeout(Some(nanos));
    let _ = options.set_between_bytes_timeout(Some(nanos));
    options
}

fn write_body(body: &http::OutgoingBody, bytes: &[u8]) -> Result<(), TransportError> {
    let stream = body
        .write()
        .map_err(|()| TransportError::new("the request body stream was already taken"))?;
    let chunks: Vec<&[u8]> = bytes.chunks(WRITE_CHUNK).collect();
    for (index, chunk) in chunks.iter().enumerate() {
        match stream.blocking_write_and_flush(chunk) {
            Ok(()) => {}
            // The host closes the stream once content-length bytes arrived.
            Err(StreamError::Closed) if index + 1 == chunks.len() => {}
            Err(StreamError::Closed) => {
                return Err(TransportError::new(
                    "the connection closed while sending the request",
                ));
            }
            Err(StreamError::LastOperationFailed(error)) => {
                return Err(TransportError::new(format!(
                    "sending the request failed: {}",
                    error.to_debug_string()
                )));
            }
        }
    }
    Ok(())
}

fn read_body(
    response: http::IncomingResponse,
    limit: usize,
    deadline: std::time::Instant,
) -> Result<Vec<u8>, TransportError> {
    let body = response
        .consume()
        .map_err(|()| TransportError::new("the response body was already taken"))?;
    let mut bytes = Vec::new();
    {
        let stream = body
            .stream()
            .map_err(|()| TransportError::new("the response body stream was already taken"))?;
        loop {
            match stream.blocking_read(64 * 1024) {
                Ok(chunk) => {
                    if std::time::Instant::now() > deadline {
                        return Err(TransportError::new(
                            "the response did not arrive within the request timeout (structure_request_timeout_ms)",
                        ));
                    }
                    bytes.extend_from_slice(&chunk);
                    if bytes.len() > limit {
                        return Err(TransportError::new(format!(
                            "the response is longer than {limit} bytes ({})",
                            crate::settings::keys::MAX_RESPONSE_BYTES
                        )));
                    }
                }
                Err(StreamError::Closed) => break,
                Err(StreamError::LastOperationFailed(error)) => {
                    return Err(TransportError::new(format!(
                        "the connection failed while reading the response: {}",
                        error.to_debug_string()
                    )));
                }
            }
        }
    }
    let trailers = http::IncomingBody::finish(body);
    drop(trailers);
    Ok(bytes)
}

fn describe(code: &http::ErrorCode) -> String {
    match code {
        http::ErrorCode::DnsError(payload) => format!(
            "DNS lookup failed{}",
            payload.rcode.as_deref().map(|rcode| format!(" ({rcode})")).unwrap_or_default()
        ),
        http::ErrorCode::ConnectionRefused => "connection refused".to_owned(),
        http::ErrorCode::ConnectionTimeout => "connection timed out".to_owned(),
        http::ErrorCode::ConnectionReadTimeout | http::ErrorCode::HttpResponseTimeout => {
            "no answer within the request timeout (structure_request_timeout_ms)".to_owned()
        }
        http::ErrorCode::ConnectionTerminated => "the connection was closed before the answer was complete".to_owned(),
        http::ErrorCode::HttpRequestDenied => {
            "the host does not allow requests to this address (on Spin, add it to allowed_outbound_hosts)".to_owned()
        }
        http::ErrorCode::TlsCertificateError | http::ErrorCode::TlsAlertReceived(_) | http::ErrorCode::TlsProtocolError => {
            "the TLS handshake failed".to_owned()
        }
        other => format!("{other:?}"),
    }
}
