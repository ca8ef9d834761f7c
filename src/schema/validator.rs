//! Compiling a target schema and validating answers against it. The fast path (`is_valid`) runs
//! first; violations are only collected and described for an invalid answer.
//!
//! Compiling is the costly step of a call, so compiled schemas are kept per instance (a host that
//! reuses an instance compiles a schema once), and a schema that was checked before it was stored
//! (bundled, registered, built and cached) skips the meta-schema check. In WebAssembly the
//! `jsonschema` crate builds the meta-schema's own validator anew for every check, which costs
//! more than the rest of a call: this module builds each draft's meta-schema validator once per
//! instance and checks schemas with it (and [`prepare`] builds them before any call, for the
//! pre-initialised component).

use std::cell::RefCell;
use std::sync::Arc;

use jsonschema::{Draft, Registry, Resource, Validator};
use serde_json::{Value, json};

use crate::error::StructureError;
use crate::lru::{Recent, same_json};
use crate::schema::formats;
use crate::schema::rules::eval::start_budget;
use crate::schema::rules::keyword::{self as rules, RuleViolation};
use crate::schema::violation::{Violation, describe};

/// A compiled schema: Draft 2020-12 unless `$schema` names an older draft, formats asserted,
/// no reference ever fetched.
#[derive(Clone)]
pub struct CompiledSchema {
    validator: Arc<Validator>,
}

/// Compiled schemas kept per instance, most recently used last.
const CACHED_SCHEMAS: usize = 16;

/// A cached compiled schema's key: the schema (compared as JSON, not as text: writing it out
/// for every lookup cost more than the comparison), and whether it went through the
/// meta-schema check here (only those answer [`CompiledSchema::compile`]).
struct Key {
    schema: Value,
    meta_checked: bool,
}

thread_local! {
    static COMPILED: RefCell<Recent<Key, CompiledSchema>> =
        const { RefCell::new(Recent::new(CACHED_SCHEMAS)) };
}

thread_local! {
    /// The meta-schema validators built in this instance, by draft.
    static META_VALIDATORS: RefCell<Vec<(Draft, Arc<Validator>)>> = const { RefCell::new(Vec::new()) };
}

/// Builds what checking and compiling schemas needs before the first call: the meta-schema
/// validators of the drafts schemas are written in.
pub fn prepare() {
    for draft in [Draft::Draft202012, Draft::Draft7] {
        meta_validator(draft);
    }
}

#[cfg(test)]
thread_local! {
    /// The text of every schema compiled on this thread (tests see what a call compiled).
    pub(crate) static BUILT_HERE: RefCell<Vec<String>> = const { RefCell::new(Vec::new()) };
}

/// Where a checked schema sits in the registry of [`CompiledSchema::compile_checked`].
/// An address with a path (`.invalid` names no host): a root `$id` written relative to it
/// (`"id": "parameter_selection"`, `"$id": "/properties/a"`) resolves, where a URN base takes none.
const CHECKED_URI: &str = "https://structure.invalid/checked.json";

impl CompiledSchema {
    /// Compiles a schema nobody has checked yet: it is validated against its draft's
    /// meta-schema first, so a mistake is reported where it is.
    pub fn compile(schema: &Value) -> Result<Self, StructureError> {
        cached(schema, true, || build_with_meta_check(schema))
    }

    /// Compiles a schema that passed [`CompiledSchema::compile`] before it was stored, without
    /// the meta-schema check.
    pub fn compile_checked(schema: &Value) -> Result<Self, StructureError> {
        cached(schema, false, || build_without_meta_check(schema))
    }

    /// Whether `instance` is valid, its rules across fields included (within one budget).
    pub fn is_valid(&self, instance: &Value) -> bool {
        start_budget();
        self.validator.is_valid(instance)
    }

    /// Every violation of `instance`, in document order; empty iff the instance is valid. A rule
    /// across fields that could not be evaluated on a value (a field missing, a wrong type) is
    /// said only when nothing else is wrong at or below that value: else what is wrong there is
    /// what the model fixes first.
    pub fn violations(&self, instance: &Value) -> Vec<Violation> {
        if self.is_valid(instance) {
            return Vec::new();
        }
        start_budget();
        let mut plain = Vec::new();
        let mut of_rules: Vec<RuleViolation> = Vec::new();
        for error in self.validator.iter_errors(instance) {
            match rules::violation(&error) {
                Some(rule) => of_rules.push(rule),
                None => plain.extend(describe(&error)),
            }
        }
        let below = |site: &str| {
            let site = site.trim_end_matches('/');
            (plain.iter()).any(|violation: &Violation| {
                let at = violation.pointer.as_str();
                site.is_empty() || at == site || at.starts_with(&format!("{site}/"))
            })
        };
        let kept: Vec<Violation> = (of_rules.into_iter())
            .filter(|rule| !(rule.broken && below(&rule.site)))
            .map(|rule| rule.violation)
            .collect();
        let mut violations = plain;
        violations.extend(kept);
        violations.dedup();
        violations
    }
}

type Built = Result<Validator, jsonschema::ValidationError<'static>>;

/// How far `fancy-regex` may backtrack in one match (patterns with look-around or
/// back-references; the others run on the linear-time `regex` engine). A match that would go
/// further is a violation, never a pass: a crafted pattern costs at most a few milliseconds.
pub const PATTERN_BACKTRACK_LIMIT: usize = 100_000;

fn options() -> jsonschema::ValidationOptions<'static> {
    let options = formats::asserted(jsonschema::options());
    rules::with_rules(options).offline().with_pattern_options(
        jsonschema::PatternOptions::fancy_regex().backtrack_limit(PATTERN_BACKTRACK_LIMIT),
    )
}

/// `schema` as it is compiled: a `$schema` naming a meta-schema no draft defines left out (it
/// is read as the default draft, see `schema::keywords`), and the bounds of OpenAPI's numeric
/// formats added (as an `allOf` branch, so the author's own bounds stay as they are).
fn prepared(schema: &Value) -> std::borrow::Cow<'_, Value> {
    let unknown_draft = schema
        .get("$schema")
        .and_then(Value::as_str)
        .is_some_and(|uri| !crate::schema::keywords::is_known_draft(uri));
    let schema = if unknown_draft {
        let mut without = schema.clone();
        if let Value::Object(map) = &mut without {
            map.remove("$schema");
        }
        std::borrow::Cow::Owned(without)
    } else {
        std::borrow::Cow::Borrowed(schema)
    };
    match formats::with_numeric_bounds(&schema) {
        std::borrow::Cow::Owned(bounded) => std::borrow::Cow::Owned(bounded),
        std::borrow::Cow::Borrowed(_) => schema,
    }
}

/// The schema checked against its draft's meta-schema (with this instance's validator), then
/// compiled without `jsonschema` checking it again. A schema that declares a dialect below its
/// root, or a meta-schema no draft defines, takes `jsonschema`'s own check.
fn build_with_meta_check(schema: &Value) -> Built {
    let prepared = prepared(schema);
    let draft = Draft::default().detect(&prepared);
    if draft == Draft::Unknown || declares_nested_dialect(&prepared) {
        return options().build(&prepared);
    }
    let trivially_valid =
        prepared.as_bool().is_some() || prepared.as_object().is_some_and(|map| map.is_empty());
    if !trivially_valid {
        meta_validator(draft)
            .validate(&prepared)
            .map_err(|error| error.to_owned())?;
    }
    compile_prepared(prepared.into_owned())
}

/// Every place `schema` breaks its draft's meta-schema: the pointer into the schema and what
/// is wrong there (for an editor that shows each mistake where it is; compiling stops at the
/// first). Empty for a schema whose draft is unknown or that embeds other dialects (compiling
/// checks those).
pub fn meta_problems(schema: &Value) -> Vec<(String, String)> {
    let prepared = prepared(schema);
    let draft = Draft::default().detect(&prepared);
    if draft == Draft::Unknown || declares_nested_dialect(&prepared) {
        return Vec::new();
    }
    let mut problems: Vec<(String, String)> = meta_validator(draft)
        .iter_errors(&prepared)
        .map(|error| {
            let pointer = error.instance_path().as_str().to_owned();
            // The meta-schema says a wrong `type` only as a failed `anyOf`.
            let message = match (pointer.ends_with("/type"), error.instance().as_ref()) {
                (true, Value::String(written)) => format!(
                    "{written:?} is not a JSON Schema type: use one of string, number, integer, \
                     boolean, object, array, null"
                ),
                _ => error.to_string(),
            };
            (pointer, message)
        })
        .collect();
    problems.dedup();
    problems
}

/// Whether `$schema` appears anywhere below the root (each embedded resource is checked
/// against its own meta-schema then, which `jsonschema` knows how to do).
fn declares_nested_dialect(schema: &Value) -> bool {
    fn below(value: &Value) -> bool {
        match value {
            Value::Object(map) => map
                .iter()
                .any(|(key, child)| key == "$schema" || below(child)),
            Value::Array(items) => items.iter().any(below),
            _ => false,
        }
    }
    match schema {
        Value::Object(map) => map.values().any(below),
        _ => false,
    }
}

/// This instance's validator for `draft`'s meta-schema, built on first use.
fn meta_validator(draft: Draft) -> Arc<Validator> {
    if let Some(built) = META_VALIDATORS.with_borrow(|built| {
        built
            .iter()
            .find(|(known, _)| *known == draft)
            .map(|(_, validator)| validator.clone())
    }) {
        return built;
    }
    let uri = match draft {
        Draft::Draft4 => "http://json-schema.org/draft-04/schema#",
        Draft::Draft6 => "http://json-schema.org/draft-06/schema#",
        Draft::Draft7 => "http://json-schema.org/draft-07/schema#",
        Draft::Draft201909 => "https://json-schema.org/draft/2019-09/schema",
        _ => "https://json-schema.org/draft/2020-12/schema",
    };
    // The meta-schema is one of the crate's own resources (those of the root's draft), referenced
    // from a root that only says which; a test compiles each of them.
    let validator = Arc::new(
        jsonschema::options()
            .offline()
            .build(&json!({ "$schema": uri, "$ref": uri }))
            .expect("every draft's meta-schema compiles"),
    );
    META_VALIDATORS.with_borrow_mut(|built| built.push((draft, validator.clone())));
    validator
}

/// The schema is compiled as a resource of its own draft, referenced from a draft-04 root:
/// only the root is checked against its meta-schema, which is small. Validation is the same.
fn build_without_meta_check(schema: &Value) -> Built {
    compile_prepared(prepared(schema).into_owned())
}

/// [`build_without_meta_check`] for a schema already [`prepared`].
fn compile_prepared(prepared: Value) -> Built {
    let registry = Registry::new()
        .add(CHECKED_URI, Resource::from_contents(prepared))
        .and_then(|registry| registry.prepare())
        .map_err(|error| jsonschema::ValidationError::from(error).to_owned())?;
    options().with_registry(&registry).build(
        &json!({ "$schema": "http://json-schema.org/draft-04/schema#", "$ref": CHECKED_URI }),
    )
}

/// The compiled form of `schema` from this instance's cache, else `build`'s (then cached).
fn cached(
    schema: &Value,
    meta_check: bool,
    build: impl FnOnce() -> Built,
) -> Result<CompiledSchema, StructureError> {
    let hit = COMPILED.with_borrow_mut(|cache| {
        cache
            .find(|key| (key.meta_checked || !meta_check) && same_json(&key.schema, schema))
            .cloned()
    });
    if let Some(schema) = hit {
        return Ok(schema);
    }
    let validator = build().map_err(|error| {
        let location = error.instance_path().as_str();
        if location.is_empty() {
            return StructureError::invalid_schema(format!("the schema does not compile: {error}"));
        }
        StructureError::invalid_schema_at(
            location,
            format!("the schema does not compile at {location}: {error}"),
        )
    })?;
    #[cfg(test)]
    BUILT_HERE.with_borrow_mut(|built| built.push(schema.to_string()));
    let compiled = CompiledSchema {
        validator: Arc::new(validator),
    };
    COMPILED.with_borrow_mut(|cache| {
        cache.insert(
            Key {
                schema: schema.clone(),
                meta_checked: meta_check,
            },
            compiled.clone(),
        )
    });
    Ok(compiled)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ports::MemoryKeyValue;
    use crate::schema::registry::{Registry as SchemaRegistry, bundled_names};

    fn both_ways(schema: &Value) -> (CompiledSchema, CompiledSchema) {
        let wrap = |built: Built| CompiledSchema {
            validator: Arc::new(built.unwrap_or_else(|error| panic!("{schema}: {error}"))),
        };
        (
            wrap(build_with_meta_check(schema)),
            wrap(build_without_meta_check(schema)),
        )
    }

    fn assert_alike(schema: &Value, instances: &[Value]) {
        let (checked, unchecked) = both_ways(schema);
        for instance in instances {
            assert_eq!(
                checked.violations(instance),
                unchecked.violations(instance),
                "{schema} on {instance}"
            );
            assert_eq!(checked.is_valid(instance), unchecked.is_valid(instance));
        }
    }

    /// jsonschema's own meta-schema check, as `build_with_meta_check` did before it kept the
    /// meta-schema validators.
    fn jsonschema_check(schema: &Value) -> Result<(), String> {
        options()
            .build(&prepared(schema))
            .map(drop)
            .map_err(|error| format!("{} at {}", error, error.instance_path().as_str()))
    }

    #[test]
    fn a_schema_is_compiled_once_an_instance_whatever_order_its_keys_are_written_in() {
        let built = || BUILT_HERE.with_borrow(Vec::len);
        let before = built();
        let schema: Value =
            serde_json::from_str(r#"{"type": "object", "required": ["cache-key-test"]}"#).unwrap();
        let reordered: Value =
            serde_json::from_str(r#"{"required": ["cache-key-test"], "type": "object"}"#).unwrap();
        CompiledSchema::compile(&schema).unwrap();
        CompiledSchema::compile(&reordered).unwrap();
        assert_eq!(built(), before + 1);
        // Checked before it was stored: the compiled form stands for it too; not the other way.
        CompiledSchema::compile_checked(&reordered).unwrap();
        assert_eq!(built(), before + 1);
        let other = json!({ "type": "object", "required": ["cache-key-test-2"] });
        CompiledSchema::compile_checked(&other).unwrap();
        CompiledSchema::compile(&other).unwrap();
        assert_eq!(built(), before + 3);
    }

    #[test]
    fn the_kept_meta_validators_refuse_and_accept_what_jsonschema_does() {
        let schemas = [
            json!({ "type": "objekt" }),
            json!({ "type": "object", "properties": { "a": { "minLength": -1 } } }),
            json!({ "type": "object", "required": "a" }),
            json!({ "$schema": "http://json-schema.org/draft-07/schema#", "type": "object", "items": [{ "type": 3 }] }),
            json!({ "$schema": "http://json-schema.org/draft-04/schema#", "exclusiveMinimum": 3 }),
            json!({ "$schema": "https://json-schema.org/draft/2019-09/schema", "minItems": "2" }),
            json!({ "$schema": "http://json-schema.org/draft-06/schema#", "const": 1, "enum": [] }),
            json!({ "$defs": { "inner": { "$schema": "http://json-schema.org/draft-07/schema#", "type": 7 } } }),
            json!({ "$schema": "https://example.com/custom", "type": "object" }),
            json!({ "type": "object", "properties": { "a": { "type": "string", "format": "date" } } }),
            json!({ "type": "string", "pattern": "[unclosed" }),
            json!({ "$id": "not a uri ref with spaces", "type": "string" }),
            json!(true),
            json!({}),
        ];
        for schema in &schemas {
            let kept = build_with_meta_check(schema)
                .map(drop)
                .map_err(|error| format!("{} at {}", error, error.instance_path().as_str()));
            assert_eq!(kept, jsonschema_check(schema), "{schema}");
        }
    }

    #[test]
    fn formats_of_later_drafts_are_asserted_whatever_the_draft() {
        for draft in [
            "http://json-schema.org/draft-04/schema#",
            "http://json-schema.org/draft-06/schema#",
            "http://json-schema.org/draft-07/schema#",
            "https://json-schema.org/draft/2020-12/schema",
        ] {
            let schema = json!({
                "$schema": draft,
                "type": "object",
                "properties": {
                    "id": { "type": "string", "format": "uuid" },
                    "wait": { "type": "string", "format": "duration" },
                    "at": { "type": "string", "format": "json-pointer" },
                },
            });
            let (checked, unchecked) = both_ways(&schema);
            for compiled in [checked, unchecked] {
                for wrong in [
                    json!({ "id": "123456789" }),
                    json!({ "id": "2c0c6ac6-9c2d-4d4b-8c4a-0b0a0e0f0e0" }),
                    json!({ "wait": "three days" }),
                    json!({ "at": "no/slash/first" }),
                ] {
                    assert!(!compiled.is_valid(&wrong), "{draft}: {wrong}");
                    assert_eq!(compiled.violations(&wrong).len(), 1, "{draft}: {wrong}");
                }
                let right = json!({
                    "id": "2c0c6ac6-9c2d-4d4b-8c4a-0b0a0e0f0e01",
                    "wait": "P3D",
                    "at": "/a/b",
                });
                assert!(compiled.is_valid(&right), "{draft}");
            }
        }
    }

    #[test]
    fn every_drafts_meta_schema_compiles() {
        for draft in [
            Draft::Draft4,
            Draft::Draft6,
            Draft::Draft7,
            Draft::Draft201909,
            Draft::Draft202012,
        ] {
            assert!(
                !meta_validator(draft).is_valid(&json!({ "type": 12 })),
                "{draft:?}"
            );
        }
    }

    #[test]
    fn compiling_without_the_meta_check_validates_alike() {
        let fixtures: Value =
            serde_json::from_str(include_str!("../../benches/fixtures.json")).unwrap();
        let key_value = MemoryKeyValue::default();
        let scope = crate::Scope::default();
        for name in bundled_names() {
            let schema = SchemaRegistry::new(&key_value, &scope)
                .find(name)
                .unwrap()
                .schema;
            let mut instances = vec![json!({}), json!({ "unexpected": true }), json!([])];
            if let Some(Value::Object(cases)) = fixtures.get(name) {
                instances.extend(cases.values().cloned());
            }
            assert_alike(&schema, &instances);
        }
        // Keywords where drafts, references or annotations could make a difference.
        assert_alike(
            &json!({ "$defs": { "positive": { "type": "integer", "minimum": 1 } }, "type": "object",
                     "properties": { "a": { "$ref": "#/$defs/positive" } }, "unevaluatedProperties": false }),
            &[
                json!({ "a": 1 }),
                json!({ "a": 0 }),
                json!({ "a": 1, "b": 2 }),
            ],
        );
        assert_alike(
            &json!({ "type": "object", "properties": { "t": { "type": "array",
                     "prefixItems": [{ "type": "string" }, { "type": "integer" }], "items": false } } }),
            &[
                json!({ "t": ["x", 1] }),
                json!({ "t": ["x", 1, 2] }),
                json!({ "t": [1] }),
            ],
        );
        assert_alike(
            &json!({ "type": "object", "dependentRequired": { "a": ["b"] },
                     "if": { "properties": { "k": { "const": "x" } } }, "then": { "required": ["y"] } }),
            &[
                json!({ "a": 1 }),
                json!({ "a": 1, "b": 1 }),
                json!({ "k": "x" }),
                json!({ "k": "x", "y": 1 }),
            ],
        );
        assert_alike(
            &json!({ "$schema": "http://json-schema.org/draft-07/schema#", "type": "object",
                     "properties": { "a": { "type": "array", "items": [{ "type": "string" }], "additionalItems": false } } }),
            &[json!({ "a": ["x"] }), json!({ "a": ["x", 1] })],
        );
        assert_alike(
            &json!({ "$id": "https://example.com/contact", "$defs": { "email": { "type": "string", "format": "email" } },
                     "type": "object", "properties": { "e": { "$ref": "#/$defs/email" } } }),
            &[json!({ "e": "ada@example.org" }), json!({ "e": "nope" })],
        );
        assert_alike(
            &json!({ "$defs": { "node": { "$anchor": "node", "type": "object", "required": ["v"],
                     "properties": { "next": { "$ref": "#node" } } } }, "$ref": "#/$defs/node" }),
            &[
                json!({ "v": 1, "next": { "v": 2 } }),
                json!({ "v": 1, "next": {} }),
            ],
        );
    }

    #[test]
    fn a_full_compile_is_never_answered_by_an_unchecked_one() {
        // Compiles either way, but breaks the meta-schema: a title is text.
        let schema = json!({ "type": "object", "title": 5 });
        assert!(CompiledSchema::compile_checked(&schema).is_ok());
        let error = CompiledSchema::compile(&schema)
            .err()
            .expect("the meta-schema check runs");
        assert!(
            error.message.contains("does not compile"),
            "{}",
            error.message
        );
    }

    #[test]
    fn compiled_schemas_are_kept_per_instance() {
        let schema = json!({ "type": "object", "properties": { "kept": { "type": "integer" } } });
        let first = CompiledSchema::compile(&schema).unwrap();
        let again = CompiledSchema::compile_checked(&schema).unwrap();
        assert!(
            Arc::ptr_eq(&first.validator, &again.validator),
            "a checked schema serves both"
        );
    }
}
