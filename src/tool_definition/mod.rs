//! The tool definition (spec §2.1) as JSON, for agent frameworks to register verbatim: its
//! name, description and arguments (`definition.json`, held to the argument reader by
//! `tests/core_contract.rs`) and its result (`returns.json`, generated from the result's types
//! by [`returns`] with the `json-schema` feature).

#[cfg(feature = "json-schema")]
pub mod returns;

use serde_json::Value;

use crate::error::StructureError;
use crate::media_type::MediaType;
use crate::ports::KeyValue;
use crate::schema::registry::{self, Registry};
use crate::scope::Scope;

const DEFINITION: &str = include_str!("definition.json");
const RETURNS: &str = include_str!("returns.json");

/// The tool definition: `name`, `description`, `parameters` (JSON Schema of the arguments) and
/// `returns` (JSON Schema of the result: an outcome or an error). The bundled schemas' names
/// are listed in the description of `schema`, so an agent knows what it may ask for, and the
/// document media types read are the `enum` of `document.mediaType`.
pub fn tool_definition() -> Value {
    tool_definition_naming(&registry::bundled_names())
}

/// The tool definition as `scope` may call it: the description of `schema` names what its
/// project and tenant registered beside the bundled schemas (see [`MAX_LISTED_NAMES_CHARS`]).
pub fn for_scope(key_value: &dyn KeyValue, scope: &Scope) -> Result<Value, StructureError> {
    let names = Registry::new(key_value, scope).names()?;
    let names: Vec<&str> = names.iter().map(String::as_str).collect();
    Ok(tool_definition_naming(&names))
}

/// The most characters of registry names the description of `schema` lists: a tenant with
/// thousands of schemas does not send a megabyte of tool definition with every `tools/list`;
/// the names left out are counted, and MCP's `resources/list` gives every one.
pub const MAX_LISTED_NAMES_CHARS: usize = 2_000;

/// The tool definition with `names` as the registry names the description of `schema` lists
/// (MCP lists a caller's own beside the bundled ones), as many as [`MAX_LISTED_NAMES_CHARS`]
/// hold.
pub fn tool_definition_naming(names: &[&str]) -> Value {
    let mut definition: Value =
        serde_json::from_str(DEFINITION).expect("the tool definition is valid JSON");
    if let Some(Value::String(description)) =
        definition.pointer_mut("/parameters/properties/schema/oneOf/1/description")
    {
        description.push_str(&listed(names));
    }
    if let Some(Value::Object(media_type)) =
        definition.pointer_mut("/parameters/properties/document/properties/mediaType")
    {
        let names = MediaType::ALL.iter().map(|kind| Value::from(kind.name()));
        media_type.insert("enum".into(), names.collect());
    }
    let returns = serde_json::from_str(RETURNS).expect("the generated returns is valid JSON");
    definition["returns"] = returns;
    definition
}

/// ` Registry names: a, b, c.`, cut at [`MAX_LISTED_NAMES_CHARS`] with the rest counted.
fn listed(names: &[&str]) -> String {
    let mut listed = String::new();
    let mut shown = 0;
    for name in names {
        if listed.len() + name.len() + 2 > MAX_LISTED_NAMES_CHARS {
            break;
        }
        if shown > 0 {
            listed.push_str(", ");
        }
        listed.push_str(name);
        shown += 1;
    }
    match names.len() - shown {
        0 => format!(" Registry names: {listed}."),
        more => {
            format!(" Registry names: {listed}, and {more} more (the registry lists every one).")
        }
    }
}
