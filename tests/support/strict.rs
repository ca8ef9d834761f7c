//! OpenAI's strict structured outputs, checked from the outside: the rules a schema sent in
//! strict mode must obey (every object closed, every property required, the keywords it takes)
//! and the totals OpenAI counts over the whole schema. Shared by the tests and the
//! `structure-schemas` benchmark (which includes this file), so both judge by the same rules.

use serde_json::Value;

/// Keywords OpenAI's strict mode accepts (tests/provider-api/SUBSETS.md).
const STRICT_KEYWORDS: &[&str] = &[
    "type",
    "properties",
    "required",
    "additionalProperties",
    "items",
    "enum",
    "const",
    "anyOf",
    "$ref",
    "$defs",
    "description",
    "title",
    "pattern",
    "format",
    "multipleOf",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "minItems",
    "maxItems",
];

/// Every way `schema` breaks OpenAI's strict rules: a root that is not an object, an object that
/// is not closed or does not require every property, a keyword strict mode rejects, `$defs`
/// below the root, a `$ref` with siblings, a total over [`openai_limits`].
pub fn strict_violations(schema: &Value) -> Vec<String> {
    let mut found = Vec::new();
    if schema.get("type") != Some(&Value::String("object".into())) {
        found.push("/: root is not type object".to_owned());
    }
    check_strict(schema, "", true, &mut found);
    found.extend(openai_limits(schema));
    found
}

fn check_strict(node: &Value, at: &str, root: bool, found: &mut Vec<String>) {
    let Value::Object(map) = node else {
        found.push(format!("{at}: boolean schema"));
        return;
    };
    for key in map.keys() {
        if !STRICT_KEYWORDS.contains(&key.as_str()) {
            found.push(format!("{at}: keyword {key} not accepted"));
        }
    }
    if map.contains_key("$defs") && !root {
        found.push(format!("{at}: $defs below the root"));
    }
    if map.contains_key("$ref") && map.len() > 1 {
        found.push(format!("{at}: $ref with siblings"));
    }
    if let Some(Value::Object(properties)) = map.get("properties") {
        if map.get("additionalProperties") != Some(&Value::Bool(false)) {
            found.push(format!("{at}: object without additionalProperties false"));
        }
        let required: Vec<&str> = map
            .get("required")
            .and_then(Value::as_array)
            .map(|names| names.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        for (name, schema) in properties {
            if !required.contains(&name.as_str()) {
                found.push(format!("{at}/properties/{name}: not required"));
            }
            check_strict(schema, &format!("{at}/properties/{name}"), false, found);
        }
    } else if map.get("type") == Some(&Value::String("object".into())) {
        found.push(format!("{at}: object without properties"));
    }
    if let Some(items) = map.get("items") {
        check_strict(items, &format!("{at}/items"), false, found);
    }
    if let Some(Value::Array(branches)) = map.get("anyOf") {
        for (index, branch) in branches.iter().enumerate() {
            check_strict(branch, &format!("{at}/anyOf/{index}"), false, found);
        }
    }
    if let Some(Value::Object(defs)) = map.get("$defs") {
        for (name, schema) in defs {
            check_strict(schema, &format!("{at}/$defs/{name}"), false, found);
        }
    }
}

/// OpenAI's totals over a whole strict schema ("Supported schemas", structured outputs guide):
/// object properties, nesting, enum values, and the characters of names and values.
pub const MAX_PROPERTIES: usize = 5_000;
pub const MAX_NESTING: usize = 10;
pub const MAX_ENUM_VALUES: usize = 1_000;
pub const MAX_NAME_AND_VALUE_CHARS: usize = 120_000;
/// A string enum of more than [`LARGE_ENUM`] values may hold this many characters in all.
pub const MAX_LARGE_ENUM_CHARS: usize = 15_000;
pub const LARGE_ENUM: usize = 250;

/// Every total of `schema` (as sent) over OpenAI's limits for strict mode. Names and values are
/// counted where they are written (a definition once, however often it is referred to); the
/// nesting follows references, a recursive one counting once.
pub fn openai_limits(schema: &Value) -> Vec<String> {
    let mut totals = Totals::default();
    count(schema, &mut totals);
    let nesting = nesting(schema, schema, &mut Vec::new());
    let mut found = Vec::new();
    if totals.properties > MAX_PROPERTIES {
        found.push(format!(
            "{} object properties (limit {MAX_PROPERTIES})",
            totals.properties
        ));
    }
    if nesting > MAX_NESTING {
        found.push(format!("{nesting} levels of nesting (limit {MAX_NESTING})"));
    }
    if totals.enum_values > MAX_ENUM_VALUES {
        found.push(format!(
            "{} enum values (limit {MAX_ENUM_VALUES})",
            totals.enum_values
        ));
    }
    if totals.chars > MAX_NAME_AND_VALUE_CHARS {
        found.push(format!(
            "{} characters of names and values (limit {MAX_NAME_AND_VALUE_CHARS})",
            totals.chars
        ));
    }
    found.extend(totals.large_enums);
    found
}

#[derive(Default)]
struct Totals {
    properties: usize,
    enum_values: usize,
    chars: usize,
    large_enums: Vec<String>,
}

/// Adds up what every schema object under `node` writes.
fn count(node: &Value, totals: &mut Totals) {
    match node {
        Value::Object(map) => {
            let values: Vec<&Value> = match (map.get("enum"), map.get("const")) {
                (Some(Value::Array(values)), _) => values.iter().collect(),
                (None, Some(value)) => vec![value],
                _ => Vec::new(),
            };
            if map.contains_key("enum") {
                totals.enum_values += values.len();
            }
            let chars: usize = values
                .iter()
                .map(|value| match value {
                    Value::String(text) => text.chars().count(),
                    other => other.to_string().chars().count(),
                })
                .sum();
            totals.chars += chars;
            if values.len() > LARGE_ENUM
                && values.iter().all(|value| value.is_string())
                && chars > MAX_LARGE_ENUM_CHARS
            {
                totals.large_enums.push(format!(
                    "an enum of {} strings with {chars} characters (limit {MAX_LARGE_ENUM_CHARS} above {LARGE_ENUM} values)",
                    values.len()
                ));
            }
            for keyword in ["properties", "$defs"] {
                if let Some(Value::Object(named)) = map.get(keyword) {
                    if keyword == "properties" {
                        totals.properties += named.len();
                    }
                    totals.chars += named.keys().map(|name| name.chars().count()).sum::<usize>();
                }
            }
            for (key, child) in map {
                if key != "enum" && key != "const" {
                    count(child, totals);
                }
            }
        }
        Value::Array(items) => items.iter().for_each(|item| count(item, totals)),
        _ => {}
    }
}

/// How many objects deep `node` nests, references followed (once along a path).
fn nesting(root: &Value, node: &Value, path: &mut Vec<String>) -> usize {
    let Value::Object(map) = node else {
        return 0;
    };
    let mut deepest = 0;
    if let Some(Value::String(reference)) = map.get("$ref")
        && !path.contains(reference)
        && let Some(target) = reference
            .strip_prefix('#')
            .and_then(|pointer| root.pointer(pointer))
    {
        path.push(reference.clone());
        deepest = nesting(root, target, path);
        path.pop();
    }
    let own = usize::from(map.contains_key("properties"));
    if let Some(Value::Object(properties)) = map.get("properties") {
        for property in properties.values() {
            deepest = deepest.max(own + nesting(root, property, path));
        }
    }
    if let Some(items) = map.get("items") {
        deepest = deepest.max(own + nesting(root, items, path));
    }
    if let Some(Value::Array(branches)) = map.get("anyOf") {
        for branch in branches {
            deepest = deepest.max(nesting(root, branch, path));
        }
    }
    deepest.max(own)
}
