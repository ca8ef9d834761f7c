//! Records mode (`records: true`): every record of a long text, read in chunks whose calls are
//! sent together; duplicates from the overlaps dropped; incomplete records listed, never
//! invented; a chunk that stays invalid makes the result stale; the budget covers every chunk.

mod support;

use std::cell::RefCell;

use mock_llm::Reply;
use mock_llm::orders::{order_schema, planted_text, read_orders, user_text};
use serde_json::{Value, json};
use structure::ports::{HttpRequest, HttpResponse, Next, Pump, Transport, TransportError};
use structure::{Answer, ErrorKind, Outcome, SchemaInput, StructureError, StructureRequest};

use support::{FixedClock, MapConfig};

/// A model that reads the orders of the text it is sent ([`read_orders`]), and records every
/// batch the core sends together and what it answered.
#[derive(Default)]
struct OrderReader {
    batches: RefCell<Vec<usize>>,
    sent: RefCell<Vec<Value>>,
    answered: RefCell<Vec<Value>>,
    /// Answers for chunks holding this marker: always invalid.
    broken_marker: Option<&'static str>,
    /// The first request for a chunk holding this marker: a dropped connection.
    dropped_once: RefCell<Option<&'static str>>,
    /// Each token's probability, in the answers' `logprobs` (none when `None`).
    token_probability: Option<f64>,
}

impl Transport for OrderReader {
    fn send(&self, request: &HttpRequest) -> Result<HttpResponse, TransportError> {
        if let Some(answer) = support::probe_answer(request) {
            return Ok(answer);
        }
        let body: Value = serde_json::from_slice(&request.body).unwrap();
        self.sent.borrow_mut().push(body.clone());
        let text = user_text(&body).unwrap();
        let dropped = *self.dropped_once.borrow();
        if let Some(marker) = dropped
            && text.contains(marker)
        {
            self.dropped_once.replace(None);
            return Err(TransportError::retryable("connection reset"));
        }
        let answer = match self.broken_marker {
            Some(marker) if text.contains(marker) => json!({ "records": [{ "order": "nope" }] }),
            _ => json!({ "records": read_orders(text) }),
        };
        self.answered.borrow_mut().push(answer.clone());
        let reply = match self.token_probability {
            Some(probability) => Reply::answer(answer).with_token_probability(probability),
            None => Reply::answer(answer),
        };
        Ok(HttpResponse {
            status: reply.status,
            headers: reply.headers,
            body: reply.body.into_bytes(),
        })
    }

    /// Keeps as many requests in flight as it may, and answers the newest first: answers come
    /// back out of order, as they do from a real server.
    fn pump(&self, max_in_flight: usize, work: &mut dyn Pump) {
        let mut in_flight = Vec::new();
        loop {
            while in_flight.len() < max_in_flight {
                // This model's clock stands still: a retry's wait is over only once nothing is
                // in flight (the core then waits itself).
                match work.next() {
                    Next::Start(id, request) => in_flight.push((id, request)),
                    Next::Wait(_) | Next::Idle => break,
                }
            }
            self.batches.borrow_mut().push(in_flight.len());
            let Some((id, request)) = in_flight.pop() else {
                return;
            };
            let answer = self.send(&request);
            work.done(id, answer);
        }
    }
}

fn config(extra: &[(&str, &str)]) -> MapConfig {
    let mut config = MapConfig::local();
    for (key, value) in extra {
        config.values.insert((*key).to_owned(), (*value).to_owned());
    }
    config
}

fn run_records(
    text: &str,
    reader: &OrderReader,
    config: &MapConfig,
) -> Result<Outcome, StructureError> {
    run_records_against(order_schema(), text, reader, config)
}

fn run_records_against(
    schema: Value,
    text: &str,
    reader: &OrderReader,
    config: &MapConfig,
) -> Result<Outcome, StructureError> {
    let request = StructureRequest::new(text, SchemaInput::Inline(schema), None)
        .unwrap()
        .with_records(true);
    let clock = FixedClock::default();
    let key_value = structure::ports::MemoryKeyValue::default();
    let ports = structure::ports::Ports {
        transport: reader,
        config,
        key_value: &key_value,
        clock: &clock,
    };
    structure::structure(&request, &structure::Scope::default(), &ports)
}

/// The outcome is `ok` with every planted order once, in the text's order.
fn assert_every_order_once(outcome: &Outcome, planted: &[(String, usize)]) {
    let Answer::Ok(Value::Array(records)) = &outcome.answer else {
        panic!("{:?}", outcome.answer)
    };
    let orders: Vec<&str> = records
        .iter()
        .map(|r| r["order"].as_str().unwrap())
        .collect();
    let expected: Vec<&str> = planted.iter().map(|(order, _)| order.as_str()).collect();
    assert_eq!(orders, expected, "every order once, in the text's order");
}

#[test]
fn forty_orders_in_a_long_text_are_forty_records_once_each_at_their_places() {
    let (text, planted) = planted_text(100_000, 40);
    assert!(text.chars().count() >= 100_000);
    let reader = OrderReader::default();
    let config = config(&[
        ("structure_chunk_tokens", "2000"),
        ("structure_max_concurrent_calls", "4"),
    ]);
    let outcome = run_records(&text, &reader, &config).unwrap();
    assert_every_order_once(&outcome, &planted);
    let answered: usize = reader
        .answered
        .borrow()
        .iter()
        .map(|answer| answer["records"].as_array().unwrap().len())
        .sum();
    assert!(
        answered > 40,
        "some orders sit in an overlap and were answered twice ({answered} answers)"
    );
    let chunks = outcome.trace.chunks as usize;
    assert!(chunks > 10, "{chunks} chunks");
    assert_eq!(outcome.usage.llm_calls as usize, chunks, "one call a chunk");
    assert_eq!(reader.answered.borrow().len(), chunks);
    assert!(reader.batches.borrow().iter().all(|&size| size <= 4));
    assert!(
        reader.batches.borrow().contains(&4),
        "four calls in flight at once"
    );
    let utf16: Vec<u16> = text.encode_utf16().collect();
    let chars: Vec<char> = text.chars().collect();
    for (index, (order, offset)) in planted.iter().enumerate() {
        let source = outcome
            .sources
            .iter()
            .find(|source| source.pointer == format!("/{index}/order"))
            .unwrap_or_else(|| panic!("no source for record {index}"));
        let span = source
            .span
            .as_ref()
            .expect("an order is copied from the text");
        assert_eq!((span.start, span.text.as_str()), (*offset, order.as_str()));
        let at: String = chars[span.start..span.end].iter().collect();
        assert_eq!(&at, order);
        let at16 = String::from_utf16(&utf16[span.utf16_start..span.utf16_end]).unwrap();
        assert_eq!(&at16, order);
        // Names repeat across orders: each is placed in its own order's sentence.
        for field in ["customer", "quantity"] {
            let source = outcome
                .sources
                .iter()
                .find(|source| source.pointer == format!("/{index}/{field}"))
                .unwrap();
            let start = source.span.as_ref().unwrap().start;
            assert!(
                (*offset..offset + 60).contains(&start),
                "record {index}'s {field} at {start}, its order at {offset}"
            );
        }
    }
    assert_eq!(outcome.incomplete, Some(Vec::new()));
    let json = outcome.to_json();
    assert_eq!(json["data"].as_array().unwrap().len(), 40);
    assert_eq!(json["incomplete"], json!([]));
    assert_eq!(json["trace"]["chunks"], json!(chunks));
}

/// Two orders, the second without the quantity its schema requires.
const TWO_ORDERS: &str = "Order ORD-0001 was placed by Ada Lovelace for 3 units. \
                          Order ORD-0002 was placed by Alan Turing.";

/// [`TWO_ORDERS`] read against `schema`: the first order is the data, the second is incomplete
/// with its need, in one call.
fn one_whole_and_one_incomplete(schema: Value) -> (Outcome, OrderReader) {
    let reader = OrderReader::default();
    let outcome = run_records_against(schema, TWO_ORDERS, &reader, &config(&[])).unwrap();
    assert_eq!(
        outcome.answer,
        Answer::Ok(json!([{ "order": "ORD-0001", "customer": "Ada Lovelace", "quantity": 3 }]))
    );
    let incomplete = outcome.incomplete.as_ref().unwrap();
    assert_eq!(incomplete.len(), 1);
    assert_eq!(
        incomplete[0].need,
        "the text gives no value for /quantity (units ordered)"
    );
    assert_eq!(outcome.usage.llm_calls, 1);
    (outcome, reader)
}

#[test]
fn each_records_values_carry_their_confidence_and_an_unsure_record_is_incomplete() {
    let reader = OrderReader {
        token_probability: Some(0.9),
        ..OrderReader::default()
    };
    let outcome = run_records(TWO_ORDERS, &reader, &config(&[])).unwrap();
    let confidence = |pointer: &str| {
        (outcome.sources.iter())
            .find(|source| source.pointer == pointer)
            .and_then(|source| source.confidence)
    };
    // A token a character, each of 0.9.
    assert_eq!(confidence("/0/order"), Some(0.9));
    assert_eq!(confidence("/0/quantity"), Some(0.9));
    let incomplete = &outcome.incomplete.as_ref().unwrap()[0];
    assert!(
        incomplete
            .sources
            .iter()
            .all(|source| source.confidence.is_some())
    );

    // Held to 0.95, the record is listed with what the model is unsure of.
    let held = config(&[("structure_min_confidence", "0.95")]);
    let outcome = run_records(TWO_ORDERS, &reader, &held).unwrap();
    assert_eq!(outcome.answer, Answer::Ok(json!([])));
    let incomplete = outcome.incomplete.as_ref().unwrap();
    assert_eq!(incomplete.len(), 2);
    assert!(
        incomplete[1].need.contains("/customer (0.9)"),
        "{}",
        incomplete[1].need
    );
}

#[test]
fn a_record_without_a_required_value_is_listed_with_its_need_not_invented() {
    let (outcome, _) = one_whole_and_one_incomplete(order_schema());
    let incomplete = &outcome.incomplete.unwrap()[0];
    assert_eq!(
        incomplete.record,
        json!({ "order": "ORD-0002", "customer": "Alan Turing" })
    );
    let customer = incomplete
        .sources
        .iter()
        .find(|source| source.pointer == "/customer")
        .unwrap();
    assert_eq!(
        customer.span.as_ref().unwrap().start,
        TWO_ORDERS.find("Alan Turing").unwrap()
    );
}

#[test]
fn a_record_schema_behind_a_root_reference_lets_a_record_lack_a_required_value_too() {
    // As schema generators (pydantic, zod-to-json-schema) write a model: a reference at the root.
    let schema = json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "Order",
        "$ref": "#/$defs/Order",
        "$defs": { "Order": order_schema() },
    });
    let (_, reader) = one_whole_and_one_incomplete(schema);
    let sent = reader.sent.borrow()[0].clone();
    let record = &sent["response_format"]["json_schema"]["schema"]["properties"]["answer"]["properties"]
        ["records"]["items"];
    assert_eq!(
        record["properties"]["quantity"]["type"],
        json!(["integer", "null"]),
        "the definition's required values may be left out: {record}"
    );
}

#[test]
fn the_records_envelope_is_strict_and_lets_a_record_lack_a_required_value() {
    use structure::answer::format::{AnswerFormat, Shape};
    use structure::schema::subset::{ANTHROPIC, OPENAI_STRICT};
    let reader = OrderReader::default();
    run_records(
        "Order ORD-0001 was placed by Ada for 3 units.",
        &reader,
        &config(&[]),
    )
    .unwrap();
    let sent = reader.sent.borrow()[0].clone();
    let schema = &sent["response_format"]["json_schema"]["schema"];
    assert_eq!(support::strict_violations(schema), Vec::<String>::new());
    let record = &schema["properties"]["answer"]["properties"]["records"]["items"];
    assert_eq!(
        record["properties"]["quantity"]["type"],
        json!(["integer", "null"]),
        "a required value may be left out (null), not invented"
    );
    assert!(
        sent["messages"][0]["content"]
            .as_str()
            .unwrap()
            .contains("every record")
    );
    let anthropic = AnswerFormat::build(&order_schema(), &ANTHROPIC, Shape::Records);
    assert_eq!(
        anthropic.schema["properties"]["answer"]["properties"]["records"]["type"],
        "array"
    );
    assert!(
        anthropic.schema["properties"]["answer"]
            .get("anyOf")
            .is_none(),
        "no need branch"
    );
    let strict = AnswerFormat::build(&order_schema(), &OPENAI_STRICT, Shape::Records);
    assert_eq!(
        support::strict_violations(&strict.schema),
        Vec::<String>::new()
    );
}

#[test]
fn a_text_without_records_is_an_empty_list() {
    let reader = OrderReader::default();
    let outcome = run_records("Nothing was ordered this week.", &reader, &config(&[])).unwrap();
    assert_eq!(outcome.answer, Answer::Ok(json!([])));
    assert_eq!(outcome.answer.status(), "ok");
}

#[test]
fn a_chunk_that_stays_invalid_makes_the_result_stale_with_its_place() {
    let (mut text, _) = planted_text(20_000, 8);
    text.push_str("BROKEN here. Order ORD-0100 was placed by Ada for 1 units.");
    let reader = OrderReader {
        broken_marker: Some("BROKEN"),
        ..OrderReader::default()
    };
    let config = config(&[
        ("structure_chunk_tokens", "1000"),
        ("structure_max_loops", "2"),
    ]);
    let outcome = run_records(&text, &reader, &config).unwrap();
    let Answer::Stale(errors) = &outcome.answer else {
        panic!("{:?}", outcome.answer)
    };
    let total = text.chars().count();
    assert!(
        errors.iter().all(|error| error.starts_with("characters ")
            && error.contains(&format!("–{total}: /records/0"))),
        "the last chunk's errors, with its place: {errors:?}"
    );
    assert!(
        errors
            .iter()
            .any(|error| error.contains("/records/0/order"))
    );
    assert_eq!(outcome.sources, Vec::new());
    assert_eq!(
        outcome.to_json().get("data"),
        None,
        "no silent gap: no partial data"
    );
    assert_eq!(
        outcome.trace.feedback.len(),
        1,
        "the loop ran per chunk: one reason fed back"
    );
}

#[test]
fn a_chunk_whose_connection_drops_is_retried_and_its_records_kept() {
    let (mut text, planted) = planted_text(30_000, 10);
    let middle = text[text.len() / 2..].find(". ").unwrap() + text.len() / 2 + 2;
    text.insert_str(middle, "DROPPED here. ");
    let reader = OrderReader {
        dropped_once: RefCell::new(Some("DROPPED")),
        ..OrderReader::default()
    };
    let config = config(&[("structure_chunk_tokens", "1000")]);
    let outcome = run_records(&text, &reader, &config).unwrap();
    let Answer::Ok(Value::Array(records)) = &outcome.answer else {
        panic!("{:?}", outcome.answer)
    };
    assert_eq!(records.len(), planted.len());
    assert_eq!(outcome.trace.retries, 1);
    assert_eq!(
        outcome.usage.llm_calls,
        outcome.trace.chunks + 1,
        "the retry counts"
    );
    // While the retry waited, the chunks after it were started and answered: it went last.
    let sent = reader.sent.borrow();
    let dropped = sent
        .iter()
        .position(|body| user_text(body).unwrap().contains("DROPPED"))
        .unwrap();
    let retry = (dropped + 1..sent.len())
        .find(|&at| sent[at] == sent[dropped])
        .unwrap();
    assert_eq!(retry, sent.len() - 1, "the retry went last");
    assert!(
        dropped + 2 < retry,
        "other chunks went out between the drop ({dropped}) and the retry"
    );
}

#[test]
fn a_chunk_that_fails_ends_the_call_with_its_typed_error_and_the_usage() {
    let (mut text, _) = planted_text(30_000, 10);
    text.push_str("DROPPED here. ");
    let reader = OrderReader {
        dropped_once: RefCell::new(Some("DROPPED")),
        ..OrderReader::default()
    };
    let config = config(&[
        ("structure_chunk_tokens", "1000"),
        ("structure_max_retries", "0"),
    ]);
    let error = run_records(&text, &reader, &config).unwrap_err();
    assert_eq!(error.kind, ErrorKind::Transport);
    assert!(
        error.message.contains("connection reset"),
        "{}",
        error.message
    );
    assert!(error.usage.llm_calls >= 1);
    assert!(
        error.usage.prompt_tokens > 0,
        "what the answered chunks cost is kept"
    );
}

#[test]
fn the_token_budget_covers_every_chunk_before_any_call() {
    let (text, planted) = planted_text(30_000, 10);
    let reader = OrderReader::default();
    // One chunk's call fits in 5,000 tokens; all of them do not.
    let tight = config(&[
        ("structure_chunk_tokens", "1000"),
        ("structure_token_budget", "5000"),
        ("structure_max_output_tokens", "500"),
    ]);
    let error = run_records(&text, &reader, &tight).unwrap_err();
    assert_eq!(error.kind, ErrorKind::BudgetExhausted);
    assert!(error.message.contains("the next"), "{}", error.message);
    assert_eq!(error.usage.llm_calls, 0);
    assert!(reader.answered.borrow().is_empty());
    // A budget that holds them all: each chunk's first request, made for the check, is the one
    // it sends.
    let roomy = config(&[
        ("structure_chunk_tokens", "1000"),
        ("structure_token_budget", "500000"),
        ("structure_max_output_tokens", "500"),
    ]);
    let outcome = run_records(&text, &reader, &roomy).unwrap();
    assert_every_order_once(&outcome, &planted);
    assert_eq!(outcome.usage.llm_calls, outcome.trace.chunks);
}

#[test]
fn a_prompt_over_the_limit_is_refused_in_records_mode_too() {
    let reader = OrderReader::default();
    let config = config(&[("structure_max_prompt_bytes", "100")]);
    let text = "Order ORD-0001 was placed by Ada for 3 units. ".repeat(5);
    let error = run_records(&text, &reader, &config).unwrap_err();
    assert!(matches!(error.kind, ErrorKind::InvalidRequest { ref field } if field == "prompt"));
    assert!(reader.answered.borrow().is_empty());
}

#[test]
fn the_tool_arguments_take_records_and_refuse_anything_but_a_boolean() {
    let arguments = json!({ "prompt": "x", "schema": order_schema(), "records": true });
    assert!(
        StructureRequest::from_tool_arguments(&arguments)
            .unwrap()
            .records
    );
    let arguments = json!({ "prompt": "x", "schema": order_schema(), "records": "yes" });
    let error = StructureRequest::from_tool_arguments(&arguments).unwrap_err();
    assert!(matches!(error.kind, ErrorKind::InvalidRequest { ref field } if field == "records"));
    assert!(
        error.message.contains("records must be true or false"),
        "{}",
        error.message
    );
}

#[test]
fn concurrent_calls_are_a_setting_with_bounds() {
    let reader = OrderReader::default();
    for bad in ["0", "65", "many"] {
        let config = config(&[("structure_max_concurrent_calls", bad)]);
        let error = run_records(
            "Order ORD-0001 was placed by Ada for 3 units.",
            &reader,
            &config,
        )
        .unwrap_err();
        assert!(
            matches!(error.kind, ErrorKind::Configuration { ref key } if key == "structure_max_concurrent_calls"),
            "{bad}: {error:?}"
        );
    }
}
