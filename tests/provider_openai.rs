//! OpenAI Chat Completions conformance: every request body we send validates against OpenAI's
//! published request schema, the schema we send obeys strict mode's rules, and every recorded
//! OpenAI response parses into the right outcome.

mod support;

use mock_llm::Reply;
use serde_json::{Value, json};
use structure::ports::HttpResponse;
use structure::provider::{Provider, connect};
use structure::settings::Settings;
use structure::{Answer, ErrorKind, SchemaInput, StructureRequest};
use support::{
    MapConfig, ScriptedTransport, TEXT_WITH_COPIED_VALUES, bundled, bundled_names, errors, ports,
    provider_api, strict_violations, validator,
};

/// Schemas that exercise every transform: optional fields, nested and free-form objects, maps,
/// `oneOf` at the root, `allOf`, `$defs`, `definitions`, recursion, references into the root,
/// unsupported keywords and formats.
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
            "$id": "https://example.com/order",
            "type": "object",
            "properties": {
                "id": { "type": "string", "format": "uuid" },
                "lines": { "type": "array", "minItems": 1, "uniqueItems": true, "items": { "$ref": "#/$defs/line" } },
                "meta": { "type": "object" },
                "counts": { "type": "object", "additionalProperties": { "type": "integer", "minimum": 0 } },
                "note": { "type": "string", "maxLength": 200, "default": "" },
                "anything": true,
                "parent": { "$ref": "#" },
                "shipping": { "$ref": "#/definitions/address" },
                "billing": { "allOf": [{ "$ref": "#/definitions/address" }], "description": "same shape" },
                "kind": { "type": "string", "const": "order" },
                "site": { "type": "string", "format": "uri" }
            },
            "required": ["id", "lines"],
            "additionalProperties": false,
            "$defs": {
                "line": {
                    "type": "object",
                    "properties": {
                        "sku": { "type": "string", "pattern": "^[A-Z]{3}-[0-9]{4}$" },
                        "qty": { "type": "integer", "exclusiveMinimum": 0, "multipleOf": 1 },
                        "children": { "type": "array", "items": { "$ref": "#/$defs/line" } }
                    },
                    "required": ["sku", "qty"],
                    "dependentRequired": { "sku": ["qty"] }
                }
            },
            "definitions": {
                "address": { "type": "object", "properties": { "city": { "type": "string" } }, "required": ["city"], "patternProperties": { "^x-": {} } }
            },
            "x-owner": "billing team"
        }),
    ]
}

fn openai_config(base_url: Option<&str>) -> MapConfig {
    let mut config = MapConfig::with(&[
        ("structure_model", "openai/gpt-4.1-mini"),
        ("openai_api_key", "sk-test-123"),
    ]);
    if let Some(url) = base_url {
        config.values.insert("openai_base_url".into(), url.into());
    }
    config
}

/// Runs two iterations (an answer that violates the schema, then a need) and returns both
/// request bodies.
fn two_requests(schema: &Value, config: &MapConfig) -> Vec<Value> {
    let transport = ScriptedTransport::new([
        Reply::answer(json!({ "__not_a_field": 1 })),
        Reply::need("everything"),
    ]);
    let request = StructureRequest::new(
        TEXT_WITH_COPIED_VALUES,
        SchemaInput::Inline(schema.clone()),
        Some(2),
    )
    .unwrap();
    let outcome = structure::structure(
        &request,
        &structure::Scope::default(),
        &ports(&transport, config),
    )
    .unwrap();
    assert_eq!(outcome.answer, Answer::NeedMoreInput("everything".into()));
    (0..transport.count())
        .map(|index| transport.body(index))
        .collect()
}

#[test]
fn every_request_body_validates_against_openais_request_schema() {
    let request_schema = validator(&provider_api(
        "schemas/openai.CreateChatCompletionRequest.strict.schema.json",
    ));
    let mut schemas: Vec<Value> = bundled_names().iter().map(|name| bundled(name)).collect();
    schemas.extend(tricky_schemas());
    let configs = [
        openai_config(None),
        openai_config(Some("http://localhost:8080/v1")),
        // The local profiles with extractive mode off: these requests carry the schema as it
        // is (extractive mode's narrowed schemas are checked in tests/core_grounding.rs).
        MapConfig::with(&[
            ("structure_model", "ollama/llama3.2"),
            ("structure_extractive", "false"),
        ]),
        MapConfig::with(&[
            ("structure_model", "vllm/meta-llama/Llama-3.1-8B-Instruct"),
            ("structure_extractive", "false"),
        ]),
        MapConfig::with(&[
            ("structure_model", "llamacpp/smollm2"),
            ("structure_extractive", "false"),
        ]),
    ];
    for config in &configs {
        for schema in &schemas {
            for body in two_requests(schema, config) {
                let found = errors(&request_schema, &body);
                assert!(
                    found.is_empty(),
                    "{:?} / {}: {found:#?}",
                    config.values,
                    schema["title"]
                );
            }
        }
    }
}

#[test]
fn the_schema_sent_in_strict_mode_obeys_strict_rules() {
    let mut schemas: Vec<Value> = bundled_names().iter().map(|name| bundled(name)).collect();
    schemas.extend(tricky_schemas());
    for schema in &schemas {
        for config in [
            openai_config(None),
            openai_config(Some("https://llm.internal/v1")),
        ] {
            let body = &two_requests(schema, &config)[0];
            let format = &body["response_format"];
            assert_eq!(format["type"], "json_schema");
            assert_eq!(format["json_schema"]["strict"], true);
            let name = format["json_schema"]["name"].as_str().unwrap();
            assert!(
                !name.is_empty()
                    && name.len() <= 64
                    && name
                        .chars()
                        .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
            );
            let sent = &format["json_schema"]["schema"];
            assert_eq!(
                strict_violations(sent),
                Vec::<String>::new(),
                "{}",
                serde_json::to_string_pretty(sent).unwrap()
            );
            // Every same-document reference still resolves.
            validator(sent);
        }
    }
}

#[test]
fn requests_carry_the_conversation_the_key_and_the_token_limit() {
    let config = openai_config(None);
    let bodies = two_requests(&bundled("contact"), &config);
    let first = &bodies[0];
    assert_eq!(first["model"], "gpt-4.1-mini");
    assert_eq!(first["max_completion_tokens"], 4096);
    assert!(
        first.get("temperature").is_none(),
        "reasoning models reject temperature"
    );
    let messages = first["messages"].as_array().unwrap();
    assert_eq!(messages.len(), 2);
    assert_eq!(messages[0]["role"], "system");
    assert!(
        messages[0]["content"]
            .as_str()
            .unwrap()
            .contains("the single field _need"),
        "the need convention"
    );
    assert_eq!(
        messages[1],
        json!({ "role": "user", "content": TEXT_WITH_COPIED_VALUES })
    );
    let second = bodies[1]["messages"].as_array().unwrap();
    assert_eq!(second.len(), 4);
    assert_eq!(
        second[2],
        json!({ "role": "assistant", "content": "{\"answer\":{\"__not_a_field\":1}}" })
    );
    let reason = second[3]["content"].as_str().unwrap();
    assert_eq!(second[3]["role"], "user");
    assert!(
        reason.starts_with("The previous output did not conform to the schema:\n"),
        "{reason}"
    );
    assert!(
        reason.contains("- /__not_a_field: property is not allowed here: remove it"),
        "{reason}"
    );
    assert!(
        reason.contains("- /name: required property is missing"),
        "{reason}"
    );

    let transport = ScriptedTransport::new([Reply::need("x")]);
    let request = StructureRequest::new(
        TEXT_WITH_COPIED_VALUES,
        SchemaInput::Named("contact".into()),
        None,
    )
    .unwrap();
    structure::structure(
        &request,
        &structure::Scope::default(),
        &ports(&transport, &config),
    )
    .unwrap();
    let system = transport.body(0)["messages"][0]["content"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(
        system.contains("- `address.country` is a two-letter ISO code"),
        "the manual of a named schema: {system}"
    );
    let sent = &transport.requests.borrow()[0];
    assert_eq!(sent.url, "https://api.openai.com/v1/chat/completions");
    assert!(
        sent.headers
            .contains(&("authorization".to_owned(), "Bearer sk-test-123".to_owned()))
    );
}

#[test]
fn local_server_profiles_shape_the_request_for_their_server() {
    let schema = bundled("contact");
    let profiles = [
        (
            "ollama/llama3.2",
            None,
            "http://localhost:11434/v1/chat/completions",
            "json_schema",
        ),
        (
            "openai/llama3.2",
            Some("http://127.0.0.1:11434/v1/"),
            "http://127.0.0.1:11434/v1/chat/completions",
            "json_schema",
        ),
        (
            "llamacpp/smollm2",
            None,
            "http://localhost:8080/v1/chat/completions",
            "json_object",
        ),
        (
            "vllm/qwen/Qwen2.5-7B",
            Some("http://gpu:8000/v1"),
            "http://gpu:8000/v1/chat/completions",
            "json_schema",
        ),
    ];
    for (model, base_url, url, format_type) in profiles {
        let mut config = MapConfig::with(&[
            ("structure_model", model),
            ("structure_extractive", "false"),
        ]);
        if let Some(base_url) = base_url {
            config
                .values
                .insert("openai_base_url".into(), base_url.into());
        }
        let transport = ScriptedTransport::new([Reply::need("x")]);
        let request = StructureRequest::new(
            TEXT_WITH_COPIED_VALUES,
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
        let sent = &transport.requests.borrow()[0];
        assert_eq!(sent.url, url, "{model}");
        assert!(
            sent.headers.iter().all(|(name, _)| name != "authorization"),
            "no key configured, none sent"
        );
        the_body_suits_the_server(model, format_type, &transport.body(0), &outcome);
        // Each of these servers turns the schema into a grammar the model does not read: the
        // prompt counted is the body without it (and without the answer limit, added after).
        let mut body = transport.body(0);
        let limit_key = ["max_tokens", "max_completion_tokens"]
            .into_iter()
            .find(|key| body.get(key).is_some())
            .expect("an answer limit");
        body.as_object_mut().unwrap().remove(limit_key);
        let sent_schema = body["response_format"]
            .get("schema")
            .unwrap_or(&body["response_format"]["json_schema"]["schema"]);
        let estimate = sent.tokens.as_ref().expect("a token estimate");
        assert_eq!(
            estimate.prompt_bytes,
            body.to_string().len() - sent_schema.to_string().len(),
            "{model}"
        );
    }
}

/// The request body a local server's profile makes for `model`: its response format, no
/// temperature, an answer limit within the window, the schema in the prompt, and no pattern
/// llama.cpp's grammar converter cannot take.
fn the_body_suits_the_server(
    model: &str,
    format_type: &str,
    body: &Value,
    outcome: &structure::Outcome,
) {
    assert_eq!(body["response_format"]["type"], format_type, "{model}");
    assert_eq!(body["temperature"], 0.0, "{model}");
    // The answer's limit is what the server's window leaves after the prompt (a local
    // server's default window of 2,048 tokens here, vLLM's 8,192), at most 4,096.
    let max_tokens = body["max_tokens"].as_u64().unwrap();
    let window = if model.starts_with("vllm") {
        8192
    } else {
        2048
    };
    assert!(
        max_tokens <= 4096 && max_tokens + 100 < window,
        "{model}: {max_tokens}"
    );
    // The grammar never shows descriptions, so the prompt carries the schema.
    assert!(
        body["messages"][0]["content"]
            .as_str()
            .unwrap()
            .contains("\"format\":\"email\""),
        "{model}"
    );
    // llama.cpp's grammar converter crashes on some patterns: they go to the description.
    let sent_schema = body["response_format"]
        .get("schema")
        .unwrap_or(&body["response_format"]["json_schema"]["schema"]);
    let phone = &sent_schema["properties"]["answer"]["anyOf"][0]["properties"]["phone"];
    if model.starts_with("vllm") {
        assert!(phone["pattern"].is_string());
    } else {
        assert!(phone.get("pattern").is_none(), "{model}: {phone}");
        assert!(
            outcome
                .trace
                .schema_transforms
                .iter()
                .any(|t| t.contains("pattern: ") && t.contains("stated in the description"))
        );
    }
}

fn parse_sample(
    path: &str,
    status: u16,
) -> Result<structure::provider::Completion, structure::StructureError> {
    let config = openai_config(None);
    let provider = {
        let settings = Settings::load(&config).unwrap();
        connect(&settings, &settings.model).unwrap()
    };
    let body = provider_api(path).to_string().into_bytes();
    provider.completion(&HttpResponse {
        status,
        headers: vec![],
        body,
    })
}

#[test]
fn every_openai_chat_sample_parses_into_the_right_outcome() {
    let text = |path| parse_sample(path, 200).unwrap().delivered.text().to_owned();
    assert_eq!(
        text("samples/openai/chat/structured_output.response.json"),
        "{\"created_at\":\"2026-04-13T14:33:27Z\"}"
    );
    assert!(
        text("samples/openai/chat/sdk.test_parse_pydantic_model.response.json")
            .contains("San Francisco")
    );
    assert!(
        text("samples/openai/chat/sdk.test_parse_pydantic_model_multiple_choices.response.json")
            .contains("\"temperature\":64")
    );
    assert!(!text("samples/openai/chat/simple.response.json").is_empty());

    let refusal = parse_sample(
        "samples/openai/chat/sdk.test_parse_pydantic_model_refusal.response.json",
        200,
    )
    .unwrap_err();
    assert_eq!(refusal.kind, ErrorKind::Refusal);
    assert_eq!(
        refusal.message,
        "the model refused to answer: I'm very sorry, but I can't assist with that."
    );
    assert_eq!(
        (refusal.usage.prompt_tokens, refusal.usage.completion_tokens),
        (79, 12)
    );

    for path in [
        "samples/openai/chat/length.response.json",
        "samples/openai/chat/sdk.test_parse_max_tokens_reached.response.json",
    ] {
        let error = parse_sample(path, 200).unwrap_err();
        assert_eq!(error.kind, ErrorKind::Truncated, "{path}");
        assert!(error.usage.completion_tokens > 0, "{path}");
    }
    for path in [
        "samples/openai/chat/tool_calls.response.json",
        "samples/openai/chat/sdk.test_parse_pydantic_tool.response.json",
    ] {
        let error = parse_sample(path, 200).unwrap_err();
        assert_eq!(error.kind, ErrorKind::InvalidResponse, "{path}");
        assert!(
            error.message.contains("called a tool"),
            "{path}: {}",
            error.message
        );
    }
    let usage = parse_sample("samples/openai/chat/simple.response.json", 200)
        .unwrap()
        .usage;
    let sample = provider_api("samples/openai/chat/simple.response.json");
    assert_eq!(
        usage.prompt_tokens,
        sample["usage"]["prompt_tokens"].as_u64().unwrap()
    );
    assert_eq!(
        usage.cached_prompt_tokens,
        sample["usage"]["prompt_tokens_details"]["cached_tokens"]
            .as_u64()
            .unwrap_or(0)
    );
}

#[test]
fn every_openai_error_sample_is_a_provider_error_with_status_and_retryability() {
    let cases = [
        (
            "400_invalid_json_schema.json",
            400,
            false,
            "invalid_request_error",
            "'required' is required to be supplied",
        ),
        (
            "400_max_tokens_reached.json",
            400,
            false,
            "invalid_request_error",
            "max_tokens or model output limit",
        ),
        (
            "400_unsupported_parameter.json",
            400,
            false,
            "unsupported_parameter",
            "'top_p' is not supported",
        ),
        (
            "401_invalid_api_key.json",
            401,
            false,
            "invalid_api_key",
            "check OPENAI_API_KEY",
        ),
        (
            "429_rate_limit.json",
            429,
            true,
            "rate_limit_exceeded",
            "retry later",
        ),
        (
            "500_server_error.json",
            500,
            true,
            "server_error",
            "The server had an error",
        ),
    ];
    for (file, status, retryable, code, text) in cases {
        let error = parse_sample(&format!("samples/openai/errors/{file}"), status).unwrap_err();
        assert_eq!(
            error.kind,
            ErrorKind::Provider {
                status,
                retryable,
                code: Some(code.to_owned())
            },
            "{file}"
        );
        assert!(
            error
                .message
                .starts_with(&format!("OpenAI answered {status}: ")),
            "{}",
            error.message
        );
        assert!(error.message.contains(text), "{file}: {}", error.message);
    }
}

#[test]
fn bodies_that_are_not_the_wire_format_are_invalid_responses() {
    let config = openai_config(None);
    let provider = {
        let settings = Settings::load(&config).unwrap();
        connect(&settings, &settings.model).unwrap()
    };
    for (status, body, expected) in [
        (200, "<html>gateway</html>", "not JSON"),
        (200, "{\"object\": \"list\"}", "without a choice"),
        (
            200,
            "{\"choices\": [{\"message\": {\"role\": \"assistant\"}, \"finish_reason\": \"stop\"}]}",
            "without message content",
        ),
    ] {
        let error = provider
            .completion(&HttpResponse {
                status,
                headers: vec![],
                body: body.as_bytes().to_vec(),
            })
            .unwrap_err();
        assert_eq!(error.kind, ErrorKind::InvalidResponse, "{body}");
        assert!(error.message.contains(expected), "{}", error.message);
    }
    let error = provider
        .completion(&HttpResponse {
            status: 502,
            headers: vec![],
            body: b"Bad Gateway".to_vec(),
        })
        .unwrap_err();
    assert_eq!(
        error.kind,
        ErrorKind::Provider {
            status: 502,
            retryable: true,
            code: None
        }
    );
    assert!(
        error.message.ends_with("answered 502: Bad Gateway"),
        "{}",
        error.message
    );
    // Ollama writes errors as a plain string.
    let error = provider
        .completion(&HttpResponse {
            status: 404,
            headers: vec![],
            body: br#"{"error":"model \"x\" not found"}"#.to_vec(),
        })
        .unwrap_err();
    assert!(
        error.message.contains("model \"x\" not found")
            && error.message.contains("check the model"),
        "{}",
        error.message
    );
}

#[test]
fn settings_errors_say_what_to_set() {
    let cases = [
        (
            MapConfig::with(&[("structure_model", "openai/gpt-4.1-mini")]),
            "openai_api_key",
            "set OPENAI_API_KEY",
        ),
        (
            MapConfig::with(&[("structure_model", "gpt-4.1-mini")]),
            "structure_model",
            "must be written provider/model",
        ),
        (
            MapConfig::with(&[("structure_model", "mistral/large")]),
            "structure_model",
            "provider \"mistral\" is not supported",
        ),
        (
            MapConfig::with(&[
                ("structure_model", "ollama/x"),
                ("openai_base_url", "localhost:11434"),
            ]),
            "openai_base_url",
            "must start with http://",
        ),
        (
            MapConfig::with(&[
                ("structure_model", "ollama/x"),
                ("structure_max_output_tokens", "lots"),
            ]),
            "structure_max_output_tokens",
            "positive integer",
        ),
        (
            MapConfig::with(&[
                ("structure_model", "ollama/x"),
                ("structure_provider_profile", "bard"),
            ]),
            "structure_provider_profile",
            "unknown",
        ),
        (
            MapConfig {
                failing: true,
                ..MapConfig::default()
            },
            // The first setting read: which settings callers may set.
            "structure_host_only_settings",
            "config store is down",
        ),
    ];
    for (config, key, text) in cases {
        let transport = ScriptedTransport::new([]);
        let request =
            StructureRequest::new("x", SchemaInput::Named("contact".into()), None).unwrap();
        let error = structure::structure(
            &request,
            &structure::Scope::default(),
            &ports(&transport, &config),
        )
        .unwrap_err();
        assert_eq!(
            error.kind,
            ErrorKind::Configuration {
                key: key.to_owned()
            },
            "{}",
            error.message
        );
        assert!(error.message.contains(text), "{}", error.message);
        assert_eq!(transport.count(), 0);
    }
}

#[test]
fn secrets_never_appear_in_debug_output() {
    let settings = Settings::load(&openai_config(None)).unwrap();
    assert!(!format!("{settings:?}").contains("sk-test-123"));
}

#[test]
fn provider_profile_names_are_reported() {
    let config = openai_config(None);
    let provider: Box<dyn Provider> = {
        let settings = Settings::load(&config).unwrap();
        connect(&settings, &settings.model).unwrap()
    };
    assert_eq!(
        (provider.model(), provider.profile_name()),
        ("openai/gpt-4.1-mini", "openai")
    );
}

#[test]
fn model_aliases_resolve_from_config() {
    let settings = |pairs: &[(&str, &str)]| Settings::load(&MapConfig::with(pairs));
    assert_eq!(
        settings(&[]).unwrap().model,
        "openai/gpt-4.1-mini",
        "default:fast by default"
    );
    assert_eq!(
        settings(&[("structure_model", "default:analyze")])
            .unwrap()
            .model,
        "openai/gpt-4.1"
    );
    let custom = settings(&[
        ("structure_model", "default:fast"),
        ("structure_model_fast", "anthropic/claude-haiku-4-5"),
    ]);
    assert_eq!(custom.unwrap().model, "anthropic/claude-haiku-4-5");
    let local = settings(&[
        ("structure_model", "default:local"),
        ("structure_model_local", "ollama/llama3.2"),
    ]);
    assert_eq!(local.unwrap().model, "ollama/llama3.2");
    let error = settings(&[("structure_model", "default:huge")]).unwrap_err();
    assert_eq!(
        error.kind,
        ErrorKind::Configuration {
            key: "structure_model_huge".into()
        }
    );
    assert!(
        error.message.contains("set structure_model_huge"),
        "{}",
        error.message
    );
    let error = settings(&[
        ("structure_model", "default:a"),
        ("structure_model_a", "default:b"),
    ])
    .unwrap_err();
    assert!(
        error.message.contains("points at another alias"),
        "{}",
        error.message
    );
}
