//! What a schema's root asks for, and the object the content stage works on.
//!
//! The content stage asks for, validates and grounds objects. Any other root is planned into one
//! here, and the result mapped back by [`Plan::finish`]:
//!
//! - a root that **can be an object** (`"type": "object"`, no `type`, a `type` list holding
//!   `object`, combinators whose branches allow one) is worked on as it is; where it also allows
//!   other values, the schema the model is sent asks for the object alone, and the original
//!   still validates the answer;
//! - an **array of objects** (`{"type": "array", "items": {…}}`) is records mode: the items are
//!   the record schema, and the whole array is checked against the root at the end
//!   (`minItems`, `maxItems`, `uniqueItems`, …);
//! - anything else (a string, a number, a boolean, an `enum`, a `const`, an array of scalars) is
//!   **wrapped** as `{"value": <root>}` and unwrapped in the result.
//!
//! ```
//! use serde_json::json;
//! use structure::schema::root::{Root, classify};
//!
//! assert!(matches!(classify(&json!({ "properties": { "a": {} } })), Ok(Root::Object)));
//! assert!(matches!(classify(&json!({ "enum": ["spam", "ham"] })), Ok(Root::Wrapped)));
//! let orders = json!({ "type": "array", "items": { "type": "object" }, "minItems": 1 });
//! assert!(matches!(classify(&orders), Ok(Root::Records)));
//! assert!(classify(&json!(false)).is_err());
//! ```

use std::sync::Arc;

use serde_json::{Map, Value, json};

use crate::error::StructureError;
use crate::outcome::{Answer, Outcome, Source};
use crate::schema::target::TargetSchema;
use crate::schema::validator::CompiledSchema;
use crate::schema::walk::resolve_local;
use crate::schema::walk::{self, too_deep};

/// The property a wrapped root travels in: `{"value": <root>}`.
pub const WRAPPED_KEY: &str = "value";

/// Keywords of a root that belong to the document, not to the value: they stay at the root of
/// what the content stage works on (`id` is draft-04's `$id`).
const DOCUMENT_KEYWORDS: [&str; 5] = ["$schema", "$id", "id", "$defs", "definitions"];

/// Whether `value` under `keyword` at a root is the document's: `id` only as draft-04 writes it.
fn is_document_keyword(keyword: &str, value: &Value) -> bool {
    keyword != "id" || value.is_string()
}

/// How the content stage works on a root.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Root {
    /// An object (or what can be one): as it is.
    Object,
    /// An array of objects: records mode, the whole array checked at the end.
    Records,
    /// Any other value: wrapped as `{"value": …}`.
    Wrapped,
}

/// How `schema`'s root is worked on; a root nothing validates (`false`) is an `invalid-schema`.
pub fn classify(schema: &Value) -> Result<Root, StructureError> {
    if schema == &Value::Bool(false) {
        return Err(StructureError::invalid_schema(
            "the schema is `false`: no value validates against it",
        ));
    }
    if let Some(reference) = reference_cycle(schema) {
        return Err(StructureError::invalid_schema(format!(
            "the schema's root is a reference back to itself ($ref {reference:?}): it never says \
             what a value is"
        )));
    }
    if can_be_object(schema, schema, 0) {
        return Ok(Root::Object);
    }
    let Value::Object(map) = schema else {
        return Ok(Root::Wrapped);
    };
    let array = match map.get("type") {
        Some(Value::String(ty)) => ty == "array",
        Some(Value::Array(types)) => types.iter().any(|ty| ty == "array"),
        _ => false,
    };
    let records = array
        && !map.contains_key("prefixItems")
        && map
            .get("items")
            .is_some_and(|items| is_record_schema(schema, items))
        && item_schema(schema).is_some();
    // An array whose items refer back to the array (a tree) is one value, wrapped.
    Ok(if records {
        Root::Records
    } else {
        Root::Wrapped
    })
}

/// The schema's root as a plan for the content stage: the target it works on, and how its
/// result maps back. `records` is the caller's `records: true`: an array root is records already
/// (an error says so), any other root then describes one record.
pub fn plan(target: TargetSchema, records: bool) -> Result<(TargetSchema, Plan), StructureError> {
    let root = classify(&target.schema)?;
    match root {
        Root::Records if records => Err(StructureError::invalid_request(
            "records",
            "the schema's root is an array of records, which runs as records mode by itself: \
             leave `records` out (or give the schema of one record with `records: true`)",
        )),
        Root::Records => {
            let min_items = target.schema.get("minItems").and_then(Value::as_u64);
            let plan = Plan {
                root,
                records: true,
                whole: Some((target.compiled.clone(), min_items.unwrap_or(0))),
            };
            let item = item_schema(&target.schema).ok_or_else(|| {
                StructureError::invalid_schema("the array root's items are not a record schema")
            })?;
            Ok((retarget(target, item)?, plan))
        }
        Root::Wrapped => {
            let wrapped = wrapper(&target.schema);
            let plan = Plan {
                root,
                records,
                whole: None,
            };
            let mut wrapped = retarget(target, wrapped)?;
            wrapped.wrapped = true;
            Ok((wrapped, plan))
        }
        Root::Object => {
            let plan = Plan {
                root,
                records,
                whole: None,
            };
            if describes_object(&target.schema, &target.schema, 0) {
                return Ok((target, plan));
            }
            // The original still validates (`compiled`); the model is asked for the object.
            let schema = objectified(&target.schema);
            Ok((
                TargetSchema {
                    schema: Arc::new(schema),
                    ..target
                },
                plan,
            ))
        }
    }
}

/// `target` working on `schema` instead: compiled anew (the original passed its checks).
fn retarget(target: TargetSchema, schema: Value) -> Result<TargetSchema, StructureError> {
    let compiled = CompiledSchema::compile_checked(&schema)?;
    Ok(TargetSchema {
        schema: Arc::new(schema),
        compiled,
        ..target
    })
}

/// How a planned call's result maps back to the schema's root.
#[derive(Clone)]
pub struct Plan {
    root: Root,
    /// Whether the content stage reads records.
    records: bool,
    /// An array root: the original schema, which the whole list of records must satisfy, and
    /// its `minItems`.
    whole: Option<(CompiledSchema, u64)>,
}

impl Plan {
    /// Whether the content stage reads every record of the text.
    pub fn records(&self) -> bool {
        self.records
    }

    /// `outcome` as the schema's root asks for it.
    pub fn finish(&self, outcome: Outcome) -> Outcome {
        match self.root {
            Root::Object => outcome,
            Root::Wrapped => unwrapped(outcome, self.records),
            Root::Records => match &self.whole {
                Some((whole, min_items)) => checked_whole(outcome, whole, *min_items),
                None => outcome,
            },
        }
    }
}

/// The `$ref` that leads the root's chain of references back to where it was, if it does.
fn reference_cycle(schema: &Value) -> Option<String> {
    let mut seen: Vec<&str> = Vec::new();
    let mut node = schema;
    while let Some(Value::String(reference)) = node.get("$ref") {
        if seen.contains(&reference.as_str()) {
            return Some(reference.clone());
        }
        seen.push(reference);
        node = resolve_local(schema, reference)?;
    }
    None
}

/// Whether a value of `node` can be an object (references followed within `root`).
fn can_be_object(root: &Value, node: &Value, depth: usize) -> bool {
    let Value::Object(map) = node else {
        return node == &Value::Bool(true);
    };
    if too_deep(depth) {
        return true;
    }
    let typed = match map.get("type") {
        Some(Value::String(ty)) => ty == "object",
        Some(Value::Array(types)) => types.iter().any(|ty| ty == "object"),
        Some(_) => false,
        None => true,
    };
    let constant = match (map.get("const"), map.get("enum")) {
        (Some(value), _) => value.is_object(),
        (None, Some(Value::Array(values))) => values.iter().any(Value::is_object),
        _ => true,
    };
    // One reference at a time: what stands beside each on the way is judged too.
    let reference = match map.get("$ref") {
        Some(Value::String(reference)) => resolve_local(root, reference)
            .is_none_or(|target| can_be_object(root, target, depth + 1)),
        _ => true,
    };
    let branches = |keyword: &str| match map.get(keyword) {
        Some(Value::Array(branches)) => Some(branches),
        _ => None,
    };
    let all = branches("allOf").is_none_or(|branches| {
        branches
            .iter()
            .all(|branch| can_be_object(root, branch, depth + 1))
    });
    let any = ["anyOf", "oneOf"].iter().all(|keyword| {
        branches(keyword).is_none_or(|branches| {
            branches
                .iter()
                .any(|branch| can_be_object(root, branch, depth + 1))
        })
    });
    typed && constant && reference && all && any
}

/// Whether array items are records: they describe only objects, or they list properties and
/// allow an object (`{"properties": …, "required": …}` without a `type`).
fn is_record_schema(root: &Value, items: &Value) -> bool {
    let record = walk::follow(root, items);
    describes_object(root, items, 0)
        || (record.get("properties").is_some() && can_be_object(root, record, 0))
}

/// Whether `node` describes only objects: `"type": "object"`, or a composition (`$ref`,
/// `anyOf`, `oneOf`, `allOf`) whose branches do.
fn describes_object(root: &Value, node: &Value, depth: usize) -> bool {
    if too_deep(depth) {
        return false;
    }
    let Value::Object(map) = node else {
        return false;
    };
    match map.get("type") {
        Some(Value::String(ty)) => return ty == "object",
        Some(Value::Array(types)) => {
            return !types.is_empty() && types.iter().all(|ty| ty == "object");
        }
        Some(_) => return false,
        None => {}
    }
    if let Some(Value::String(reference)) = map.get("$ref") {
        return resolve_local(root, reference)
            .is_some_and(|target| describes_object(root, target, depth + 1));
    }
    if let Some(Value::Array(branches)) = map.get("allOf")
        && branches
            .iter()
            .any(|branch| describes_object(root, branch, depth + 1))
    {
        return true;
    }
    ["anyOf", "oneOf"]
        .iter()
        .any(|keyword| match map.get(*keyword) {
            Some(Value::Array(branches)) if !branches.is_empty() => branches
                .iter()
                .all(|branch| describes_object(root, branch, depth + 1)),
            _ => false,
        })
}

/// A root that can be an object, asking for the object alone: `"type": "object"`, and only the
/// `anyOf`/`oneOf` branches that allow one.
fn objectified(schema: &Value) -> Value {
    let Value::Object(map) = schema else {
        return json!({ "type": "object" });
    };
    let mut map = map.clone();
    map.insert("type".to_owned(), json!("object"));
    if !map.contains_key("properties") {
        // Properties named only in conditions are the object's too: the model is told of them.
        let mut named = Map::new();
        for keyword in ["then", "else", "if"] {
            if let Some(Value::Object(properties)) =
                map.get(keyword).and_then(|branch| branch.get("properties"))
            {
                for (name, property) in properties {
                    named
                        .entry(name.clone())
                        .or_insert_with(|| property.clone());
                }
            }
        }
        if !named.is_empty() {
            map.insert("properties".to_owned(), Value::Object(named));
        }
    }
    for keyword in ["anyOf", "oneOf"] {
        if let Some(Value::Array(branches)) = map.get(keyword) {
            let kept: Vec<Value> = branches
                .iter()
                .filter(|branch| can_be_object(schema, branch, 1))
                .cloned()
                .collect();
            map.insert(keyword.to_owned(), Value::Array(kept));
        }
    }
    Value::Object(map)
}

/// `{"type": "object", "properties": {"value": <root>}, "required": ["value"]}`, closed, with the
/// root's definitions at its own root and every reference into the root moved with it.
fn wrapper(schema: &Value) -> Value {
    let mut inner = schema.clone();
    rebase_refs(&mut inner, &format!("/properties/{WRAPPED_KEY}"));
    let mut outer = Map::new();
    if let Value::Object(map) = &mut inner {
        for keyword in DOCUMENT_KEYWORDS {
            if map
                .get(keyword)
                .is_some_and(|value| is_document_keyword(keyword, value))
                && let Some(value) = map.remove(keyword)
            {
                outer.insert(keyword.to_owned(), value);
            }
        }
    }
    outer.insert("type".to_owned(), json!("object"));
    outer.insert("properties".to_owned(), json!({ WRAPPED_KEY: inner }));
    outer.insert("required".to_owned(), json!([WRAPPED_KEY]));
    outer.insert("additionalProperties".to_owned(), json!(false));
    Value::Object(outer)
}

/// Prefixes every same-document reference into `schema`'s value (not into its definitions,
/// which stay at the root) with `prefix`: `#` → `#<prefix>`, `#/items` → `#<prefix>/items`.
fn rebase_refs(schema: &mut Value, prefix: &str) {
    walk::objects_mut(schema, &mut |map| {
        if let Some(Value::String(reference)) = map.get_mut("$ref")
            && let Some(pointer) = into_value(reference).map(str::to_owned)
        {
            *reference = format!("#{prefix}{pointer}");
        }
    });
}

/// The JSON pointer of a same-document reference into the schema's value (`#`, `#/items/…`),
/// none for one into its definitions (they stay at the root) or another document.
fn into_value(reference: &str) -> Option<&str> {
    let pointer = reference.strip_prefix('#')?;
    let into_definitions = ["/$defs/", "/definitions/"]
        .iter()
        .any(|prefix| pointer.starts_with(prefix));
    (!into_definitions && (pointer.is_empty() || pointer.starts_with('/'))).then_some(pointer)
}

/// The record schema of an array root: its `items`, with the root's definitions beside it and
/// references into `#/items` made references into the record's root; none when the items refer
/// to the array itself or beside it.
fn item_schema(schema: &Value) -> Option<Value> {
    let mut root = schema.clone();
    let mut outside = false;
    walk::objects_mut(&mut root, &mut |map| {
        if let Some(Value::String(reference)) = map.get_mut("$ref")
            && let Some(pointer) = into_value(reference).map(str::to_owned)
        {
            match pointer.strip_prefix("/items") {
                Some(rest) if rest.is_empty() || rest.starts_with('/') => {
                    *reference = format!("#{rest}");
                }
                _ => outside = true,
            }
        }
    });
    let Value::Object(mut map) = root else {
        return None;
    };
    let (false, Some(Value::Object(mut item))) = (outside, map.remove("items")) else {
        return None;
    };
    // Items that are only a reference (pydantic's `list[Model]`) are the definition itself: in
    // drafts before 2019-09 the definitions moved beside a `$ref` would not be read.
    let whole = Value::Object(map.clone());
    let only_reference = Value::Object(item.clone());
    if let Value::Object(definition) =
        walk::follow_refs(&whole, &only_reference, |map| map.len() == 1)
    {
        item = definition.clone();
    }
    if !item.contains_key("type") && item.contains_key("properties") {
        item.insert("type".to_owned(), json!("object"));
    }
    for keyword in DOCUMENT_KEYWORDS {
        let document = map
            .remove(keyword)
            .filter(|value| is_document_keyword(keyword, value));
        match (document, item.get_mut(keyword)) {
            (Some(Value::Object(root_defs)), Some(Value::Object(own))) => {
                for (name, definition) in root_defs {
                    own.entry(name).or_insert(definition);
                }
            }
            (Some(value), None) => {
                item.insert(keyword.to_owned(), value);
            }
            _ => {}
        }
    }
    Some(Value::Object(item))
}

/// A wrapped root's result: `data` the value itself, sources and messages pointing into it.
fn unwrapped(mut outcome: Outcome, records: bool) -> Outcome {
    let prefix = format!("/{WRAPPED_KEY}");
    let strip = |pointer: &str| -> Option<String> {
        let rest = pointer.strip_prefix(&prefix)?;
        (rest.is_empty() || rest.starts_with('/')).then(|| rest.to_owned())
    };
    let strip_in_record = |pointer: &str| -> String {
        let Some((index, rest)) = pointer.trim_start_matches('/').split_once('/') else {
            return pointer.to_owned();
        };
        match strip(&format!("/{rest}")) {
            Some(rest) => format!("/{index}{rest}"),
            None => pointer.to_owned(),
        }
    };
    let repoint = |source: &mut Source| {
        source.pointer = if records {
            strip_in_record(&source.pointer)
        } else {
            strip(&source.pointer).unwrap_or_else(|| source.pointer.clone())
        };
    };
    outcome.sources.iter_mut().for_each(repoint);
    outcome.answer = match outcome.answer {
        Answer::Ok(Value::Array(list)) if records => {
            Answer::Ok(Value::Array(list.into_iter().map(inner_value).collect()))
        }
        Answer::Ok(data) if !records => Answer::Ok(inner_value(data)),
        Answer::NeedMoreInput(need) if !records => {
            outcome.partial = outcome.partial.map(inner_value);
            Answer::NeedMoreInput(root_named(&need))
        }
        Answer::Stale(errors) if !records => Answer::Stale(
            errors
                .into_iter()
                .map(|error| match error.strip_prefix(&prefix) {
                    Some(rest) if rest.starts_with(':') => format!("/{rest}"),
                    Some(rest) if rest.starts_with('/') => rest.to_owned(),
                    _ => error,
                })
                .collect(),
        ),
        answer => answer,
    };
    // A wrapped record without its value holds nothing the caller could use.
    if let Some(incomplete) = &mut outcome.incomplete {
        incomplete.retain(|record| record.record.get(WRAPPED_KEY).is_some());
        for record in incomplete.iter_mut() {
            record.record = inner_value(record.record.take());
            record.sources.iter_mut().for_each(|source| {
                source.pointer = strip(&source.pointer).unwrap_or_else(|| source.pointer.clone());
            });
        }
    }
    outcome.trace.chunk_of = std::mem::take(&mut outcome.trace.chunk_of)
        .into_iter()
        .map(|(pointer, chunk)| (strip(&pointer).unwrap_or(pointer), chunk))
        .collect();
    outcome
}

/// `need` with the wrapper's pointer written as the root's: `… no value for /value` → `… for /`.
fn root_named(need: &str) -> String {
    let wrapped = format!("/{WRAPPED_KEY}");
    let mut named = String::with_capacity(need.len());
    let mut rest = need;
    while let Some(at) = rest.find(&wrapped) {
        let after = &rest[at + wrapped.len()..];
        let before_ok = at == 0 || rest[..at].ends_with([' ', '(']);
        let ends = after.chars().next();
        named.push_str(&rest[..at]);
        match ends {
            Some('/') if before_ok => {}
            None | Some(' ' | ',' | ')' | ':' | ';' | '.') if before_ok => named.push('/'),
            _ => named.push_str(&wrapped),
        }
        rest = after;
    }
    named.push_str(rest);
    named
}

fn inner_value(mut wrapped: Value) -> Value {
    wrapped
        .get_mut(WRAPPED_KEY)
        .map(Value::take)
        .unwrap_or(wrapped)
}

/// An array root's records checked whole: fewer than `minItems` is what the text lacks, any
/// other violation (too many, duplicates, `contains`) makes the result `stale` with it.
fn checked_whole(mut outcome: Outcome, whole: &CompiledSchema, min_items: u64) -> Outcome {
    let Answer::Ok(list) = &outcome.answer else {
        return outcome;
    };
    let violations = whole.violations(list);
    if violations.is_empty() {
        return outcome;
    }
    let found = list.as_array().map_or(0, Vec::len);
    if (found as u64) < min_items {
        // The records the text holds are what it gave, short of what the schema asks.
        outcome.partial = Some(list.clone());
        outcome.answer = Answer::NeedMoreInput(format!(
            "the text holds {found} record{}; the schema asks for at least {min_items}",
            if found == 1 { "" } else { "s" },
        ));
    } else {
        outcome.answer = Answer::Stale(violations.iter().map(ToString::to_string).collect());
        outcome.sources.clear();
    }
    outcome
}
