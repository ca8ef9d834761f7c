//! The schema a call works on: as given (what validates the answer), its manual, where it came
//! from, its compiled form and its warnings. Checked and built on the way in
//! ([`super::checks`]).

use std::sync::Arc;

use serde_json::Value;

use crate::schema::validator::CompiledSchema;

/// The schema the content stage must satisfy, with what the model should know about it.
pub struct TargetSchema {
    /// The schema exactly as given: local validation always uses this one.
    pub schema: Arc<Value>,
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
