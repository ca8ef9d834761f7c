//! `schemaMode: examples` (spec §8, a v2 item): a schema inferred from example objects, without
//! an LLM. Each key's type is the union of the types seen; a key is required when every example
//! has it; strings that all share a format (date-time, date, uuid, email, uri) get it; objects
//! are closed, so answers have exactly the examples' shape.

use serde_json::{Map, Value, json};

use crate::schema::walk::json_type;

/// Formats tried on string values, most specific first.
const FORMATS: [&str; 5] = ["date-time", "date", "uuid", "email", "uri"];

/// The schema of `examples` (all objects; the request checked that).
pub fn infer(examples: &[Value]) -> Value {
    let refs: Vec<&Value> = examples.iter().collect();
    let mut schema = merge(&refs);
    if let Value::Object(map) = &mut schema {
        map.insert(
            "description".into(),
            json!(format!(
                "Inferred from {} example{}.",
                examples.len(),
                if examples.len() == 1 { "" } else { "s" }
            )),
        );
    }
    schema
}

fn merge(values: &[&Value]) -> Value {
    let mut types: Vec<&str> = Vec::new();
    let mut add = |name: &'static str| {
        if !types.contains(&name) {
            types.push(name);
        }
    };
    for value in values {
        add(json_type(value));
    }
    if types.contains(&"number") {
        types.retain(|ty| *ty != "integer");
    }
    let mut schema = Map::new();
    let strings: Vec<&str> = values.iter().filter_map(|value| value.as_str()).collect();
    if let Some(format) = common_format(&strings) {
        schema.insert("format".into(), json!(format));
    }
    let items: Vec<&Value> = values
        .iter()
        .filter_map(|value| value.as_array())
        .flatten()
        .collect();
    if !items.is_empty() {
        schema.insert("items".into(), merge(&items));
    }
    let objects: Vec<&Map<String, Value>> = values
        .iter()
        .filter_map(|value| value.as_object())
        .collect();
    if types.contains(&"object") {
        let mut keys: Vec<&String> = Vec::new();
        for object in &objects {
            for key in object.keys() {
                if !keys.contains(&key) {
                    keys.push(key);
                }
            }
        }
        let properties: Map<String, Value> = keys
            .iter()
            .map(|key| {
                let seen: Vec<&Value> = objects
                    .iter()
                    .filter_map(|object| object.get(*key))
                    .collect();
                ((*key).clone(), merge(&seen))
            })
            .collect();
        let required: Vec<Value> = keys
            .iter()
            .filter(|key| objects.iter().all(|object| object.contains_key(**key)))
            .map(|key| json!(key))
            .collect();
        schema.insert("properties".into(), Value::Object(properties));
        if !required.is_empty() {
            schema.insert("required".into(), Value::Array(required));
        }
        schema.insert("additionalProperties".into(), json!(false));
    }
    let ty = match types.as_slice() {
        [single] => json!(single),
        many => json!(many),
    };
    let mut out = Map::new();
    out.insert("type".into(), ty);
    out.extend(schema);
    Value::Object(out)
}

/// The format every string satisfies, if there is one and at least one string.
fn common_format(strings: &[&str]) -> Option<&'static str> {
    if strings.is_empty() {
        return None;
    }
    FORMATS.into_iter().find(|format| {
        let schema = json!({ "format": format });
        let Ok(validator) = jsonschema::options()
            .should_validate_formats(true)
            .build(&schema)
        else {
            return false;
        };
        let looks_like_url = *format != "uri" || strings.iter().all(|text| text.contains("://"));
        looks_like_url && strings.iter().all(|text| validator.is_valid(&json!(text)))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn types_required_keys_and_formats_come_from_the_examples() {
        let schema = infer(&[
            json!({ "name": "Ada", "born": "1815-12-10", "email": "ada@example.com", "tags": ["math"], "score": 1, "note": null }),
            json!({ "name": "Alan", "born": "1912-06-23", "email": "alan@example.com", "tags": [], "score": 2.5, "site": "https://turing.org" }),
        ]);
        assert_eq!(schema["type"], "object");
        assert_eq!(
            schema["required"],
            json!(["name", "born", "email", "tags", "score"])
        );
        assert_eq!(schema["additionalProperties"], json!(false));
        let properties = &schema["properties"];
        assert_eq!(properties["name"], json!({ "type": "string" }));
        assert_eq!(
            properties["born"],
            json!({ "type": "string", "format": "date" })
        );
        assert_eq!(
            properties["email"],
            json!({ "type": "string", "format": "email" })
        );
        assert_eq!(
            properties["tags"],
            json!({ "type": "array", "items": { "type": "string" } })
        );
        assert_eq!(properties["score"], json!({ "type": "number" }));
        assert_eq!(properties["note"], json!({ "type": "null" }));
        assert_eq!(
            properties["site"],
            json!({ "type": "string", "format": "uri" })
        );
        assert_eq!(schema["description"], "Inferred from 2 examples.");
    }

    #[test]
    fn mixed_values_give_a_type_list() {
        let schema = infer(&[
            json!({ "id": 7 }),
            json!({ "id": "seven" }),
            json!({ "id": null }),
        ]);
        assert_eq!(
            schema["properties"]["id"]["type"],
            json!(["integer", "string", "null"])
        );
    }
}
