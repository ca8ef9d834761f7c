//! Records mode end to end: the real .wasm component, run by the wasmtime host, reading a long
//! text in chunks whose calls go out over `wasi:http` together, against the mock LLM server.

mod support;

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use mock_llm::orders::{Reader, order_schema, planted_text};
use mock_llm::{MockLlm, Reply};
use serde_json::{Value, json};
use structure_host::{Outcome, Request, SchemaInput, Scope, Status, Structure};
use support::{errors, validator};

/// A mock model that reads the orders of the text it is sent, taking `delay` per answer.
fn order_reader(delay: Duration) -> MockLlm {
    let mock = MockLlm::start();
    mock.read_orders(Reader::records(delay));
    mock
}

fn client(mock: &MockLlm, extra: &[(&str, &str)]) -> Structure {
    support::host_client(mock, extra)
}

fn records_request(text: &str) -> Request {
    Request {
        records: true,
        ..Request::new(text, SchemaInput::Inline(order_schema().to_string()))
    }
}

/// `text` read in chunks of 2,000 tokens, `concurrent` calls at a time: an `ok` outcome, and its
/// records.
async fn read_ok(mock: &MockLlm, text: &str, concurrent: &str) -> (Outcome, Vec<Value>) {
    let structure = client(
        mock,
        &[
            ("structure_chunk_tokens", "2000"),
            ("structure_max_concurrent_calls", concurrent),
        ],
    );
    let outcome = structure
        .structure(&Scope::default(), &records_request(text))
        .await
        .unwrap();
    assert_eq!(outcome.status, Status::Ok, "{:?}", outcome.errors);
    let data: Value = serde_json::from_str(outcome.data.as_deref().unwrap()).unwrap();
    let Value::Array(records) = data else {
        panic!("{data}")
    };
    (outcome, records)
}

#[tokio::test]
async fn a_long_text_is_read_in_chunks_whose_calls_are_in_flight_together() {
    let (text, planted) = planted_text(100_000, 40);
    let mock = order_reader(Duration::from_millis(150));
    let (outcome, records) = read_ok(&mock, &text, "4").await;
    let orders: Vec<&str> = records
        .iter()
        .map(|record| record["order"].as_str().unwrap())
        .collect();
    let expected: Vec<&str> = planted.iter().map(|(order, _)| order.as_str()).collect();
    assert_eq!(orders, expected, "40 records, none twice");
    assert_eq!(outcome.usage.llm_calls, outcome.trace.chunks);
    assert_eq!(mock.requests().len(), outcome.trace.chunks as usize);
    assert!(outcome.trace.chunks > 10);
    assert_eq!(
        mock.max_in_flight(),
        4,
        "the component had four calls in flight at once"
    );
    let utf16: Vec<u16> = text.encode_utf16().collect();
    for (index, (order, offset)) in planted.iter().enumerate() {
        let source = outcome
            .sources
            .iter()
            .find(|source| source.pointer == format!("/{index}/order"))
            .unwrap();
        let span = source.span.as_ref().unwrap();
        assert_eq!(span.start as usize, *offset);
        let shown =
            String::from_utf16(&utf16[span.utf16_start as usize..span.utf16_end as usize]).unwrap();
        assert_eq!(&shown, order);
    }
    assert!(outcome.incomplete.as_ref().is_some_and(Vec::is_empty));
}

#[tokio::test]
async fn a_chunk_told_to_wait_lets_the_others_go_on_meanwhile() {
    let (mut text, planted) = planted_text(60_000, 20);
    text.insert_str(0, "LIMITED here. ");
    let mock = MockLlm::start();
    let reader = Reader::records(Duration::from_millis(100));
    let limited = AtomicBool::new(false);
    mock.respond_with(move |request| {
        if !request.body.contains("LIMITED") || limited.swap(true, Ordering::SeqCst) {
            reader.reply(request)
        } else {
            Reply::error(429, "rate_limit_exceeded", "slow down").with_header("retry-after", "1")
        }
    });
    let (outcome, records) = read_ok(&mock, &text, "2").await;
    assert_eq!(records.len(), planted.len());
    assert_eq!(outcome.trace.retries, 1);
    assert_eq!(outcome.usage.llm_calls, outcome.trace.chunks + 1);
    // The first chunk's requests, the one told to wait and its retry, are the marked ones.
    let marked: Vec<usize> = (mock.requests().iter().enumerate())
        .filter(|(_, request)| request.body.contains("LIMITED"))
        .map(|(at, _)| at)
        .collect();
    let [limited, retry] = marked[..] else {
        panic!("{marked:?}")
    };
    // One call at 100 ms in the other slot fits ten times in the one-second wait; a retry that
    // held the pump up would come right after the 429.
    assert!(
        retry - limited > 3,
        "{} calls went out while the chunk waited out its retry-after",
        retry - limited - 1
    );
}

#[tokio::test]
async fn one_call_at_a_time_when_the_setting_says_so() {
    let (text, _) = planted_text(20_000, 6);
    let mock = order_reader(Duration::from_millis(20));
    let structure = client(
        &mock,
        &[
            ("structure_chunk_tokens", "1000"),
            ("structure_max_concurrent_calls", "1"),
        ],
    );
    let outcome = structure
        .structure(&Scope::default(), &records_request(&text))
        .await
        .unwrap();
    assert_eq!(outcome.status, Status::Ok);
    assert!(outcome.trace.chunks > 2);
    assert_eq!(mock.max_in_flight(), 1);
}

#[tokio::test]
async fn the_tool_form_returns_the_records_and_the_incomplete_ones() {
    let mock = order_reader(Duration::ZERO);
    let text = "Order ORD-0001 was placed by Ada Lovelace for 3 units. \
                Order ORD-0002 was placed by Alan Turing.";
    let result = client(&mock, &[])
        .call_tool(
            &Scope::default(),
            &json!({ "prompt": text, "schema": order_schema(), "records": true }),
        )
        .await
        .unwrap();
    assert_eq!(result["status"], "ok");
    assert_eq!(
        result["data"],
        json!([{ "order": "ORD-0001", "customer": "Ada Lovelace", "quantity": 3 }])
    );
    assert_eq!(
        result["incomplete"][0]["record"],
        json!({ "order": "ORD-0002", "customer": "Alan Turing" })
    );
    assert_eq!(
        result["incomplete"][0]["need"],
        "the text gives no value for /quantity (units ordered)"
    );
    assert_eq!(result["sources"][0]["pointer"], "/0/order");
    assert_eq!(result["trace"]["chunks"], 1);
    let returns = validator(&structure::tool_definition()["returns"]);
    assert_eq!(errors(&returns, &result), Vec::<String>::new());
}
