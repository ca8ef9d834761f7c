//! The schema stage: from what the caller gave to a compiled target schema (spec §3, §4).
//!
//! - `json`: the inline schema, checked and compiled;
//! - `named`: looked up in the [`registry`], with its manual;
//! - `text`: built by the schema builder (not in this build yet: a typed `unsupported` error).

pub mod checks;
pub mod registry;
pub mod validator;
pub mod violation;

use serde_json::Value;

use crate::error::{ErrorKind, StructureError};
use crate::request::SchemaInput;
use validator::CompiledSchema;

/// The schema the content stage must satisfy, with what the model should know about it.
pub struct TargetSchema {
    /// The schema exactly as given: local validation always uses this one.
    pub schema: Value,
    /// Domain knowledge for the model that the schema cannot express.
    pub manual: Option<String>,
    /// `inline`, `registry:bundled`, ...
    pub origin: String,
    pub compiled: CompiledSchema,
}

/// Resolves and compiles the target schema. Runs before any LLM call, so a bad schema costs
/// nothing.
pub fn resolve(input: &SchemaInput) -> Result<TargetSchema, StructureError> {
    match input {
        SchemaInput::Inline(schema) => prepare(schema.clone(), None, "inline".to_owned()),
        SchemaInput::Named(name) => {
            let found = registry::find(name)?;
            prepare(
                found.schema,
                found.manual,
                format!("registry:{}", found.origin),
            )
        }
        SchemaInput::Described(_) => Err(StructureError::new(
            ErrorKind::Unsupported,
            "schemaMode \"text\" (a schema built from a description) is not available in this \
             build yet: pass a JSON Schema object (schemaMode \"json\") or a registry name \
             (schemaMode \"named\")",
        )),
    }
}

fn prepare(
    schema: Value,
    manual: Option<String>,
    origin: String,
) -> Result<TargetSchema, StructureError> {
    checks::reject_external_refs(&schema)?;
    let compiled = CompiledSchema::compile(&schema)?;
    checks::check_object_root(&schema)?;
    Ok(TargetSchema {
        schema,
        manual,
        origin,
        compiled,
    })
}
