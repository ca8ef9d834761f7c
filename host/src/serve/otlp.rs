//! Traces over OTLP/HTTP (protobuf), to the collector the standard `OTEL_EXPORTER_OTLP_ENDPOINT`
//! names (`http://localhost:4318` → `…/v1/traces`; `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` is taken
//! as it is): a span per request, with a child span per LLM call, named and attributed as the
//! OpenTelemetry GenAI semantic conventions say (`gen_ai.operation.name`, `gen_ai.request.model`,
//! `gen_ai.provider.name`, `gen_ai.usage.input_tokens`, `gen_ai.usage.output_tokens`), plus
//! `structure.status` and `structure.iterations`. Export runs in the background; a collector
//! that is down costs a line on stderr, never a request.

use std::collections::hash_map::RandomState;
use std::hash::{BuildHasher, Hasher};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::SystemTime;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::Request;
use hyper_util::rt::TokioIo;
use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use opentelemetry_proto::tonic::common::v1::{AnyValue, InstrumentationScope, KeyValue, any_value};
use opentelemetry_proto::tonic::resource::v1::Resource;
use opentelemetry_proto::tonic::trace::v1::span::SpanKind;
use opentelemetry_proto::tonic::trace::v1::{ResourceSpans, ScopeSpans, Span, Status, status};
use prost::Message;

use super::record::Record;
use crate::egress::OutgoingCall;

/// Where the spans go.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Exporter {
    /// `http://host:port/v1/traces`.
    url: hyper::Uri,
}

impl Exporter {
    /// The exporter the standard variables configure, if any; `Err` for an endpoint this
    /// exporter cannot send to.
    pub fn from_env() -> Result<Option<Self>, String> {
        let url = match (
            std::env::var("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"),
            std::env::var("OTEL_EXPORTER_OTLP_ENDPOINT"),
        ) {
            (Ok(traces), _) if !traces.trim().is_empty() => traces.trim().to_owned(),
            (_, Ok(base)) if !base.trim().is_empty() => {
                format!("{}/v1/traces", base.trim().trim_end_matches('/'))
            }
            _ => return Ok(None),
        };
        Self::new(&url).map(Some)
    }

    /// Spans to `url` (`http://…/v1/traces`).
    pub fn new(url: &str) -> Result<Self, String> {
        let uri: hyper::Uri = url
            .parse()
            .map_err(|error| format!("the OTLP endpoint {url:?} is not a URL: {error}"))?;
        if uri.scheme_str() != Some("http") || uri.host().is_none() {
            return Err(format!(
                "the OTLP endpoint {url:?} must be http://host:port (run a collector beside the \
                 service, e.g. http://localhost:4318)"
            ));
        }
        Ok(Self { url: uri })
    }

    /// Sends the spans of one request and its LLM calls, in the background.
    pub fn export(&self, record: &Record, calls: &[OutgoingCall]) {
        let body = encode(record, calls);
        let url = self.url.clone();
        tokio::spawn(async move {
            if let Err(error) = post(&url, body).await {
                static SAID: AtomicBool = AtomicBool::new(false);
                if !SAID.swap(true, Ordering::Relaxed) {
                    eprintln!("structure: cannot send traces to {url}: {error} (said once)");
                }
            }
        });
    }
}

async fn post(url: &hyper::Uri, body: Vec<u8>) -> anyhow::Result<()> {
    let host = url.host().unwrap_or("localhost");
    let port = url.port_u16().unwrap_or(80);
    let stream = tokio::net::TcpStream::connect((host, port)).await?;
    let (mut sender, connection) =
        hyper::client::conn::http1::handshake(TokioIo::new(stream)).await?;
    tokio::spawn(connection);
    let request = Request::post(url.path())
        .header("host", format!("{host}:{port}"))
        .header("content-type", "application/x-protobuf")
        .body(Full::new(Bytes::from(body)))?;
    let response = sender.send_request(request).await?;
    let status = response.status();
    let _ = response.into_body().collect().await;
    anyhow::ensure!(status.is_success(), "the collector answered {status}");
    Ok(())
}

/// The request as an `ExportTraceServiceRequest`, protobuf-encoded: a server span for the
/// request and a client span under it for each LLM call.
pub fn encode(record: &Record, calls: &[OutgoingCall]) -> Vec<u8> {
    let trace_id = random_bytes(16);
    let request_span_id = random_bytes(8);
    let (provider, model) = match record
        .model
        .as_deref()
        .and_then(|model| model.split_once('/'))
    {
        Some((provider, name)) => (Some(provider.to_owned()), Some(name.to_owned())),
        None => (None, None),
    };
    let ids = SpanIds {
        trace: trace_id,
        parent: request_span_id,
    };
    let mut spans = vec![request_span(
        record,
        &ids,
        provider.as_deref(),
        model.as_deref(),
    )];
    spans.extend(
        calls
            .iter()
            .map(|call| call_span(call, &ids, provider.as_deref(), model.as_deref())),
    );
    export(spans).encode_to_vec()
}

/// The trace's id and the request span's, which the call spans point to.
struct SpanIds {
    trace: Vec<u8>,
    parent: Vec<u8>,
}

fn request_span(
    record: &Record,
    ids: &SpanIds,
    provider: Option<&str>,
    model: Option<&str>,
) -> Span {
    let mut attributes = vec![
        text("http.request.method", &record.method),
        text("http.route", &record.route),
        int("http.response.status_code", i64::from(record.code)),
    ];
    let optional = [
        ("structure.tenant", record.tenant.as_deref()),
        ("structure.project", record.project.as_deref()),
        ("structure.schema", record.schema.as_deref()),
        ("structure.status", record.status.as_deref()),
        ("error.type", record.error_kind.as_deref()),
        ("gen_ai.provider.name", provider),
        ("gen_ai.request.model", model),
    ];
    attributes.extend(
        optional
            .into_iter()
            .filter_map(|(key, value)| value.map(|value| text(key, value))),
    );
    if let Some(iterations) = record.iterations {
        attributes.push(int("structure.iterations", i64::from(iterations)));
        attributes.push(text("gen_ai.operation.name", "chat"));
        attributes.push(int(
            "gen_ai.usage.input_tokens",
            record.usage.prompt_tokens as i64,
        ));
        attributes.push(int(
            "gen_ai.usage.output_tokens",
            record.usage.completion_tokens as i64,
        ));
    }
    Span {
        trace_id: ids.trace.clone(),
        span_id: ids.parent.clone(),
        name: format!("{} {}", record.method, record.route),
        kind: SpanKind::Server as i32,
        start_time_unix_nano: nanos(record.started),
        end_time_unix_nano: nanos(record.started + record.latency),
        attributes,
        status: Some(Status {
            code: if record.error_kind.is_some() || record.code >= 500 {
                status::StatusCode::Error as i32
            } else {
                status::StatusCode::Unset as i32
            },
            ..Status::default()
        }),
        ..Span::default()
    }
}

fn call_span(
    call: &OutgoingCall,
    ids: &SpanIds,
    provider: Option<&str>,
    model: Option<&str>,
) -> Span {
    let mut attributes = vec![
        text("gen_ai.operation.name", "chat"),
        text("server.address", &call.host),
        int("server.port", i64::from(call.port)),
    ];
    if let Some(model) = model {
        attributes.push(text("gen_ai.request.model", model));
    }
    if let Some(provider) = provider {
        attributes.push(text("gen_ai.provider.name", provider));
    }
    match call.status {
        Some(code) => attributes.push(int("http.response.status_code", i64::from(code))),
        None => attributes.push(text("error.type", "transport")),
    }
    Span {
        trace_id: ids.trace.clone(),
        span_id: random_bytes(8),
        parent_span_id: ids.parent.clone(),
        name: format!("chat {}", model.unwrap_or("model")),
        kind: SpanKind::Client as i32,
        start_time_unix_nano: nanos(call.started),
        end_time_unix_nano: nanos(call.ended),
        attributes,
        ..Span::default()
    }
}

/// `spans` as the export request of the `structure` service.
fn export(spans: Vec<Span>) -> ExportTraceServiceRequest {
    ExportTraceServiceRequest {
        resource_spans: vec![ResourceSpans {
            resource: Some(Resource {
                attributes: vec![text("service.name", "structure")],
                ..Resource::default()
            }),
            scope_spans: vec![ScopeSpans {
                scope: Some(InstrumentationScope {
                    name: "structure".to_owned(),
                    version: env!("CARGO_PKG_VERSION").to_owned(),
                    ..InstrumentationScope::default()
                }),
                spans,
                ..ScopeSpans::default()
            }],
            ..ResourceSpans::default()
        }],
    }
}

fn text(key: &str, value: &str) -> KeyValue {
    KeyValue {
        key: key.to_owned(),
        value: Some(AnyValue {
            value: Some(any_value::Value::StringValue(value.to_owned())),
        }),
        ..KeyValue::default()
    }
}

fn int(key: &str, value: i64) -> KeyValue {
    KeyValue {
        key: key.to_owned(),
        value: Some(AnyValue {
            value: Some(any_value::Value::IntValue(value)),
        }),
        ..KeyValue::default()
    }
}

fn nanos(time: SystemTime) -> u64 {
    time.duration_since(SystemTime::UNIX_EPOCH)
        .map(|since| since.as_nanos() as u64)
        .unwrap_or_default()
}

/// `count` random bytes (ids are only ever compared, never guessed: the process's random
/// hasher keys are enough).
fn random_bytes(count: usize) -> Vec<u8> {
    let mut bytes = Vec::with_capacity(count);
    while bytes.len() < count {
        let mut hasher = RandomState::new().build_hasher();
        hasher.write_usize(bytes.len());
        bytes.extend(hasher.finish().to_le_bytes());
    }
    bytes.truncate(count);
    bytes
}
