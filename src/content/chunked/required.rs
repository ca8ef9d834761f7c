//! What the schema of one record requires at its root: left out of the schema a chunk is sent
//! (a model leaves a value out rather than invent it), and named in an incomplete record's need.
//!
//! The root may be a reference (`{"$ref": "#/$defs/Order", "$defs": {...}}`, as schema
//! generators write it): the record's properties are then those of the definition it points to.

use serde_json::{Map, Value};

use crate::content::grounding::Grounded;
use crate::schema::walk::{self, escape};

/// Keywords a referencing root may carry beside its `$ref` and still be the definition it
/// points to: none of them constrains a value.
const BESIDE_A_ROOT_REF: &[&str] = &[
    "$ref",
    "$schema",
    "$id",
    "$defs",
    "definitions",
    "$comment",
    "title",
    "description",
    "examples",
];

/// The schema object that describes a record's root: `schema`, or the definition its root
/// `$ref` points to (through a chain of them) when nothing beside the reference constrains a
/// value.
pub(in crate::content) fn record_root(schema: &Value) -> &Value {
    let found = walk::follow_refs(schema, schema, |map| {
        map.keys()
            .all(|key| BESIDE_A_ROOT_REF.contains(&key.as_str()))
    });
    // A reference to a boolean schema says nothing of a record's fields.
    if found.is_object() { found } else { schema }
}

/// `schema` with nothing required at its root. A referencing root becomes the definition it
/// points to, beside the root's own definitions (the references inside still resolve).
pub(in crate::content) fn without_required(schema: &Value) -> Value {
    let root = record_root(schema);
    let mut loose = root.clone();
    if let Value::Object(map) = &mut loose {
        map.remove("required");
        if !std::ptr::eq(root, schema) {
            keep_definitions(map, schema);
        }
    }
    loose
}

/// Copies the document root's `$defs` and `definitions` into `map`, unless it has its own.
fn keep_definitions(map: &mut Map<String, Value>, schema: &Value) {
    for key in ["$defs", "definitions", "$schema"] {
        if let Some(found) = schema.get(key) {
            map.entry(key).or_insert_with(|| found.clone());
        }
    }
    map.remove("$id");
}

/// The properties `schema` requires at its root that `record` lacks.
pub(in crate::content) fn missing<'s>(record: &Value, schema: &'s Value) -> Vec<&'s str> {
    let required = record_root(schema)
        .get("required")
        .and_then(Value::as_array);
    required
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .filter(|name| record.get(*name).is_none())
        .collect()
}

/// What an incomplete record lacks, in the need's words.
pub(in crate::content) fn need_of(record: &Value, schema: &Value) -> String {
    let root = record_root(schema);
    let missing: Vec<(String, Option<String>)> = missing(record, schema)
        .into_iter()
        .map(|name| {
            let description = root
                .pointer(&format!("/properties/{}/description", escape(name)))
                .and_then(Value::as_str)
                .map(str::to_owned);
            (format!("/{}", escape(name)), description)
        })
        .collect();
    Grounded::need(&missing)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn order() -> Value {
        json!({
            "type": "object",
            "properties": {
                "order": { "type": "string", "description": "The order's number." },
                "customer": { "$ref": "#/$defs/Customer" },
            },
            "required": ["order", "customer"],
        })
    }

    #[test]
    fn a_plain_root_loses_its_required_list_and_nothing_else() {
        let loose = without_required(&order());
        let mut expected = order();
        expected.as_object_mut().unwrap().remove("required");
        assert_eq!(loose, expected);
    }

    #[test]
    fn a_referencing_root_is_read_through_its_definition() {
        let schema = json!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "$id": "https://example.com/order.json",
            "title": "Orders",
            "$ref": "#/$defs/Order",
            "$defs": { "Order": order(), "Customer": { "type": "string" } },
        });
        let loose = without_required(&schema);
        assert_eq!(loose.get("required"), None);
        assert_eq!(loose.get("$ref"), None);
        assert_eq!(loose["properties"], order()["properties"]);
        assert_eq!(
            loose["$defs"], schema["$defs"],
            "the references inside still resolve"
        );
        assert_eq!(loose.get("$id"), None, "the definition is not the document");
        let record = json!({ "customer": "Ada" });
        assert_eq!(missing(&record, &schema), vec!["order"]);
        assert!(need_of(&record, &schema).contains("order"));
        assert!(need_of(&record, &schema).contains("The order's number."));
    }

    #[test]
    fn a_chain_of_references_and_the_older_definitions_keyword_are_followed() {
        let schema = json!({
            "$ref": "#/definitions/Alias",
            "definitions": { "Alias": { "$ref": "#/definitions/Order" }, "Order": order() },
        });
        assert_eq!(missing(&json!({}), &schema), vec!["order", "customer"]);
        assert_eq!(without_required(&schema).get("required"), None);
    }

    #[test]
    fn a_root_that_constrains_beside_its_reference_or_points_outside_is_taken_as_it_is() {
        let constrained = json!({
            "$ref": "#/$defs/Order",
            "required": ["note"],
            "$defs": { "Order": order() },
        });
        assert_eq!(missing(&json!({}), &constrained), vec!["note"]);
        assert_eq!(
            without_required(&constrained).get("$ref"),
            Some(&json!("#/$defs/Order"))
        );
        let remote = json!({ "$ref": "https://example.com/order.json" });
        assert_eq!(without_required(&remote), remote);
        assert!(missing(&json!({}), &remote).is_empty());
        let looping = json!({ "$ref": "#" });
        assert_eq!(without_required(&looping), looping);
    }
}
