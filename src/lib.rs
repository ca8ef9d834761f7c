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
//! let outcome = structure::structure(&request, &structure::Scope::default(), &ports)?;
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
pub mod http_api;
pub mod limits;
pub mod outcome;
pub mod ports;
pub mod provider;
pub mod request;
pub mod schema;
pub mod scope;
pub mod settings;
pub mod store;
pub mod tool_definition;

#[cfg(all(target_arch = "wasm32", feature = "component"))]
mod wasi;

pub use error::{ErrorKind, StructureError};
pub use outcome::{Answer, Outcome, Trace, Usage};
pub use request::{SchemaInput, StructureRequest};
pub use schema::registry::{RegisteredSchema, Registration, SchemaInfo};
pub use schema::skill::SkillFiles;
pub use scope::Scope;
pub use tool_definition::tool_definition;

use ports::Ports;
use schema::builder::{self, Built};
use schema::registry::Registry;
use serde_json::{Map, Value};
use settings::{Cascade, Settings};

/// Structures `request.prompt` into an object that validates against the requested schema,
/// for `scope` (whose registry, settings and cache apply).
///
/// Schema problems and missing settings are reported before any LLM call.
pub fn structure(
    request: &StructureRequest,
    scope: &Scope,
    ports: &Ports<'_>,
) -> Result<Outcome, StructureError> {
    let started = ports.clock.now_unix_millis();
    let layers = settings::stored_layers(scope, ports.key_value)?;
    let cascade = Cascade::new(ports.config).with_layer(&request.settings, "settings")?;
    let cascade = layers.into_iter().try_fold(cascade, |cascade, layer| {
        cascade.with_layer(&layer, "settings")
    })?;
    let settings = Settings::load(&cascade)?;
    // Providers quote requests in their errors; a key must not travel on in a message.
    structure_with(request, scope, ports, &settings, started)
        .map_err(|error| error.redacted(&settings))
}

fn structure_with(
    request: &StructureRequest,
    scope: &Scope,
    ports: &Ports<'_>,
    settings: &Settings,
    started: u64,
) -> Result<Outcome, StructureError> {
    settings.limits.check_prompt(&request.prompt)?;
    let retry = provider::retry::RetryPolicy::from_settings(settings, started);
    let (target, builder_trace) = match &request.schema {
        SchemaInput::Described(description) => {
            let builder_provider = provider::connect(settings, &settings.schema_builder_model)?;
            let built = builder::build(
                description,
                scope,
                builder_provider.as_ref(),
                ports,
                settings,
                retry,
            )?;
            match built {
                Built::Finished(outcome) => return Ok(outcome),
                Built::Ready { target, trace } => (target, Some(trace)),
            }
        }
        input => (
            schema::resolve(
                input,
                &Registry::new(ports.key_value, scope),
                &settings.limits,
            )?,
            None,
        ),
    };
    let spent_building = builder_trace
        .as_ref()
        .map(|trace| trace.usage)
        .unwrap_or_default();
    let add_building = |mut usage: Usage| {
        usage.add(spent_building);
        usage
    };
    let provider = provider::connect(settings, &settings.model).map_err(|error| {
        let usage = add_building(error.usage);
        error.with_usage(usage)
    })?;
    let limits = content::Limits {
        max_loops: request.max_loops.unwrap_or(settings.max_loops),
        retry,
        token_budget: settings.token_budget,
        extractive: settings.extractive,
        reference_time: settings.reference_time,
    };
    match content::run(&request.prompt, &target, limits, provider.as_ref(), ports) {
        Ok(mut outcome) => {
            outcome.usage = add_building(outcome.usage);
            outcome.trace.schema_builder = builder_trace;
            Ok(outcome)
        }
        Err(error) => {
            let usage = add_building(error.usage);
            Err(error.with_usage(usage))
        }
    }
}

/// The tool form: `arguments` as an LLM tool call carries them, the outcome as JSON.
pub fn call_tool(
    arguments: &Value,
    scope: &Scope,
    ports: &Ports<'_>,
) -> Result<Value, StructureError> {
    let request = StructureRequest::from_tool_arguments(arguments)?;
    structure(&request, scope, ports).map(|outcome| outcome.to_json())
}

/// The schemas `scope` can use by name (project → tenant → bundled, first match wins).
pub fn list_schemas(scope: &Scope, ports: &Ports<'_>) -> Result<Vec<SchemaInfo>, StructureError> {
    Registry::new(ports.key_value, scope).list()
}

/// The schema `scope` gets for `name`, with its manual and origin.
pub fn get_schema(
    scope: &Scope,
    name: &str,
    ports: &Ports<'_>,
) -> Result<RegisteredSchema, StructureError> {
    Registry::new(ports.key_value, scope).find(name)
}

/// Registers a schema at `scope`'s own level (its project, else its tenant).
pub fn register_schema(
    scope: &Scope,
    registration: Registration,
    ports: &Ports<'_>,
) -> Result<SchemaInfo, StructureError> {
    let limits = Settings::load(&Cascade::new(ports.config))?.limits;
    Registry::new(ports.key_value, scope).register(registration, &limits)
}

/// Registers the output schema a skill's `SKILL.md` declares, with its body as the manual.
pub fn register_skill(
    scope: &Scope,
    skill: &SkillFiles,
    ports: &Ports<'_>,
) -> Result<SchemaInfo, StructureError> {
    register_schema(scope, schema::skill::registration(skill)?, ports)
}

/// Removes `name` from `scope`'s own level; `false` when it was not registered there.
pub fn deregister_schema(
    scope: &Scope,
    name: &str,
    ports: &Ports<'_>,
) -> Result<bool, StructureError> {
    Registry::new(ports.key_value, scope).deregister(name)
}

/// Replaces the setting overrides of `scope`'s own level (its project, else its tenant); an
/// empty object clears them.
pub fn set_settings(
    scope: &Scope,
    overrides: &Map<String, Value>,
    ports: &Ports<'_>,
) -> Result<(), StructureError> {
    settings::store_layer(scope, overrides, ports)
}

/// The settings `scope` gets (overrides resolved over the host's configuration) and its own
/// level's overrides.
pub fn settings_of(scope: &Scope, ports: &Ports<'_>) -> Result<Value, StructureError> {
    settings::describe(scope, ports)
}
