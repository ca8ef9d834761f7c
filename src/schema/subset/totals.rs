//! The totals a provider counts over a whole strict schema — OpenAI's: enum values, object
//! properties, levels of nesting, characters of names and values — and loosening a schema that
//! passes them, as the subset rules do for a keyword the provider does not take: the largest
//! enums move into their descriptions, objects nested too deep travel as JSON-encoded strings.
//! Local validation still checks both against the target, and the trace says which moved.
//!
//! ```
//! use serde_json::json;
//! use structure::schema::subset::totals::{OPENAI_LIMITS, Totals};
//!
//! let values: Vec<String> = (0..1200).map(|n| format!("v{n}")).collect();
//! let schema = json!({ "type": "object", "properties": { "code": { "enum": values } } });
//! let totals = Totals::of(&schema);
//! assert_eq!((totals.enum_values, totals.nesting), (1200, 1));
//! assert!(!totals.within(&OPENAI_LIMITS));
//! ```

use std::collections::HashMap;

use serde_json::{Map, Value, json};

use crate::schema::walk::{self, escape};

/// What a provider counts over a whole strict schema.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    pub enum_values: usize,
    pub properties: usize,
    pub nesting: usize,
    /// Characters of property names, definition names, enum and const values.
    pub chars: usize,
    /// A string enum of more values than this may hold at most `large_enum_chars` characters.
    pub large_enum: usize,
    pub large_enum_chars: usize,
}

/// OpenAI's structured outputs ("Supported schemas": objects have limitations on nesting depth
/// and size).
pub const OPENAI_LIMITS: Limits = Limits {
    enum_values: 1_000,
    properties: 5_000,
    nesting: 10,
    chars: 120_000,
    large_enum: 250,
    large_enum_chars: 15_000,
};

/// What a schema holds, as a provider counts it: names and values where they are written (a
/// definition once), the nesting along references (a recursive one once).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Totals {
    pub enum_values: usize,
    pub properties: usize,
    pub nesting: usize,
    pub chars: usize,
    /// The characters of the largest string enum above the large-enum count, if any.
    pub large_enum_chars: usize,
}

impl Totals {
    pub fn of(schema: &Value) -> Self {
        let mut totals = Totals {
            nesting: nesting(schema, schema),
            ..Totals::default()
        };
        walk::objects(schema, &mut |map, _| {
            let enumerated = enum_size(map);
            totals.enum_values += enumerated.count;
            totals.chars += enumerated.chars;
            if enumerated.strings && enumerated.count > OPENAI_LIMITS.large_enum {
                totals.large_enum_chars = totals.large_enum_chars.max(enumerated.chars);
            }
            for keyword in ["properties", "$defs"] {
                if let Some(Value::Object(named)) = map.get(keyword) {
                    if keyword == "properties" {
                        totals.properties += named.len();
                    }
                    totals.chars += named.keys().map(|name| name.chars().count()).sum::<usize>();
                }
            }
            walk::Next::Descend
        });
        totals
    }

    pub fn within(&self, limits: &Limits) -> bool {
        self.enum_values <= limits.enum_values
            && self.properties <= limits.properties
            && self.nesting <= limits.nesting
            && self.chars <= limits.chars
            && self.large_enum_chars <= limits.large_enum_chars
    }

    fn enums_within(&self, limits: &Limits) -> bool {
        self.enum_values <= limits.enum_values
            && self.chars <= limits.chars
            && self.large_enum_chars <= limits.large_enum_chars
    }
}

struct EnumSize {
    count: usize,
    chars: usize,
    strings: bool,
}

fn enum_size(map: &Map<String, Value>) -> EnumSize {
    let values: Vec<&Value> = match (map.get("enum"), map.get("const")) {
        (Some(Value::Array(values)), _) => values.iter().collect(),
        (None, Some(value)) => vec![value],
        _ => Vec::new(),
    };
    let chars = values
        .iter()
        .map(|value| match value {
            Value::String(text) => text.chars().count(),
            other => other.to_string().chars().count(),
        })
        .sum();
    EnumSize {
        count: if map.contains_key("enum") {
            values.len()
        } else {
            0
        },
        chars,
        strings: values.iter().all(|value| value.is_string()),
    }
}

/// How many objects with properties nest in `node`, references into `root` followed (a
/// recursive one once along a path; each reference measured once, so a schema whose
/// definitions refer to each other many times over is measured in one pass).
fn nesting(root: &Value, node: &Value) -> usize {
    Nesting {
        root,
        path: Vec::new(),
        measured: HashMap::new(),
    }
    .of(node, 0)
}

struct Nesting<'a> {
    root: &'a Value,
    path: Vec<String>,
    measured: HashMap<String, usize>,
}

impl Nesting<'_> {
    fn of(&mut self, node: &Value, depth: usize) -> usize {
        let Value::Object(map) = node else {
            return 0;
        };
        if walk::too_deep(depth) {
            return 0;
        }
        let mut deepest = 0;
        if let Some(Value::String(reference)) = map.get("$ref") {
            deepest = self.of_reference(reference, depth);
        }
        let own = usize::from(map.contains_key("properties"));
        for keyword in [
            "properties",
            "items",
            "additionalProperties",
            "anyOf",
            "oneOf",
            "allOf",
        ] {
            let children: Vec<&Value> = match map.get(keyword) {
                Some(Value::Object(named)) if keyword == "properties" => named.values().collect(),
                Some(Value::Array(list)) => list.iter().collect(),
                Some(one @ Value::Object(_)) => vec![one],
                _ => Vec::new(),
            };
            // A branch is the node itself in another form; the rest are one level below it.
            let above = if keyword.ends_with("Of") { 0 } else { own };
            for child in children {
                deepest = deepest.max(above + self.of(child, depth + 1));
            }
        }
        deepest.max(own)
    }

    fn of_reference(&mut self, reference: &str, depth: usize) -> usize {
        if let Some(known) = self.measured.get(reference) {
            return *known;
        }
        if self.path.iter().any(|seen| seen == reference) {
            return 0;
        }
        let Some(target) = reference
            .strip_prefix('#')
            .and_then(|at| self.root.pointer(at))
        else {
            return 0;
        };
        self.path.push(reference.to_owned());
        let found = self.of(target, depth + 1);
        self.path.pop();
        self.measured.insert(reference.to_owned(), found);
        found
    }
}

/// Enum values listed in a description that holds a moved enum.
const LISTED_VALUES: usize = 60;

/// A target's body and definitions (as the envelope hoists them), loosened until `lowered` —
/// the schema sent for them — is within `limits`: first the largest enums move into their
/// descriptions, then objects nested deeper than the limit leaves room for travel as
/// JSON-encoded strings, a level at a time. Each change is added to `transforms`.
pub fn fit(
    body: &mut Value,
    defs: &mut Map<String, Value>,
    limits: &Limits,
    lowered: impl Fn(&Value, &Map<String, Value>) -> Value,
    transforms: &mut Vec<String>,
) {
    let mut sent = Totals::of(&lowered(body, defs));
    if sent.within(limits) {
        return;
    }
    while !sent.enums_within(limits) {
        let Some(largest) = largest_enum(body, defs) else {
            break;
        };
        let moved = move_enum(body, defs, &largest);
        transforms.push(format!(
            "{}: enum of {moved} values sent in the description (over the provider's totals); \
             checked after the answer",
            largest
        ));
        sent = Totals::of(&lowered(body, defs));
    }
    let source_nesting = nesting(&with_defs(body, defs), body);
    let mut room = limits
        .nesting
        .saturating_sub(sent.nesting.saturating_sub(source_nesting));
    while !sent.within(limits) && room > 0 {
        let whole = with_defs(body, defs);
        let mut cut_at = Vec::new();
        let mut inlining = Inlining {
            refs: Vec::new(),
            left: MAX_INLINED,
        };
        *body = cut(body, room, &whole, &mut inlining, "", &mut cut_at);
        drop_unreferred(body, defs);
        if !cut_at.is_empty() {
            transforms.push(format!(
                "{}: nested deeper than the provider takes, sent as JSON-encoded strings; \
                 checked after the answer",
                cut_at.join(", ")
            ));
        }
        sent = Totals::of(&lowered(body, defs));
        room -= 1;
    }
}

fn with_defs(body: &Value, defs: &Map<String, Value>) -> Value {
    let mut whole = body.clone();
    if let Value::Object(map) = &mut whole {
        map.insert("$defs".to_owned(), Value::Object(defs.clone()));
    }
    whole
}

/// Where the enum with the most values is: `/…` in the body, `/$defs/<name>/…` in a definition.
fn largest_enum(body: &Value, defs: &Map<String, Value>) -> Option<String> {
    let mut largest: Option<(usize, usize, String)> = None;
    let mut consider = |node: &Value, prefix: &str| {
        walk::objects(node, &mut |map, at| {
            let size = enum_size(map);
            if size.count > 0
                && largest
                    .as_ref()
                    .is_none_or(|(count, chars, _)| (size.count, size.chars) > (*count, *chars))
            {
                largest = Some((size.count, size.chars, format!("{prefix}{at}")));
            }
            walk::Next::Descend
        });
    };
    consider(body, "");
    for (name, definition) in defs {
        consider(definition, &format!("/$defs/{}", escape(name)));
    }
    largest.map(|(_, _, at)| at)
}

/// Moves the enum at `at` into its node's description: the count, and the first values.
fn move_enum(body: &mut Value, defs: &mut Map<String, Value>, at: &str) -> usize {
    let node = match at.strip_prefix("/$defs/") {
        Some(rest) => {
            let (name, tail) = rest.split_once('/').unwrap_or((rest, ""));
            let name = walk::unescape(name);
            let tail = if tail.is_empty() {
                String::new()
            } else {
                format!("/{tail}")
            };
            defs.get_mut(&name)
                .and_then(|definition| definition.pointer_mut(&tail))
        }
        None => body.pointer_mut(at),
    };
    let Some(Value::Object(map)) = node else {
        return 0;
    };
    let Some(Value::Array(values)) = map.remove("enum") else {
        return 0;
    };
    let shown: Vec<String> = values
        .iter()
        .take(LISTED_VALUES)
        .map(|value| value.to_string())
        .collect();
    let more = values.len().saturating_sub(LISTED_VALUES);
    let listed = if more > 0 {
        format!("{}, … and {more} more", shown.join(", "))
    } else {
        shown.join(", ")
    };
    let note = format!("One of {} values: {listed}.", values.len());
    let description = match map.get("description").and_then(Value::as_str) {
        Some(description) => format!("{description} {note}"),
        None => note,
    };
    map.insert("description".to_owned(), json!(description));
    values.len()
}

/// How many references one cut may inline: a schema whose definitions refer to each other
/// many times over would otherwise grow without bound; past it, a reference too deep is cut
/// where it is.
const MAX_INLINED: usize = 256;

/// The references being inlined along the path, and how many more may be.
struct Inlining {
    refs: Vec<String>,
    left: usize,
}

/// `node` with every object more than `room` levels of properties deep made an opaque value (a
/// description of what it holds), references inlined where what they point to is too deep.
fn cut(
    node: &Value,
    room: usize,
    whole: &Value,
    path: &mut Inlining,
    at: &str,
    cut_at: &mut Vec<String>,
) -> Value {
    let Value::Object(map) = node else {
        return node.clone();
    };
    if let Some(Value::String(reference)) = map.get("$ref")
        && !path.refs.contains(reference)
        && let Some(target) = reference.strip_prefix('#').and_then(|to| whole.pointer(to))
        && nesting(whole, target) > room
    {
        if path.left == 0 {
            cut_at.push(if at.is_empty() {
                "/".to_owned()
            } else {
                at.to_owned()
            });
            return opaque(map);
        }
        path.left -= 1;
        path.refs.push(reference.clone());
        let inlined = cut(target, room, whole, path, at, cut_at);
        path.refs.pop();
        let mut siblings = map.clone();
        siblings.remove("$ref");
        if siblings.is_empty() {
            return inlined;
        }
        siblings.insert("allOf".to_owned(), json!([inlined]));
        return Value::Object(siblings);
    }
    let has_properties = map.contains_key("properties");
    if has_properties && room == 0 {
        cut_at.push(if at.is_empty() {
            "/".to_owned()
        } else {
            at.to_owned()
        });
        return opaque(map);
    }
    let inner = room - usize::from(has_properties);
    let mut out = Map::new();
    for (keyword, value) in map {
        let child_at = format!("{at}/{}", escape(keyword));
        let lowered = match (keyword.as_str(), value) {
            ("properties", Value::Object(properties)) => Value::Object(
                properties
                    .iter()
                    .map(|(name, property)| {
                        let here = format!("{child_at}/{}", escape(name));
                        (
                            name.clone(),
                            cut(property, inner, whole, path, &here, cut_at),
                        )
                    })
                    .collect(),
            ),
            ("items" | "additionalProperties", Value::Object(_)) => {
                cut(value, inner, whole, path, &child_at, cut_at)
            }
            ("anyOf" | "oneOf" | "allOf", Value::Array(branches)) => Value::Array(
                branches
                    .iter()
                    .enumerate()
                    .map(|(index, branch)| {
                        cut(
                            branch,
                            room,
                            whole,
                            path,
                            &format!("{child_at}/{index}"),
                            cut_at,
                        )
                    })
                    .collect(),
            ),
            _ => value.clone(),
        };
        out.insert(keyword.clone(), lowered);
    }
    Value::Object(out)
}

/// Characters of the schema shown in an opaque value's description.
const SHOWN_SCHEMA_CHARS: usize = 2_000;

/// A value the provider is sent as a JSON-encoded string: what its schema says, in words.
fn opaque(map: &Map<String, Value>) -> Value {
    let mut shown = Value::Object(map.clone()).to_string();
    if shown.chars().count() > SHOWN_SCHEMA_CHARS {
        shown = shown.chars().take(SHOWN_SCHEMA_CHARS).collect::<String>() + "…";
    }
    let note = format!("A JSON value of this schema: {shown}");
    let description = match map.get("description").and_then(Value::as_str) {
        Some(description) => format!("{description} {note}"),
        None => note,
    };
    json!({ "description": description })
}

/// Leaves out the definitions nothing refers to any more (cut objects referred to them).
fn drop_unreferred(body: &Value, defs: &mut Map<String, Value>) {
    loop {
        let unreferred: Vec<String> = defs
            .keys()
            .filter(|name| !is_referred(body, defs, name))
            .cloned()
            .collect();
        if unreferred.is_empty() {
            return;
        }
        for name in unreferred {
            defs.remove(&name);
        }
    }
}

/// Whether the definition `name` is still referred to from `body` or another definition.
fn is_referred(body: &Value, defs: &Map<String, Value>, name: &str) -> bool {
    let target = format!("#/$defs/{}", escape(name));
    let refers = |node: &Value| {
        !walk::objects(node, &mut |map, _| match map.get("$ref") {
            Some(Value::String(reference))
                if reference == &target || reference.starts_with(&format!("{target}/")) =>
            {
                walk::Next::Stop
            }
            _ => walk::Next::Descend,
        })
    };
    refers(body)
        || defs
            .iter()
            .any(|(other, definition)| other != name && refers(definition))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn deep(levels: usize) -> Value {
        (0..levels).fold(
            json!({ "type": "string" }),
            |inner, _| json!({ "type": "object", "properties": { "a": inner }, "required": ["a"] }),
        )
    }

    /// [`fit`] to OpenAI's totals; the transforms it made.
    fn fit_openai(
        body: &mut Value,
        defs: &mut Map<String, Value>,
        lowered: impl Fn(&Value, &Map<String, Value>) -> Value,
    ) -> Vec<String> {
        let mut transforms = Vec::new();
        fit(body, defs, &OPENAI_LIMITS, lowered, &mut transforms);
        transforms
    }

    #[test]
    fn nesting_counts_levels_of_properties_along_references_once() {
        assert_eq!(Totals::of(&deep(3)).nesting, 3);
        let recursive = json!({ "$defs": { "node": { "type": "object", "properties": {
            "children": { "type": "array", "items": { "$ref": "#/$defs/node" } } } } },
            "$ref": "#/$defs/node" });
        assert_eq!(Totals::of(&recursive).nesting, 1);
    }

    #[test]
    fn the_largest_enums_move_into_descriptions_until_the_totals_fit() {
        let values = |n: usize| -> Vec<String> { (0..n).map(|i| format!("v{i}")).collect() };
        let mut body = json!({ "type": "object", "properties": {
            "big": { "enum": values(700) }, "small": { "enum": values(5) }, "mid": { "enum": values(600) } } });
        let mut defs = Map::new();
        let mut transforms = Vec::new();
        fit(
            &mut body,
            &mut defs,
            &OPENAI_LIMITS,
            |body, _| body.clone(),
            &mut transforms,
        );
        assert!(body["properties"]["big"].get("enum").is_none());
        assert!(
            body["properties"]["big"]["description"]
                .as_str()
                .unwrap()
                .starts_with("One of 700 values: \"v0\", \"v1\"")
        );
        assert_eq!(
            body["properties"]["mid"]["enum"].as_array().unwrap().len(),
            600
        );
        assert_eq!(transforms.len(), 1, "{transforms:?}");
        assert!(transforms[0].starts_with("/properties/big: enum of 700 values"));
    }

    #[test]
    fn objects_nested_too_deep_become_opaque_values() {
        let mut body = deep(13);
        let mut defs = Map::new();
        // The envelope adds a level above the body.
        let lowered = |body: &Value, _: &Map<String, Value>| json!({ "type": "object", "properties": { "answer": body } });
        let transforms = fit_openai(&mut body, &mut defs, lowered);
        assert_eq!(Totals::of(&lowered(&body, &defs)).nesting, 10);
        let cut = body.pointer("/properties/a/properties/a/properties/a/properties/a/properties/a/properties/a/properties/a/properties/a/properties/a").unwrap();
        assert!(cut.get("properties").is_none());
        assert!(
            cut["description"]
                .as_str()
                .unwrap()
                .starts_with("A JSON value of this schema: {")
        );
        assert_eq!(transforms.len(), 1, "{transforms:?}");
    }

    #[test]
    fn definitions_that_fan_out_are_inlined_a_bounded_number_of_times() {
        // Each level refers to the next three times: inlining all of it is 3^12 copies.
        let mut defs = Map::new();
        for level in 0..12 {
            let next = json!({ "$ref": format!("#/$defs/l{}", level + 1) });
            defs.insert(
                format!("l{level}"),
                json!({ "type": "object", "properties": { "a": next, "b": next, "c": next } }),
            );
        }
        defs.insert("l12".to_owned(), json!({ "type": "string" }));
        let mut body = json!({ "$ref": "#/$defs/l0" });
        fit_openai(&mut body, &mut defs, with_defs);
        assert!(Totals::of(&with_defs(&body, &defs)).nesting <= 10);
        assert!(body.to_string().len() < 2_000_000, "bounded");
    }

    #[test]
    fn a_reference_too_deep_is_inlined_and_cut_where_it_is() {
        let mut defs = Map::new();
        defs.insert("leaf".to_owned(), deep(4));
        let mut body = (0..7).fold(
            json!({ "$ref": "#/$defs/leaf" }),
            |inner, _| json!({ "type": "object", "properties": { "b": inner } }),
        );
        fit_openai(&mut body, &mut defs, with_defs);
        assert!(Totals::of(&with_defs(&body, &defs)).nesting <= 10);
        assert!(defs.is_empty(), "the definition is no longer referred to");
    }
}
