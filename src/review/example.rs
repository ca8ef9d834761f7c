//! A correction made an example of its schema: the reviewed data added to the registered
//! schema's `examples` (JSON Schema's own keyword, which the model reads with the schema), as
//! its next minor version — examples change no instance's validity.

use serde_json::Value;

use super::queue::{Item, Refused};
use crate::schema::registry::{RegisteredSchema, Registration};

/// The most examples a schema keeps (the oldest give way): each one is sent with every call.
pub const MAX_EXAMPLES: usize = 5;

/// The registration of `registered` (the item's schema, by its name) with `item`'s reviewed
/// data as its newest example (in records mode, each record).
pub fn registration(item: &Item, registered: &RegisteredSchema) -> Result<Registration, Refused> {
    let reviewed = item.reviewed.as_ref().ok_or(Refused::Reviewed)?;
    let mut schema = Value::clone(&registered.schema);
    let Some(root) = schema.as_object_mut() else {
        return Err(Refused::NotNamed(registered.name.clone()));
    };
    let fresh: Vec<Value> = match (&reviewed.data, item.schema.get("items")) {
        (Value::Array(records), Some(_)) => records.clone(),
        (data, _) => vec![data.clone()],
    };
    let mut examples = match root.remove("examples") {
        Some(Value::Array(examples)) => examples,
        _ => Vec::new(),
    };
    examples.retain(|example| !fresh.contains(example));
    examples.extend(fresh);
    let over = examples.len().saturating_sub(MAX_EXAMPLES);
    examples.drain(..over);
    root.insert("examples".into(), Value::Array(examples));
    Ok(Registration {
        name: registered.name.clone(),
        schema,
        manual: registered.manual.clone(),
        version: Some(next_minor(&registered.version)),
    })
}

/// `MAJOR.MINOR` one minor version on (`1.2` → `1.3`).
fn next_minor(version: &str) -> String {
    let (major, minor) = version.split_once('.').unwrap_or((version, "0"));
    let minor: u64 = minor.parse().unwrap_or(0);
    format!("{major}.{}", minor + 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_next_minor_version() {
        assert_eq!(next_minor("1.2"), "1.3");
        assert_eq!(next_minor("2.9"), "2.10");
    }
}
