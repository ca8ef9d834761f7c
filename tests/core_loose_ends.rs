//! The spec's loose ends, each pinned: a content filter is `blocked`, the token budget stops the
//! first call too, a builder-cache hit answers to this call's confidence threshold, a manual has
//! a size limit, every overridable setting resolves through every layer of the cascade, and
//! the nulls dropped for optional properties are listed as repairs.

mod support;

use mock_llm::Reply;
use serde_json::{Map, Value, json};
use structure::ports::MemoryKeyValue;
use structure::settings::{Cascade, OVERRIDABLE, Settings};
use structure::{
    Answer, ErrorKind, Outcome, Registration, SchemaInput, Scope, StructureError, StructureRequest,
};
use support::{FixedClock, MapConfig, ScriptedTransport};

fn local(extra: &[(&str, &str)]) -> MapConfig {
    let mut pairs = vec![
        ("structure_model", "openai/test-model"),
        ("openai_base_url", "http://127.0.0.1:9/v1"),
    ];
    pairs.extend_from_slice(extra);
    MapConfig::with(&pairs)
}

fn ports<'a>(
    transport: &'a ScriptedTransport,
    config: &'a MapConfig,
    key_value: &'a MemoryKeyValue,
) -> structure::ports::Ports<'a> {
    structure::ports::Ports {
        transport,
        config,
        key_value,
        clock: Box::leak(Box::new(FixedClock::default())),
    }
}

/// One `structure` call at the default scope.
fn call(
    request: &StructureRequest,
    transport: &ScriptedTransport,
    config: &MapConfig,
    key_value: &MemoryKeyValue,
) -> Result<Outcome, StructureError> {
    structure::structure(
        request,
        &Scope::default(),
        &ports(transport, config, key_value),
    )
}

/// A request to read a [`person`] from `text`.
fn about_a_person(text: &str) -> StructureRequest {
    StructureRequest::new(text, SchemaInput::Inline(person()), None).unwrap()
}

fn person() -> Value {
    json!({ "type": "object", "properties": { "name": { "type": "string" }, "age": { "type": "integer" } }, "required": ["name"] })
}

#[test]
fn a_content_filter_stop_in_chat_completions_is_blocked_as_in_the_responses_api() {
    let body = json!({
        "id": "chatcmpl-1", "object": "chat.completion", "created": 1, "model": "m",
        "choices": [{ "index": 0, "message": { "role": "assistant", "content": null }, "finish_reason": "content_filter" }],
        "usage": { "prompt_tokens": 10, "completion_tokens": 0, "total_tokens": 10 }
    });
    let transport = ScriptedTransport::new([Reply::raw(200, &body.to_string())]);
    let config = local(&[]);
    let key_value = MemoryKeyValue::default();
    let request = about_a_person("Ada");
    let error = call(&request, &transport, &config, &key_value).unwrap_err();
    assert_eq!(
        error.kind,
        ErrorKind::Blocked {
            reason: "content_filter".to_owned()
        }
    );
    assert_eq!(error.usage.prompt_tokens, 10);
}

#[test]
fn the_token_budget_bounds_the_first_call() {
    let transport = ScriptedTransport::new([]);
    let config = local(&[("structure_token_budget", "1000")]);
    let key_value = MemoryKeyValue::default();
    let request = about_a_person("Ada, 36");
    let error = call(&request, &transport, &config, &key_value).unwrap_err();
    assert_eq!(error.kind, ErrorKind::BudgetExhausted);
    assert!(
        error.message.contains("structure_max_output_tokens"),
        "{}",
        error.message
    );
    assert_eq!(
        transport.count(),
        0,
        "the default 4096-token answer alone would pass 1000"
    );
    let transport = ScriptedTransport::new([Reply::answer(json!({ "name": "Ada" }))]);
    let config = local(&[
        ("structure_token_budget", "1000"),
        ("structure_max_output_tokens", "200"),
    ]);
    let outcome = call(&request, &transport, &config, &key_value).unwrap();
    assert_eq!(outcome.answer, Answer::Ok(json!({ "name": "Ada" })));
}

#[test]
fn the_operators_ceilings_hold_whatever_a_caller_asks_for() {
    let settings = |pairs: Value| pairs.as_object().unwrap().clone();
    let key_value = MemoryKeyValue::default();
    // A caller's budget above the ceiling is held to it: 4096 tokens of answer could pass 1000.
    let transport = ScriptedTransport::new([]);
    let config = local(&[("structure_max_token_budget", "1000")]);
    let generous =
        about_a_person("Ada, 36").with_settings(settings(json!({ "tokenBudget": 1_000_000 })));
    let error = call(&generous, &transport, &config, &key_value).unwrap_err();
    assert_eq!(error.kind, ErrorKind::BudgetExhausted, "{}", error.message);
    assert!(
        error.message.contains("1000-token budget"),
        "{}",
        error.message
    );
    assert_eq!(transport.count(), 0);

    // One token a chunk: refused, naming the floor.
    let tiny = about_a_person("Ada, 36")
        .with_records(true)
        .with_settings(settings(json!({ "chunkTokens": 1 })));
    let error = call(&tiny, &transport, &local(&[]), &key_value).unwrap_err();
    assert_eq!(
        error.kind,
        ErrorKind::InvalidRequest {
            field: "chunkTokens".into()
        }
    );
    assert!(
        error.message.contains("structure_min_chunk_tokens"),
        "{}",
        error.message
    );
    assert_eq!(transport.count(), 0);

    // A text that needs more chunks than the operator allows: refused before any call.
    let long = "Ada Lovelace was 36 years old. ".repeat(400);
    let many = about_a_person(&long).with_records(true);
    let config = local(&[
        ("structure_chunk_tokens", "200"),
        ("structure_max_chunks", "5"),
    ]);
    let error = call(&many, &transport, &config, &key_value).unwrap_err();
    assert_eq!(
        error.kind,
        ErrorKind::InvalidRequest {
            field: "prompt".into()
        }
    );
    assert!(
        error.message.contains("structure_max_chunks"),
        "{}",
        error.message
    );
    assert_eq!(transport.count(), 0);
}

#[test]
fn expired_builder_cache_entries_are_swept_out_once_a_day() {
    use structure::content::builder::cache_key;
    use structure::ports::KeyValue as _;
    let now = 1_778_077_800_000u64; // support::FixedClock's
    let key_value = MemoryKeyValue::default();
    let config = local(&[("structure_schema_builder_model", "openai/test-model")]);
    let entry = |expires: u64| {
        json!({ "schema": person(), "confidence": 0.9, "expiresAtMillis": expires }).to_string()
    };
    let plant = |description: &str, expires: u64| {
        let key = cache_key(&Scope::default(), description, "openai/test-model");
        key_value.set(&key, entry(expires).as_bytes()).unwrap();
        key
    };
    let stale = plant("an old description", now - 1);
    let fresh = plant("a recent description", now + 1000);
    let corrupt = cache_key(&Scope::default(), "a broken one", "openai/test-model");
    key_value.set(&corrupt, b"{not json").unwrap();
    let built = json!({ "schema": person(), "confidence": 0.95, "clarifyingQuestions": [] });
    let transport = ScriptedTransport::new([
        Reply::text(&built.to_string()),
        Reply::answer(json!({ "name": "Ada" })),
        Reply::text(&built.to_string()),
        Reply::answer(json!({ "name": "Ada" })),
    ]);
    let described = |text: &str| {
        StructureRequest::new("Ada", SchemaInput::Described(text.into()), None).unwrap()
    };
    call(
        &described("a person's name"),
        &transport,
        &config,
        &key_value,
    )
    .unwrap();
    assert_eq!(key_value.get(&stale).unwrap(), None, "expired: deleted");
    assert_eq!(
        key_value.get(&corrupt).unwrap(),
        None,
        "unreadable: deleted"
    );
    assert!(
        key_value.get(&fresh).unwrap().is_some(),
        "not expired: kept"
    );
    // Within the day no sweep runs again; an entry read after it expired is deleted by that read.
    let later = plant("expired since", now - 1);
    call(
        &described("a person's age"),
        &transport,
        &config,
        &key_value,
    )
    .unwrap();
    assert!(key_value.get(&later).unwrap().is_some(), "swept once a day");
    let key = plant("a person's name", now - 1);
    // (the build that follows fails: nothing is written back)
    let transport = ScriptedTransport::new([Reply::text("{}"), Reply::text("{}")]);
    let _ = call(
        &described("a person's name"),
        &transport,
        &config,
        &key_value,
    );
    assert_eq!(
        key_value.get(&key).unwrap(),
        None,
        "an expired hit is deleted"
    );
}

#[test]
fn a_builder_cache_hit_answers_to_this_calls_confidence_threshold() {
    let built = json!({ "schema": person(), "confidence": 0.85, "clarifyingQuestions": [] });
    let transport = ScriptedTransport::new([
        Reply::text(&built.to_string()),
        Reply::answer(json!({ "name": "Ada" })),
    ]);
    let config = local(&[]);
    let key_value = MemoryKeyValue::default();
    let described = StructureRequest::new(
        "Ada",
        SchemaInput::Described("a person's name and age".into()),
        None,
    )
    .unwrap();
    let first = call(&described, &transport, &config, &key_value).unwrap();
    assert_eq!(
        first.answer,
        Answer::Ok(json!({ "name": "Ada" })),
        "0.85 passes the default 0.8"
    );
    // The same description with a stricter threshold: the cached schema is no surer now.
    let mut settings = Map::new();
    settings.insert("confidenceThreshold".into(), json!(0.9));
    let stricter = described.clone().with_settings(settings);
    let second = call(&stricter, &transport, &config, &key_value).unwrap();
    let Answer::NeedMoreInput(need) = &second.answer else {
        panic!("{:?}", second.answer)
    };
    assert!(need.contains("85 % sure"), "{need}");
    let builder = second.trace.schema_builder.as_ref().unwrap();
    assert!(builder.cache_hit);
    assert_eq!(second.usage.llm_calls, 0);
    assert_eq!(transport.count(), 2, "no call for the second request");
}

#[test]
fn a_manual_has_a_size_limit_at_registration_and_per_call() {
    let transport = ScriptedTransport::new([]);
    let key_value = MemoryKeyValue::default();
    let scope = Scope::new("acme", None).unwrap();
    let registration = |manual: &str| Registration {
        name: "lead".to_owned(),
        schema: person(),
        manual: Some(manual.to_owned()),
        version: None,
    };
    let small = local(&[("structure_max_manual_bytes", "100")]);
    let error = structure::register_schema(
        &scope,
        registration(&"m".repeat(101)),
        &ports(&transport, &small, &key_value),
    )
    .unwrap_err();
    assert!(matches!(error.kind, ErrorKind::InvalidSchema { .. }));
    assert!(
        error.message.contains("structure_max_manual_bytes"),
        "{}",
        error.message
    );
    let roomy = local(&[]);
    structure::register_schema(
        &scope,
        registration(&"m".repeat(101)),
        &ports(&transport, &roomy, &key_value),
    )
    .unwrap();
    let request = StructureRequest::new("Ada", SchemaInput::Named("lead".into()), None).unwrap();
    let error =
        structure::structure(&request, &scope, &ports(&transport, &small, &key_value)).unwrap_err();
    assert!(
        error.message.contains("structure_max_manual_bytes"),
        "{}",
        error.message
    );
    assert_eq!(transport.count(), 0);
}

/// An overridable setting: its values for the host, the tenant, the project and the call, and
/// how the loaded settings show the one that wins.
type Layered = (&'static str, [&'static str; 4], fn(&Settings) -> String);

fn layered_values() -> Vec<Layered> {
    [layered_model_values(), layered_reading_values()].concat()
}

/// The settings of which model is asked, and how: the models, the delivery, the output.
fn layered_model_values() -> Vec<Layered> {
    vec![
        (
            "model",
            [
                "openai/host",
                "openai/tenant",
                "openai/project",
                "openai/call",
            ],
            |s| s.model.clone(),
        ),
        (
            "schemaBuilderModel",
            [
                "openai/b-host",
                "openai/b-tenant",
                "openai/b-project",
                "openai/b-call",
            ],
            |s| s.schema_builder_model.clone(),
        ),
        (
            "escalate",
            [
                "openai/e-host",
                "openai/e-tenant",
                "openai/e-project",
                "openai/e-call",
            ],
            |s| s.escalate.join(","),
        ),
        ("delivery", ["native", "tool", "prompt", "auto"], |s| {
            format!("{:?}", s.delivery).to_lowercase()
        }),
        (
            "requireProviderStrictOutput",
            ["true", "false", "true", "false"],
            |s| s.require_provider_strict_output.to_string(),
        ),
        ("maxOutputTokens", ["100", "200", "300", "400"], |s| {
            s.max_output_tokens.to_string()
        }),
    ]
}

/// The settings of how a call reads the text and decides: loops, thresholds, budgets, grounding.
fn layered_reading_values() -> Vec<Layered> {
    vec![
        ("confidenceThreshold", ["0.1", "0.2", "0.3", "0.4"], |s| {
            s.confidence_threshold.to_string()
        }),
        ("maxLoops", ["2", "3", "4", "5"], |s| {
            s.max_loops.to_string()
        }),
        ("minConfidence", ["0.1", "0.2", "0.3", "0.4"], |s| {
            s.min_confidence.to_json().to_string()
        }),
        ("extractive", ["auto", "true", "false", "true"], |s| {
            s.extractive.name().to_owned()
        }),
        ("grounding", ["off", "report", "require", "off"], |s| {
            s.grounding.name().to_owned()
        }),
        ("review", ["all", "off", "doubtful", "all"], |s| {
            s.review.name().to_owned()
        }),
        (
            "referenceTime",
            [
                "2025-01-01T00:00:00Z",
                "2025-02-01T00:00:00Z",
                "2025-03-01T00:00:00Z",
                "2025-04-01T00:00:00Z",
            ],
            |s| structure::time::rfc3339(s.reference_time.unwrap()),
        ),
        ("tokenBudget", ["1000", "2000", "3000", "4000"], |s| {
            s.token_budget.unwrap().to_string()
        }),
        ("chunkTokens", ["500", "600", "700", "800"], |s| {
            s.chunk_tokens("openai").to_string()
        }),
        ("contextTokens", ["1000", "2000", "3000", "4000"], |s| {
            s.context_tokens
                .as_ref()
                .and_then(|tokens| tokens.for_model("openai/test-model"))
                .unwrap()
                .to_string()
        }),
    ]
}

#[test]
fn every_overridable_setting_resolves_through_every_layer() {
    let values = layered_values();
    let mut names: Vec<&str> = values.iter().map(|(name, ..)| *name).collect();
    let mut overridable: Vec<&str> = OVERRIDABLE.iter().map(|(name, _)| *name).collect();
    names.sort_unstable();
    overridable.sort_unstable();
    assert_eq!(names, overridable, "every overridable setting is tested");
    for (name, [host, tenant, project, call], read) in values {
        let key = OVERRIDABLE
            .iter()
            .find(|(known, _)| *known == name)
            .unwrap()
            .1;
        let host_config = local(&[(key, host)]);
        let layer = |value: &str| {
            let mut layer = Map::new();
            let value = serde_json::from_str::<Value>(value)
                .unwrap_or_else(|_| Value::String(value.to_owned()));
            layer.insert(name.to_owned(), value);
            layer
        };
        let load = |layers: &[Map<String, Value>]| {
            let cascade = layers
                .iter()
                .try_fold(Cascade::new(&host_config), |cascade, layer| {
                    cascade.with_layer(layer, "settings")
                })
                .unwrap();
            read(&Settings::load(&cascade).unwrap())
        };
        let expected = |value: &str| {
            let cascade = Cascade::new(&host_config)
                .with_layer(&layer(value), "settings")
                .unwrap();
            read(&Settings::load(&cascade).unwrap())
        };
        assert_eq!(load(&[]), expected(host), "{name}: the host's value");
        assert_eq!(
            load(&[layer(tenant)]),
            expected(tenant),
            "{name}: the tenant over the host"
        );
        assert_eq!(
            load(&[layer(project), layer(tenant)]),
            expected(project),
            "{name}: the project over the tenant"
        );
        assert_eq!(
            load(&[layer(call), layer(project), layer(tenant)]),
            expected(call),
            "{name}: the call over the project"
        );
        for (lower, upper) in [(host, tenant), (tenant, project), (project, call)] {
            assert_ne!(
                expected(lower),
                expected(upper),
                "{name}: each layer's value differs"
            );
        }
    }
}

#[test]
fn the_nulls_dropped_for_optional_properties_are_listed_as_repairs() {
    let transport = ScriptedTransport::new([Reply::answer(json!({ "name": "Ada", "age": null }))]);
    let config = local(&[]);
    let key_value = MemoryKeyValue::default();
    let request = about_a_person("Ada");
    let outcome = call(&request, &transport, &config, &key_value).unwrap();
    assert_eq!(outcome.answer, Answer::Ok(json!({ "name": "Ada" })));
    assert!(
        outcome
            .trace
            .repairs
            .iter()
            .any(|repair| repair == "/age: dropped null (an optional property left out)"),
        "{:?}",
        outcome.trace.repairs
    );
}
