//! Compiling a target schema and validating answers against it. The fast path (`is_valid`) runs
//! first; violations are only collected and described for an invalid answer.

use jsonschema::Validator;
use serde_json::Value;

use crate::error::StructureError;
use crate::schema::violation::{Violation, describe};

/// A compiled schema: Draft 2020-12 unless `$schema` names an older draft, formats asserted,
/// no reference ever fetched.
pub struct CompiledSchema {
    validator: Validator,
}

impl CompiledSchema {
    pub fn compile(schema: &Value) -> Result<Self, StructureError> {
        let validator = jsonschema::options()
            .should_validate_formats(true)
            .offline()
            .build(schema)
            .map_err(|error| {
                let location = error.instance_path().as_str();
                let at = if location.is_empty() {
                    String::new()
                } else {
                    format!(" at {location}")
                };
                StructureError::invalid_schema(format!("the schema does not compile{at}: {error}"))
            })?;
        Ok(Self { validator })
    }

    pub fn is_valid(&self, instance: &Value) -> bool {
        self.validator.is_valid(instance)
    }

    /// Every violation of `instance`, in document order; empty iff the instance is valid.
    pub fn violations(&self, instance: &Value) -> Vec<Violation> {
        if self.is_valid(instance) {
            return Vec::new();
        }
        let mut violations: Vec<Violation> = self
            .validator
            .iter_errors(instance)
            .flat_map(|error| describe(&error))
            .collect();
        violations.dedup();
        violations
    }
}
