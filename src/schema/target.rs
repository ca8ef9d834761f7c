//! The schema a call works on: as given (what validates the answer), its manual, where it came
//! from, its compiled form and its warnings. Checked on the way in ([`super::checks`]).

use serde_json::Value;

use crate::error::StructureError;
use crate::schema::keywords;
use crate::schema::validator::CompiledSchema;

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
    /// Whether this is the object a root that is not one travels in (`{"value": …}`, see
    /// [`crate::schema::root`]): an answer giving the bare value is read as that value.
    pub wrapped: bool,
}

impl TargetSchema {
    /// A target that passed [`crate::schema::checks::check`] before it was stored (a bundled or registered schema, a
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
            wrapped: false,
        })
    }
}
