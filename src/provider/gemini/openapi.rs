//! Gemini's `responseSchema`: the OpenAPI 3.0 subset (upper-case types, `nullable`, string-only
//! enums, no references). Any keyword outside it is a hard 400, so the answer format is
//! converted node by node, every reference inlined and every dropped keyword recorded. A
//! recursive schema cannot be inlined: it stays JSON Schema (`responseJsonSchema`).
//!
//! The envelope becomes `{answer: <target, nullable>, _need: <string, nullable>}`: a union of
//! two objects cannot be expressed here.

use std::sync::Arc;

use serde_json::{Map, Value, json};

use crate::answer::format::{ANSWER_KEY, AnswerFormat, NEED_KEY, SchemaDialect};
use crate::schema::walk::resolve_local;
use crate::schema::walk::too_deep;

/// Keywords the OpenAPI subset takes besides `type`, `properties`, `items`, `anyOf`, `enum`.
const KEPT: &[&str] = &[
    "format",
    "title",
    "description",
    "nullable",
    "minItems",
    "maxItems",
    "required",
    "propertyOrdering",
    "minProperties",
    "maxProperties",
    "minLength",
    "maxLength",
    "pattern",
    "minimum",
    "maximum",
    "example",
];

/// `format` in the OpenAPI subset: the envelope's union of the answer and the need becomes two
/// nullable properties; a records envelope (no need branch) keeps its one property.
pub fn convert(mut format: AnswerFormat) -> AnswerFormat {
    let root = format.schema.clone();
    let union = format!("/properties/{ANSWER_KEY}/anyOf/0");
    let (body, with_need) = match root.pointer(&union) {
        Some(body) => (body, true),
        None => match root.pointer(&format!("/properties/{ANSWER_KEY}")) {
            Some(body) => (body, false),
            None => return format,
        },
    };
    let mut converter = Converter {
        root: &root,
        transforms: Vec::new(),
        refs: Vec::new(),
        recursive: false,
    };
    let mut answer = converter.node(body, &format!("/properties/{ANSWER_KEY}"), 0);
    if converter.recursive {
        format
            .transforms
            .push("/: recursive schema: sent as responseJsonSchema, not responseSchema".to_owned());
        return format;
    }
    format.transforms.extend(converter.transforms);
    format.dialect = SchemaDialect::OpenApi;
    if !with_need {
        format.schema = Arc::new(json!({
            "type": "OBJECT",
            "properties": { ANSWER_KEY: answer },
            "required": [ANSWER_KEY],
        }));
        return format;
    }
    if let Value::Object(map) = &mut answer {
        map.insert("nullable".into(), json!(true));
    }
    format.transforms.push(format!(
        "/: answer and {NEED_KEY} sent as two nullable properties (the OpenAPI subset has no union of objects)"
    ));
    format.schema = Arc::new(json!({
        "type": "OBJECT",
        "properties": {
            ANSWER_KEY: answer,
            NEED_KEY: {
                "type": "STRING",
                "nullable": true,
                "description": "Only when the text lacks a value a required field needs: what is missing. Otherwise null.",
            },
        },
        "propertyOrdering": [ANSWER_KEY, NEED_KEY],
    }));
    format
}

struct Converter<'a> {
    root: &'a Value,
    transforms: Vec<String>,
    /// References being inlined, outermost first.
    refs: Vec<String>,
    recursive: bool,
}

impl Converter<'_> {
    fn node(&mut self, node: &Value, at: &str, depth: usize) -> Value {
        let Value::Object(source) = node else {
            return json!({ "type": "TYPE_UNSPECIFIED" });
        };
        if let Some(Value::String(reference)) = source.get("$ref") {
            return self.inline(reference, at, depth);
        }
        if let Some(Value::Array(branches)) = source.get("anyOf") {
            return self.any_of(source, branches, at, depth);
        }
        let mut out = Map::new();
        let mut dropped = Vec::new();
        let ty = source.get("type").and_then(Value::as_str);
        out.insert(
            "type".into(),
            json!(ty.map_or_else(|| "TYPE_UNSPECIFIED".to_owned(), str::to_ascii_uppercase)),
        );
        for (keyword, value) in source {
            match keyword.as_str() {
                "type" => {}
                "properties" => {
                    if let Value::Object(properties) = value {
                        let converted: Map<String, Value> = properties
                            .iter()
                            .map(|(name, schema)| {
                                (
                                    name.clone(),
                                    self.node(
                                        schema,
                                        &format!("{at}/properties/{name}"),
                                        depth + 1,
                                    ),
                                )
                            })
                            .collect();
                        out.insert(keyword.clone(), Value::Object(converted));
                    }
                }
                "items" if value.is_object() => {
                    out.insert(
                        keyword.clone(),
                        self.node(value, &format!("{at}/items"), depth + 1),
                    );
                }
                "enum" => match value.as_array() {
                    Some(options) if options.iter().all(Value::is_string) => {
                        out.insert(keyword.clone(), value.clone());
                        if ty == Some("string") {
                            out.insert("format".into(), json!("enum"));
                        }
                    }
                    Some(options) => {
                        if options.contains(&Value::Null) {
                            out.insert("nullable".into(), json!(true));
                        }
                        dropped.push(format!("enum: {value}"));
                    }
                    None => dropped.push(format!("enum: {value}")),
                },
                "format" if out.contains_key("format") => {}
                _ if KEPT.contains(&keyword.as_str()) => {
                    out.insert(keyword.clone(), value.clone());
                }
                _ => dropped.push(format!("{keyword}: {value}")),
            }
        }
        if !dropped.is_empty() {
            self.state_dropped(&mut out, &dropped, at);
        }
        Value::Object(out)
    }

    /// A `$ref`, inlined; a reference back into itself is recursion, which this subset cannot
    /// carry.
    fn inline(&mut self, reference: &str, at: &str, depth: usize) -> Value {
        if self.refs.iter().any(|seen| seen == reference) || too_deep(depth) {
            self.recursive = true;
            return json!({ "type": "TYPE_UNSPECIFIED" });
        }
        let Some(target) = resolve_local(self.root, reference) else {
            return json!({ "type": "TYPE_UNSPECIFIED" });
        };
        self.refs.push(reference.to_owned());
        let inlined = self.node(target, at, depth + 1);
        self.refs.pop();
        inlined
    }

    /// An `anyOf`: its `null` branches as `nullable`, a single other branch as itself.
    fn any_of(
        &mut self,
        source: &Map<String, Value>,
        branches: &[Value],
        at: &str,
        depth: usize,
    ) -> Value {
        let (nulls, others): (Vec<&Value>, Vec<&Value>) = branches
            .iter()
            .partition(|branch| branch.get("type").and_then(Value::as_str) == Some("null"));
        let mut converted: Vec<Value> = others
            .iter()
            .enumerate()
            .map(|(index, branch)| self.node(branch, &format!("{at}/anyOf/{index}"), depth + 1))
            .collect();
        let mut out = if converted.len() == 1 {
            converted.remove(0)
        } else {
            json!({ "type": "TYPE_UNSPECIFIED", "anyOf": converted })
        };
        if !nulls.is_empty() {
            out["nullable"] = json!(true);
        }
        if let Some(description) = source.get("description") {
            out["description"] = description.clone();
        }
        out
    }

    /// States the keywords the subset does not take in the description.
    fn state_dropped(&mut self, out: &mut Map<String, Value>, dropped: &[String], at: &str) {
        self.transforms.push(format!(
            "{at}: {} not in the OpenAPI subset, stated in the description, checked locally",
            dropped.join(", ")
        ));
        let note = format!("Must also satisfy: {}.", dropped.join("; "));
        let description = match out.get("description").and_then(Value::as_str) {
            Some(text) => format!("{text}\n{note}"),
            None => note,
        };
        out.insert("description".into(), Value::String(description));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::answer::format::Shape;
    use crate::schema::subset::GEMINI;

    fn converted(target: Value) -> AnswerFormat {
        convert(AnswerFormat::build(&target, &GEMINI, Shape::One))
    }

    #[test]
    fn the_envelope_becomes_two_nullable_properties_with_references_inlined() {
        let format = converted(json!({
            "type": "object",
            "properties": {
                "status": { "enum": ["open", "closed"], "type": "string" },
                "rank": { "enum": [1, 2, 3] },
                "due": { "type": ["string", "null"], "format": "date-time" },
                "owner": { "$ref": "#/$defs/person" }
            },
            "required": ["status"],
            "additionalProperties": false,
            "$defs": { "person": { "type": "object", "properties": { "name": { "type": "string" } } } }
        }));
        assert_eq!(format.dialect, SchemaDialect::OpenApi);
        let schema = &format.schema;
        assert_eq!(schema["propertyOrdering"], json!(["answer", "_need"]));
        assert_eq!(schema["properties"]["_need"]["nullable"], json!(true));
        let answer = &schema["properties"]["answer"];
        assert_eq!(
            (answer["type"].as_str(), answer["nullable"].as_bool()),
            (Some("OBJECT"), Some(true))
        );
        assert_eq!(
            answer["properties"]["status"],
            json!({ "type": "STRING", "enum": ["open", "closed"], "format": "enum" })
        );
        assert_eq!(
            answer["properties"]["due"],
            json!({ "type": "STRING", "format": "date-time", "nullable": true })
        );
        assert_eq!(
            answer["properties"]["owner"]["properties"]["name"]["type"],
            json!("STRING")
        );
        assert!(
            answer["properties"]["rank"].get("enum").is_none(),
            "integer enums cannot be said here"
        );
        assert!(
            answer["properties"]["rank"]["description"]
                .as_str()
                .unwrap()
                .contains("enum: [1,2,3]")
        );
        assert!(
            !schema.to_string().contains("$ref")
                && !schema.to_string().contains("additionalProperties\":")
        );
    }

    #[test]
    fn a_records_envelope_keeps_its_one_property_and_its_list() {
        let target = json!({
            "type": "object",
            "properties": { "name": { "type": "string" }, "age": { "type": "integer" } },
            "additionalProperties": false
        });
        let format = convert(AnswerFormat::build(&target, &GEMINI, Shape::Records));
        assert_eq!(format.dialect, SchemaDialect::OpenApi);
        assert_eq!(format.schema["required"], json!([ANSWER_KEY]));
        assert!(format.schema["properties"].get(NEED_KEY).is_none());
        let list = &format.schema["properties"][ANSWER_KEY]["properties"]["records"];
        assert_eq!(list["type"], "ARRAY");
        assert_eq!(list["items"]["properties"]["age"]["type"], "INTEGER");
    }

    #[test]
    fn a_recursive_schema_is_unrolled_before_conversion() {
        let format = converted(json!({
            "type": "object",
            "properties": { "children": { "type": "array", "items": { "$ref": "#" } } }
        }));
        assert_eq!(format.dialect, SchemaDialect::OpenApi);
        assert!(
            format
                .transforms
                .iter()
                .any(|t| t.contains("recursive schema unrolled")),
            "{:?}",
            format.transforms
        );
        assert!(!format.schema.to_string().contains("$ref"));
    }
}
