//! The schema stage: from what the caller gave to a compiled target schema (spec §3).
//!
//! - `json`: the inline schema, checked and compiled;
//! - `named`: looked up in the [`registry`] (project → tenant → bundled), with its manual;
//! - `text`: built from a description by the schema builder, an LLM stage beside the content
//!   loop (`content::builder`);
//! - `examples`: inferred from example objects ([`examples`]), no LLM.

pub mod checks;
pub mod examples;
pub mod formats;
pub mod keywords;
pub mod registry;
pub mod root;
pub mod rules;
pub mod sense;
pub mod skill;
pub mod subset;
pub mod target;
pub mod validator;
pub mod versioning;
pub mod violation;
pub mod walk;

use crate::error::StructureError;
use crate::limits::CallLimits;
use crate::request::SchemaInput;
pub use checks::check;
use registry::Registry;
pub use target::TargetSchema;
pub use walk::json_type;

/// Resolves every schema input but a description (that takes the builder and its LLM call).
pub fn resolve(
    input: &SchemaInput,
    registry: &Registry<'_>,
    limits: &CallLimits,
) -> Result<TargetSchema, StructureError> {
    match input {
        SchemaInput::Inline(schema) => {
            TargetSchema::new(schema.clone(), None, "inline".to_owned(), limits)
        }
        SchemaInput::Named(name) => {
            let found = registry.find(name)?;
            if let Some(manual) = &found.manual {
                limits.check_manual(manual)?;
            }
            TargetSchema::stored(
                found.schema,
                found.manual,
                format!("registry:{}", found.origin),
            )
        }
        SchemaInput::Examples(examples) => TargetSchema::new(
            examples::infer(examples),
            None,
            "inferred".to_owned(),
            limits,
        ),
        SchemaInput::Described(_) => Err(StructureError::new(
            crate::error::ErrorKind::Unsupported,
            "a described schema is built by the schema builder, not resolved",
        )),
    }
}
