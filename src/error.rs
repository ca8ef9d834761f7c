//! Typed errors: everything that is not one of the three statuses.

use std::fmt;

use serde::Serialize;

use crate::outcome::Usage;
use crate::secret::{Secret, redact};

/// Why a `structure` call produced no outcome.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "json-schema", derive(schemars::JsonSchema))]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum ErrorKind {
    /// A request field is missing, malformed or out of range.
    InvalidRequest { field: String },
    /// No schema of that name; `suggestions` lists close matches.
    SchemaNotFound {
        name: String,
        suggestions: Vec<String>,
    },
    /// The schema cannot be used: it does not compile, no value satisfies its root, or it has an
    /// external or dangling `$ref`; `pointer` is where in the schema, when one place is at fault.
    InvalidSchema {
        #[serde(skip_serializing_if = "Option::is_none")]
        pointer: Option<String>,
    },
    /// A setting or secret is missing or malformed.
    Configuration { key: String },
    /// The provider answered with an error status.
    Provider {
        status: u16,
        retryable: bool,
        #[serde(skip_serializing_if = "Option::is_none")]
        code: Option<String>,
    },
    /// The provider could not be reached, or the connection failed.
    Transport,
    /// The model refused to answer.
    Refusal,
    /// The provider's safety or policy filters blocked the prompt or the answer; `reason` is
    /// the provider's own (e.g. Gemini's `SAFETY`, `RECITATION`, `PROHIBITED_CONTENT`).
    Blocked { reason: String },
    /// The answer was cut off by the output token limit.
    Truncated,
    /// The provider's answer does not follow its own wire format.
    InvalidResponse,
    /// In tool mode, the model kept answering in plain text instead of calling the answer tool.
    StructuredOutputFailed,
    /// The next LLM call would take the request over its token budget.
    BudgetExhausted,
    /// The key-value store failed, or holds a corrupt entry.
    Storage,
    /// The request asks for something this build does not do yet.
    Unsupported,
    /// A document beside the prompt cannot be read: `reason` is `too-large`, `too-many-pages`,
    /// `encrypted`, `no-text-layer`, `unreadable` or `not-utf8`; the message says what to do.
    InvalidDocument { reason: String },
}

impl ErrorKind {
    /// The kind as its JSON `kind` field writes it: `budget-exhausted`.
    pub fn name(&self) -> &'static str {
        match self {
            ErrorKind::InvalidRequest { .. } => "invalid-request",
            ErrorKind::SchemaNotFound { .. } => "schema-not-found",
            ErrorKind::InvalidSchema { .. } => "invalid-schema",
            ErrorKind::Configuration { .. } => "configuration",
            ErrorKind::Provider { .. } => "provider",
            ErrorKind::Transport => "transport",
            ErrorKind::Refusal => "refusal",
            ErrorKind::Blocked { .. } => "blocked",
            ErrorKind::Truncated => "truncated",
            ErrorKind::InvalidResponse => "invalid-response",
            ErrorKind::StructuredOutputFailed => "structured-output-failed",
            ErrorKind::BudgetExhausted => "budget-exhausted",
            ErrorKind::Storage => "storage",
            ErrorKind::Unsupported => "unsupported",
            ErrorKind::InvalidDocument { .. } => "invalid-document",
        }
    }
}

/// An error with a one-sentence message and the tokens already spent when it happened.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(
    feature = "json-schema",
    derive(schemars::JsonSchema),
    schemars(deny_unknown_fields)
)]
pub struct StructureError {
    #[serde(flatten)]
    pub kind: ErrorKind,
    /// One sentence saying what went wrong and, where it applies, what to do.
    pub message: String,
    /// Tokens already spent when the error happened.
    pub usage: Usage,
}

impl StructureError {
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Self {
        Self {
            kind,
            message: message.into(),
            usage: Usage::default(),
        }
    }

    pub fn invalid_request(field: &str, message: impl Into<String>) -> Self {
        Self::new(
            ErrorKind::InvalidRequest {
                field: field.to_owned(),
            },
            message,
        )
    }

    pub fn invalid_schema(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::InvalidSchema { pointer: None }, message)
    }

    /// An `invalid-schema` error at `pointer`, a JSON pointer into the schema.
    pub fn invalid_schema_at(pointer: &str, message: impl Into<String>) -> Self {
        let pointer = Some(pointer.to_owned());
        Self::new(ErrorKind::InvalidSchema { pointer }, message)
    }

    pub fn configuration(key: &str, message: impl Into<String>) -> Self {
        Self::new(
            ErrorKind::Configuration {
                key: key.to_owned(),
            },
            message,
        )
    }

    pub fn transport(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::Transport, message)
    }

    pub fn invalid_response(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::InvalidResponse, message)
    }

    pub fn invalid_document(reason: &str, message: impl Into<String>) -> Self {
        Self::new(
            ErrorKind::InvalidDocument {
                reason: reason.to_owned(),
            },
            message,
        )
    }

    /// Attaches the usage spent so far; nothing the caller paid for is lost with the error.
    pub fn with_usage(mut self, usage: Usage) -> Self {
        self.usage = usage;
        self
    }

    /// The same error with each of `secrets` cut out of its message.
    pub fn redacted<'a>(mut self, secrets: impl IntoIterator<Item = &'a Secret>) -> Self {
        self.message = redact(&self.message, secrets);
        self
    }

    /// The error as the JSON object the tool form returns: `{"error": {...}}`.
    pub fn to_json(&self) -> serde_json::Value {
        serde_json::json!({ "error": self })
    }
}

impl fmt::Display for StructureError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for StructureError {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_kind_is_named_as_its_json_writes_it() {
        let kinds = [
            ErrorKind::InvalidRequest { field: "f".into() },
            ErrorKind::SchemaNotFound {
                name: "n".into(),
                suggestions: Vec::new(),
            },
            ErrorKind::InvalidSchema { pointer: None },
            ErrorKind::Configuration { key: "k".into() },
            ErrorKind::Provider {
                status: 500,
                retryable: true,
                code: None,
            },
            ErrorKind::Transport,
            ErrorKind::Refusal,
            ErrorKind::Blocked { reason: "r".into() },
            ErrorKind::Truncated,
            ErrorKind::InvalidResponse,
            ErrorKind::StructuredOutputFailed,
            ErrorKind::BudgetExhausted,
            ErrorKind::Storage,
            ErrorKind::Unsupported,
            ErrorKind::InvalidDocument { reason: "r".into() },
        ];
        for kind in kinds {
            let json = serde_json::to_value(&kind).unwrap();
            assert_eq!(json["kind"], kind.name(), "{kind:?}");
        }
    }
}
