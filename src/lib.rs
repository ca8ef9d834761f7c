//! # structure
//!
//! Turns free text into a JSON object that provably validates against a JSON Schema, using an
//! LLM: the schema stage resolves and compiles the target schema, the content stage asks the
//! model in its provider's strict structured-output mode, validates the answer locally against
//! the full schema (formats asserted), and feeds violations back until the answer is valid, the
//! model says what the input lacks, or `maxLoops` is spent.
//!
//! The core is host-independent: it talks to the world through the small traits in [`ports`]
//! (HTTP transport, config, key-value store, clock). The WebAssembly component implements them over WASI
//! (`src/wasi.rs`); tests implement them over plain Rust values:
//!
//! ```
//! use structure::ports::{
//!     Config, HttpRequest, HttpResponse, MemoryKeyValue, Ports, SystemClock, Transport, TransportError,
//! };
//! use structure::{Answer, SchemaInput, StructureRequest};
//!
//! /// Answers every request like an OpenAI-compatible server whose model found the values.
//! struct Canned;
//! impl Transport for Canned {
//!     fn send(&self, _request: &HttpRequest) -> Result<HttpResponse, TransportError> {
//!         let content = r#"{"answer": {"name": "Ada Lovelace", "born": 1815}}"#;
//!         let body = serde_json::json!({
//!             "choices": [{ "message": { "role": "assistant", "content": content }, "finish_reason": "stop" }],
//!             "usage": { "prompt_tokens": 120, "completion_tokens": 14 }
//!         });
//!         Ok(HttpResponse { status: 200, headers: vec![], body: body.to_string().into_bytes() })
//!     }
//! }
//!
//! struct Settings;
//! impl Config for Settings {
//!     fn get(&self, key: &str) -> Result<Option<String>, String> {
//!         Ok(match key {
//!             "structure_model" => Some("ollama/llama3.2".to_owned()),
//!             _ => None,
//!         })
//!     }
//! }
//!
//! let schema = serde_json::json!({
//!     "type": "object",
//!     "properties": { "name": { "type": "string" }, "born": { "type": "integer", "minimum": 0 } },
//!     "required": ["name", "born"]
//! });
//! let request = StructureRequest::new("Ada Lovelace was born in 1815.", SchemaInput::Inline(schema), None)?;
//! let key_value = MemoryKeyValue::default();
//! let ports = Ports { transport: &Canned, config: &Settings, key_value: &key_value, clock: &SystemClock };
//! let outcome = structure::structure(&request, &ports)?;
//! assert_eq!(outcome.answer, Answer::Ok(serde_json::json!({ "name": "Ada Lovelace", "born": 1815 })));
//! assert_eq!(outcome.usage.llm_calls, 1);
//! # Ok::<(), structure::StructureError>(())
//! ```
//!
//! Where things live: [`request`] and [`outcome`] (the tool's contract), [`schema`] (the schema
//! stage and the registry), [`content`] (the loop), [`answer`] (reading answers), [`provider`]
//! (wire formats and provider profiles), [`settings`] (config keys).

pub mod answer;
pub mod content;
pub mod error;
pub mod outcome;
pub mod ports;
pub mod provider;
pub mod request;
pub mod schema;
pub mod settings;
pub mod tool_definition;

#[cfg(target_arch = "wasm32")]
mod wasi;

pub use error::{ErrorKind, StructureError};
pub use outcome::{Answer, Outcome, Trace, Usage};
pub use request::{SchemaInput, StructureRequest};
pub use schema::registry::SchemaInfo;
pub use tool_definition::tool_definition;

use ports::Ports;
use settings::Settings;

/// Structures `request.prompt` into an object that validates against the requested schema.
///
/// Schema problems and missing settings are reported before any LLM call.
pub fn structure(request: &StructureRequest, ports: &Ports<'_>) -> Result<Outcome, StructureError> {
    let target = schema::resolve(&request.schema)?;
    let settings = Settings::load(ports.config)?;
    let provider = provider::connect(&settings)?;
    let limits = content::Limits {
        max_loops: request.max_loops,
        retry: provider::retry::RetryPolicy::from_settings(&settings),
        token_budget: settings.token_budget,
    };
    content::run(&request.prompt, &target, limits, provider.as_ref(), ports)
}

/// The tool form: `arguments` as an LLM tool call carries them, the outcome as JSON.
pub fn call_tool(
    arguments: &serde_json::Value,
    ports: &Ports<'_>,
) -> Result<serde_json::Value, StructureError> {
    let request = StructureRequest::from_tool_arguments(arguments)?;
    structure(&request, ports).map(|outcome| outcome.to_json())
}

/// The schemas available by name.
pub fn list_schemas() -> Vec<SchemaInfo> {
    schema::registry::list()
}
