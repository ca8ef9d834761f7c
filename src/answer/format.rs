//! The answer format: the schema the provider is sent, built from the target schema.
//!
//! The target is wrapped in an envelope, `{"answer": anyOf[<target>, {"_need": string}]}`: the
//! root stays an object (strict mode rejects a root `anyOf`), and the two branches cannot both
//! match, so a model constrained by the schema either answers or names what is missing, never
//! both (spec §4.2). The target's `$defs`/`definitions` move to the envelope's root and its
//! references are rewritten to match.

use serde_json::{Map, Value, json};

use crate::provider::strict_schema;

/// The envelope's single property.
pub const ANSWER_KEY: &str = "answer";
/// The property of the need branch (spec §4.2).
pub const NEED_KEY: &str = "_need";

/// What a provider profile needs done to the schema it is sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct FormatOptions {
    /// Rewrite into OpenAI's strict subset ([`strict_schema`]).
    pub strict_subset: bool,
    /// Leave `pattern` out of the sent schema (for servers whose grammar conversion fails on
    /// regular expressions), stating it in the description instead.
    pub drop_patterns: bool,
}

/// The schema a provider is sent, and what decoding an answer needs to know about it.
#[derive(Debug, Clone, PartialEq)]
pub struct AnswerFormat {
    /// The envelope schema.
    pub schema: Value,
    /// A name for the schema, as strict mode wants one: `^[a-zA-Z0-9_-]{1,64}$`.
    pub name: String,
    /// Whether answers come through [`strict_schema::to_strict`] and need decoding back.
    pub strict_subset: bool,
    /// How the sent schema differs from the target, for the trace.
    pub transforms: Vec<String>,
}

impl AnswerFormat {
    pub fn build(target: &Value, options: FormatOptions) -> Self {
        let mut transforms = Vec::new();
        let Hoisted { mut body, mut defs } = hoist(target);
        if options.strict_subset {
            body = strict_schema::to_strict(&body, "", &mut transforms);
            for (name, schema) in defs.iter_mut() {
                *schema =
                    strict_schema::to_strict(schema, &format!("/$defs/{name}"), &mut transforms);
            }
        } else {
            strip_annotations(&mut body);
        }
        if options.drop_patterns {
            move_patterns(&mut body, "", &mut transforms);
            for (name, schema) in defs.iter_mut() {
                move_patterns(schema, &format!("/$defs/{name}"), &mut transforms);
            }
        }
        let need = json!({
            "type": "object",
            "properties": {
                NEED_KEY: {
                    "type": "string",
                    "description": "What the text does not say that a required field needs.",
                },
            },
            "required": [NEED_KEY],
            "additionalProperties": false,
        });
        let mut schema = json!({
            "type": "object",
            "properties": { ANSWER_KEY: { "anyOf": [body, need] } },
            "required": [ANSWER_KEY],
            "additionalProperties": false,
        });
        if !defs.is_empty() {
            schema["$defs"] = Value::Object(defs);
        }
        Self {
            schema,
            name: schema_name(target),
            strict_subset: options.strict_subset,
            transforms,
        }
    }
}

/// `user-action-record` → `user-action-record`; anything else becomes `answer`.
fn schema_name(target: &Value) -> String {
    let title = target
        .get("title")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let name: String = title
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .take(64)
        .collect();
    if name.trim_matches('_').is_empty() {
        "answer".to_owned()
    } else {
        name
    }
}

struct Hoisted {
    body: Value,
    defs: Map<String, Value>,
}

/// Name of the definition holding the target's body when references point into it.
const BODY_DEF: &str = "structure_target";

fn hoist(target: &Value) -> Hoisted {
    let mut body = target.clone();
    let mut defs = Map::new();
    let mut renamed_definitions = Vec::new();
    if let Value::Object(map) = &mut body {
        if let Some(Value::Object(found)) = map.remove("$defs") {
            defs.extend(found);
        }
        if let Some(Value::Object(found)) = map.remove("definitions") {
            for (name, schema) in found {
                let new_name = if defs.contains_key(&name) {
                    format!("definitions_{name}")
                } else {
                    name.clone()
                };
                renamed_definitions.push((name, new_name.clone()));
                defs.insert(new_name, schema);
            }
        }
    }
    let mut points_into_body = false;
    let mut rewrite = |reference: &str| -> String {
        let Some(pointer) = reference.strip_prefix('#') else {
            return reference.to_owned();
        };
        if pointer.starts_with("/$defs/") {
            return reference.to_owned();
        }
        if let Some(rest) = pointer.strip_prefix("/definitions/") {
            let (name, tail) = rest
                .split_once('/')
                .map_or((rest, ""), |(name, tail)| (name, tail));
            let new_name = renamed_definitions
                .iter()
                .find(|(old, _)| old == name)
                .map_or(name, |(_, new)| new.as_str());
            let tail = if tail.is_empty() {
                String::new()
            } else {
                format!("/{tail}")
            };
            return format!("#/$defs/{new_name}{tail}");
        }
        points_into_body = true;
        format!("#/$defs/{BODY_DEF}{pointer}")
    };
    rewrite_refs(&mut body, &mut rewrite);
    for schema in defs.values_mut() {
        rewrite_refs(schema, &mut rewrite);
    }
    if points_into_body {
        defs.insert(BODY_DEF.to_owned(), body);
        body = json!({ "$ref": format!("#/$defs/{BODY_DEF}") });
    }
    Hoisted { body, defs }
}

fn rewrite_refs(node: &mut Value, rewrite: &mut impl FnMut(&str) -> String) {
    match node {
        Value::Object(map) => {
            for (key, child) in map.iter_mut() {
                match (key.as_str(), &*child) {
                    ("$ref", Value::String(reference)) => {
                        *child = Value::String(rewrite(reference))
                    }
                    ("enum" | "const" | "default" | "examples", _) => {}
                    _ => rewrite_refs(child, rewrite),
                }
            }
        }
        Value::Array(items) => items
            .iter_mut()
            .for_each(|item| rewrite_refs(item, rewrite)),
        _ => {}
    }
}

/// Drops what only matters to the schema's author (`$schema`, `$id`, `$comment`, `x-*`).
fn strip_annotations(node: &mut Value) {
    if let Value::Object(map) = node {
        map.retain(|key, _| {
            !matches!(key.as_str(), "$schema" | "$id" | "$comment") && !key.starts_with("x-")
        });
    }
}

fn move_patterns(node: &mut Value, at: &str, transforms: &mut Vec<String>) {
    match node {
        Value::Object(map) => {
            if let Some(Value::String(pattern)) = map.remove("pattern") {
                transforms.push(format!(
                    "{}: pattern stated in the description, checked locally",
                    if at.is_empty() { "/" } else { at }
                ));
                let note = format!("Must match the regular expression {pattern}.");
                let description = match map.get("description").and_then(Value::as_str) {
                    Some(text) => format!("{text}\n{note}"),
                    None => note,
                };
                map.insert("description".into(), Value::String(description));
            }
            for (key, child) in map.iter_mut() {
                if !matches!(key.as_str(), "enum" | "const" | "default" | "examples") {
                    move_patterns(child, &format!("{at}/{key}"), transforms);
                }
            }
        }
        Value::Array(items) => {
            for (index, item) in items.iter_mut().enumerate() {
                move_patterns(item, &format!("{at}/{index}"), transforms);
            }
        }
        _ => {}
    }
}
