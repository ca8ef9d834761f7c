//! Grounding through a whole call: copied values offered as the text writes them, a required
//! one the text lacks answered with need-more-input before any LLM call, the extractive mode,
//! the stop on a repeated invalid answer, and the reference time of relative dates.

mod support;

use mock_llm::Reply;
use serde_json::{Value, json};
use structure::{Answer, ErrorKind, Outcome, SchemaInput, StructureError, StructureRequest};

use support::{MapConfig, ScriptedTransport, ports};

fn contact_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "name": { "type": "string" },
            "email": { "type": "string", "format": "email" },
            "age": { "type": "integer", "minimum": 0 },
            "met": { "type": "string", "format": "date" }
        },
        "required": ["name", "email"],
        "additionalProperties": false
    })
}

fn call(
    prompt: &str,
    schema: Value,
    replies: Vec<Reply>,
    settings: &[(&str, &str)],
) -> (Result<Outcome, StructureError>, ScriptedTransport) {
    let transport = ScriptedTransport::new(replies);
    let mut config = MapConfig::local();
    for (key, value) in settings {
        config.values.insert((*key).to_owned(), (*value).to_owned());
    }
    let request = StructureRequest::new(prompt, SchemaInput::Inline(schema), Some(3)).unwrap();
    let result = structure::structure(
        &request,
        &structure::Scope::default(),
        &ports(&transport, &config),
    );
    (result, transport)
}

fn answer_schema(transport: &ScriptedTransport) -> Value {
    let body = transport.body(0);
    body["response_format"]["json_schema"]["schema"]["properties"]["answer"]["anyOf"][0].clone()
}

#[test]
fn a_required_email_the_text_lacks_asks_for_it_without_calling_the_model() {
    let (result, transport) = call(
        "Met Rebecca Stone at the conference; I didn't get her email.",
        contact_schema(),
        vec![Reply::answer(
            json!({ "name": "Rebecca Stone", "email": "rebecca@example.com" }),
        )],
        &[],
    );
    let outcome = result.unwrap();
    assert_eq!(
        outcome.answer,
        Answer::NeedMoreInput("the text gives no value for /email".into())
    );
    assert_eq!(
        (
            outcome.iterations,
            outcome.usage.llm_calls,
            transport.count()
        ),
        (0, 0, 0)
    );
}

#[test]
fn the_model_is_offered_the_addresses_the_text_holds() {
    let (result, transport) = call(
        "Reach Ada at ada@example.com or, on weekends, ada.l@example.org.",
        contact_schema(),
        vec![Reply::answer(
            json!({ "name": "Ada", "email": "ada@example.com" }),
        )],
        &[],
    );
    assert_eq!(
        result.unwrap().answer,
        Answer::Ok(json!({ "name": "Ada", "email": "ada@example.com" }))
    );
    let sent = answer_schema(&transport);
    assert_eq!(
        sent["properties"]["email"]["enum"],
        json!(["ada@example.com", "ada.l@example.org"])
    );
    assert_eq!(
        sent["properties"]["name"],
        json!({ "type": "string" }),
        "plain strings are free unless extractive"
    );
}

#[test]
fn extractive_mode_offers_spans_and_numbers_and_needs_a_date_in_the_text() {
    let prompt = "Ada Lovelace (ada@example.com), 36, met on 10 December 1851.";
    let (result, transport) = call(
        prompt,
        contact_schema(),
        vec![Reply::answer(
            json!({ "name": "Ada Lovelace", "email": "ada@example.com", "age": 36, "met": "1851-12-10" }),
        )],
        &[("structure_extractive", "true")],
    );
    assert!(matches!(result.unwrap().answer, Answer::Ok(_)));
    let sent = answer_schema(&transport);
    let names = sent["properties"]["name"]["enum"].as_array().unwrap();
    assert!(names.contains(&json!("Ada Lovelace")), "{names:?}");
    // Optional fields travel as `anyOf [field, null]` in strict mode.
    assert_eq!(
        sent["properties"]["age"]["anyOf"][0]["enum"],
        json!([36, 10, 1851])
    );
    assert_eq!(
        sent["properties"]["met"]["anyOf"][0]["enum"],
        json!(["1851-12-10"]),
        "a date written out in full is offered as the date"
    );

    let mut dated = contact_schema();
    dated["required"] = json!(["name", "email", "met"]);
    let (result, transport) = call(
        "Ada Lovelace, ada@example.com, 36.",
        dated,
        vec![],
        &[("structure_extractive", "true")],
    );
    assert_eq!(
        result.unwrap().answer,
        Answer::NeedMoreInput("the text gives no value for /met".into())
    );
    assert_eq!(transport.count(), 0);
}

#[test]
fn a_repeated_invalid_answer_ends_the_loop_early() {
    // A required value that breaks the schema (an optional one would be left out instead).
    let same = json!({ "name": ["Ada"], "email": "ada@example.com" });
    let (result, transport) = call(
        "Ada, ada@example.com",
        contact_schema(),
        vec![
            Reply::answer(same.clone()),
            Reply::answer(same.clone()),
            Reply::answer(json!({ "name": "Ada", "email": "ada@example.com" })),
        ],
        &[],
    );
    let outcome = result.unwrap();
    assert!(
        matches!(outcome.answer, Answer::Stale(_)),
        "{:?}",
        outcome.answer
    );
    assert_eq!(
        (outcome.iterations, transport.count()),
        (2, 2),
        "maxLoops 3, but the model said the same thing twice"
    );
}

#[test]
fn relative_dates_resolve_against_the_reference_time_when_one_is_set() {
    let reply = || {
        vec![Reply::answer(
            json!({ "name": "Ada", "email": "ada@example.com" }),
        )]
    };
    let (result, transport) = call(
        "Ada, ada@example.com, yesterday",
        contact_schema(),
        reply(),
        &[("structure_reference_time", "2025-06-01T14:00:00+02:00")],
    );
    assert!(result.is_ok());
    let system = transport.body(0)["messages"][0]["content"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(system.contains("2025-06-01T12:00:00Z"), "{system}");

    let (result, transport) = call(
        "Ada, ada@example.com",
        contact_schema(),
        reply(),
        &[("structure_reference_time", "last tuesday")],
    );
    let error = result.unwrap_err();
    assert_eq!(
        error.kind,
        ErrorKind::Configuration {
            key: "structure_reference_time".into()
        }
    );
    assert!(error.message.contains("RFC 3339"), "{}", error.message);
    assert_eq!(transport.count(), 0);
}
