//! The schema stage: from what the caller gave to a compiled target schema (spec §3).
//!
//! - `json`: the inline schema, checked and compiled;
//! - `named`: looked up in the [`registry`] (project → tenant → bundled), with its manual;
//! - `text`: built from a description by the schema builder, an LLM stage beside the content
//!   loop (`content::builder`);
//! - `examples`: inferred from example objects ([`examples`]), no LLM.

pub mod checks;
pub mod examples;
pub mod keywords;
pub mod registry;
pub mod root;
pub mod sense;
pub mod skill;
pub mod subset;
pub mod validator;
pub mod versioning;
pub mod violation;
pub mod walk;

use serde_json::Value;

use crate::error::StructureError;
use crate::limits::CallLimits;
use crate::request::SchemaInput;
use registry::Registry;
use validator::CompiledSchema;

/// The schema the content stage must satisfy, with what the model should know about it.
pub struct TargetSchema {
    /// The schema exactly as given: local validation always uses this one.
    pub schema: Value,
    /// Domain knowledge for the model that the schema cannot express.
    pub manual: Option<String>,
    /// `inline`, `registry:bundled`, `registry:tenant:<id>`, `registry:project:<id>`, `inferred`.
    pub origin: String,
    pub compiled: CompiledSchema,
    /// What the schema holds that checks nothing: annotations, formats no one checks.
    pub warnings: Vec<String>,
}

impl TargetSchema {
    /// A checked target: within the limits, no external reference, compiles, a root some value
    /// validates against.
    pub fn new(
        schema: Value,
        manual: Option<String>,
        origin: String,
        limits: &CallLimits,
    ) -> Result<Self, StructureError> {
        let (schema, compiled, warnings) = check(schema, limits)?;
        Ok(Self {
            schema,
            manual,
            origin,
            compiled,
            warnings,
        })
    }

    /// A target that passed [`check`] before it was stored (a bundled or registered schema, a
    /// built schema from the cache): compiled without the meta-schema check.
    pub fn stored(
        schema: Value,
        manual: Option<String>,
        origin: String,
    ) -> Result<Self, StructureError> {
        let compiled = CompiledSchema::compile_checked(&schema)?;
        // It passed the check when it was stored: only its warnings are wanted again.
        let warnings = keywords::check(&schema, false).unwrap_or_default();
        Ok(Self {
            schema,
            manual,
            origin,
            compiled,
            warnings,
        })
    }
}

/// The JSON Schema type of `value` (`integer` for a whole number).
pub fn json_type(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(number) if number.is_i64() || number.is_u64() => "integer",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// Checks that `schema` can be a target (before any LLM call, so a bad schema costs nothing):
/// the schema as it is read (a `$ref` written as a bare pointer read as the fragment it means),
/// its compiled form and its warnings (see [`keywords`]).
pub fn check(
    mut schema: Value,
    limits: &CallLimits,
) -> Result<(Value, CompiledSchema, Vec<String>), StructureError> {
    limits.check_schema(&schema)?;
    let mut warnings = keywords::check(&schema, limits.refuse_unknown_formats)?;
    warnings.extend(checks::read_bare_pointers(&mut schema));
    checks::reject_external_refs(&schema)?;
    checks::reject_dangling_refs(&schema)?;
    let compiled = CompiledSchema::compile(&schema)?;
    root::classify(&schema)?;
    Ok((schema, compiled, warnings))
}

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
