//! Tables read as records, never a silently short list: the rows of a table no record came
//! from are read again under their header, in shorter runs, and those still without one are
//! named (`incomplete`, `trace.leftOut`), against a model that tires — at most forty records an
//! answer, a row skipped now and then.

mod support;

use mock_llm::Reply;
use mock_llm::orders::user_text;
use mock_llm::table::{
    PERSONS_HEADER, TableReader, headed_line_items, line_item_schema, line_items,
};
use serde_json::{Value, json};
use structure::ports::{HttpRequest, HttpResponse, Transport, TransportError};
use structure::{Answer, Outcome, SchemaInput, StructureRequest};

use support::{FixedClock, MapConfig};

/// A transport whose model replies to each request with `answer(user text)`, counting them.
struct Answering<F: Fn(&str) -> Reply> {
    answer: F,
    calls: std::cell::Cell<usize>,
}

impl<F: Fn(&str) -> Reply> Transport for Answering<F> {
    fn send(&self, request: &HttpRequest) -> Result<HttpResponse, TransportError> {
        if let Some(answer) = support::probe_answer(request) {
            return Ok(answer);
        }
        self.calls.set(self.calls.get() + 1);
        let body: Value = serde_json::from_slice(&request.body).unwrap();
        let reply = (self.answer)(user_text(&body).unwrap());
        Ok(HttpResponse {
            status: reply.status,
            headers: reply.headers,
            body: reply.body.into_bytes(),
        })
    }
}

fn read(text: &str, answer: impl Fn(&str) -> Value) -> (Outcome, usize) {
    let request = StructureRequest::new(text, SchemaInput::Inline(line_item_schema()), None)
        .unwrap()
        .with_records(true);
    read_request(request, answer)
}

fn read_request(request: StructureRequest, answer: impl Fn(&str) -> Value) -> (Outcome, usize) {
    let (outcome, calls) = replied(request, |sent| Reply::answer(answer(sent)));
    (outcome.unwrap(), calls)
}

fn replied(
    request: StructureRequest,
    answer: impl Fn(&str) -> Reply,
) -> (Result<Outcome, structure::StructureError>, usize) {
    let transport = Answering {
        answer,
        calls: std::cell::Cell::new(0),
    };
    let (config, clock) = (MapConfig::local(), FixedClock::default());
    let key_value = structure::ports::MemoryKeyValue::default();
    let ports = structure::ports::Ports {
        transport: &transport,
        config: &config,
        key_value: &key_value,
        clock: &clock,
    };
    let outcome = structure::structure(&request, &structure::Scope::default(), &ports);
    (outcome, transport.calls.get())
}

/// A model that answers at most forty records and skips every seventh row it is sent, reading
/// the person's header as the schema's properties.
const TIRING: TableReader = TableReader {
    limit: 40,
    skip_every: 7,
    fields: Some(["line", "item", "quantity", "price"]),
};

/// Line items under a header a person writes (no column named as the schema names it): read by
/// the model.
fn persons_items(count: usize, delimiter: char) -> (String, Vec<Value>) {
    headed_line_items(count, delimiter, PERSONS_HEADER)
}

/// Records mode over a spreadsheet of one sheet, `Lines`, holding the rows of `csv`.
fn spreadsheet_request(csv: &str) -> StructureRequest {
    let rows: Vec<Vec<&str>> = csv.lines().map(|line| line.split(',').collect()).collect();
    let rows: Vec<&[&str]> = rows.iter().map(Vec::as_slice).collect();
    let xlsx = mock_llm::xlsx::workbook(&[("Lines", &rows)]);
    let media = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet";
    StructureRequest::new("Every line.", SchemaInput::Inline(line_item_schema()), None)
        .unwrap()
        .with_document(structure::request::Document::new(xlsx, media).unwrap())
        .with_records(true)
}

fn records(outcome: &Outcome) -> &[Value] {
    let Answer::Ok(Value::Array(records)) = &outcome.answer else {
        panic!("{:?}", outcome.answer)
    };
    records
}

#[test]
fn every_row_of_a_1200_row_table_once_in_order_from_a_model_that_tires() {
    let tiring = TIRING;
    for delimiter in [',', '\t'] {
        let (text, items) = persons_items(1200, delimiter);
        let (outcome, calls) = read(&text, |sent| tiring.answer(sent));
        assert_eq!(
            records(&outcome),
            items,
            "every row once, in order ({delimiter:?})"
        );
        assert_eq!(outcome.incomplete.as_deref(), Some(&[][..]));
        assert!(
            outcome.trace.left_out.is_empty(),
            "{:?}",
            outcome.trace.left_out
        );
        // Each record's sources are in its own row.
        let row = |index: usize| text.lines().nth(index + 1).unwrap();
        for source in &outcome.sources {
            let index: usize = source.pointer[1..]
                .split('/')
                .next()
                .unwrap()
                .parse()
                .unwrap();
            let span = source.span.as_ref().unwrap();
            assert!(row(index).contains(&span.text), "{source:?}");
            let start = text
                .lines()
                .take(index + 1)
                .map(|l| l.chars().count() + 1)
                .sum();
            assert!(span.start >= start, "{source:?} is in row {index}");
        }
        assert!(calls < 80, "{calls} calls");
    }
}

#[test]
fn every_row_of_a_1200_row_spreadsheet_once_in_order_from_a_model_that_tires() {
    let (csv, items) = persons_items(1200, ',');
    let request = spreadsheet_request(&csv).with_return_text(true);
    let tiring = TIRING;
    let (outcome, calls) = read_request(request, |sent| tiring.answer(sent));
    assert_eq!(records(&outcome), items, "every row once, in order");
    assert_eq!(outcome.incomplete.as_deref(), Some(&[][..]));
    // Each record's line is in its own row of the sheet's text.
    let text = outcome.text.as_deref().unwrap();
    let line = (outcome.sources.iter())
        .find(|source| source.pointer == "/1199/line")
        .and_then(|source| source.span.as_ref())
        .unwrap();
    let row = text.lines().find(|row| row.starts_with("L1200\t")).unwrap();
    let at = text.find(row).unwrap();
    assert_eq!(line.start, text[..at].chars().count());
    // Each value names its cell, as Excel does.
    let cell = |pointer: &str| {
        let source = outcome
            .sources
            .iter()
            .find(|source| source.pointer == pointer);
        source.and_then(|source| source.cell.clone())
    };
    assert_eq!(cell("/1199/line").as_deref(), Some("Lines!A1201"));
    assert_eq!(cell("/0/price").as_deref(), Some("Lines!D2"));
    assert!(calls < 80, "{calls} calls");
}

#[test]
fn every_row_of_a_1200_row_table_printed_over_pages_its_header_on_each() {
    let (tsv, items) = persons_items(1200, '\t');
    let mut lines = tsv.lines();
    let header = lines.next().unwrap();
    let rows: Vec<&str> = lines.collect();
    let pages: Vec<String> = (rows.chunks(48).enumerate())
        .map(|(page, rows)| format!("{header}\n{}\nPage {} of 25", rows.join("\n"), page + 1))
        .collect();
    let pages: Vec<&str> = pages.iter().map(String::as_str).collect();
    let pdf = mock_llm::pdf::with_pages(&pages);
    let request =
        StructureRequest::new("Every line.", SchemaInput::Inline(line_item_schema()), None)
            .unwrap()
            .with_document(structure::request::Document::new(pdf, "application/pdf").unwrap())
            .with_records(true);
    let tiring = TIRING;
    let (outcome, calls) = read_request(request, |sent| tiring.answer(sent));
    // Helvetica's WinAnsi has no "Ł" nor "ź": the PDF writes "?", as the reader reads it.
    let written: Vec<Value> = (items.into_iter())
        .map(|mut item| {
            item["item"] = json!(item["item"].as_str().unwrap().replace(['Ł', 'ź'], "?"));
            item
        })
        .collect();
    assert_eq!(records(&outcome), written, "every row once, in order");
    assert_eq!(outcome.incomplete.as_deref(), Some(&[][..]));
    // Each record's values are boxed on the page its row is on.
    let last = (outcome.sources.iter())
        .find(|source| source.pointer == "/1199/line")
        .unwrap();
    assert_eq!(last.page, Some(25));
    assert_eq!(last.boxes.len(), 1);
    assert!(calls < 120, "{calls} calls");
}

#[test]
fn rows_the_model_never_reads_are_named_never_a_bare_ok() {
    // A model that never reads the rows whose item is "Widget Kim …".
    let stubborn = |sent: &str| {
        let mut answer = TableReader {
            skip_every: 0,
            ..TIRING
        }
        .answer(sent);
        let records = answer["records"].as_array_mut().unwrap();
        records.retain(|record| !record["item"].as_str().unwrap().contains("Kim"));
        answer
    };
    let (text, items) = persons_items(20, ',');
    let (outcome, _) = read(&text, stubborn);
    let kept: Vec<&Value> = (items.iter())
        .filter(|item| !item["item"].as_str().unwrap().contains("Kim"))
        .collect();
    assert_eq!(records(&outcome).iter().collect::<Vec<_>>(), kept);
    let missing = outcome.incomplete.as_deref().unwrap();
    assert_eq!(missing.len(), items.len() - kept.len());
    assert!(
        missing[0]
            .need
            .starts_with("no record was read from row 2 of table 1:")
            && missing[0].need.contains("L0002,Widget Kim"),
        "{}",
        missing[0].need
    );
    assert_eq!(missing[0].record, json!({}));
    let row = missing[0].sources[0].span.as_ref().unwrap();
    assert_eq!(row.text, text.lines().nth(2).unwrap());
    assert!(
        outcome.trace.left_out[0]
            .starts_with("row 2 (line 3) of table 1: the model gave no record"),
        "{:?}",
        outcome.trace.left_out
    );
    support::assert_published(&outcome.to_json());
}

#[test]
fn a_table_whose_header_names_the_properties_is_read_without_a_model_but_for_its_odd_rows() {
    let (text, items) = line_items(1200, ',');
    let never = |_: &str| -> Value { panic!("no model is asked") };
    let (outcome, calls) = read(&text, never);
    assert_eq!((records(&outcome), calls), (&items[..], 0));
    assert_eq!(outcome.usage.llm_calls, 0);
    let cell = &outcome.sources[4];
    assert_eq!(
        (
            cell.pointer.as_str(),
            cell.span.as_ref().unwrap().text.as_str()
        ),
        ("/1/line", "L0002")
    );
    // The same from a spreadsheet, its sources naming their cells.
    let (outcome, calls) = read_request(spreadsheet_request(&text), never);
    assert_eq!((records(&outcome), calls), (&items[..], 0));
    assert_eq!(outcome.sources[0].cell.as_deref(), Some("Lines!A2"));
    // A row whose quantity is a word is the model's to read; the others stay read.
    let odd = text.replacen("L0005,Widget Łódź 35,6,", "L0005,Widget Łódź 35,six,", 1);
    let reader = |sent: &str| {
        assert!(sent.contains("six") && !sent.contains("L0006"), "{sent}");
        json!({ "records": [{ "line": "L0005", "item": "Widget Łódź 35", "quantity": 6, "price": 5.5 }] })
    };
    let (outcome, calls) = read(&odd, reader);
    assert_eq!((records(&outcome), calls), (&items[..], 1));
}

#[test]
fn rows_a_model_slips_or_repeats_are_read_again_and_the_list_has_each_row_once() {
    // As the 0.5B model reads a long table: every tenth record takes its row's number with the
    // next row's cells (and the next row comes whole after it), and every record after a slip
    // is given twice. Runs of fewer than ten rows are read right.
    let slipping = |sent: &str| {
        let mut answer = TableReader {
            skip_every: 0,
            ..TIRING
        }
        .answer(sent);
        let records = answer["records"].as_array_mut().unwrap();
        let mut out = Vec::new();
        for (place, record) in records.iter().enumerate() {
            if place % 10 == 9 && place + 1 < records.len() {
                let mut slipped = records[place + 1].clone();
                slipped["line"] = record["line"].clone();
                out.push(slipped);
                continue;
            }
            out.push(record.clone());
            if place % 10 == 0 && place > 0 {
                out.push(record.clone());
            }
        }
        *records = out;
        answer
    };
    let (text, items) = persons_items(200, ',');
    let (outcome, calls) = read(&text, slipping);
    assert_eq!(records(&outcome), items, "each row once, in order");
    assert_eq!(outcome.incomplete.as_deref(), Some(&[][..]));
    assert!(calls > 5, "the slipped rows were read again: {calls} calls");
    // A model that slips for good after its tenth record: each row's number with the next
    // row's cells, every cell given once.
    let shifted = |sent: &str| {
        let mut answer = TableReader {
            skip_every: 0,
            ..TIRING
        }
        .answer(sent);
        let records = answer["records"].as_array_mut().unwrap();
        let read = records.clone();
        for place in 10..records.len().saturating_sub(1) {
            for field in ["item", "quantity", "price"] {
                records[place][field] = read[place + 1][field].clone();
            }
        }
        answer
    };
    let (outcome, calls) = read(&text, shifted);
    assert_eq!(
        records(&outcome),
        items,
        "each row once, in order, as it is"
    );
    assert_eq!(outcome.incomplete.as_deref(), Some(&[][..]));
    assert!(calls > 5, "the shifted rows were read again: {calls} calls");
}

#[test]
fn a_table_beside_the_records_is_not_counted() {
    // The records are in the prose; the price list below is not what was asked for.
    let text = "Line L0001: 3 of Widget A at 4.5.\n\nsize,colour\nS,red\nM,blue\nL,green\n";
    let (outcome, calls) = read(
        text,
        |_| json!({ "records": [{ "line": "L0001", "item": "Widget A", "quantity": 3, "price": 4.5 }] }),
    );
    assert_eq!(records(&outcome).len(), 1);
    assert_eq!(calls, 1);
    assert!(outcome.incomplete.as_deref().unwrap().is_empty());
}

#[test]
fn an_answer_cut_off_at_the_output_limit_is_read_again_in_halves_not_an_error() {
    // Prose, no table: a model whose answer is cut off when a part holds more than 60 records.
    let text: String = (1..=300)
        .map(|n| {
            format!(
                "Line L{n:04}: {} of Widget {n} at {}.5.\n",
                n % 9 + 1,
                n % 50
            )
        })
        .collect();
    let parse = |line: &str| {
        let (line_no, rest) = line.strip_prefix("Line ")?.split_once(": ")?;
        let (quantity, rest) = rest.split_once(" of ")?;
        let (item, price) = rest.strip_suffix('.')?.rsplit_once(" at ")?;
        Some(
            json!({ "line": line_no, "item": item, "quantity": quantity.parse::<u64>().ok()?,
            "price": price.parse::<f64>().ok()? }),
        )
    };
    let capped = |limit: usize| {
        move |sent: &str| {
            let records: Vec<Value> = sent.lines().filter_map(parse).collect();
            match records.len() > limit {
                true => Reply::truncated("{\"records\": [{\"line\": \"L00"),
                false => Reply::answer(json!({ "records": records })),
            }
        }
    };
    let request = || {
        StructureRequest::new(&text, SchemaInput::Inline(line_item_schema()), None)
            .unwrap()
            .with_records(true)
    };
    let (outcome, calls) = replied(request(), capped(60));
    let outcome = outcome.unwrap();
    let expected: Vec<Value> = text.lines().filter_map(parse).collect();
    assert_eq!(records(&outcome), expected, "every record once, in order");
    assert!(
        calls > 8 && outcome.usage.llm_calls as usize == calls,
        "{calls} calls"
    );
    // A model cut off even on an eighth of a part: the error, what it spent counted.
    let (failed, calls) = replied(request(), capped(0));
    let error = failed.unwrap_err();
    assert_eq!(error.kind, structure::error::ErrorKind::Truncated);
    assert_eq!(error.usage.llm_calls as usize, calls);
}
