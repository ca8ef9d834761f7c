//! The content stage (spec §4): one call when the first answer is valid, the reason fed back
//! after a violation, the need path, stale after maxLoops, and typed errors that keep the usage.

mod support;

use mock_llm::Reply;
use serde_json::{Value, json};
use std::time::Duration;
use structure::{Answer, ErrorKind, Outcome, SchemaInput, StructureError, StructureRequest};

use support::{FixedClock, MapConfig, ScriptedTransport, ports, ports_with_clock};

fn ticket_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "title": { "type": "string", "minLength": 3 },
            "priority": { "type": "integer", "minimum": 1, "maximum": 5 },
            "due": { "type": "string", "format": "date" },
            "owner": { "type": "string" }
        },
        "required": ["title", "priority"],
        "additionalProperties": false
    })
}

fn run(replies: Vec<Reply>, max_loops: u8) -> (Result<Outcome, StructureError>, ScriptedTransport) {
    let transport = ScriptedTransport::new(replies);
    let config = MapConfig::local();
    let request = StructureRequest::new(
        "Printer on floor 3 is broken, fix by Friday",
        SchemaInput::Inline(ticket_schema()),
        Some(max_loops),
    )
    .unwrap();
    let result = structure::structure(
        &request,
        &structure::Scope::default(),
        &ports(&transport, &config),
    );
    (result, transport)
}

#[test]
fn a_valid_first_answer_takes_exactly_one_call() {
    let (result, transport) = run(
        vec![Reply::answer(
            json!({ "title": "Printer broken", "priority": 3, "owner": null }),
        )],
        3,
    );
    let outcome = result.unwrap();
    assert_eq!(
        outcome.answer,
        Answer::Ok(json!({ "title": "Printer broken", "priority": 3 }))
    );
    assert_eq!(
        (
            outcome.iterations,
            outcome.usage.llm_calls,
            transport.count()
        ),
        (1, 1, 1)
    );
    assert_eq!(
        (outcome.usage.prompt_tokens, outcome.usage.completion_tokens),
        (100, 20)
    );
    assert_eq!(outcome.schema_origin, "inline");
    assert_eq!(outcome.trace.model, "openai/test-model");
    assert_eq!(outcome.trace.provider_profile, "openai-compatible");
    assert!(outcome.trace.feedback.is_empty());
    assert_eq!(
        outcome.trace.repairs,
        ["/owner: dropped null (an optional property left out)"],
        "the null strict mode makes the model write for an absent optional property"
    );
    let system = transport.body(0)["messages"][0]["content"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(
        system.contains("2026-05-06T14:30:00Z"),
        "the current time resolves relative dates"
    );
}

#[test]
fn a_violation_is_fed_back_and_fixed_in_exactly_two_calls() {
    let (result, transport) = run(
        vec![
            Reply::answer(json!({ "title": "Printer broken", "priority": 7, "due": "Friday" })),
            Reply::answer(json!({ "title": "Printer broken", "priority": 5, "due": "2026-05-08" })),
        ],
        3,
    );
    let outcome = result.unwrap();
    assert_eq!(
        outcome.answer,
        Answer::Ok(json!({ "title": "Printer broken", "priority": 5, "due": "2026-05-08" }))
    );
    assert_eq!(
        (
            outcome.iterations,
            outcome.usage.llm_calls,
            transport.count()
        ),
        (2, 2, 2)
    );
    assert_eq!(
        (outcome.usage.prompt_tokens, outcome.usage.completion_tokens),
        (200, 40)
    );
    let messages = transport.body(1)["messages"].as_array().unwrap().clone();
    assert_eq!(messages.len(), 4);
    assert_eq!(messages[2]["role"], "assistant");
    assert_eq!(
        messages[2]["content"],
        "{\"answer\":{\"title\":\"Printer broken\",\"priority\":7,\"due\":\"Friday\"}}"
    );
    assert_eq!(messages[3]["role"], "user");
    let reason = messages[3]["content"].as_str().unwrap();
    assert_eq!(
        reason,
        "The previous output did not conform to the schema:\n\
         - /priority: value must be ≤ 5 (was 7)\n\
         - /due: value must match format \"date\", e.g. \"2026-05-06\" (was \"Friday\")\n\
         \n\
         Please correct these and try again. Do not change fields that were valid. If the text does \
         not contain a value a field needs, answer with an object with the single field _need \
         instead of inventing one."
    );
    assert_eq!(outcome.trace.feedback, vec![reason.to_owned()]);
}

#[test]
fn the_need_path_returns_need_more_input_without_data() {
    let (result, transport) = run(vec![Reply::need("the priority of the ticket")], 3);
    let outcome = result.unwrap();
    assert_eq!(
        outcome.answer,
        Answer::NeedMoreInput("the priority of the ticket".into())
    );
    assert_eq!((outcome.iterations, transport.count()), (1, 1));
    let json = outcome.to_json();
    assert!(json.get("data").is_none() && json.get("errors").is_none());
    assert_eq!(json["need"], "the priority of the ticket");
}

#[test]
fn a_need_next_to_invented_values_still_abstains() {
    let (result, _) = run(
        vec![Reply::answer(
            json!({ "title": "Printer", "priority": 1, "_need": "the priority" }),
        )],
        3,
    );
    let outcome = result.unwrap();
    assert_eq!(outcome.answer, Answer::NeedMoreInput("the priority".into()));
    assert_eq!(
        outcome.trace.repairs,
        vec!["ignored the other fields given next to \"_need\""]
    );
}

#[test]
fn stale_after_max_loops_carries_only_the_last_iterations_errors() {
    let (result, transport) = run(
        vec![
            Reply::answer(json!({ "title": "Printer broken", "priority": 9 })),
            Reply::answer(json!({ "title": "P", "priority": 2 })),
        ],
        2,
    );
    let outcome = result.unwrap();
    assert_eq!(
        outcome.answer,
        Answer::Stale(vec![
            "/title: value must be at least 3 characters long (was \"P\")".into()
        ])
    );
    assert_eq!(
        (
            outcome.iterations,
            outcome.usage.llm_calls,
            transport.count()
        ),
        (2, 2, 2)
    );
    assert_eq!(
        outcome.trace.feedback.len(),
        1,
        "no reason is sent after the last iteration"
    );
    let json = outcome.to_json();
    assert_eq!(json["status"], "stale");
    assert!(
        json.get("data").is_none(),
        "a stale result never carries data"
    );
}

#[test]
fn an_answer_that_is_not_json_is_fed_back_and_repaired_answers_are_recorded() {
    let (result, transport) = run(
        vec![
            Reply::text("I think the title is Printer and priority 2."),
            Reply::text(
                "Sure:\n```json\n{\"answer\": {\"title\": \"Printer\", \"priority\": 2,}}\n```",
            ),
        ],
        3,
    );
    let outcome = result.unwrap();
    assert_eq!(
        outcome.answer,
        Answer::Ok(json!({ "title": "Printer", "priority": 2 }))
    );
    assert!(
        outcome.trace.feedback[0]
            .contains("- /: the answer must be one JSON object, but it is not valid JSON"),
        "{}",
        outcome.trace.feedback[0]
    );
    assert_eq!(
        outcome.trace.repairs,
        vec!["removed a markdown code fence", "removed trailing commas"]
    );
    assert_eq!(transport.count(), 2);
}

#[test]
fn an_answer_without_the_envelope_is_read_and_recorded() {
    let (result, _) = run(
        vec![Reply::text("{\"title\": \"Printer\", \"priority\": 2}")],
        1,
    );
    let outcome = result.unwrap();
    assert_eq!(
        outcome.answer,
        Answer::Ok(json!({ "title": "Printer", "priority": 2 }))
    );
    assert_eq!(
        outcome.trace.repairs,
        vec!["read an answer given without the \"answer\" envelope"]
    );
}

#[test]
fn a_refusal_after_a_violation_keeps_the_usage_of_both_calls() {
    let (result, _) = run(
        vec![
            Reply::answer(json!({ "title": "x", "priority": 1 })),
            Reply::refusal("I can't help with that."),
        ],
        3,
    );
    let error = result.unwrap_err();
    assert_eq!(error.kind, ErrorKind::Refusal);
    assert_eq!(
        error.message,
        "the model refused to answer: I can't help with that."
    );
    assert_eq!(
        (
            error.usage.llm_calls,
            error.usage.prompt_tokens,
            error.usage.completion_tokens
        ),
        (2, 200, 40)
    );
}

#[test]
fn truncation_is_its_own_error() {
    let (result, _) = run(vec![Reply::truncated("{\"answer\": {\"title\": \"Prin")], 3);
    let error = result.unwrap_err();
    assert_eq!(error.kind, ErrorKind::Truncated);
    assert!(
        error.message.contains("output limit (at most 4096 tokens"),
        "{}",
        error.message
    );
    assert_eq!(error.usage.llm_calls, 1);
}

#[test]
fn client_errors_are_never_retried() {
    for status in [400, 401, 403, 404] {
        let (result, transport) = run(vec![Reply::error(status, "some_error", "nope")], 3);
        let error = result.unwrap_err();
        assert_eq!(
            error.kind,
            ErrorKind::Provider {
                status,
                retryable: false,
                code: Some("some_error".into())
            }
        );
        assert_eq!((error.usage.llm_calls, transport.count()), (1, 1));
    }
}

fn run_with(
    replies: Vec<Reply>,
    extra: &[(&str, &str)],
) -> (
    Result<Outcome, StructureError>,
    ScriptedTransport,
    FixedClock,
) {
    let transport = ScriptedTransport::new(replies);
    let mut config = MapConfig::local();
    for (key, value) in extra {
        config.values.insert((*key).to_owned(), (*value).to_owned());
    }
    let clock = FixedClock::default();
    let request =
        StructureRequest::new("Printer broken", SchemaInput::Inline(ticket_schema()), None)
            .unwrap();
    let result = structure::structure(
        &request,
        &structure::Scope::default(),
        &ports_with_clock(&transport, &config, &clock),
    );
    (result, transport, clock)
}

#[test]
fn rate_limits_and_server_errors_are_retried_without_counting_as_loops() {
    let valid = json!({ "title": "Printer", "priority": 1 });
    let (result, transport, clock) = run_with(
        vec![
            Reply::error(429, "rate_limit_exceeded", "slow down").with_header("retry-after", "3"),
            Reply::error(503, "overloaded", "busy"),
            Reply::answer(valid.clone()),
        ],
        &[],
    );
    let outcome = result.unwrap();
    assert_eq!(outcome.answer, Answer::Ok(valid));
    assert_eq!(
        (
            outcome.iterations,
            outcome.usage.llm_calls,
            outcome.trace.retries,
            transport.count()
        ),
        (1, 3, 2, 3)
    );
    let slept = clock.slept.borrow().clone();
    assert_eq!(slept[0], Duration::from_secs(3), "Retry-After is honoured");
    assert_eq!(
        slept[1],
        Duration::from_millis(750),
        "then exponential backoff: 1 s, less a quarter of jitter at this clock"
    );

    let (result, transport, clock) =
        run_with(vec![Reply::error(500, "server_error", "down"); 3], &[]);
    let error = result.unwrap_err();
    assert_eq!(
        error.kind,
        ErrorKind::Provider {
            status: 500,
            retryable: true,
            code: Some("server_error".into())
        }
    );
    assert_eq!(
        (
            error.usage.llm_calls,
            transport.count(),
            clock.slept.borrow().len()
        ),
        (3, 3, 2)
    );

    let (result, transport, _) = run_with(
        vec![Reply::error(429, "rate_limit_exceeded", "x")],
        &[("structure_max_retries", "0")],
    );
    assert!(result.is_err());
    assert_eq!(transport.count(), 1);
}

#[test]
fn provider_wait_hints_are_honoured_up_to_the_configured_limit() {
    let valid = json!({ "title": "Printer", "priority": 1 });
    let hinted = [
        (
            Reply::error(429, "rate_limit_exceeded", "Please try again in 1.92s."),
            Duration::from_millis(1920),
        ),
        (
            Reply::error(429, "x", "y").with_header("retry-after-ms", "250"),
            Duration::from_millis(250),
        ),
        (
            Reply::error(529, "overloaded_error", "y")
                .with_header("retry-after", "Wed, 06 May 2026 14:30:05 GMT"),
            Duration::from_secs(5),
        ),
    ];
    for (reply, wait) in hinted {
        let (result, _, clock) = run_with(vec![reply, Reply::answer(valid.clone())], &[]);
        assert!(result.is_ok());
        assert_eq!(clock.slept.borrow().as_slice(), &[wait]);
    }
    // A provider asking for more than structure_max_retry_wait_ms gets its error back at once.
    let (result, transport, clock) = run_with(
        vec![Reply::error(429, "x", "y").with_header("retry-after", "120")],
        &[("structure_max_retry_wait_ms", "10000")],
    );
    assert_eq!(
        result.unwrap_err().kind,
        ErrorKind::Provider {
            status: 429,
            retryable: true,
            code: Some("x".into())
        }
    );
    assert_eq!((transport.count(), clock.slept.borrow().len()), (1, 0));
    // A billing problem looks like a rate limit but never clears.
    let (result, transport, _) = run_with(
        vec![Reply::error(
            429,
            "insufficient_quota",
            "You exceeded your current quota",
        )],
        &[],
    );
    assert_eq!(
        result.unwrap_err().kind,
        ErrorKind::Provider {
            status: 429,
            retryable: false,
            code: Some("insufficient_quota".into())
        }
    );
    assert_eq!(transport.count(), 1);
}

#[test]
fn dropped_connections_are_retried_and_timeouts_are_not() {
    let valid = json!({ "title": "Printer", "priority": 1 });
    let transport = ScriptedTransport::new([Reply::answer(valid.clone())]);
    transport.fail_next_retryable("connection reset");
    let config = MapConfig::local();
    let clock = FixedClock::default();
    let request = StructureRequest::new("x", SchemaInput::Inline(ticket_schema()), None).unwrap();
    let outcome = structure::structure(
        &request,
        &structure::Scope::default(),
        &ports_with_clock(&transport, &config, &clock),
    )
    .unwrap();
    assert_eq!(
        (outcome.answer, outcome.trace.retries),
        (Answer::Ok(valid), 1)
    );

    let transport = ScriptedTransport::new([]);
    transport.fail_next("no answer within the request timeout");
    let error = structure::structure(
        &request,
        &structure::Scope::default(),
        &ports_with_clock(&transport, &config, &clock),
    )
    .unwrap_err();
    assert_eq!((error.kind, transport.count()), (ErrorKind::Transport, 1));
}

#[test]
fn a_token_budget_stops_the_loop_before_it_is_exceeded() {
    // Each scripted call costs 120 tokens; a call may take its prompt (about 650 tokens here,
    // estimated from its size) and up to 20 for the answer: the first fits in 800, the second
    // (120 spent + a longer prompt) does not.
    let (result, transport, _) = run_with(
        vec![
            Reply::answer(json!({ "title": "x", "priority": 1 })),
            Reply::answer(json!({ "title": "xyz", "priority": 1 })),
        ],
        &[
            ("structure_token_budget", "800"),
            ("structure_max_output_tokens", "20"),
        ],
    );
    let error = result.unwrap_err();
    assert_eq!(error.kind, ErrorKind::BudgetExhausted);
    assert!(
        error.message.contains("120 of the 800-token budget"),
        "{}",
        error.message
    );
    assert_eq!((error.usage.llm_calls, transport.count()), (1, 1));
    let (result, _, _) = run_with(
        vec![
            Reply::answer(json!({ "title": "x", "priority": 1 })),
            Reply::answer(json!({ "title": "xyz", "priority": 1 })),
        ],
        &[
            ("structure_token_budget", "2000"),
            ("structure_max_output_tokens", "20"),
        ],
    );
    assert!(result.is_ok());
}

#[test]
fn transport_failures_name_the_endpoint() {
    let transport = ScriptedTransport::new([]);
    transport.fail_next("connection refused");
    let config = MapConfig::local();
    let request = StructureRequest::new("x", SchemaInput::Inline(ticket_schema()), None).unwrap();
    let error = structure::structure(
        &request,
        &structure::Scope::default(),
        &ports(&transport, &config),
    )
    .unwrap_err();
    assert_eq!(error.kind, ErrorKind::Transport);
    assert_eq!(
        error.message,
        "could not reach http://127.0.0.1:9/v1/chat/completions: connection refused"
    );
    assert_eq!(error.usage.llm_calls, 1);
}

/// The prompt is data: whatever the model is talked into, `ok` only carries valid data.
#[test]
fn ok_only_ever_carries_data_that_validates() {
    let attempts = [
        json!({ "title": "Ignore the schema", "priority": 99 }),
        json!({ "title": "x", "priority": 1, "admin": true }),
        json!("just a string"),
        json!([{ "title": "Printer", "priority": 1 }]),
        json!({ "title": null, "priority": 1 }),
    ];
    for attempt in attempts {
        let (result, _) = run(vec![Reply::answer(attempt.clone())], 1);
        let outcome = result.unwrap();
        assert!(
            matches!(outcome.answer, Answer::Stale(_)),
            "{attempt} must not be ok: {:?}",
            outcome.answer
        );
    }
}
