//! # structure
//!
//! Turns free text into a JSON object that provably validates against a JSON Schema, using an
//! LLM: the schema stage resolves and compiles the target schema, the content stage asks the
//! model in its provider's strict structured-output mode, validates the answer locally against
//! the full schema (formats asserted), and feeds violations back until the answer is valid, the
//! model says what the input lacks, or `maxLoops` is spent.
//!
//! The core is host-independent: it talks to the world through the small traits in [`ports`]
//! (HTTP transport, config, key-value store, clock). The WebAssembly component implements them
//! over WASI (`src/wasi/`); tests implement them over plain Rust values:
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
//! let outcome = structure::structure(&request, &structure::Scope::default(), &ports)?;
//! assert_eq!(outcome.answer, Answer::Ok(serde_json::json!({ "name": "Ada Lovelace", "born": 1815 })));
//! assert_eq!(outcome.usage.llm_calls, 1);
//! # Ok::<(), structure::StructureError>(())
//! ```
//!
//! ## Module map
//!
//! One line a module, lowest first: what it is, and what it may use. Every import points up
//! this table, to a module listed before it, so there is no cycle (`tests/layering.rs` checks
//! the imports against this table).
//!
//! | module | what it is | may use |
//! |---|---|---|
//! | [`time`] | RFC 3339 instants and HTTP dates | — |
//! | [`keys`] | every config key, and the endpoints a base URL defaults to | — |
//! | [`lru`] | the few values an instance keeps, most recently used last | — |
//! | [`secret`] | secrets that never show, and cutting them out of messages | — |
//! | [`ports`] | the edges: HTTP transport, config, key-value store, clock | — |
//! | [`outcome`] | the result: status, data, usage, trace | — |
//! | [`media_type`] | what a document is: the media types read, told from a file's name or bytes | — |
//! | [`error`] | typed errors | outcome, secret |
//! | [`scope`] | tenants and projects, and their key prefixes | error |
//! | [`request`] | the checked request and the tool arguments | error, media_type |
//! | [`limits`] | how big a call's input may be, how long it may take | error, keys |
//! | [`document`] | documents beside the prompt: a PDF's text layer by page with where it stands, a Word document's and a web page's text, UTF-8 text | error, keys, limits, media_type, outcome, request |
//! | [`store`] | JSON documents in the key-value store | error, ports |
//! | [`settings`] | the settings of one call, and the cascade that layers them | error, keys, limits, ports, request, scope, secret, store, time |
//! | [`schema`] | the schema stage: checks, walks, subsets, compile and validate, registry, versions | error, keys, limits, lru, outcome, ports, request, scope, store |
//! | [`answer`] | reading answers: the envelope with the need path, lenient JSON | lru, schema |
//! | [`provider`] | the wire formats, provider profiles, delivery modes, retries, the servers' kinds and context windows, which models read images | answer, error, keys, lru, media_type, outcome, ports, schema, settings, store, time |
//! | [`content`] | the LLM stages: the content loop, its prompt and reasons, grounding, long texts read in parts, records mode, the schema builder | answer, error, keys, limits, media_type, outcome, ports, provider, schema, scope, settings, store, time |
//! | [`escalation`] | the next model when one does not get there: the attempts of one call, and of its schema builder | content, error, media_type, outcome, ports, provider, schema, scope, settings |
//! | [`tool_definition`] | the tool definition: its arguments, and its result generated from the result's types | error, media_type, outcome, ports, schema, scope |
//! | [`insights`] | per-schema call statistics kept in the store: 24 hours and 7 days | error, ports, request, scope, store |
//! | [`review`] | the review queue: results a person confirms or corrects, kept in the store; the values of a result in doubt | error, keys, media_type, outcome, ports, request, schema, scope, settings, store, time |
//! | [`api`] | the library's functions, which every surface calls | answer, content, document, error, escalation, insights, outcome, ports, provider, request, review, schema, scope, settings |
//! | [`http_api`] | the HTTP API, token authentication, MCP | api, error, insights, keys, outcome, ports, request, review, schema, scope, settings, tool_definition |
//! | `wasi` | the component: WIT exports, incoming HTTP, the ports over WASI | api, error, http_api, keys, outcome, ports, request, schema, scope, tool_definition |

pub mod answer;
pub mod api;
pub mod content;
pub mod document;
pub mod error;
pub mod escalation;
pub mod http_api;
pub mod insights;
pub mod keys;
pub mod limits;
pub mod lru;
pub mod media_type;
pub mod outcome;
pub mod ports;
pub mod provider;
pub mod request;
pub mod review;
pub mod schema;
pub mod scope;
pub mod secret;
pub mod settings;
pub mod store;
pub mod time;
pub mod tool_definition;

#[cfg(all(target_arch = "wasm32", feature = "component"))]
mod wasi;

pub use api::{
    call_tool, deregister_schema, get_schema, list_schemas, prepare, register_schema,
    register_skill, set_settings, settings_of, structure,
};
pub use error::{ErrorKind, StructureError};
pub use outcome::{Answer, Outcome, Trace, Usage};
pub use request::{SchemaInput, StructureRequest};
pub use schema::registry::{RegisteredSchema, Registration, SchemaInfo};
pub use schema::skill::SkillFiles;
pub use scope::Scope;
pub use tool_definition::tool_definition;

// What a host that serves the HTTP API itself (`structure serve`) shares with the component, so
// that each rule has one home: who a token stands for, what the metrics and the access log call
// a schema, and the largest body a request may have.
pub use http_api::auth::{Caller, Denied, Role, authenticate};
pub use http_api::max_body_bytes;
pub use insights::{Asked, schema_label};
// What a host that reads the review queue itself (`structure review results`) shares: an item
// as the store keeps it, and where.
pub use review::{Item as ReviewItem, item_key as review_item_key};
