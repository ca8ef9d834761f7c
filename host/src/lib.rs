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
//!         &Request {
//!             prompt: "Mike broke the build today at 2:30 pm".into(),
//!             schema: SchemaInput::Named("user-action-record".into()),
//!             max_loops: None,
//!             settings: None,
//!             records: false,
//!             document: None,
//!             return_text: false,
//!         },
//!     )
//!     .await?;
//! println!("{:?}: {:?}", outcome.status, outcome.data);
//! # Ok(())
//! # }
//! ```
//!
//! The component is built from this workspace and embedded at compile time (see `build.rs`);
//! its compiled form is cached on disk ([`default_cache_dir`]).

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
mod preinit;
mod runtime;
mod serve;
mod state;
mod store;

pub use bindings::{
    Attempt, BuilderTrace, ContextWindow, Document, Error, ErrorKind, NotFound, Outcome,
    ProviderFailure, Reason, ReasonCategory, RegisteredSchema, Registration, Request, SchemaInfo,
    SchemaInput, Scope, Source, SourceMatch, Span, Status, Trace, Usage,
};
pub mod batch;
pub use client::{CallError, Structure, StructureBuilder};
pub use config::Settings;
pub use runtime::write_ready_component;
pub use runtime::{Runtime, default_cache_dir};
pub use serve::ServeOptions;
pub use store::{
    KeyValueStore, MemoryStore, RedisStore, SqliteStore, check_no_old_store, default_store_path,
    open_store,
};
