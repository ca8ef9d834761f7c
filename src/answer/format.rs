//! The answer format: the schema the provider is sent, built from the target schema.
//!
//! The target is wrapped in an envelope, `{"answer": anyOf[<target>, {"_need": string}]}`: the
//! root stays an object (strict mode rejects a root `anyOf`), and the two branches cannot both
//! match, so a model constrained by the schema either answers or names what is missing, never
//! both (spec §4.2). The target's `$defs`/`definitions` move to the envelope's root and its
//! references are rewritten to match.

use std::cell::RefCell;
use std::sync::Arc;

use serde_json::{Map, Value, json};

use crate::lru::{Recent, same_json};
use crate::schema::subset::totals::{self, Totals};
use crate::schema::subset::{Subset, to_subset};
use crate::schema::walk::{self, Next};

/// The envelope's single property.
pub const ANSWER_KEY: &str = "answer";
/// The property of the need branch (spec §4.2).
pub const NEED_KEY: &str = "_need";
/// The answer's property in records mode: `{"answer": {"records": [...]}}`.
pub const RECORDS_KEY: &str = "records";

/// What one answer holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    /// One object of the target schema, or what the text lacks.
    One,
    /// Every record the text holds, each an object of the target schema (none is an answer too).
    Records,
    /// What one part of a long text gives of the object (`{"answer": <object>}`, no need branch:
    /// a part that gives nothing answers an empty object); also a choice among candidates.
    Part,
}

/// The schema language of [`AnswerFormat::schema`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SchemaDialect {
    /// JSON Schema (the envelope `{"answer": anyOf[target, need]}`).
    JsonSchema,
    /// Gemini's OpenAPI subset (the envelope `{"answer": target?, "_need": string?}`).
    OpenApi,
}

/// Envelopes kept per instance, most recently used last, by subset, shape and target schema
/// (compared as JSON: writing it out for every lookup cost more than the comparison).
const KEPT_FORMATS: usize = 16;

thread_local! {
    static BUILT: RefCell<Recent<(Subset, Shape, Value), AnswerFormat>> =
        const { RefCell::new(Recent::new(KEPT_FORMATS)) };
}

#[cfg(test)]
thread_local! {
    /// The target of every envelope built on this thread (tests see what a call built).
    pub(crate) static BUILT_HERE: RefCell<Vec<String>> = const { RefCell::new(Vec::new()) };
}

/// The schema a provider is sent, and what decoding an answer needs to know about it. Its
/// schemas are shared: an envelope kept per instance is cloned for every call that uses it.
#[derive(Debug, Clone, PartialEq)]
pub struct AnswerFormat {
    /// The envelope schema.
    pub schema: Arc<Value>,
    /// A name for the schema, as strict mode wants one: `^[a-zA-Z0-9_-]{1,64}$`.
    pub name: String,
    /// Whether free-form values travel encoded (see [`Subset::encode_free_form`]) and answers
    /// need decoding back.
    pub encoded: bool,
    /// The schema the subset was applied to (the target with its definitions hoisted, and
    /// recursion unrolled where the provider takes none): answers are mapped back along it.
    pub source: Arc<Value>,
    /// How the sent schema differs from the target, for the trace.
    pub transforms: Vec<String>,
    pub dialect: SchemaDialect,
    /// Whether the answer may take the need path instead of giving the object.
    pub need: bool,
}

impl AnswerFormat {
    /// The envelope for `target` (the content stage): the object, or what the text lacks; in
    /// records mode, the list of records. Kept per instance for the schemas used last:
    /// building it is a good part of a call.
    pub fn build(target: &Value, subset: &Subset, shape: Shape) -> Self {
        let hit = BUILT.with_borrow_mut(|built| {
            (built.find(|(kept, kept_shape, kept_target)| {
                (kept, *kept_shape) == (subset, shape) && same_json(kept_target, target)
            }))
            .cloned()
        });
        if let Some(format) = hit {
            return format;
        }
        let format = match shape {
            Shape::One => Self::envelope(target, subset),
            Shape::Records => Self::records(target, subset),
            Shape::Part => Self::part(target, subset),
        };
        #[cfg(test)]
        BUILT_HERE.with_borrow_mut(|built| built.push(target.to_string()));
        let key = (*subset, shape, target.clone());
        BUILT.with_borrow_mut(|built| built.insert(key, format.clone()));
        format
    }

    /// `{"answer": {"records": [<target>, ...]}}`: no need branch, an empty list says the text
    /// holds no record.
    fn records(target: &Value, subset: &Subset) -> Self {
        let list = |record: Value| only(RECORDS_KEY, json!({ "type": "array", "items": record }));
        Self::shape(target, subset, list, |body| only(ANSWER_KEY, body))
    }

    /// `{"answer": <target>}`: the object alone.
    fn part(target: &Value, subset: &Subset) -> Self {
        Self::shape(target, subset, |body| body, |body| only(ANSWER_KEY, body))
    }

    /// `{"answer": anyOf[<target>, {"_need": string}]}`: the object, or what the text lacks.
    fn envelope(target: &Value, subset: &Subset) -> Self {
        let need = only(
            NEED_KEY,
            json!({
                "type": "string",
                "description": "What the text lacks that a required field needs.",
            }),
        );
        let format = Self::shape(
            target,
            subset,
            |body| body,
            |body| only(ANSWER_KEY, json!({ "anyOf": [body, need.clone()] })),
        );
        Self {
            need: true,
            ..format
        }
    }

    /// `schema` itself as the answer's shape, without the envelope (the schema builder).
    pub fn plain(schema: &Value, subset: &Subset) -> Self {
        Self::shape(schema, subset, |body| body, |body| body)
    }

    /// The target's body in `subset`, as `answer` holds it (the answer is read back along the
    /// same shape), in the envelope `wrap` makes.
    fn shape(
        target: &Value,
        subset: &Subset,
        answer: impl Fn(Value) -> Value,
        wrap: impl Fn(Value) -> Value,
    ) -> Self {
        let mut transforms = Vec::new();
        let Hoisted { mut body, mut defs } = hoist(target);
        if !subset.recursive_refs && is_recursive(&body, &defs) {
            body = unroll(&body, &defs, UNROLL_DEPTH);
            defs.clear();
            transforms.push(format!(
                "/: recursive schema unrolled to {UNROLL_DEPTH} levels (the provider takes no recursion); \
                 deeper values travel as JSON-encoded strings"
            ));
        }
        let lower = |body: &Value, defs: &Map<String, Value>, transforms: &mut Vec<String>| {
            let body = to_subset(body, subset, "", transforms);
            let mut schema = wrap(answer(body));
            if !defs.is_empty() {
                let defs = defs.iter().map(|(name, schema)| {
                    let at = format!("/$defs/{name}");
                    (name.clone(), to_subset(schema, subset, &at, transforms))
                });
                schema["$defs"] = Value::Object(defs.collect());
            }
            schema
        };
        let mut schema = lower(&body, &defs, &mut transforms);
        if let Some(limits) = &subset.limits
            && !Totals::of(&schema).within(limits)
        {
            transforms.clear();
            let sent = |body: &Value, defs: &Map<String, Value>| lower(body, defs, &mut Vec::new());
            totals::fit(&mut body, &mut defs, limits, sent, &mut transforms);
            schema = lower(&body, &defs, &mut transforms);
        }
        let mut source = answer(body);
        if !defs.is_empty()
            && let Value::Object(map) = &mut source
        {
            map.insert("$defs".into(), Value::Object(defs));
        }
        Self {
            schema: Arc::new(schema),
            name: schema_name(target),
            encoded: subset.encode_free_form,
            source: Arc::new(source),
            transforms,
            dialect: SchemaDialect::JsonSchema,
            need: false,
        }
    }
}

/// `{"<key>": <schema>}` as strict mode takes an object: the key required, nothing else allowed.
/// The envelope, the records list and the need branch are each one.
fn only(key: &str, schema: Value) -> Value {
    json!({
        "type": "object",
        "properties": { key: schema },
        "required": [key],
        "additionalProperties": false,
    })
}

/// How deep recursion is unrolled for providers that take no recursive schema.
const UNROLL_DEPTH: usize = 4;

/// Whether a `$defs` entry refers back to itself, directly or not.
fn is_recursive(body: &Value, defs: &Map<String, Value>) -> bool {
    fn refs(node: &Value, found: &mut Vec<String>) {
        walk::objects(node, &mut |map, _| {
            if let Some(Value::String(reference)) = map.get("$ref")
                && let Some(name) = reference.strip_prefix("#/$defs/")
            {
                found.push(name.split('/').next().unwrap_or(name).to_owned());
            }
            Next::Descend
        });
    }
    let mut start = Vec::new();
    refs(body, &mut start);
    defs.keys().any(|name| {
        let mut seen = Vec::new();
        let mut queue = vec![name.clone()];
        while let Some(current) = queue.pop() {
            let mut next = Vec::new();
            if let Some(def) = defs.get(&current) {
                refs(def, &mut next);
            }
            for reference in next {
                if &reference == name {
                    return true;
                }
                if !seen.contains(&reference) {
                    seen.push(reference.clone());
                    queue.push(reference);
                }
            }
        }
        false
    })
}

/// `node` with every `#/$defs/…` reference replaced by its definition, `depth` references deep;
/// below that, any value (`{}`).
fn unroll(node: &Value, defs: &Map<String, Value>, depth: usize) -> Value {
    match node {
        Value::Object(map) => {
            if let Some(Value::String(reference)) = map.get("$ref")
                && let Some(target) = reference.strip_prefix('#').and_then(|pointer| {
                    let defs_root = json!({ "$defs": defs });
                    defs_root.pointer(pointer).cloned()
                })
            {
                return if depth == 0 {
                    json!({})
                } else {
                    unroll(&target, defs, depth - 1)
                };
            }
            Value::Object(
                map.iter()
                    .map(|(key, child)| {
                        let value = if walk::is_value_keyword(key) {
                            child.clone()
                        } else {
                            unroll(child, defs, depth)
                        };
                        (key.clone(), value)
                    })
                    .collect(),
            )
        }
        Value::Array(items) => {
            Value::Array(items.iter().map(|item| unroll(item, defs, depth)).collect())
        }
        other => other.clone(),
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
    walk::objects_mut(node, &mut |map| {
        if let Some(Value::String(reference)) = map.get_mut("$ref") {
            *reference = rewrite(reference);
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::subset::{ANTHROPIC, OPENAI_STRICT};

    #[test]
    fn kept_envelopes_are_per_subset_and_schema() {
        let schema = json!({ "type": "object", "properties": { "a": { "type": "string", "minLength": 2 } } });
        let openai = AnswerFormat::build(&schema, &OPENAI_STRICT, Shape::One);
        let anthropic = AnswerFormat::build(&schema, &ANTHROPIC, Shape::One);
        assert_ne!(
            openai.schema, anthropic.schema,
            "one subset's envelope never answers for another"
        );
        assert_eq!(
            AnswerFormat::build(&schema, &OPENAI_STRICT, Shape::One),
            openai
        );
        let other = json!({ "type": "object", "properties": { "b": { "type": "integer" } } });
        assert_ne!(
            AnswerFormat::build(&other, &OPENAI_STRICT, Shape::One).schema,
            openai.schema
        );
        assert_eq!(
            AnswerFormat::envelope(&schema, &ANTHROPIC),
            anthropic,
            "kept as built"
        );
    }
}
