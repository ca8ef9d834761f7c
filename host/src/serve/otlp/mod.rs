//! Traces over OTLP/HTTP (protobuf) to the collector the standard variables name:
//! `OTEL_EXPORTER_OTLP_ENDPOINT` (`http://localhost:4318` → `…/v1/traces`; `https://` for a
//! hosted collector) or `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` as it is, with the headers of
//! `OTEL_EXPORTER_OTLP_HEADERS` / `_TRACES_HEADERS` (`api-key=…,x-team=a%20b`), over the
//! protocol `http/protobuf` (`OTEL_EXPORTER_OTLP_PROTOCOL` / `_TRACES_PROTOCOL`; `grpc` and
//! `http/json` are refused with what to set). The spans ([`spans`]) are exported in batches by
//! a task of their own over one kept-alive connection ([`batch`]): a collector that is slow or
//! down never holds up a request; what it does not take is dropped and counted
//! (`structure_otlp_spans_dropped_total`).

mod batch;
mod spans;

use std::sync::Arc;
use std::sync::atomic::AtomicU64;

use super::record::Record;
use crate::egress::OutgoingCall;

/// Where the spans go, and how.
#[derive(Clone)]
pub struct Exporter {
    target: Arc<batch::Target>,
    queue: batch::Queue,
}

impl std::fmt::Debug for Exporter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Exporter")
            .field("url", &self.target.url)
            .field("headers", &self.target.headers.len())
            .finish()
    }
}

impl Exporter {
    /// The exporter the standard variables configure, if any; `Err` for a setting this
    /// exporter cannot follow.
    pub fn from_env() -> Result<Option<Self>, String> {
        let var = |name: &str| {
            std::env::var(name)
                .ok()
                .map(|value| value.trim().to_owned())
                .filter(|value| !value.is_empty())
        };
        let url = match (
            var("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"),
            var("OTEL_EXPORTER_OTLP_ENDPOINT"),
        ) {
            (Some(traces), _) => traces,
            (None, Some(base)) => format!("{}/v1/traces", base.trim_end_matches('/')),
            (None, None) => return Ok(None),
        };
        let protocol = var("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL")
            .or_else(|| var("OTEL_EXPORTER_OTLP_PROTOCOL"));
        check_protocol(protocol.as_deref())?;
        let mut headers = var("OTEL_EXPORTER_OTLP_HEADERS")
            .map(|text| parse_headers("OTEL_EXPORTER_OTLP_HEADERS", &text))
            .transpose()?
            .unwrap_or_default();
        if let Some(text) = var("OTEL_EXPORTER_OTLP_TRACES_HEADERS") {
            for (name, value) in parse_headers("OTEL_EXPORTER_OTLP_TRACES_HEADERS", &text)? {
                headers.retain(|(known, _)| !known.eq_ignore_ascii_case(&name));
                headers.push((name, value));
            }
        }
        Self::new(&url).map(|exporter| Some(exporter.with_headers(headers)))
    }

    /// Spans to `url` (`http://…/v1/traces` or `https://…`).
    pub fn new(url: &str) -> Result<Self, String> {
        let uri: hyper::Uri = url
            .parse()
            .map_err(|error| format!("the OTLP endpoint {url:?} is not a URL: {error}"))?;
        if !matches!(uri.scheme_str(), Some("http" | "https")) || uri.host().is_none() {
            return Err(format!(
                "the OTLP endpoint {url:?} must be http://host:port or https://host (e.g. \
                 http://localhost:4318)"
            ));
        }
        Ok(Self {
            target: Arc::new(batch::Target {
                url: uri,
                headers: Vec::new(),
            }),
            queue: batch::Queue::default(),
        })
    }

    /// Sends `headers` with every export (an API key of a hosted collector).
    pub fn with_headers(self, headers: Vec<(String, String)>) -> Self {
        Self {
            target: Arc::new(batch::Target {
                url: self.target.url.clone(),
                headers,
            }),
            queue: self.queue,
        }
    }

    /// Starts the export task (inside the runtime), and warns once when the collector does
    /// not answer: the service starts anyway.
    pub(crate) fn start(&self) {
        self.queue.start(&self.target);
    }

    /// Queues the spans of one request and its LLM calls; a full queue drops them (counted).
    pub fn export(&self, record: &Record, calls: &[OutgoingCall]) {
        self.queue.push(&self.target, spans::spans(record, calls));
    }

    /// The spans dropped so far: the queue was full, or the collector did not take them.
    pub(crate) fn dropped(&self) -> Arc<AtomicU64> {
        self.queue.dropped.clone()
    }
}

/// Refuses every protocol but OTLP/HTTP with protobuf, saying what to set.
fn check_protocol(protocol: Option<&str>) -> Result<(), String> {
    match protocol {
        None | Some("http/protobuf") => Ok(()),
        Some(other) => Err(format!(
            "OTEL_EXPORTER_OTLP_PROTOCOL {other:?} is not supported: structure sends OTLP over \
             HTTP with protobuf; set OTEL_EXPORTER_OTLP_PROTOCOL=http/protobuf and point the \
             endpoint at the collector's OTLP/HTTP port (4318 by default)"
        )),
    }
}

/// `name1=value1,name2=value2`, values percent-decoded, as the OpenTelemetry specification
/// writes the headers variables.
fn parse_headers(variable: &str, text: &str) -> Result<Vec<(String, String)>, String> {
    text.split(',')
        .filter(|pair| !pair.trim().is_empty())
        .map(|pair| {
            let (name, value) = pair.split_once('=').ok_or_else(|| {
                format!("{variable}: {pair:?} is not name=value (write name1=value1,name2=value2)")
            })?;
            let name = name.trim();
            let value = percent_decoded(value.trim()).ok_or_else(|| {
                format!("{variable}: the value of {name:?} is not valid percent-encoded UTF-8")
            })?;
            if name.is_empty()
                || hyper::header::HeaderName::from_bytes(name.as_bytes()).is_err()
                || hyper::header::HeaderValue::from_str(&value).is_err()
            {
                return Err(format!(
                    "{variable}: {name:?} is not a header an HTTP request can carry"
                ));
            }
            Ok((name.to_owned(), value))
        })
        .collect()
}

/// `a%20b` → `a b`; `None` for a broken escape or bytes that are not UTF-8.
fn percent_decoded(text: &str) -> Option<String> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut index = 0;
    while index < bytes.len() {
        if bytes[index] == b'%' {
            let hex = std::str::from_utf8(bytes.get(index + 1..index + 3)?).ok()?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            index += 3;
        } else {
            out.push(bytes[index]);
            index += 1;
        }
    }
    String::from_utf8(out).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_standard_variables_read_as_the_specification_writes_them() {
        assert_eq!(
            parse_headers("V", "api-key=k%3D1, x-team=a%20b").unwrap(),
            [
                ("api-key".to_owned(), "k=1".to_owned()),
                ("x-team".to_owned(), "a b".to_owned())
            ]
        );
        assert!(
            parse_headers("V", "novalue")
                .unwrap_err()
                .contains("name=value")
        );
        assert!(parse_headers("V", "bad name=x").is_err());
        assert!(parse_headers("V", "k=%zz").is_err());
        assert!(check_protocol(Some("http/protobuf")).is_ok() && check_protocol(None).is_ok());
        assert!(
            check_protocol(Some("grpc"))
                .unwrap_err()
                .contains("http/protobuf")
        );
        assert!(check_protocol(Some("http/json")).is_err());
        assert!(Exporter::new("https://otlp.example.com/v1/traces").is_ok());
        assert!(Exporter::new("ftp://x/v1/traces").is_err());
    }
}
