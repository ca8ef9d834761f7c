//! Schemas as users paste them — OpenAPI components, Kubernetes CRDs, JSON Schema Store files,
//! Snowplow schemas, function-calling parameters — each accepted (with the warnings its
//! annotations earn) or refused for what would silently drop a constraint, before any LLM call.

mod support;

use mock_llm::Reply;
use serde_json::{Value, json};
use structure::answer::format::{AnswerFormat, Shape};
use structure::schema::subset::{FULL, OPENAI_STRICT};
use structure::{Answer, ErrorKind, Outcome, SchemaInput, StructureRequest};
use support::{MapConfig, ScriptedTransport, ports};

/// A call with `schema` whose model answers `answer`, with extra host settings.
fn call(
    schema: Value,
    answer: Value,
    settings: &[(&str, &str)],
) -> Result<Outcome, structure::StructureError> {
    let mut pairs = vec![
        ("structure_model", "openai/test-model"),
        ("openai_base_url", "http://127.0.0.1:9/v1"),
    ];
    pairs.extend_from_slice(settings);
    let config = MapConfig::with(&pairs);
    let transport = ScriptedTransport::new([Reply::answer(answer)]);
    let request =
        StructureRequest::new("Ada Lovelace, id 42", SchemaInput::Inline(schema), Some(1))?;
    structure::structure(
        &request,
        &structure::Scope::default(),
        &ports(&transport, &config),
    )
}

fn warnings(schema: Value) -> Vec<String> {
    let answer = json!({});
    match call(schema, answer, &[]) {
        Ok(outcome) => outcome.trace.warnings,
        Err(error) => panic!("refused: {}", error.message),
    }
}

fn refusal(schema: Value, settings: &[(&str, &str)]) -> String {
    match call(schema, json!({}), settings) {
        Err(error) => {
            assert!(
                matches!(error.kind, ErrorKind::InvalidSchema { .. }),
                "{}",
                error.message
            );
            error.message
        }
        Ok(outcome) => panic!("accepted: {:?}", outcome.answer),
    }
}

/// A case: what the schema is, the schema, the start of each warning it must give.
type Case = (&'static str, Value, Vec<&'static str>);

/// Schemas as other tools write them (Snowplow, OpenAPI, Kubernetes, older drafts), with the
/// warnings each must give.
fn schemas_of_other_tools() -> Vec<Case> {
    vec![
        (
            "a Snowplow schema",
            json!({
                "$schema": "http://iglucentral.com/schemas/com.snowplowanalytics.self-desc/schema/jsonschema/1-0-0#",
                "self": { "vendor": "com.acme", "name": "signup", "format": "jsonschema", "version": "1-0-0" },
                "type": "object", "properties": { "name": { "type": "string" } }, "additionalProperties": false
            }),
            vec![
                "/: $schema \"http://iglucentral.com",
                "/: \"self\" is not a JSON Schema keyword",
            ],
        ),
        (
            "an OpenAPI component",
            json!({
                "type": "object",
                "properties": {
                    "id": { "type": "integer", "format": "int64" },
                    "score": { "type": "number", "format": "float" },
                    "ratio": { "type": "number", "format": "double" },
                    "avatar": { "type": "string", "format": "byte" },
                    "file": { "type": "string", "format": "binary" },
                    "secret": { "type": "string", "format": "password" },
                    "nickname": { "type": "string", "nullable": true, "example": "Ada" }
                },
                "discriminator": { "propertyName": "kind" }
            }),
            vec![
                "/: \"discriminator\" is not a JSON Schema keyword",
                "/properties/nickname: \"nullable\" is not a JSON Schema keyword, kept as an annotation: OpenAPI's nullable",
                "/properties/nickname: \"example\" is not a JSON Schema keyword",
            ],
        ),
        (
            "a Kubernetes CRD's openAPIV3Schema",
            json!({
                "type": "object",
                "x-kubernetes-preserve-unknown-fields": true,
                "properties": { "spec": { "type": "object", "x-kubernetes-int-or-string": true,
                    "properties": { "replicas": { "type": "integer", "format": "int32" } } } }
            }),
            vec![],
        ),
        (
            "a draft-04 store file with definitions",
            json!({
                "$schema": "http://json-schema.org/draft-04/schema#", "id": "http://example.com/s.json",
                "type": "object", "definitions": { "name": { "type": "string" } },
                "properties": { "name": { "$ref": "#/definitions/name" } }
            }),
            vec![],
        ),
        (
            "a draft-07 schema with $defs and definitions both",
            json!({
                "$schema": "http://json-schema.org/draft-07/schema#", "type": "object",
                "$defs": { "a": { "type": "string" } }, "definitions": { "b": { "type": "integer" } },
                "properties": { "a": { "$ref": "#/$defs/a" }, "b": { "$ref": "#/definitions/b" } }
            }),
            vec![],
        ),
    ]
}

/// Notes, code generators' keywords, unchecked formats and slips people leave in schemas, with
/// the warnings each must give.
fn annotations_people_write() -> Vec<Case> {
    vec![
        (
            "generator annotations and notes",
            json!({
                "type": "object", "javaType": "com.acme.Person", "FIXME": "split the name",
                "_comment": "internal", "description_none": true,
                "properties": { "name": { "type": "string", "readonly": true, "name": "Name" } }
            }),
            vec![
                "/: \"javaType\"",
                "/: \"FIXME\"",
                "/: \"description_none\"",
                "/properties/name: \"readonly\"",
                "/properties/name: \"name\"",
            ],
        ),
        (
            "a format no one checks",
            json!({ "type": "object", "properties": { "phone": { "type": "string", "format": "phone" } } }),
            vec![
                "/properties/phone: format \"phone\" is not one this service checks: kept as an annotation",
            ],
        ),
        (
            "a slip next to the real keyword",
            json!({ "type": "object", "required": ["name"], "requierd": ["x"], "properties": { "name": { "type": "string" } } }),
            vec!["/: \"requierd\" is not a JSON Schema keyword"],
        ),
    ]
}

#[test]
fn annotations_from_the_wild_are_accepted_and_listed_as_warnings() {
    let cases = [schemas_of_other_tools(), annotations_people_write()].concat();
    for (what, schema, expected) in cases {
        let found = warnings(schema);
        assert_eq!(found.len(), expected.len(), "{what}: {found:#?}");
        for (warning, start) in found.iter().zip(&expected) {
            assert!(
                warning.starts_with(start),
                "{what}: {warning:?} does not start with {start:?}"
            );
        }
    }
}

#[test]
fn near_misses_of_short_keywords_and_of_formats_are_refused() {
    for (schema, says) in [
        (
            json!({ "properties": { "a": {} }, "tpye": "object" }),
            "did you mean \"type\"",
        ),
        (
            json!({ "type": "object", "properties": { "l": { "type": "array", "itmes": { "type": "string" } } } }),
            "did you mean \"items\"",
        ),
        (
            json!({ "type": "object", "properties": { "l": { "ref": "#/$defs/a" } }, "$defs": { "a": {} } }),
            "did you mean \"$ref\"",
        ),
        (
            json!({ "type": "object", "properties": { "d": { "type": "string", "format": "date-tme" } } }),
            "did you mean \"date-time\"",
        ),
        (
            json!({ "type": "object", "properties": { "e": { "type": "string", "format": "emial" } } }),
            "did you mean \"email\"",
        ),
    ] {
        let message = refusal(schema.clone(), &[]);
        assert!(message.contains(says), "{schema}: {message}");
    }
    // A near miss of a longer keyword is as often a word of the schema's own: an annotation,
    // with a warning that names the keyword it resembles.
    for (schema, says) in [
        (
            json!({ "type": "object", "requierd": ["a"] }),
            "/: \"requierd\" is not a JSON Schema keyword, kept as an annotation: it checks nothing (did you mean \"required\"?)",
        ),
        (
            json!({ "type": "object", "propertys": {} }),
            "(did you mean \"properties\"?)",
        ),
        (
            json!({ "type": "object", "properties": { "s": { "type": "string", "maxlength": 5 } } }),
            "(did you mean \"maxLength\"?)",
        ),
        (
            json!({ "type": "object", "properties": { "s": { "type": "string", "patern": "^a" } } }),
            "(did you mean \"pattern\"?)",
        ),
        (
            json!({ "type": "object", "properties": { "form": { "type": "string", "form": "textarea" } } }),
            "it checks nothing",
        ),
    ] {
        let warnings = structure::schema::check(schema.clone(), &Default::default())
            .unwrap()
            .2;
        assert!(
            warnings.iter().any(|warning| warning.contains(says)),
            "{schema}: {warnings:?}"
        );
    }
    let message = refusal(
        json!({ "type": "object", "properties": { "phone": { "type": "string", "format": "phone" } } }),
        &[("structure_unknown_formats", "refuse")],
    );
    assert!(
        message.contains("structure_unknown_formats=refuse"),
        "{message}"
    );
}

#[test]
fn openapi_formats_are_checked() {
    let schema = json!({ "type": "object", "properties": {
        "id": { "type": "integer", "format": "int32", "minimum": 0 },
        "big": { "type": "integer", "format": "int64" },
        "avatar": { "type": "string", "format": "byte" }
    } });
    let compiled = structure::schema::check(schema, &Default::default())
        .unwrap()
        .1;
    assert!(compiled.is_valid(&json!({ "id": 7, "big": 9_000_000_000i64, "avatar": "aGVsbG8=" })));
    assert!(
        !compiled.is_valid(&json!({ "id": 2_147_483_648i64 })),
        "over int32"
    );
    assert!(
        !compiled.is_valid(&json!({ "id": -1 })),
        "the author's own minimum still holds"
    );
    assert!(!compiled.is_valid(&json!({ "big": 1e19 })), "over int64");
    assert!(!compiled.is_valid(&json!({ "avatar": "not base64!" })));
    let violations = compiled.violations(&json!({ "id": 2_147_483_648i64 }));
    assert_eq!(violations[0].pointer, "/id");
}

#[test]
fn annotations_reach_the_model_in_the_schema_it_is_sent() {
    let schema = json!({ "type": "object", "javaType": "com.acme.Person",
        "properties": { "name": { "type": "string", "description": "Full name", "x-note": 1, "example": "Ada" } } });
    let full = AnswerFormat::build(&schema, &FULL, Shape::One);
    assert_eq!(
        full.schema["properties"]["answer"]["anyOf"][0]["javaType"],
        "com.acme.Person"
    );
    let strict = AnswerFormat::build(&schema, &OPENAI_STRICT, Shape::One);
    let name = &strict.schema["properties"]["answer"]["anyOf"][0]["properties"]["name"];
    assert_eq!(name["description"], "Full name\nNotes: example: \"Ada\".");
    assert!(name.get("example").is_none() && name.get("x-note").is_none());
    // And the call goes through, the answer validated against the schema as given.
    let outcome = call(schema, json!({ "name": "Ada Lovelace" }), &[]).unwrap();
    assert_eq!(
        outcome.answer,
        Answer::Ok(json!({ "name": "Ada Lovelace" }))
    );
}
