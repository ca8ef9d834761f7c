//! The formats the validator asserts beyond `jsonschema`'s own for a schema's draft: the formats
//! of later drafts in any draft, OpenAPI's string formats, and OpenAPI's numeric formats as the
//! bounds they stand for.

use serde_json::{Value, json};

/// Formats a later draft defines, asserted whatever draft a schema is written in: a user who
/// writes `"format": "uuid"` in a draft-06 schema wants a UUID, and `jsonschema` ignores the
/// formats a schema's own draft does not define. Each is checked as Draft 2020-12 checks it.
pub const LATER_DRAFT_FORMATS: [&str; 8] = [
    "duration",
    "iri",
    "iri-reference",
    "json-pointer",
    "relative-json-pointer",
    "uri-reference",
    "uri-template",
    "uuid",
];

/// Whether `text` is a `format` of [`LATER_DRAFT_FORMATS`] (index `at`), as Draft 2020-12's
/// own check says; each check is built once per instance.
fn later_draft_format(at: usize, text: &str) -> bool {
    static CHECKS: std::sync::OnceLock<Vec<jsonschema::Validator>> = std::sync::OnceLock::new();
    let checks = CHECKS.get_or_init(|| {
        (LATER_DRAFT_FORMATS.iter())
            .map(|format| {
                jsonschema::draft202012::options()
                    .should_validate_formats(true)
                    .build(&json!({ "format": format }))
                    .expect("a format check compiles")
            })
            .collect()
    });
    checks[at].is_valid(&Value::String(text.to_owned()))
}

/// `options` asserting formats: the later drafts' (see [`LATER_DRAFT_FORMATS`]) and OpenAPI's
/// string formats; a format no one checks is an annotation (its near misses are refused before:
/// see `schema::keywords`).
pub fn asserted(
    mut options: jsonschema::ValidationOptions<'static>,
) -> jsonschema::ValidationOptions<'static> {
    for (at, format) in LATER_DRAFT_FORMATS.iter().enumerate() {
        options = options.with_format(*format, move |text: &str| later_draft_format(at, text));
    }
    options
        .should_validate_formats(true)
        .should_ignore_unknown_formats(true)
        .with_format("byte", is_base64)
        .with_format("binary", |_: &str| true)
        .with_format("password", |_: &str| true)
}

/// OpenAPI's `byte`: base64 (standard alphabet, padded).
fn is_base64(text: &str) -> bool {
    use base64::Engine;
    base64::engine::general_purpose::STANDARD
        .decode(text)
        .is_ok()
}

/// The ranges OpenAPI's numeric formats stand for; formats apply to strings only, so these are
/// checked as bounds.
const NUMERIC_FORMATS: &[(&str, f64, f64)] = &[
    ("int32", -2_147_483_648.0, 2_147_483_647.0),
    (
        "int64",
        -9_223_372_036_854_775_808.0,
        9_223_372_036_854_775_807.0,
    ),
    ("float", -3.402_823_5e38, 3.402_823_5e38),
];

/// `schema` with the bounds of OpenAPI's numeric formats added (as an `allOf` branch, so the
/// author's own bounds stay as they are), when it has any.
pub fn with_numeric_bounds(schema: &Value) -> std::borrow::Cow<'_, Value> {
    let mut found = false;
    crate::schema::walk::schemas(schema, &mut |map, _| {
        found |= map
            .get("format")
            .and_then(Value::as_str)
            .is_some_and(|format| NUMERIC_FORMATS.iter().any(|(name, ..)| *name == format));
        if found {
            crate::schema::walk::Next::Stop
        } else {
            crate::schema::walk::Next::Descend
        }
    });
    if !found {
        return std::borrow::Cow::Borrowed(schema);
    }
    let mut bounded = schema.clone();
    crate::schema::walk::objects_mut(&mut bounded, &mut |map| {
        let Some((_, minimum, maximum)) = map
            .get("format")
            .and_then(Value::as_str)
            .and_then(|format| NUMERIC_FORMATS.iter().find(|(name, ..)| *name == format))
        else {
            return;
        };
        let bounds = json!({ "minimum": minimum, "maximum": maximum });
        match map.get_mut("allOf") {
            Some(Value::Array(branches)) => branches.push(bounds),
            _ => {
                map.insert("allOf".to_owned(), json!([bounds]));
            }
        }
    });
    std::borrow::Cow::Owned(bounded)
}
