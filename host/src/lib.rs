//! # structure-host
//!
//! Runs the `structure` WebAssembly component in wasmtime, with the imports it needs:
//! `wasi:http` for LLM calls, `wasi:keyvalue` over an embedded store, and `wasi:config` over
//! [`Settings`] taken from the environment or set in code.
//!
//! ```no_run
//! use structure_host::{Request, SchemaInput, Scope, Settings, Structure};
//!
//! # async fn example() -> Result<(), Box<dyn std::error::Error>> {
//! let client = Structure::builder()
//!     .settings(Settings::from_env().set("structure_model", "openai/gpt-4.1-mini"))
//!     .build()?;
//! let outcome = client
//!     .structure(
//!         &Scope::default(),
//!         &Request::new(
//!             "Mike broke the build today at 2:30 pm",
//!             SchemaInput::Named("user-action-record".into()),
//!         ),
//!     )
//!     .await?;
//! println!("{:?}: {:?}", outcome.status, outcome.data);
//! # Ok(())
//! # }
//! ```
//!
//! The component is built from this workspace and embedded at compile time (see `build.rs`);
//! its compiled form is cached on disk ([`default_cache_dir`]).
//!
//! ## Module map
//!
//! One line a module, lowest first: what it is, and what it may use. Every import points up
//! this table (`host/tests/layering.rs` checks it, as `tests/layering.rs` does the core's); the
//! `structure` command (`main.rs`, `cli/`) sits on top and uses the public API. Of the core, the
//! host uses what its `lib.rs` offers at the root (token authentication, schema labels, the body
//! limit, the PDF rule among them) and its leaf modules (`keys`, `ports`, `outcome`, `time`),
//! never a path into a module above them.
//!
//! | module | what it is | may use |
//! |---|---|---|
//! | `artifact` | the component as built, digests in hex, files written whole | — |
//! | `store` | the key-value backends: memory, SQLite, Redis, and the component's bucket | — |
//! | `bindings` | the WIT bindings (generated) | store |
//! | `config` | the settings, and `wasi:config` over them | bindings |
//! | `relay` | LLM requests answered by someone other than the network | — |
//! | [`local`] | the embedded default model: which one, fetched once, run in process as a relay | artifact, config, relay |
//! | `egress` | outgoing HTTP: allowed endpoints, pooled connections, relays | config, relay |
//! | `key_value` | `wasi:keyvalue` over a backend | bindings, store |
//! | `state` | the data of one instance: what its imports act on | config, egress, key_value, relay, store |
//! | `json` | results as JSON, through the core's serialisers | bindings |
//! | `preinit` | pre-initialising the component | artifact, state |
//! | `runtime` | the engine, the compiled and linked component | artifact, bindings, config, egress, key_value, preinit, state |
//! | `serve` | the HTTP service: API, metrics, access log, traces | config, egress, relay, state, store |
//! | `client` | the embedder's API: [`Structure`] | bindings, config, egress, local, relay, runtime, serve, state, store |
//! | [`batch`] | many texts from one process, through the providers' batch APIs if asked | artifact, bindings, client, egress, relay |
//! | `cli` | the `structure` command's parts (the binary's own) | — |

#![deny(missing_docs)]

mod artifact;
// Generated from `wit/structure.wit`, whose doc comments document the types re-exported below.
#[allow(missing_docs)]
mod bindings;
mod client;
mod config;
mod egress;
mod json;
mod key_value;
pub mod local;
mod preinit;
mod relay;
mod runtime;
mod serve;
mod state;
mod store;

pub use bindings::{
    Attempt, BuilderTrace, ContextWindow, Document, Error, ErrorKind, IncompleteRecord, NotFound,
    Outcome, PageBox, PageSize, ProviderFailure, Reason, ReasonCategory, RegisteredSchema,
    Registration, Request, ReviewField, ReviewStatus, ReviewTicket, SchemaInfo, SchemaInput, Scope,
    Source, SourceMatch, Span, Status, Trace, Usage,
};
pub mod batch;
pub use artifact::default_cache_dir;
pub use client::{CallError, Structure, StructureBuilder};
pub use config::Settings;
pub use runtime::Runtime;
pub use runtime::write_ready_component;
pub use serve::ServeOptions;
pub use store::{
    KeyValueStore, MemoryStore, RedisStore, SqliteStore, check_no_old_store, default_store_path,
    open_store,
};
