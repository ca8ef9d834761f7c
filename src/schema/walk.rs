//! Walking a schema: which keywords hold subschemas and which hold data, the visitors the checks
//! use, and one depth limit for every recursive walk (the checks, the subset transforms and
//! their way back, grounding, versioning, the OpenAPI conversion), so that a reference cycle or
//! an absurdly deep schema stops every walk at the same place.
//!
//! ```
//! use serde_json::json;
//! use structure::schema::walk;
//!
//! let schema = json!({
//!     "type": "object",
//!     "properties": { "tags": { "type": "array", "items": { "type": "string" } } },
//!     "examples": [{ "type": "not a schema" }]
//! });
//! let mut seen = Vec::new();
//! walk::schemas(&schema, &mut |_, pointer| {
//!     seen.push(pointer.to_owned());
//!     walk::Next::Descend
//! });
//! assert_eq!(seen, ["", "/properties/tags", "/properties/tags/items"]);
//! ```

use serde_json::{Map, Value};

/// Nesting beyond this is not followed: deeper than any real schema (the operator's
/// `structure_max_schema_depth` is 32 by default), shallow enough that no cycle runs long.
pub const MAX_DEPTH: usize = 128;

/// `name` as one token of a JSON pointer (RFC 6901: `~` → `~0`, `/` → `~1`).
pub fn escape(name: &str) -> String {
    if !name.contains(['~', '/']) {
        return name.to_owned(); // most names: one copy, not two replacements
    }
    name.replace('~', "~0").replace('/', "~1")
}

/// `name` added to `pointer` as its next token, escaped as [`escape`] writes it (without a copy
/// of a name that needs no escape): for walks that keep their pointer in one buffer.
pub fn push_token(pointer: &mut String, name: &str) {
    pointer.push('/');
    if name.contains(['~', '/']) {
        pointer.push_str(&escape(name));
    } else {
        pointer.push_str(name);
    }
}

/// The name one token of a JSON pointer stands for (RFC 6901: `~1` → `/`, then `~0` → `~`).
pub fn unescape(token: &str) -> String {
    token.replace("~1", "/").replace("~0", "~")
}

/// The value at JSON `pointer` in `value`, as `Value::pointer` finds it, without copying each
/// token twice to unescape it (only a token with an escape is copied): references are followed
/// and responses read on every call.
pub fn pointer<'v>(value: &'v Value, pointer: &str) -> Option<&'v Value> {
    if pointer.is_empty() {
        return Some(value);
    }
    let tokens = pointer.strip_prefix('/')?;
    tokens.split('/').try_fold(value, |target, token| {
        let token = if token.contains('~') {
            std::borrow::Cow::Owned(unescape(token))
        } else {
            std::borrow::Cow::Borrowed(token)
        };
        match target {
            Value::Object(map) => map.get(&*token),
            // An index as RFC 6901 writes it: digits, without a sign or a leading zero.
            Value::Array(items) if token == "0" || !token.starts_with(['0', '+']) => token
                .parse::<usize>()
                .ok()
                .and_then(|index| items.get(index)),
            _ => None,
        }
    })
}

/// Whether a walk at `depth` has gone too far.
pub fn too_deep(depth: usize) -> bool {
    depth > MAX_DEPTH
}

/// Keywords whose values are data, not schemas: a `$ref` inside an `enum` value is no reference.
pub fn is_value_keyword(keyword: &str) -> bool {
    matches!(keyword, "enum" | "const" | "default" | "examples")
}

/// How a keyword holds subschemas.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Holds {
    /// One schema (`not`, `additionalProperties`, ...).
    One,
    /// A list of schemas (`allOf`, `prefixItems`, ...); `items` and `additionalItems` may be one
    /// schema too (older drafts).
    List,
    /// Schemas by name (`properties`, `$defs`, ...).
    Map,
    /// No schema: data or an annotation.
    Nothing,
}

/// What `keyword` holds, in any draft from 4 to 2020-12.
pub fn holds(keyword: &str) -> Holds {
    match keyword {
        "properties" | "patternProperties" | "$defs" | "definitions" | "dependentSchemas"
        | "dependencies" => Holds::Map,
        "prefixItems" | "allOf" | "anyOf" | "oneOf" | "items" | "additionalItems" => Holds::List,
        "additionalProperties"
        | "unevaluatedProperties"
        | "unevaluatedItems"
        | "contains"
        | "propertyNames"
        | "if"
        | "then"
        | "else"
        | "not"
        | "contentSchema" => Holds::One,
        _ => Holds::Nothing,
    }
}

/// What a visitor wants next.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Next {
    /// Visit the subschemas of this one.
    Descend,
    /// Leave them out.
    Skip,
    /// End the walk.
    Stop,
}

/// Visits every schema object of `schema`, depth first, with its pointer; a visitor that
/// returns [`Next::Stop`] ends the walk (the result is then `false`).
pub fn schemas(schema: &Value, visit: &mut impl FnMut(&Map<String, Value>, &str) -> Next) -> bool {
    walk_schemas(schema, &mut String::new(), 0, visit)
}

/// The walk of [`schemas`] below `node` at pointer `at`, one buffer that each step down writes
/// its token to and takes it off again: walks run on every call, and most visitors never read
/// the pointer.
fn walk_schemas(
    node: &Value,
    at: &mut String,
    depth: usize,
    visit: &mut impl FnMut(&Map<String, Value>, &str) -> Next,
) -> bool {
    let Value::Object(map) = node else {
        return true;
    };
    if too_deep(depth) {
        return true;
    }
    match visit(map, at) {
        Next::Stop => false,
        Next::Skip => true,
        Next::Descend => map.iter().all(|(keyword, value)| {
            let holds = holds(keyword);
            if matches!(holds, Holds::Nothing) {
                return true;
            }
            within(at, keyword, |at| match (holds, value) {
                (Holds::Map, Value::Object(named)) => named.iter().all(|(name, child)| {
                    within(at, name, |at| walk_schemas(child, at, depth + 1, visit))
                }),
                (Holds::List, Value::Array(list)) => {
                    list.iter().enumerate().all(|(index, child)| {
                        within(at, &index.to_string(), |at| {
                            walk_schemas(child, at, depth + 1, visit)
                        })
                    })
                }
                (Holds::List | Holds::One, child) => walk_schemas(child, at, depth + 1, visit),
                _ => true,
            })
        }),
    }
}

/// What `walk` gives with `name`'s token added to the pointer `at`, taken off again after.
fn within<T>(at: &mut String, name: &str, walk: impl FnOnce(&mut String) -> T) -> T {
    let length = at.len();
    push_token(at, name);
    let result = walk(at);
    at.truncate(length);
    result
}

/// Visits every JSON object in `node` that is not data (under `enum`, `const`, `default`,
/// `examples`), whatever keyword holds it, with its pointer: for what may sit anywhere, such as
/// `$ref` and `$id`.
pub fn objects(node: &Value, visit: &mut impl FnMut(&Map<String, Value>, &str) -> Next) -> bool {
    walk_objects(node, "", 0, visit)
}

fn walk_objects(
    node: &Value,
    at: &str,
    depth: usize,
    visit: &mut impl FnMut(&Map<String, Value>, &str) -> Next,
) -> bool {
    if too_deep(depth) {
        return true;
    }
    match node {
        Value::Object(map) => match visit(map, at) {
            Next::Stop => false,
            Next::Skip => true,
            Next::Descend => (map.iter())
                .filter(|(key, child)| !is_value_keyword(key) && is_container(child))
                .all(|(key, child)| {
                    walk_objects(child, &format!("{at}/{}", escape(key)), depth + 1, visit)
                }),
        },
        Value::Array(items) => (items.iter().enumerate())
            .filter(|(_, item)| is_container(item))
            .all(|(index, item)| walk_objects(item, &format!("{at}/{index}"), depth + 1, visit)),
        _ => true,
    }
}

/// Whether `value` may hold an object: a walk goes no further into anything else.
fn is_container(value: &Value) -> bool {
    matches!(value, Value::Object(_) | Value::Array(_))
}

/// [`objects`], changing them: every JSON object in `node` that is not data.
pub fn objects_mut(node: &mut Value, change: &mut impl FnMut(&mut Map<String, Value>)) {
    walk_objects_mut(node, 0, change);
}

fn walk_objects_mut(
    node: &mut Value,
    depth: usize,
    change: &mut impl FnMut(&mut Map<String, Value>),
) {
    if too_deep(depth) {
        return;
    }
    match node {
        Value::Object(map) => {
            change(map);
            for (key, child) in map.iter_mut() {
                if !is_value_keyword(key) {
                    walk_objects_mut(child, depth + 1, change);
                }
            }
        }
        Value::Array(items) => items
            .iter_mut()
            .for_each(|item| walk_objects_mut(item, depth + 1, change)),
        _ => {}
    }
}

/// How many `$ref`s in a row one lookup follows: longer than any real schema's chain, short
/// enough that references pointing at each other stop at once.
pub const MAX_REF_HOPS: usize = 32;

/// What `node` stands for in `root`: while it is a `$ref` (that `follows` accepts, given the
/// object holding it) pointing to something in `root`, what that points to, at most
/// [`MAX_REF_HOPS`] in a row. Where a reference points to nothing, or is not to be followed, the
/// lookup stops at it. The one `$ref` follower the stages share.
///
/// ```
/// use serde_json::json;
/// use structure::schema::walk::{follow, follow_refs};
///
/// let root = json!({ "$defs": { "a": { "$ref": "#/$defs/b" }, "b": { "type": "string" } } });
/// assert_eq!(follow(&root, &json!({ "$ref": "#/$defs/a" })), &json!({ "type": "string" }));
/// let annotated = json!({ "$ref": "#/$defs/b", "maxLength": 3 });
/// assert_eq!(follow_refs(&root, &annotated, |map| map.len() == 1), &annotated);
/// ```
pub fn follow_refs<'a>(
    root: &'a Value,
    node: &'a Value,
    follows: impl Fn(&Map<String, Value>) -> bool,
) -> &'a Value {
    let mut node = node;
    for _ in 0..MAX_REF_HOPS {
        let Some(map) = node.as_object() else {
            return node;
        };
        let Some(Value::String(reference)) = map.get("$ref") else {
            return node;
        };
        if !follows(map) {
            return node;
        }
        match resolve_local(root, reference) {
            Some(target) => node = target,
            None => return node,
        }
    }
    node
}

/// [`follow_refs`] for every `$ref`, whatever stands beside it.
pub fn follow<'a>(root: &'a Value, node: &'a Value) -> &'a Value {
    follow_refs(root, node, |_| true)
}

/// The node a same-document reference (`#`, `#/json/pointer`) points to.
pub fn resolve_local<'a>(root: &'a Value, reference: &str) -> Option<&'a Value> {
    let pointer = reference.strip_prefix('#')?;
    if pointer.is_empty() {
        return Some(root);
    }
    self::pointer(root, &percent_decode(pointer))
}

/// JSON pointers inside URI fragments may percent-encode characters (`%25`, `%22`, ...).
pub fn percent_decode(text: &str) -> String {
    if !text.contains('%') {
        return text.to_owned();
    }
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%'
            && i + 2 < bytes.len()
            && let (Some(high), Some(low)) = (hex_digit(bytes[i + 1]), hex_digit(bytes[i + 2]))
        {
            out.push(high << 4 | low);
            i += 3;
            continue;
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn hex_digit(byte: u8) -> Option<u8> {
    (byte as char).to_digit(16).map(|digit| digit as u8)
}

/// The JSON Schema type of `value` (`integer` for a whole number).
pub fn json_type(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(number) if number.is_i64() || number.is_u64() => "integer",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_walk_gives_each_schema_its_pointer_and_stops_when_told() {
        let schema = json!({
            "properties": { "a/b~c": { "anyOf": [{ "type": "string" }, { "items": true }] } },
            "not": { "enum": [{ "type": "data" }] },
            "$defs": { "x": { "type": "integer" } },
            "items": [{ "type": "null" }],
        });
        let mut seen = Vec::new();
        let finished = schemas(&schema, &mut |_, pointer| {
            seen.push(pointer.to_owned());
            Next::Descend
        });
        assert!(finished);
        assert_eq!(
            seen,
            [
                "",
                "/properties/a~1b~0c",
                "/properties/a~1b~0c/anyOf/0",
                "/properties/a~1b~0c/anyOf/1",
                "/not",
                "/$defs/x",
                "/items/0",
            ]
        );
        let mut visited = 0;
        let stopped = !schemas(&schema, &mut |_, pointer| {
            visited += 1;
            if pointer.ends_with("anyOf/0") {
                Next::Stop
            } else {
                Next::Descend
            }
        });
        assert!(stopped);
        assert_eq!(visited, 3);
    }

    #[test]
    fn a_pointer_finds_what_serde_json_finds() {
        let value = json!({"a": [{"b/c": 1, "d~e": 2, "": 3}, 4], "0": {"1": 5}});
        let pointers = [
            "",
            "/",
            "/a",
            "/a/0",
            "/a/1",
            "/a/2",
            "/a/00",
            "/a/+1",
            "/a/-1",
            "/a/x",
            "/a/0/b~1c",
            "/a/0/d~0e",
            "/a/0/",
            "/a/0/b/c",
            "/0/1",
            "/0/1/x",
            "a",
            "/a/0/d~01e",
        ];
        for at in pointers {
            assert_eq!(pointer(&value, at), value.pointer(at), "{at}");
        }
    }

    #[test]
    fn schemas_are_every_subschema_and_nothing_else() {
        let schema = json!({
            "$defs": { "a/b": { "type": "string" }, "c~d": true, "plain": {} },
            "items": [{ "type": "integer" }],
            "not": { "const": { "type": "data" } },
            "x-extension": { "type": "not a schema" },
        });
        let mut seen = Vec::new();
        schemas(&schema, &mut |_, pointer| {
            seen.push(pointer.to_owned());
            Next::Descend
        });
        assert_eq!(
            seen,
            ["", "/$defs/a~1b", "/$defs/plain", "/items/0", "/not"]
        );
        assert_eq!(escape("c~d/e"), "c~0d~1e");
        assert_eq!(escape("plain"), "plain");
    }

    #[test]
    fn objects_skip_data_but_not_extensions_and_stop_when_asked() {
        let schema = json!({
            "x-extension": { "$ref": "https://example.com" },
            "enum": [{ "$ref": "data" }],
            "anyOf": [{ "$ref": "#/a" }, { "$ref": "#/b" }],
        });
        let mut refs = Vec::new();
        let finished = objects(&schema, &mut |map, pointer| {
            if let Some(reference) = map.get("$ref") {
                refs.push(format!("{pointer} {reference}"));
                if reference == "#/a" {
                    return Next::Stop;
                }
            }
            Next::Descend
        });
        assert!(!finished);
        assert_eq!(
            refs,
            ["/x-extension \"https://example.com\"", "/anyOf/0 \"#/a\""]
        );
    }

    #[test]
    fn every_walk_ends_at_the_depth_limit() {
        let mut deep = json!({ "type": "string" });
        for _ in 0..MAX_DEPTH * 2 {
            deep = json!({ "not": deep });
        }
        let mut visited = 0;
        schemas(&deep, &mut |_, _| {
            visited += 1;
            Next::Descend
        });
        assert_eq!(visited, MAX_DEPTH + 1);
        let mut changed = 0;
        objects_mut(&mut deep, &mut |_| changed += 1);
        assert_eq!(changed, MAX_DEPTH + 1);
    }
}
