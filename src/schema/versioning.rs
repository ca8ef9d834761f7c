//! Schema versions (spec §6.3): a minor update (1.2 → 1.3) must not break existing callers, who
//! keep receiving output that validates against the new version. So the new version may only
//! relax: no new required fields, no narrowed types or enums, no tightened bounds, no new or
//! changed patterns, formats or constants, no removed properties, no newly closed objects. A
//! breaking change needs a new name (`user-action-record-v2`).

use std::cmp::Ordering;

use serde_json::{Map, Value};

use crate::error::StructureError;
use crate::schema::walk::{self, too_deep};

/// `MAJOR.MINOR`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Version {
    pub major: u32,
    pub minor: u32,
}

impl Version {
    pub fn parse(text: &str) -> Result<Self, StructureError> {
        let parsed = text
            .split_once('.')
            .and_then(|(major, minor)| Some((major.parse().ok()?, minor.parse().ok()?)));
        match parsed {
            Some((major, minor)) => Ok(Self { major, minor }),
            None => Err(StructureError::invalid_request(
                "version",
                format!("version {text:?} must be MAJOR.MINOR, e.g. 1.0 or 2.3"),
            )),
        }
    }
}

impl std::fmt::Display for Version {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}.{}", self.major, self.minor)
    }
}

/// Whether `new` (version `new_version`) may replace `old` under the same name; `Ok(false)`
/// when it is the same registration again.
pub fn check_update(
    name: &str,
    old: &Value,
    old_version: Version,
    new: &Value,
    new_version: Version,
) -> Result<bool, StructureError> {
    let conflict = |message: String| StructureError::invalid_request("version", message);
    match new_version.cmp(&old_version) {
        Ordering::Equal if old == new => return Ok(false),
        Ordering::Equal => {
            return Err(conflict(format!(
                "{name} {old_version} is already registered with another schema: register {}.{} for a \
                 compatible change, or a new name for a breaking one",
                old_version.major,
                old_version.minor + 1
            )));
        }
        Ordering::Less => {
            return Err(conflict(format!(
                "{name} is registered at {old_version}; {new_version} would go back"
            )));
        }
        Ordering::Greater => {}
    }
    if new_version.major != old_version.major {
        return Err(conflict(format!(
            "{name}: a new major version is a breaking change and needs a new name (e.g. {name}-v{})",
            new_version.major
        )));
    }
    let breaks = breaking_changes(old, new);
    if breaks.is_empty() {
        Ok(true)
    } else {
        Err(conflict(format!(
            "{name} {new_version} would break callers of {old_version} (a minor version may only relax): {}; \
             register it under a new name instead",
            breaks.join("; ")
        )))
    }
}

/// Every way `new` accepts less than `old`, located by schema pointer.
pub fn breaking_changes(old: &Value, new: &Value) -> Vec<String> {
    let mut found = Vec::new();
    Compare {
        old_root: old,
        new_root: new,
        found: &mut found,
    }
    .node(old, new, "", 0);
    found
}

struct Compare<'a> {
    old_root: &'a Value,
    new_root: &'a Value,
    found: &'a mut Vec<String>,
}

impl<'a> Compare<'a> {
    fn report(&mut self, at: &str, what: String) {
        let at = if at.is_empty() { "/" } else { at };
        self.found.push(format!("{at}: {what}"));
    }

    fn resolve(root: &'a Value, node: &'a Value) -> &'a Value {
        walk::follow(root, node)
    }

    fn node(&mut self, old: &'a Value, new: &'a Value, at: &str, depth: usize) {
        if too_deep(depth) {
            return;
        }
        let old = Self::resolve(self.old_root, old);
        let new = Self::resolve(self.new_root, new);
        if new == &Value::Bool(true) || old == new {
            return;
        }
        let (Value::Object(old_map), Value::Object(new_map)) = (old, new) else {
            if new == &Value::Bool(false) || old.is_object() != new.is_object() {
                self.report(at, "the schema was replaced by a narrower one".to_owned());
            }
            return;
        };
        self.constraints(old_map, new_map, at);
        self.required(old_map, new_map, at);
        self.children(old_map, new_map, at, depth);
    }

    /// The keywords that constrain a value itself: types, enums, patterns and the like, bounds.
    fn constraints(
        &mut self,
        old_map: &Map<String, Value>,
        new_map: &Map<String, Value>,
        at: &str,
    ) {
        self.types(old_map.get("type"), new_map.get("type"), at);
        self.subset("enum", old_map.get("enum"), new_map.get("enum"), at);
        for keyword in [
            "const",
            "pattern",
            "format",
            "multipleOf",
            "not",
            "if",
            "then",
            "else",
            "oneOf",
            "anyOf",
            "allOf",
            "patternProperties",
            "propertyNames",
            "dependentRequired",
            "dependentSchemas",
            "contains",
            "uniqueItems",
        ] {
            match (old_map.get(keyword), new_map.get(keyword)) {
                (old, Some(new)) if old != Some(new) => {
                    let relaxed = keyword == "uniqueItems" && new == &Value::Bool(false);
                    if !relaxed {
                        self.report(at, format!("{keyword} added or changed"));
                    }
                }
                _ => {}
            }
        }
        for keyword in [
            "minimum",
            "exclusiveMinimum",
            "minLength",
            "minItems",
            "minProperties",
            "minContains",
        ] {
            self.bound(
                keyword,
                old_map.get(keyword),
                new_map.get(keyword),
                at,
                |old, new| new <= old,
            );
        }
        for keyword in [
            "maximum",
            "exclusiveMaximum",
            "maxLength",
            "maxItems",
            "maxProperties",
            "maxContains",
        ] {
            self.bound(
                keyword,
                old_map.get(keyword),
                new_map.get(keyword),
                at,
                |old, new| new >= old,
            );
        }
    }

    /// Properties that became required.
    fn required(&mut self, old_map: &Map<String, Value>, new_map: &Map<String, Value>, at: &str) {
        let required = |map: &Map<String, Value>| -> Vec<String> {
            map.get("required")
                .and_then(Value::as_array)
                .map(|names| {
                    names
                        .iter()
                        .filter_map(Value::as_str)
                        .map(str::to_owned)
                        .collect()
                })
                .unwrap_or_default()
        };
        let old_required = required(old_map);
        for name in required(new_map)
            .iter()
            .filter(|name| !old_required.contains(name))
        {
            self.report(at, format!("{name:?} became required"));
        }
    }

    /// The subschemas both versions have: properties, additional properties, items.
    fn children(
        &mut self,
        old_map: &'a Map<String, Value>,
        new_map: &'a Map<String, Value>,
        at: &str,
        depth: usize,
    ) {
        if let Some(old_properties) = old_map.get("properties").and_then(Value::as_object) {
            let new_properties = new_map.get("properties").and_then(Value::as_object);
            for (name, old_property) in old_properties {
                match new_properties.and_then(|properties| properties.get(name)) {
                    Some(new_property) => self.node(
                        old_property,
                        new_property,
                        &format!("{at}/properties/{name}"),
                        depth + 1,
                    ),
                    None => self.report(at, format!("property {name:?} was removed")),
                }
            }
        }
        match (
            old_map.get("additionalProperties"),
            new_map.get("additionalProperties"),
        ) {
            (old, Some(Value::Bool(false))) if old != Some(&Value::Bool(false)) => {
                self.report(at, "additional properties are no longer allowed".to_owned());
            }
            (Some(old), Some(new)) if old.is_object() || new.is_object() => {
                self.node(old, new, &format!("{at}/additionalProperties"), depth + 1);
            }
            _ => {}
        }
        match (old_map.get("items"), new_map.get("items")) {
            (Some(old), Some(new)) => self.node(old, new, &format!("{at}/items"), depth + 1),
            (None, Some(_)) => self.report(at, "items became constrained".to_owned()),
            _ => {}
        }
    }

    fn types(&mut self, old: Option<&Value>, new: Option<&Value>, at: &str) {
        let names = |value: Option<&Value>| -> Option<Vec<String>> {
            match value? {
                Value::String(name) => Some(vec![name.clone()]),
                Value::Array(names) => Some(
                    names
                        .iter()
                        .filter_map(Value::as_str)
                        .map(str::to_owned)
                        .collect(),
                ),
                _ => None,
            }
        };
        let Some(new_types) = names(new) else { return };
        let Some(old_types) = names(old) else {
            self.report(at, format!("type restricted to {}", new_types.join(", ")));
            return;
        };
        for ty in old_types {
            let kept = new_types.contains(&ty)
                || (ty == "integer" && new_types.iter().any(|t| t == "number"));
            if !kept {
                self.report(at, format!("type {ty} no longer allowed"));
            }
        }
    }

    fn subset(&mut self, keyword: &str, old: Option<&Value>, new: Option<&Value>, at: &str) {
        match (old.and_then(Value::as_array), new.and_then(Value::as_array)) {
            (_, None) => {}
            (None, Some(_)) => self.report(at, format!("{keyword} added")),
            (Some(old), Some(new)) => {
                let dropped: Vec<String> = old
                    .iter()
                    .filter(|value| !new.contains(value))
                    .map(Value::to_string)
                    .collect();
                if !dropped.is_empty() {
                    self.report(
                        at,
                        format!("{keyword} no longer allows {}", dropped.join(", ")),
                    );
                }
            }
        }
    }

    fn bound(
        &mut self,
        keyword: &str,
        old: Option<&Value>,
        new: Option<&Value>,
        at: &str,
        relaxes: fn(f64, f64) -> bool,
    ) {
        match (old.and_then(Value::as_f64), new.and_then(Value::as_f64)) {
            (_, None) => {}
            (None, Some(new)) => self.report(at, format!("{keyword} {new} added")),
            (Some(old), Some(new)) if !relaxes(old, new) => {
                self.report(at, format!("{keyword} tightened from {old} to {new}"))
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn base() -> Value {
        json!({
            "type": "object",
            "properties": {
                "name": { "type": "string", "maxLength": 50 },
                "status": { "enum": ["a", "b"] },
                "count": { "type": "integer", "minimum": 0 },
                "tags": { "type": "array", "items": { "type": "string" } }
            },
            "required": ["name"]
        })
    }

    #[test]
    fn relaxing_is_compatible() {
        let mut new = base();
        new["properties"]["nickname"] = json!({ "type": "string" });
        new["properties"]["name"]["maxLength"] = json!(80);
        new["properties"]["status"]["enum"] = json!(["a", "b", "c"]);
        new["properties"]["count"]["type"] = json!("number");
        new["properties"]["count"]
            .as_object_mut()
            .unwrap()
            .remove("minimum");
        assert_eq!(breaking_changes(&base(), &new), Vec::<String>::new());
    }

    #[test]
    fn every_tightening_is_named() {
        let mut new = base();
        new["required"] = json!(["name", "count"]);
        new["properties"]["name"]["maxLength"] = json!(20);
        new["properties"]["name"]["pattern"] = json!("^[A-Z]");
        new["properties"]["status"]["enum"] = json!(["a"]);
        new["properties"]["count"]["minimum"] = json!(1);
        new["properties"]["tags"]["items"]["format"] = json!("email");
        new["additionalProperties"] = json!(false);
        let changes = breaking_changes(&base(), &new);
        for expected in [
            "/: \"count\" became required",
            "/properties/name: maxLength tightened from 50 to 20",
            "/properties/name: pattern added or changed",
            "/properties/status: enum no longer allows \"b\"",
            "/properties/count: minimum tightened from 0 to 1",
            "/properties/tags/items: format added or changed",
            "/: additional properties are no longer allowed",
        ] {
            assert!(
                changes.contains(&expected.to_owned()),
                "{expected} in {changes:#?}"
            );
        }
        let mut removed = base();
        removed["properties"]
            .as_object_mut()
            .unwrap()
            .remove("tags");
        assert_eq!(
            breaking_changes(&base(), &removed),
            vec!["/: property \"tags\" was removed"]
        );
        let mut narrowed = base();
        narrowed["properties"]["count"]["type"] = json!("string");
        assert_eq!(
            breaking_changes(&base(), &narrowed),
            vec!["/properties/count: type integer no longer allowed"]
        );
    }

    #[test]
    fn versions_move_forward_and_majors_need_a_new_name() {
        let v = |text| Version::parse(text).unwrap();
        assert!(!check_update("x", &base(), v("1.2"), &base(), v("1.2")).unwrap());
        assert!(
            check_update("x", &base(), v("1.2"), &json!({"type": "object"}), v("1.2")).is_err()
        );
        assert!(check_update("x", &base(), v("1.2"), &base(), v("1.1")).is_err());
        let error = check_update("x", &base(), v("1.2"), &base(), v("2.0")).unwrap_err();
        assert!(
            error.message.contains("needs a new name (e.g. x-v2)"),
            "{}",
            error.message
        );
        assert!(Version::parse("1").is_err() && Version::parse("one.two").is_err());
    }
}
