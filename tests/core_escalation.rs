//! Escalation (`structure_escalate`): a model that stays invalid, is down, refuses or is cut off
//! hands the same request to the next model, with its last violations; the budget covers every
//! attempt; `need-more-input` never escalates; every model is configured before the first call.

mod support;

use mock_llm::Reply;
use serde_json::{Map, Value, json};
use structure::{Answer, ErrorKind, Outcome, SchemaInput, StructureError, StructureRequest};

use support::{MapConfig, ScriptedTransport, ports};

fn ticket_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "title": { "type": "string", "minLength": 3 },
            "priority": { "type": "integer", "minimum": 1, "maximum": 5 }
        },
        "required": ["title", "priority"],
        "additionalProperties": false
    })
}

/// Two models on one OpenAI-compatible server; `first` escalates to `second`.
fn config(extra: &[(&str, &str)]) -> MapConfig {
    let mut config = MapConfig::with(&[
        ("structure_model", "openai/first"),
        ("structure_escalate", "openai/second"),
        ("openai_base_url", "http://127.0.0.1:9/v1"),
        ("structure_max_retries", "0"),
    ]);
    for (key, value) in extra {
        config.values.insert((*key).to_owned(), (*value).to_owned());
    }
    config
}

fn run_with(
    replies: Vec<Reply>,
    config: &MapConfig,
    settings: Map<String, Value>,
    fail_first: bool,
) -> (Result<Outcome, StructureError>, ScriptedTransport) {
    let transport = ScriptedTransport::new(replies);
    if fail_first {
        transport.fail_next("connection refused");
    }
    let request = StructureRequest::new(
        "Printer on floor 3 is broken, urgent",
        SchemaInput::Inline(ticket_schema()),
        Some(2),
    )
    .unwrap()
    .with_settings(settings);
    let result = structure::structure(
        &request,
        &structure::Scope::default(),
        &ports(&transport, config),
    );
    (result, transport)
}

fn run(replies: Vec<Reply>) -> (Result<Outcome, StructureError>, ScriptedTransport) {
    run_with(replies, &config(&[]), Map::new(), false)
}

fn models(transport: &ScriptedTransport) -> Vec<String> {
    (0..transport.count())
        .map(|index| transport.body(index)["model"].as_str().unwrap().to_owned())
        .collect()
}

fn attempts(outcome: &Outcome) -> Vec<(String, String, u32)> {
    (outcome.trace.attempts.iter())
        .map(|attempt| {
            (
                attempt.model.clone(),
                attempt.outcome.clone(),
                attempt.usage.llm_calls,
            )
        })
        .collect()
}

fn pair(model: &str, outcome: &str, calls: u32) -> (String, String, u32) {
    (model.to_owned(), outcome.to_owned(), calls)
}

#[test]
fn a_model_that_stays_invalid_hands_the_request_and_its_violations_to_the_next() {
    let invalid = json!({ "title": "Printer", "priority": 9 });
    let (result, transport) = run(vec![
        Reply::answer(invalid.clone()),
        Reply::answer(json!({ "title": "Printer", "priority": 7 })),
        Reply::answer(json!({ "title": "Printer broken", "priority": 5 })),
    ]);
    let outcome = result.unwrap();
    assert_eq!(
        outcome.answer,
        Answer::Ok(json!({ "title": "Printer broken", "priority": 5 }))
    );
    assert_eq!(models(&transport), ["first", "first", "second"]);
    assert_eq!(
        attempts(&outcome),
        [
            pair("openai/first", "stale", 2),
            pair("openai/second", "ok", 1)
        ]
    );
    assert_eq!(
        outcome.trace.model, "openai/second",
        "the model that answered"
    );
    assert_eq!(
        (outcome.usage.llm_calls, outcome.usage.prompt_tokens),
        (3, 300),
        "usage sums every attempt"
    );
    let system = transport.body(2)["messages"][0]["content"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(
        system.contains("An earlier answer to this text was rejected")
            && system.contains("/priority"),
        "the second model is told what the first one's last answer broke: {system}"
    );
    let first = transport.body(0);
    let first_system = first["messages"][0]["content"].as_str().unwrap();
    assert!(!first_system.contains("earlier answer"));
}

#[test]
fn a_model_that_is_down_or_refuses_or_is_cut_off_escalates() {
    let valid = json!({ "title": "Printer broken", "priority": 5 });
    let (result, transport) = run_with(
        vec![Reply::answer(valid.clone())],
        &config(&[]),
        Map::new(),
        true,
    );
    let outcome = result.unwrap();
    assert_eq!(outcome.answer, Answer::Ok(valid.clone()));
    assert_eq!(models(&transport), ["first", "second"]);
    assert_eq!(
        attempts(&outcome),
        [
            pair("openai/first", "transport", 1),
            pair("openai/second", "ok", 1)
        ]
    );
    for (first, kind) in [
        (Reply::refusal("I cannot help with that."), "refusal"),
        (
            Reply::truncated("{\"answer\": {\"title\": \"Pri"),
            "truncated",
        ),
        (Reply::error(503, "overloaded", "try later"), "provider"),
    ] {
        let (result, _) = run(vec![first, Reply::answer(valid.clone())]);
        let outcome = result.unwrap();
        assert_eq!(
            attempts(&outcome),
            [
                pair("openai/first", kind, 1),
                pair("openai/second", "ok", 1)
            ]
        );
    }
}

#[test]
fn need_more_input_never_escalates() {
    let (result, transport) = run(vec![Reply::need("the priority")]);
    let outcome = result.unwrap();
    assert!(matches!(outcome.answer, Answer::NeedMoreInput(_)));
    assert_eq!(transport.count(), 1);
    assert_eq!(
        attempts(&outcome),
        [pair("openai/first", "need-more-input", 1)]
    );
}

#[test]
fn the_last_model_failing_keeps_the_last_stale_answer_else_gives_its_error() {
    let invalid = json!({ "title": "Printer", "priority": 9 });
    let (result, _) = run(vec![
        Reply::answer(invalid.clone()),
        Reply::answer(invalid.clone()),
        Reply::error(500, "server_error", "boom"),
    ]);
    let outcome = result.unwrap();
    assert!(matches!(outcome.answer, Answer::Stale(_)), "{outcome:?}");
    assert_eq!(
        attempts(&outcome),
        [
            pair("openai/first", "stale", 2),
            pair("openai/second", "provider", 1)
        ]
    );
    assert_eq!(outcome.usage.llm_calls, 3);

    let (result, _) = run(vec![
        Reply::error(500, "server_error", "boom"),
        Reply::error(500, "server_error", "boom again"),
    ]);
    let error = result.unwrap_err();
    assert!(
        matches!(error.kind, ErrorKind::Provider { .. }),
        "{error:?}"
    );
    assert!(error.message.contains("boom again"), "{}", error.message);
    assert_eq!(
        error.usage.llm_calls, 2,
        "the error carries every attempt's cost"
    );
}

#[test]
fn the_token_budget_covers_every_attempt() {
    // Each answer costs 700 tokens: the first model's two take 1,400 of 2,000, and the next
    // request may take its prompt and 300 for the answer: the second model is never asked.
    let config = config(&[
        ("structure_token_budget", "2000"),
        ("structure_max_output_tokens", "300"),
    ]);
    let invalid = json!({ "title": "Printer", "priority": 9 });
    let (result, transport) = run_with(
        vec![
            Reply::answer(invalid.clone()).with_usage(500, 200),
            Reply::answer(invalid.clone()).with_usage(500, 200),
        ],
        &config,
        Map::new(),
        false,
    );
    let outcome = result.unwrap();
    assert!(matches!(outcome.answer, Answer::Stale(_)));
    assert_eq!(transport.count(), 2);
    assert_eq!(
        attempts(&outcome),
        [
            pair("openai/first", "stale", 2),
            pair("openai/second", "budget-exhausted", 0)
        ]
    );
}

#[test]
fn every_model_is_configured_before_the_first_call() {
    let config = config(&[(
        "structure_escalate",
        "default:analyze,anthropic/claude-sonnet-4-5",
    )]);
    let (result, transport) = run_with(Vec::new(), &config, Map::new(), false);
    let error = result.unwrap_err();
    assert_eq!(
        error.kind,
        ErrorKind::Configuration {
            key: "anthropic_api_key".into()
        },
        "{error:?}"
    );
    assert_eq!(transport.count(), 0);

    let config = support::MapConfig::with(&[
        ("structure_model", "openai/first"),
        ("structure_escalate", "openai/second,,openai/third"),
        ("openai_base_url", "http://127.0.0.1:9/v1"),
    ]);
    let error = run_with(Vec::new(), &config, Map::new(), false)
        .0
        .unwrap_err();
    assert_eq!(
        error.kind,
        ErrorKind::Configuration {
            key: "structure_escalate".into()
        }
    );
}

#[test]
fn a_caller_sets_escalation_unless_the_operator_keeps_it() {
    let valid = json!({ "title": "Printer broken", "priority": 5 });
    let mut settings = Map::new();
    settings.insert("escalate".into(), json!("openai/third"));
    let (result, transport) = run_with(
        vec![
            Reply::error(500, "server_error", "boom"),
            Reply::answer(valid),
        ],
        &config(&[]),
        settings.clone(),
        false,
    );
    assert!(matches!(result.unwrap().answer, Answer::Ok(_)));
    assert_eq!(models(&transport), ["first", "third"]);

    let kept = config(&[("structure_host_only_settings", "escalate, tokenBudget")]);
    let error = run_with(Vec::new(), &kept, settings, false).0.unwrap_err();
    assert_eq!(
        error.kind,
        ErrorKind::InvalidRequest {
            field: "settings".into()
        }
    );
    assert!(
        error.message.contains("\"escalate\"")
            && error.message.contains("structure_host_only_settings"),
        "{}",
        error.message
    );

    let typo = config(&[("structure_host_only_settings", "escalation")]);
    let error = run_with(Vec::new(), &typo, Map::new(), false)
        .0
        .unwrap_err();
    assert_eq!(
        error.kind,
        ErrorKind::Configuration {
            key: "structure_host_only_settings".into()
        },
        "a name that is no setting would leave it open: {error:?}"
    );
}

#[test]
fn without_escalation_the_trace_lists_no_attempts() {
    let answer = Reply::answer(json!({ "title": "Printer broken", "priority": 5 }));
    let (result, _) = run_with(vec![answer], &MapConfig::local(), Map::new(), false);
    let outcome = result.unwrap();
    assert!(outcome.trace.attempts.is_empty());
    assert!(outcome.to_json()["trace"].get("attempts").is_none());
}

/// The schema builder's answer for `schema`, as its strict form writes properties (key/value
/// pairs), with `questions`.
fn built(schema: &Value, questions: &[&str]) -> Reply {
    let properties: Vec<Value> = (schema["properties"].as_object().unwrap().iter())
        .map(|(key, value)| json!({ "key": key, "value": value }))
        .collect();
    let mut strict = schema.clone();
    strict["properties"] = json!(properties);
    Reply::text(
        &json!({ "schema": strict, "confidence": 0.95, "clarifyingQuestions": questions })
            .to_string(),
    )
}

/// What SmolLM2-135M built for "a person's name and their age in years".
fn senseless() -> Value {
    json!({
        "type": "object",
        "properties": {
            "type": { "type": "string" },
            "additionalProperties": {
                "type": "string", "minLength": 10, "maxLength": 5,
                "enum": ["date-time"], "pattern": "[A-Z]{2}"
            }
        }
    })
}

fn described(config: &MapConfig, replies: Vec<Reply>) -> (Outcome, ScriptedTransport) {
    let transport = ScriptedTransport::new(replies);
    let request = StructureRequest::new(
        "Ada Lovelace is 36 years old.",
        SchemaInput::Described("a person's name and their age in years".into()),
        None,
    )
    .unwrap();
    let outcome = structure::structure(
        &request,
        &structure::Scope::new("builder-sense", None).unwrap(),
        &ports(&transport, config),
    )
    .unwrap();
    (outcome, transport)
}

#[test]
fn a_built_schema_that_makes_no_sense_is_fed_back_then_asks_the_builders_questions() {
    let config = MapConfig::with(&[
        ("structure_model", "openai/first"),
        ("openai_base_url", "http://127.0.0.1:9/v1"),
    ]);
    let (outcome, transport) = described(
        &config,
        vec![
            built(&senseless(), &[]),
            built(&senseless(), &["Which fields should be extracted?"]),
        ],
    );
    assert_eq!(
        outcome.answer,
        Answer::NeedMoreInput("Which fields should be extracted?".into()),
        "never a silent ok with data shaped like a schema"
    );
    assert_eq!(transport.count(), 2, "fed back once, then given up");
    let feedback = transport.body(1)["messages"][3]["content"]
        .as_str()
        .unwrap()
        .to_owned();
    for named in [
        "\"additionalProperties\"",
        "minLength 10 above maxLength 5",
        "enum",
    ] {
        assert!(feedback.contains(named), "{named} in {feedback}");
    }
    assert!(
        (outcome.trace.reasons.iter())
            .all(|reason| reason.category == structure::outcome::Category::Schema)
    );

    let (outcome, _) = described(
        &config,
        vec![built(&senseless(), &[]), built(&senseless(), &[])],
    );
    let Answer::NeedMoreInput(need) = &outcome.answer else {
        panic!("{outcome:?}");
    };
    assert!(
        need.starts_with("the schema built for this description makes no sense"),
        "{need}"
    );
}

#[test]
fn the_schema_builder_escalates_like_the_content_stage() {
    let sensible = json!({
        "type": "object",
        "properties": {
            "name": { "type": "string" },
            "age": { "type": "integer", "minimum": 0 }
        },
        "required": ["name", "age"],
        "additionalProperties": false
    });
    let (outcome, transport) = described(
        &config(&[]),
        vec![
            built(&senseless(), &[]),
            built(&senseless(), &[]),
            built(&sensible, &[]),
            Reply::answer(json!({ "name": "Ada Lovelace", "age": 36 })),
        ],
    );
    assert_eq!(
        outcome.answer,
        Answer::Ok(json!({ "name": "Ada Lovelace", "age": 36 }))
    );
    // The builder's model (default:fast) twice, the first of the list, then the call's model.
    assert_eq!(
        models(&transport),
        ["gpt-4.1-mini", "gpt-4.1-mini", "second", "first"]
    );
    let builder = outcome.trace.schema_builder.as_ref().unwrap();
    assert_eq!(builder.model, "openai/second");
    assert_eq!(builder.usage.llm_calls, 3, "every builder attempt counted");
    assert_eq!(outcome.usage.llm_calls, 4);
}
