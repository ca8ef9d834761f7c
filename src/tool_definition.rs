//! The tool definition (spec §2.1) as JSON, for agent frameworks to register verbatim.

use serde_json::Value;

use crate::media_type::MediaType;
use crate::schema::registry;

const DEFINITION: &str = include_str!("tool_definition.json");

/// The tool definition: `name`, `description`, `parameters` (JSON Schema of the arguments) and
/// `returns` (JSON Schema of the result). The bundled schemas' names are listed in the
/// description of `schema`, so an agent knows what it may ask for, and the document media types
/// read are the `enum` of `document.mediaType`.
pub fn tool_definition() -> Value {
    let mut definition: Value =
        serde_json::from_str(DEFINITION).expect("the tool definition is valid JSON");
    let names = registry::bundled_names();
    if let Some(Value::String(description)) =
        definition.pointer_mut("/parameters/properties/schema/oneOf/1/description")
    {
        description.push_str(&format!(" Registry names: {}.", names.join(", ")));
    }
    if let Some(Value::Object(media_type)) =
        definition.pointer_mut("/parameters/properties/document/properties/mediaType")
    {
        let names = MediaType::ALL.iter().map(|kind| Value::from(kind.name()));
        media_type.insert("enum".into(), names.collect());
    }
    definition
}
