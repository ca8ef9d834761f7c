//! The keywords and formats of a schema: what is accepted, what is accepted with a warning, what
//! is refused.
//!
//! JSON Schema ignores keywords it does not define, so schemas from the wild carry many —
//! OpenAPI's `nullable` and `example`, Snowplow's `self`, `javaType`, `readonly`, notes. They
//! are annotations: accepted, carried to the model, listed in the trace's warnings. Refused is
//! only what surely drops a constraint the author meant: a slip of a short validation keyword
//! (`tpye`, `itmes`, `ref`: one edit from a keyword under six letters) whose real keyword is not
//! there, or a near miss of a format (`date-tme`). A near miss of a longer keyword (`requierd`,
//! `maxlength`) is an annotation whose warning names the keyword it resembles. Keys starting with `x-` or `_` are extensions, never refused or warned
//! about. A format nobody defines is an annotation too, with a warning (refused when the
//! operator sets `structure_unknown_formats=refuse`); OpenAPI's formats are understood.
//!
//! ```
//! use serde_json::json;
//! use structure::schema::keywords;
//!
//! let schema = json!({"type": "object", "self": {"vendor": "com.acme"},
//!     "properties": {"id": {"type": "integer", "format": "int64"}, "n": {"type": "string", "format": "phone"}}});
//! let warnings = keywords::check(&schema, false).unwrap();
//! assert_eq!(warnings.len(), 2, "{warnings:?}");
//! let typo = json!({"properties": {"a": {}}, "tpye": "object"});
//! assert!(keywords::check(&typo, false).unwrap_err().message.contains("did you mean \"type\""));
//! let near = json!({"type": "object", "requierd": ["a"]});
//! assert!(keywords::check(&near, false).unwrap()[0].ends_with("(did you mean \"required\"?)"));
//! ```

use serde_json::Value;

use crate::error::StructureError;
use crate::keys;
use crate::schema::walk::{self, Next};

/// The keywords that constrain an instance: a near miss of one of these, with the real one
/// absent, would silently drop a check.
const VALIDATION_KEYWORDS: &[&str] = &[
    "type",
    "enum",
    "const",
    "multipleOf",
    "maximum",
    "exclusiveMaximum",
    "minimum",
    "exclusiveMinimum",
    "maxLength",
    "minLength",
    "pattern",
    "maxItems",
    "minItems",
    "uniqueItems",
    "maxContains",
    "minContains",
    "maxProperties",
    "minProperties",
    "required",
    "dependentRequired",
    "properties",
    "patternProperties",
    "additionalProperties",
    "items",
    "prefixItems",
    "additionalItems",
    "contains",
    "propertyNames",
    "unevaluatedItems",
    "unevaluatedProperties",
    "allOf",
    "anyOf",
    "oneOf",
    "not",
    "if",
    "then",
    "else",
    "dependentSchemas",
    "dependencies",
    "$ref",
    "format",
];

/// The keywords of JSON Schema drafts 4 to 2020-12 that constrain nothing: identifiers and
/// anchors, the vocabulary, definitions, meta-data, and content annotations. With
/// [`VALIDATION_KEYWORDS`], every keyword JSON Schema defines ([`is_known`]).
const NON_VALIDATION_KEYWORDS: &[&str] = &[
    "$schema",
    "$id",
    "id",
    "$anchor",
    "$dynamicRef",
    "$dynamicAnchor",
    "$recursiveRef",
    "$recursiveAnchor",
    "$vocabulary",
    "$comment",
    "$defs",
    "definitions",
    "title",
    "description",
    "default",
    "deprecated",
    "readOnly",
    "writeOnly",
    "examples",
    "contentEncoding",
    "contentMediaType",
    "contentSchema",
];

/// Whether `keyword` is one of JSON Schema drafts 4 to 2020-12 (core, applicators, validation,
/// meta-data, format, content). Others are annotations: JSON Schema ignores them.
pub fn is_known(keyword: &str) -> bool {
    VALIDATION_KEYWORDS.contains(&keyword) || NON_VALIDATION_KEYWORDS.contains(&keyword)
}

/// What a keyword from another schema language means here.
const FOREIGN_KEYWORDS: &[(&str, &str)] = &[
    (
        "nullable",
        "OpenAPI's nullable: null is not allowed unless the type says so, e.g. \"type\": [\"string\", \"null\"]",
    ),
    (
        "example",
        "OpenAPI's example: JSON Schema writes \"examples\": [...]",
    ),
    (
        "discriminator",
        "OpenAPI's discriminator: the branches of oneOf/anyOf decide on their own",
    ),
    (
        "optional",
        "a property is optional when \"required\" does not list it",
    ),
];

/// Formats JSON Schema defines (and the validator checks).
pub const STANDARD_FORMATS: &[&str] = &[
    "date",
    "date-time",
    "time",
    "duration",
    "email",
    "idn-email",
    "hostname",
    "idn-hostname",
    "ipv4",
    "ipv6",
    "uri",
    "uri-reference",
    "iri",
    "iri-reference",
    "uuid",
    "uri-template",
    "json-pointer",
    "relative-json-pointer",
    "regex",
];

/// OpenAPI's formats: `int32` and `int64` (range checks), `float` (its range), `double`,
/// `byte` (base64), `binary`, `password` (any string).
pub const OPENAPI_FORMATS: &[&str] = &[
    "int32", "int64", "float", "double", "byte", "binary", "password",
];

/// The warnings `schema`'s keywords and formats earn, or the error of the first near miss (or,
/// with `refuse_unknown_formats`, the first unknown format).
pub fn check(schema: &Value, refuse_unknown_formats: bool) -> Result<Vec<String>, StructureError> {
    let mut warnings = Vec::new();
    let mut refused = None;
    walk::schemas(schema, &mut |map, pointer| {
        let at = shown(pointer);
        for keyword in map.keys() {
            if is_known(keyword) || is_extension(keyword) {
                continue;
            }
            let meant =
                near_miss(keyword, VALIDATION_KEYWORDS).filter(|meant| !map.contains_key(*meant));
            if let Some(meant) = meant.filter(|meant| is_slip(keyword, meant)) {
                refused = Some(StructureError::invalid_schema_at(
                    pointer,
                    format!(
                        "unknown keyword \"{keyword}\" at {at}: JSON Schema would ignore it and check \
                     nothing; did you mean \"{meant}\"?"
                    ),
                ));
                return Next::Stop;
            }
            let note = FOREIGN_KEYWORDS
                .iter()
                .find(|(foreign, _)| foreign == keyword)
                .map_or_else(
                    || match meant {
                        Some(meant) => format!(
                            "kept as an annotation: it checks nothing (did you mean \"{meant}\"?)"
                        ),
                        None => "kept as an annotation: it checks nothing".to_owned(),
                    },
                    |(_, meaning)| format!("kept as an annotation: {meaning}"),
                );
            warnings.push(format!(
                "{at}: \"{keyword}\" is not a JSON Schema keyword, {note}"
            ));
        }
        if let Some(format) = map.get("format").and_then(Value::as_str) {
            match format_check(format, pointer, refuse_unknown_formats) {
                Ok(Some(warning)) => warnings.push(warning),
                Ok(None) => {}
                Err(error) => {
                    refused = Some(error);
                    return Next::Stop;
                }
            }
        }
        Next::Descend
    });
    if let Some(uri) = schema.get("$schema").and_then(Value::as_str)
        && !is_known_draft(uri)
    {
        warnings.insert(
            0,
            format!("/: $schema {uri:?} is no JSON Schema draft this service knows: read as Draft 2020-12"),
        );
    }
    match refused {
        Some(error) => Err(error),
        None => Ok(warnings),
    }
}

/// A JSON pointer as a message shows it: the root as `/`.
fn shown(pointer: &str) -> &str {
    if pointer.is_empty() { "/" } else { pointer }
}

/// A format's warning, or its refusal: a near miss of a known format always, an unknown one
/// when the operator says so.
fn format_check(
    format: &str,
    pointer: &str,
    refuse_unknown: bool,
) -> Result<Option<String>, StructureError> {
    let at = shown(pointer);
    if STANDARD_FORMATS.contains(&format) || OPENAPI_FORMATS.contains(&format) {
        return Ok(None);
    }
    let known: Vec<&str> = STANDARD_FORMATS
        .iter()
        .chain(OPENAPI_FORMATS)
        .copied()
        .collect();
    if let Some(meant) = near_miss(format, &known) {
        return Err(StructureError::invalid_schema_at(
            pointer,
            format!(
                "unknown format \"{format}\" at {at}: nothing would check it; did you mean \"{meant}\"?"
            ),
        ));
    }
    if refuse_unknown {
        return Err(StructureError::invalid_schema_at(
            pointer,
            format!(
                "unknown format \"{format}\" at {at}: this service refuses formats it cannot check ({}=refuse); \
             the known ones are {}",
                keys::UNKNOWN_FORMATS,
                known.join(", ")
            ),
        ));
    }
    Ok(Some(format!(
        "{at}: format \"{format}\" is not one this service checks: kept as an annotation"
    )))
}

/// Whether `$schema` names a JSON Schema draft the validator knows (4, 6, 7, 2019-09, 2020-12).
pub fn is_known_draft(uri: &str) -> bool {
    let uri = uri.trim_end_matches('#');
    [
        "/draft-04/schema",
        "/draft-06/schema",
        "/draft-07/schema",
        "/draft/2019-09/schema",
        "/draft/2020-12/schema",
    ]
    .iter()
    .any(|draft| uri.contains("json-schema.org") && uri.ends_with(draft))
}

/// `x-…` and `_…`: extensions by convention.
fn is_extension(keyword: &str) -> bool {
    keyword.starts_with("x-") || keyword.starts_with('_')
}

/// Whether `keyword` is surely a slip of the short keyword `meant` (`tpye`, `itmes`, `ref`): one
/// edit from a keyword under six letters. A longer keyword's near miss (`requierd`,
/// `maxlength`) is as often a word of the schema's own, and stays an annotation with a warning.
fn is_slip(keyword: &str, meant: &str) -> bool {
    meant.chars().count() < 6 && strsim::osa_distance(meant, keyword) == 1
}

/// The known word `word` is a slip of: the same ignoring case, or within an edit distance that
/// grows with the shorter of the two (none for three letters, one up to five, two beyond), a
/// swap of two neighbouring letters counting one: `form` is a word of its own, not `format`.
fn near_miss<'k>(word: &str, known: &[&'k str]) -> Option<&'k str> {
    known
        .iter()
        .filter(|candidate| **candidate != word)
        .map(|candidate| {
            let distance = if candidate.eq_ignore_ascii_case(word) {
                0
            } else {
                strsim::osa_distance(candidate, word)
            };
            (distance, *candidate)
        })
        .filter(|(distance, candidate)| {
            let allowed = match candidate.chars().count().min(word.chars().count() + 1) {
                0..=3 => 0,
                4..=5 => 1,
                _ => 2,
            };
            *distance <= allowed
        })
        .min_by_key(|(distance, _)| *distance)
        .map(|(_, candidate)| candidate)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn near_misses_are_slips_of_longer_words_only() {
        assert_eq!(near_miss("requierd", VALIDATION_KEYWORDS), Some("required"));
        assert_eq!(near_miss("Required", VALIDATION_KEYWORDS), Some("required"));
        assert_eq!(
            near_miss("maxLenght", VALIDATION_KEYWORDS),
            Some("maxLength")
        );
        assert_eq!(near_miss("ref", VALIDATION_KEYWORDS), Some("$ref"));
        assert_eq!(near_miss("patern", VALIDATION_KEYWORDS), Some("pattern"));
        assert_eq!(near_miss("minimun", VALIDATION_KEYWORDS), Some("minimum"));
        assert_eq!(
            near_miss("propertys", VALIDATION_KEYWORDS),
            Some("properties")
        );
        assert_eq!(
            near_miss("form", VALIDATION_KEYWORDS),
            None,
            "two edits from format"
        );
        assert_eq!(near_miss("item", VALIDATION_KEYWORDS), Some("items"));
        for annotation in [
            "self",
            "name",
            "javaType",
            "readonly",
            "FIXME",
            "description_none",
            "unit",
            "len",
            "min",
        ] {
            assert_eq!(
                near_miss(annotation, VALIDATION_KEYWORDS),
                None,
                "{annotation}"
            );
        }
    }

    #[test]
    fn a_property_named_or_annotated_form_is_no_slip_of_format() {
        let schema = json!({"type": "object", "properties": {"form": {"type": "string", "form": "textarea"}}});
        let warnings = check(&schema, false).unwrap();
        assert_eq!(
            warnings,
            [
                "/properties/form: \"form\" is not a JSON Schema keyword, kept as an annotation: it checks nothing"
            ]
        );
    }

    #[test]
    fn a_slip_next_to_the_real_keyword_drops_nothing_and_is_an_annotation() {
        let schema = json!({"type": "object", "required": ["a"], "requierd": ["b"], "x-note": 1, "_id": "s"});
        let warnings = check(&schema, false).unwrap();
        assert_eq!(
            warnings,
            [
                "/: \"requierd\" is not a JSON Schema keyword, kept as an annotation: it checks nothing"
            ]
        );
    }
}
