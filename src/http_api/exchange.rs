//! A request as the host delivers it and a response for it to send, with the HTTP status each
//! typed error stands for: what the routes and MCP both answer in.

use serde_json::{Map, Value, json};

use crate::error::{ErrorKind, StructureError};
use crate::keys;

/// A request as the host delivers it.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ApiRequest {
    pub method: String,
    /// The path with its query, as sent.
    pub path: String,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl ApiRequest {
    pub fn header(&self, name: &str) -> Option<&str> {
        crate::ports::header(&self.headers, name)
    }

    /// The value of query parameter `name` (`""` for a bare `?name`), percent-decoding left
    /// out: the parameters this API takes are plain words.
    pub fn query(&self, name: &str) -> Option<&str> {
        let query = self
            .path
            .split_once('?')?
            .1
            .split('#')
            .next()
            .unwrap_or_default();
        query.split('&').find_map(|pair| {
            let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
            (key == name).then_some(value)
        })
    }
}

/// A response for the host to send.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApiResponse {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl ApiResponse {
    pub fn json(status: u16, body: &Value) -> Self {
        Self {
            status,
            headers: vec![("content-type".to_owned(), "application/json".to_owned())],
            body: body.to_string().into_bytes(),
        }
    }

    /// A file to download (a report as CSV): its bytes and media type.
    pub fn file(media_type: &str, body: &[u8]) -> Self {
        Self {
            status: 200,
            headers: vec![("content-type".to_owned(), media_type.to_owned())],
            body: body.to_vec(),
        }
    }

    pub fn empty(status: u16) -> Self {
        Self {
            status,
            headers: Vec::new(),
            body: Vec::new(),
        }
    }

    pub fn with_header(mut self, name: &str, value: &str) -> Self {
        self.headers.push((name.to_owned(), value.to_owned()));
        self
    }

    /// `{"error": {"kind", "message", ...details}}` with `status`.
    pub fn error(status: u16, kind: &str, message: &str, details: Value) -> Self {
        let mut error = Map::new();
        error.insert("kind".into(), json!(kind));
        if let Value::Object(details) = details {
            error.extend(details);
        }
        error.insert("message".into(), json!(message));
        Self::json(status, &json!({ "error": error }))
    }

    /// A typed error from the core, with the status its kind stands for.
    pub fn from_error(error: &StructureError) -> Self {
        Self::json(status_of(&error.kind), &error.to_json())
    }

    /// The response to a request body over the limit, for hosts that stop reading at it.
    pub fn too_large(limit: usize) -> Self {
        Self::error(
            413,
            "payload-too-large",
            &format!(
                "the request body is larger than {limit} bytes ({})",
                keys::MAX_BODY_BYTES
            ),
            json!({}),
        )
    }
}

/// The HTTP status a typed error stands for.
pub fn status_of(kind: &ErrorKind) -> u16 {
    match kind {
        ErrorKind::InvalidRequest { .. } => 400,
        ErrorKind::InvalidDocument { reason } if reason == "too-large" => 413,
        ErrorKind::InvalidDocument { .. } => 422,
        ErrorKind::SchemaNotFound { .. } => 404,
        ErrorKind::InvalidSchema { .. }
        | ErrorKind::Refusal
        | ErrorKind::Blocked { .. }
        | ErrorKind::Truncated
        | ErrorKind::StructuredOutputFailed
        | ErrorKind::BudgetExhausted => 422,
        ErrorKind::Provider { status: 429, .. } => 429,
        ErrorKind::Provider { .. } | ErrorKind::InvalidResponse | ErrorKind::Transport => 502,
        ErrorKind::Unsupported => 501,
        ErrorKind::Configuration { .. } | ErrorKind::Storage => 500,
    }
}
