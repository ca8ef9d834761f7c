//! The spans of one request, as the OpenTelemetry GenAI semantic conventions name and attribute
//! them: a server span for the request (in the caller's trace when it sent a `traceparent`), a
//! client span under it for each LLM call.

use std::collections::hash_map::RandomState;
use std::hash::{BuildHasher, Hasher};
use std::time::SystemTime;

use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use opentelemetry_proto::tonic::common::v1::{AnyValue, InstrumentationScope, KeyValue, any_value};
use opentelemetry_proto::tonic::resource::v1::Resource;
use opentelemetry_proto::tonic::trace::v1::span::SpanKind;
use opentelemetry_proto::tonic::trace::v1::{ResourceSpans, ScopeSpans, Span, Status, status};

use crate::egress::OutgoingCall;
use crate::serve::record::Record;

/// The spans of one request: a server span for the request and a client span under it for
/// each LLM call. The request's span joins the caller's trace when it sent a `traceparent`.
pub fn spans(record: &Record, calls: &[OutgoingCall]) -> Vec<Span> {
    let (provider, model) = match record
        .model
        .as_deref()
        .and_then(|model| model.split_once('/'))
    {
        Some((provider, name)) => (Some(provider.to_owned()), Some(name.to_owned())),
        None => (None, None),
    };
    let ids = SpanIds {
        trace: record
            .parent
            .as_ref()
            .map_or_else(|| random_bytes(16), |parent| parent.trace_id.to_vec()),
        caller: record.parent.as_ref().map(|parent| parent.span_id.to_vec()),
        request: random_bytes(8),
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
    spans
}

/// The trace's id, the caller's span (from its `traceparent`), and the request span's, which
/// the call spans point to.
struct SpanIds {
    trace: Vec<u8>,
    caller: Option<Vec<u8>>,
    request: Vec<u8>,
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
        span_id: ids.request.clone(),
        parent_span_id: ids.caller.clone().unwrap_or_default(),
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
        parent_span_id: ids.request.clone(),
        name: format!("chat {}", model.unwrap_or("model")),
        kind: SpanKind::Client as i32,
        start_time_unix_nano: nanos(call.started),
        end_time_unix_nano: nanos(call.ended),
        attributes,
        ..Span::default()
    }
}

/// `spans` as the export request of the `structure` service.
pub fn export(spans: Vec<Span>) -> ExportTraceServiceRequest {
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
