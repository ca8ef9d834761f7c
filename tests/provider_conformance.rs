//! Every provider × delivery mode: each request body we send validates against the provider's
//! published request schema (tests/provider-api/schemas/*.strict.schema.json), for every bundled
//! schema and for schemas that exercise every transform; the schema inside obeys the provider's
//! subset; and the answer comes back through each mode.

mod support;

use mock_llm::wire::{Form, Wire};
use serde_json::{Value, json};
use structure::{Answer, SchemaInput, StructureRequest};
use support::{
    MapConfig, ScriptedTransport, TEXT_WITH_COPIED_VALUES, bundled, bundled_names, errors, ports,
    provider_api, strict_violations, validator,
};

struct Provider {
    name: &'static str,
    settings: &'static [(&'static str, &'static str)],
    wire: Wire,
    request_schema: &'static str,
}

const PROVIDERS: &[Provider] = &[
    Provider {
        name: "openai chat",
        settings: &[
            ("structure_model", "openai/gpt-4.1-mini"),
            ("openai_api_key", "sk-test"),
        ],
        wire: Wire::OpenAiChat,
        request_schema: "schemas/openai.CreateChatCompletionRequest.strict.schema.json",
    },
    Provider {
        name: "openai responses",
        settings: &[
            ("structure_model", "openai/gpt-5-nano"),
            ("openai_api_key", "sk-test"),
            ("structure_openai_api", "responses"),
        ],
        wire: Wire::OpenAiResponses,
        request_schema: "schemas/openai.CreateResponse.strict.schema.json",
    },
    Provider {
        name: "anthropic",
        settings: &[
            ("structure_model", "anthropic/claude-sonnet-4-5"),
            ("anthropic_api_key", "sk-ant-test"),
        ],
        wire: Wire::Anthropic,
        request_schema: "schemas/anthropic.CreateMessageParams.strict.schema.json",
    },
    Provider {
        name: "gemini json schema",
        settings: &[
            ("structure_model", "google/gemini-2.5-flash"),
            ("gemini_api_key", "g-test"),
        ],
        wire: Wire::Gemini,
        request_schema: "schemas/gemini.GenerateContentRequest.strict.schema.json",
    },
    Provider {
        name: "gemini openapi",
        settings: &[
            ("structure_model", "google/gemini-2.5-flash"),
            ("gemini_api_key", "g-test"),
            ("structure_gemini_schema", "openapi"),
        ],
        wire: Wire::Gemini,
        request_schema: "schemas/gemini.GenerateContentRequest.strict.schema.json",
    },
];

const MODES: [(&str, Form); 3] = [
    ("native", Form::Text),
    ("tool", Form::Tool),
    ("prompt", Form::Text),
];

fn config(provider: &Provider, mode: &str) -> MapConfig {
    let mut config = MapConfig::with(provider.settings);
    config
        .values
        .insert("structure_delivery".into(), mode.into());
    config.values.insert(
        "structure_require_provider_strict_output".into(),
        "false".into(),
    );
    config
}

/// Schemas that exercise every transform.
fn tricky_schemas() -> Vec<Value> {
    vec![
        json!({
            "type": "object",
            "oneOf": [
                { "properties": { "email": { "type": "string", "format": "email" } }, "required": ["email"] },
                { "properties": { "phone": { "type": "string", "pattern": "^[0-9]+$" } }, "required": ["phone"] }
            ]
        }),
        json!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "type": "object",
            "properties": {
                "id": { "type": "string", "format": "uuid" },
                "kind": { "const": "order" },
                "lines": { "type": "array", "minItems": 2, "uniqueItems": true, "items": { "$ref": "#/$defs/line" } },
                "meta": { "type": "object" },
                "counts": { "type": "object", "additionalProperties": { "type": "integer", "minimum": 0 } },
                "note": { "type": ["string", "null"], "maxLength": 200 },
                "rank": { "enum": [1, 2, 3] },
                "shipping": { "$ref": "#/definitions/address" },
                "site": { "type": "string", "format": "uri" }
            },
            "required": ["id", "lines", "kind"],
            "additionalProperties": false,
            "$defs": {
                "line": {
                    "type": "object",
                    "properties": {
                        "sku": { "type": "string", "pattern": "^[A-Z]{3}-[0-9]{4}$" },
                        "qty": { "type": "integer", "exclusiveMinimum": 0, "multipleOf": 1 }
                    },
                    "required": ["sku", "qty"]
                }
            },
            "definitions": {
                "address": { "type": "object", "properties": { "city": { "type": "string" } }, "required": ["city"] }
            }
        }),
        wild_sized(),
        json!({ "title": "label", "enum": ["spam", "ham", "unsure"] }),
    ]
}

/// A schema of the sizes found in the wild, over OpenAI's totals: 1,950 enum values in two
/// enums, 13 levels of nesting; with a property that can never be there and untyped items.
fn wild_sized() -> Value {
    let values =
        |prefix: &str| -> Vec<String> { (0..975).map(|n| format!("{prefix}-{n}")).collect() };
    let deep = (0..12).fold(json!({ "type": "string" }), |inner, level| {
        json!({ "type": "object", "properties": { format!("level{level}"): inner } })
    });
    json!({
        "title": "wild-sized",
        "type": "object",
        "properties": {
            "species": { "enum": values("species") },
            "move": { "enum": values("move") },
            "deep": deep,
            "never": false,
            "anything": { "type": "array", "items": true }
        },
        "required": ["species"]
    })
}

fn all_schemas() -> Vec<Value> {
    let mut schemas: Vec<Value> = bundled_names().iter().map(|name| bundled(name)).collect();
    schemas.extend(tricky_schemas());
    schemas
}

/// Two iterations (an answer breaking the schema, then a need) and the request bodies sent.
fn two_requests(provider: &Provider, mode: &str, form: Form, schema: &Value) -> Vec<Value> {
    let transport = ScriptedTransport::new([
        provider.wire.answer(form, json!({ "__not_a_field": 1 })),
        provider.wire.need(form, "everything"),
    ]);
    let config = config(provider, mode);
    let request = StructureRequest::new(
        TEXT_WITH_COPIED_VALUES,
        SchemaInput::Inline(schema.clone()),
        Some(2),
    )
    .unwrap();
    let outcome = structure::structure(
        &request,
        &structure::Scope::default(),
        &ports(&transport, &config),
    )
    .unwrap_or_else(|error| panic!("{} {mode}: {}", provider.name, error.message));
    assert_eq!(
        outcome.answer,
        Answer::NeedMoreInput("everything".into()),
        "{} {mode}",
        provider.name
    );
    assert_eq!(outcome.trace.delivery, mode);
    (0..transport.count())
        .map(|index| transport.body(index))
        .collect()
}

#[test]
fn every_request_body_validates_against_the_providers_request_schema() {
    for provider in PROVIDERS {
        let request_schema = validator(&provider_api(provider.request_schema));
        for (mode, form) in MODES {
            for schema in all_schemas() {
                for body in two_requests(provider, mode, form, &schema) {
                    let found = errors(&request_schema, &body);
                    assert!(
                        found.is_empty(),
                        "{} {mode} {}: {found:#?}\n{body:#}",
                        provider.name,
                        schema["title"]
                    );
                }
            }
        }
    }
}

/// The schema each provider is sent, in native and tool mode.
fn sent_schema(provider: &Provider, mode: &str, body: &Value) -> Value {
    let pointer = match (provider.wire, mode) {
        (Wire::OpenAiChat, "native") => "/response_format/json_schema/schema",
        (Wire::OpenAiChat, _) => "/tools/0/function/parameters",
        (Wire::OpenAiResponses, "native") => "/text/format/schema",
        (Wire::OpenAiResponses, _) => "/tools/0/parameters",
        (Wire::Anthropic, "native") => "/output_config/format/schema",
        (Wire::Anthropic, _) => "/tools/0/input_schema",
        (Wire::Gemini, "native") if provider.name.contains("openapi") => {
            "/generationConfig/responseSchema"
        }
        (Wire::Gemini, "native") => "/generationConfig/responseJsonSchema",
        (Wire::Gemini, _) => "/tools/0/functionDeclarations/0/parametersJsonSchema",
    };
    body.pointer(pointer)
        .cloned()
        .unwrap_or_else(|| panic!("{} {mode}: no schema at {pointer}", provider.name))
}

/// Every object closed, and no keyword outside Anthropic's subset.
fn anthropic_violations(node: &Value, at: &str, found: &mut Vec<String>) {
    const KEYWORDS: &[&str] = &[
        "type",
        "properties",
        "required",
        "additionalProperties",
        "items",
        "enum",
        "anyOf",
        "allOf",
        "$ref",
        "$defs",
        "description",
        "title",
        "format",
        "minItems",
    ];
    let Value::Object(map) = node else { return };
    for key in map.keys().filter(|key| !KEYWORDS.contains(&key.as_str())) {
        found.push(format!("{at}: {key}"));
    }
    if map.get("type") == Some(&json!("object"))
        && map.get("additionalProperties") != Some(&json!(false))
    {
        found.push(format!("{at}: open object"));
    }
    if let Some(Value::Array(_)) = map.get("type") {
        found.push(format!("{at}: type list"));
    }
    if map
        .get("minItems")
        .and_then(Value::as_u64)
        .is_some_and(|n| n > 1)
    {
        found.push(format!("{at}: minItems above 1"));
    }
    for (key, child) in map {
        match child {
            Value::Object(children) if key == "properties" || key == "$defs" => {
                for (name, schema) in children {
                    anthropic_violations(schema, &format!("{at}/{key}/{name}"), found);
                }
            }
            Value::Array(branches) if key == "anyOf" || key == "allOf" => {
                for (index, branch) in branches.iter().enumerate() {
                    anthropic_violations(branch, &format!("{at}/{key}/{index}"), found);
                }
            }
            _ if key == "items" => anthropic_violations(child, &format!("{at}/items"), found),
            _ => {}
        }
    }
}

#[test]
fn the_schema_sent_obeys_each_providers_subset() {
    for provider in PROVIDERS {
        for (mode, form) in &MODES[..2] {
            for schema in all_schemas() {
                let body = &two_requests(provider, mode, *form, &schema)[0];
                let sent = sent_schema(provider, mode, body);
                let found = match provider.wire {
                    Wire::OpenAiChat | Wire::OpenAiResponses => strict_violations(&sent),
                    Wire::Anthropic => {
                        let mut found = Vec::new();
                        anthropic_violations(&sent, "", &mut found);
                        found
                    }
                    Wire::Gemini => Vec::new(),
                };
                assert!(
                    found.is_empty(),
                    "{} {mode} {}: {found:#?}\n{sent:#}",
                    provider.name,
                    schema["title"]
                );
                if !provider.name.contains("openapi") || *mode == "tool" {
                    // Every same-document reference still resolves.
                    validator(&sent);
                }
            }
        }
    }
}

#[test]
fn each_mode_delivers_the_answer_and_takes_the_fix_after_a_violation() {
    let schema = bundled("contact");
    let valid = json!({ "name": "Ada Lovelace", "email": "ada@example.com", "address": { "country": "GB" } });
    for provider in PROVIDERS {
        for (mode, form) in MODES {
            let transport = ScriptedTransport::new([
                provider.wire.answer(
                    form,
                    json!({ "name": "Ada Lovelace", "email": "not an email" }),
                ),
                provider.wire.answer(form, valid.clone()),
            ]);
            let config = config(provider, mode);
            let request = StructureRequest::new(
                "Ada Lovelace, ada@example.com, UK",
                SchemaInput::Inline(schema.clone()),
                None,
            )
            .unwrap();
            let outcome = structure::structure(
                &request,
                &structure::Scope::default(),
                &ports(&transport, &config),
            )
            .unwrap();
            assert_eq!(
                outcome.answer,
                Answer::Ok(valid.clone()),
                "{} {mode}",
                provider.name
            );
            assert_eq!(
                (outcome.iterations, transport.count()),
                (2, 2),
                "{} {mode}",
                provider.name
            );
            let second = transport.body(1).to_string();
            assert!(
                second.contains("/email: value must match format"),
                "{} {mode}: the reason goes back: {second}",
                provider.name
            );
        }
    }
}

/// A 1×1 PNG: what a photo or a scan is to the request.
const PNG: &[u8] = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR\0\0\0\x01\0\0\0\x01\x08\x06\0\0\0\x1f\x15\xc4\x89\0\0\0\rIDATx\x9cc\xf8\xff\xff?\0\x05\xfe\x02\xfe\xa7\x35\x81\x84\0\0\0\0IEND\xaeB`\x82";

/// Where each wire format puts a document given as it is, in the first user message.
fn attached_part(wire: Wire, body: &Value) -> Option<Value> {
    let pointer = match wire {
        Wire::OpenAiChat => "/messages/1/content/1",
        Wire::OpenAiResponses => "/input/0/content/1",
        Wire::Anthropic => "/messages/0/content/0",
        Wire::Gemini => "/contents/0/parts/0",
    };
    body.pointer(pointer).cloned()
}

#[test]
fn an_image_and_a_scan_go_as_each_providers_own_parts_and_validate_against_its_schema() {
    use structure::request::Document;
    let scan = mock_llm::pdf::with_scans(&[None, Some("Total: 12.50 EUR")]);
    let schema = json!({ "type": "object", "properties": { "total": { "type": "string" } } });
    for provider in PROVIDERS {
        let request_schema = validator(&provider_api(provider.request_schema));
        for (document, media_type) in [
            (PNG.to_vec(), "image/png"),
            (scan.clone(), "application/pdf"),
        ] {
            let transport = ScriptedTransport::new([provider
                .wire
                .answer(Form::Text, json!({ "total": "12.50 EUR" }))]);
            let config = config(provider, "native");
            let request = StructureRequest::for_document(
                Document::new(document, media_type).unwrap(),
                SchemaInput::Inline(schema.clone()),
                None,
            )
            .unwrap();
            let outcome = structure::structure(
                &request,
                &structure::Scope::default(),
                &ports(&transport, &config),
            )
            .unwrap_or_else(|error| panic!("{} {media_type}: {}", provider.name, error.message));
            assert_eq!(outcome.answer, Answer::Ok(json!({ "total": "12.50 EUR" })));
            let body = transport.body(0);
            let found = errors(&request_schema, &body);
            assert!(
                found.is_empty(),
                "{} {media_type}: {found:#?}",
                provider.name
            );
            let part = attached_part(provider.wire, &body)
                .unwrap_or_else(|| panic!("{}: {body:#}", provider.name));
            let encoded = part.to_string();
            let base64 = base64::Engine::encode(
                &base64::engine::general_purpose::STANDARD,
                &request.document.as_ref().unwrap().bytes,
            );
            assert!(
                encoded.contains(&base64),
                "{} {media_type}: the bytes are in the part: {part}",
                provider.name
            );
            assert!(
                encoded.contains(media_type),
                "{} {media_type}: {part}",
                provider.name
            );
        }
    }
}
