//! A second look: a long text's field the confidence threshold left out is read again, alone,
//! from the passages of the text about it; what the look is sure of joins the answer, what it
//! is not stays out, and `trace.secondLooks` says which.

mod support;

use mock_llm::Reply;
use serde_json::{Value, json};
use structure::{Answer, Outcome};

use support::{ScriptedTransport, chat_reply, run_inline};

const OPENAI: &[(&str, &str)] = &[
    ("structure_model", "openai/gpt-4.1-mini"),
    ("openai_api_key", "sk-test"),
];

const GOVERNING: &str = "This Agreement is governed by the laws of the State of Ohio.";

/// A contract of many like clauses, one of which says which law governs it.
fn contract() -> String {
    let mut text = String::from(
        "Mutual Nondisclosure Agreement between Acme Corp. and Bolt LLC, of Texas.\n\n",
    );
    for clause in 1..=30 {
        text.push_str(&format!(
            "Clause {clause}. The Recipient shall keep the Confidential Information of the Discloser secret and use it only for the Purpose.\n"
        ));
        if clause == 17 {
            text.push_str(GOVERNING);
            text.push('\n');
        }
    }
    text
}

fn schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "party": { "type": "array", "items": { "type": "string" } },
            "jurisdiction": { "type": "string", "description": "The state whose law governs the agreement" }
        },
        "additionalProperties": false
    })
}

/// The whole text's answer: the parties sure, the jurisdiction at `jurisdiction`.
fn first_reading(jurisdiction: f64) -> Reply {
    reading("Ohio", jurisdiction)
}

/// The whole text's answer: the parties sure, the jurisdiction `state` at `sure`.
fn reading(state: &str, sure: f64) -> Reply {
    let state = format!("\"{state}\"");
    chat_reply(&[
        ("{\"answer\": {\"party\": [", 0.99),
        ("\"Acme Corp.\"", 0.95),
        (", ", 0.99),
        ("\"Bolt LLC\"", 0.95),
        ("], \"jurisdiction\": ", 0.99),
        (&state, sure),
        ("}}", 0.99),
    ])
}

/// The look's answer: the jurisdiction alone, at `sure`.
fn look(sure: f64) -> Reply {
    chat_reply(&[
        ("{\"answer\": {\"jurisdiction\": ", 0.99),
        ("\"Ohio\"", sure),
        ("}}", 0.99),
    ])
}

fn run(text: &str, config: &[(&str, &str)], replies: Vec<Reply>) -> (Outcome, ScriptedTransport) {
    run_inline(text, schema(), config, replies)
}

/// The span of `text` the answer's jurisdiction stands at, and its confidence.
fn jurisdiction_read<'t>(outcome: &Outcome, text: &'t str) -> (&'t str, Option<f64>) {
    let source = (outcome.sources.iter())
        .find(|source| source.pointer == "/jurisdiction")
        .unwrap();
    let span = source.span.as_ref().unwrap();
    (&text[span.start..span.end], source.confidence)
}

/// The text the `n`th request asked the model to read.
fn asked(transport: &ScriptedTransport, n: usize) -> String {
    let body: Value = serde_json::from_slice(&transport.requests.borrow()[n].body).unwrap();
    (body["messages"].as_array().unwrap().iter())
        .filter(|message| message["role"] == "user")
        .map(|message| message["content"].as_str().unwrap_or_default().to_owned())
        .collect()
}

#[test]
fn an_unsure_field_read_again_from_its_passages_joins_the_answer_when_the_look_is_sure() {
    let text = contract();
    let (outcome, transport) = run(&text, OPENAI, vec![first_reading(0.5), look(0.93)]);
    assert_eq!(
        outcome.answer,
        Answer::Ok(json!({ "party": ["Acme Corp.", "Bolt LLC"], "jurisdiction": "Ohio" }))
    );
    assert!(outcome.trace.low_confidence.is_empty());
    assert_eq!(outcome.usage.llm_calls, 2);
    // The look read the clause that says it, and not the whole contract.
    let looked = asked(&transport, 1);
    assert!(looked.contains(GOVERNING), "{looked}");
    assert!(looked.len() * 4 < text.len(), "{looked}");
    // Its value is located in the whole text, with the look's confidence.
    assert_eq!(jurisdiction_read(&outcome, &text), ("Ohio", Some(0.93)));
    let notes = &outcome.trace.second_looks;
    assert!(
        notes.len() == 1
            && notes[0].starts_with("/jurisdiction: \"Ohio\" (0.93) from its passages (bytes "),
        "{notes:?}"
    );
    assert_eq!(outcome.to_json()["trace"]["secondLooks"], json!(notes));
}

#[test]
fn a_look_no_surer_than_the_first_reading_leaves_the_field_out() {
    let (outcome, _) = run(&contract(), OPENAI, vec![first_reading(0.5), look(0.4)]);
    assert_eq!(
        outcome.answer,
        Answer::Ok(json!({ "party": ["Acme Corp.", "Bolt LLC"] }))
    );
    assert_eq!(outcome.trace.low_confidence, ["/jurisdiction"]);
    let notes = &outcome.trace.second_looks;
    assert!(
        notes.len() == 1 && notes[0].ends_with("give it only under the threshold"),
        "{notes:?}"
    );
    assert_eq!(outcome.usage.llm_calls, 2);
}

#[test]
fn a_failed_look_leaves_the_answer_as_the_first_reading_gave_it() {
    let refused = Reply::raw(
        400,
        r#"{"error": {"message": "bad request", "type": "invalid_request_error"}}"#,
    );
    let (outcome, _) = run(&contract(), OPENAI, vec![first_reading(0.5), refused]);
    assert_eq!(
        outcome.answer,
        Answer::Ok(json!({ "party": ["Acme Corp.", "Bolt LLC"] }))
    );
    let notes = &outcome.trace.second_looks;
    assert!(
        notes.len() == 1 && notes[0].starts_with("/jurisdiction: the look failed ("),
        "{notes:?}"
    );
    assert_eq!(outcome.usage.llm_calls, 2, "the failed request is counted");
}

#[test]
fn no_look_where_it_could_tell_nothing_more() {
    // A sure answer: nothing to look at.
    let (outcome, transport) = run(&contract(), OPENAI, vec![first_reading(0.95)]);
    assert!(outcome.trace.second_looks.is_empty());
    assert_eq!(transport.requests.borrow().len(), 1);
    // A short text: the first reading read it as closely as a look would.
    let short = format!("Acme Corp. and Bolt LLC agree. {GOVERNING}");
    let (outcome, transport) = run(&short, OPENAI, vec![first_reading(0.5)]);
    assert_eq!(outcome.trace.low_confidence, ["/jurisdiction"]);
    assert_eq!(transport.requests.borrow().len(), 1);
    assert!(outcome.trace.second_looks.is_empty());
    // A text whose passages about the field are most of it: read already.
    let governs = format!(
        "{}.",
        "the Agreement is governed by Ohio law and ".repeat(13)
    );
    let signs = format!(
        "Acme Corp. and Bolt LLC sign {}.",
        "in two copies ".repeat(30)
    );
    let dense = [governs.as_str(), &governs, &governs, &signs].join("\n\n");
    let (outcome, transport) = run(&dense, OPENAI, vec![first_reading(0.5)]);
    assert_eq!(transport.requests.borrow().len(), 1);
    assert_eq!(
        outcome.trace.second_looks,
        ["/jurisdiction: its passages are most of the text, read already"]
    );
    // An array's items are spread over the text: an unsure party is not looked for.
    let unsure_party = || {
        chat_reply(&[
            ("{\"answer\": {\"party\": [", 0.99),
            ("\"Acme Corp.\"", 0.4),
            ("], \"jurisdiction\": ", 0.99),
            ("\"Ohio\"", 0.95),
            ("}}", 0.99),
        ])
    };
    let (outcome, transport) = run(&contract(), OPENAI, vec![unsure_party()]);
    assert_eq!(
        outcome.answer,
        Answer::Ok(json!({ "jurisdiction": "Ohio" }))
    );
    assert!(outcome.trace.second_looks.is_empty());
    assert_eq!(transport.requests.borrow().len(), 1);
    // So is one the schema types as an array or null, behind a reference.
    let nullable = json!({
        "type": "object",
        "properties": {
            "party": { "$ref": "#/$defs/parties" },
            "jurisdiction": { "type": "string" }
        },
        "$defs": { "parties": { "type": ["array", "null"] } },
        "additionalProperties": false
    });
    let (outcome, transport) = run_inline(&contract(), nullable, OPENAI, vec![unsure_party()]);
    assert_eq!(
        outcome.answer,
        Answer::Ok(json!({ "jurisdiction": "Ohio" }))
    );
    assert!(outcome.trace.second_looks.is_empty());
    assert_eq!(transport.requests.borrow().len(), 1);
    // The threshold off: nothing is left out, nothing looked at.
    let off = [OPENAI, &[("structure_min_confidence", "off")]].concat();
    let (outcome, transport) = run(&contract(), &off, vec![first_reading(0.5)]);
    assert!(outcome.trace.second_looks.is_empty());
    assert_eq!(transport.requests.borrow().len(), 1);
}

/// A model that reads a contract in parts: a part that holds the governing clause gives its
/// state unsurely, the others nothing; a look (a request that asks for no party) gives it
/// surely.
struct PartReader {
    requests: std::cell::RefCell<Vec<String>>,
}

impl structure::ports::Transport for PartReader {
    fn send(
        &self,
        request: &structure::ports::HttpRequest,
    ) -> Result<structure::ports::HttpResponse, structure::ports::TransportError> {
        let body = String::from_utf8_lossy(&request.body).into_owned();
        let reply = if !body.contains("\"party\"") {
            look(0.93)
        } else if body.contains("State of Ohio") {
            chat_reply(&[
                ("{\"answer\": {\"jurisdiction\": ", 0.99),
                ("\"Ohio\"", 0.5),
                ("}}", 0.99),
            ])
        } else {
            chat_reply(&[("{\"answer\": {}}", 0.99)])
        };
        self.requests.borrow_mut().push(body);
        Ok(support::contract_model::response(reply))
    }
}

#[test]
fn a_text_read_in_parts_gets_its_look_too() {
    let text = contract().repeat(3);
    let model = PartReader {
        requests: Default::default(),
    };
    let config =
        support::MapConfig::with(&[OPENAI, &[("structure_context_tokens", "1024")]].concat());
    let outcome =
        support::contract_model::run_against(schema(), &text, &model, &config, &Default::default())
            .unwrap();
    let parts = outcome.trace.chunks;
    assert!(parts > 1, "read in parts: {parts}");
    assert_eq!(
        outcome.answer,
        Answer::Ok(json!({ "jurisdiction": "Ohio" }))
    );
    assert!(
        outcome.trace.second_looks[0].starts_with("/jurisdiction: \"Ohio\" (0.93)"),
        "{:?}",
        outcome.trace.second_looks
    );
    let looked = model.requests.borrow().last().unwrap().clone();
    assert!(looked.len() < text.len() / 2, "the look read its passages");
}

#[test]
fn a_value_kept_in_doubt_is_confirmed_or_replaced_by_a_surer_look() {
    let parties = json!(["Acme Corp.", "Bolt LLC"]);
    // Kept at 0.75, under the 0.9 where the reading model is reliably right: looked at again.
    let (outcome, transport) = run(&contract(), OPENAI, vec![reading("Ohio", 0.75), look(0.93)]);
    assert_eq!(
        outcome.answer,
        Answer::Ok(json!({ "party": parties, "jurisdiction": "Ohio" }))
    );
    assert_eq!(transport.requests.borrow().len(), 2);
    let notes = &outcome.trace.second_looks;
    assert!(
        notes.len() == 1
            && notes[0].starts_with("/jurisdiction: \"Ohio\" (0.93) confirmed by its passages"),
        "{notes:?}"
    );
    // The first reading took the state the parties are from; the governing clause says
    // another, and the look is surer of it.
    let text = contract();
    let (outcome, _) = run(&text, OPENAI, vec![reading("Texas", 0.75), look(0.93)]);
    assert_eq!(
        outcome.answer,
        Answer::Ok(json!({ "party": parties, "jurisdiction": "Ohio" }))
    );
    assert_eq!(jurisdiction_read(&outcome, &text), ("Ohio", Some(0.93)));
    assert_eq!(
        outcome.sources.len(),
        3,
        "one source a value: {:?}",
        outcome.sources
    );
    assert!(
        outcome.trace.second_looks[0].ends_with("surer than the first reading (0.75)"),
        "{:?}",
        outcome.trace.second_looks
    );
    // The same value, however unsure the look is of it, confirms it.
    let (outcome, _) = run(&text, OPENAI, vec![reading("Ohio", 0.75), look(0.4)]);
    assert_eq!(
        outcome.answer,
        Answer::Ok(json!({ "party": parties, "jurisdiction": "Ohio" }))
    );
    assert!(outcome.trace.second_looks[0].contains("\"Ohio\" (0.4) confirmed by"));
}

#[test]
fn a_value_kept_in_doubt_that_no_look_confirms_is_left_out_or_stands() {
    let parties = json!(["Acme Corp.", "Bolt LLC"]);
    let text = contract();
    // A look that gives no value does not confirm it: left out, as one under the threshold.
    let nothing = || chat_reply(&[("{\"answer\": {}}", 0.99)]);
    let (outcome, _) = run(&text, OPENAI, vec![reading("Texas", 0.75), nothing()]);
    assert_eq!(outcome.answer, Answer::Ok(json!({ "party": parties })));
    assert_eq!(outcome.trace.low_confidence, ["/jurisdiction"]);
    assert_eq!(outcome.sources.len(), 2, "{:?}", outcome.sources);
    assert!(
        outcome.trace.second_looks[0].ends_with("do not state it; unconfirmed, left out"),
        "{:?}",
        outcome.trace.second_looks
    );
    // One the answer needs stays.
    let mut needed = schema();
    needed["required"] = json!(["jurisdiction"]);
    let replies = vec![reading("Texas", 0.75), nothing()];
    let (outcome, _) = run_inline(&text, needed, OPENAI, replies);
    assert_eq!(
        outcome.answer,
        Answer::Ok(json!({ "party": parties, "jurisdiction": "Texas" }))
    );
    assert!(
        outcome.trace.second_looks[0].ends_with("unconfirmed, but the answer needs it"),
        "{:?}",
        outcome.trace.second_looks
    );
    // A look less sure than the first reading, or under the threshold, leaves it as it was.
    let (outcome, _) = run(&text, OPENAI, vec![reading("Texas", 0.75), look(0.72)]);
    assert_eq!(
        outcome.answer,
        Answer::Ok(json!({ "party": parties, "jurisdiction": "Texas" }))
    );
    assert!(
        outcome.trace.second_looks[0]
            .ends_with("less sure than the first reading (0.75), which stands"),
        "{:?}",
        outcome.trace.second_looks
    );
    let (outcome, _) = run(&text, OPENAI, vec![reading("Texas", 0.75), look(0.4)]);
    assert_eq!(
        outcome.answer,
        Answer::Ok(json!({ "party": parties, "jurisdiction": "Texas" }))
    );
}

#[test]
fn a_look_is_not_started_past_the_calls_token_budget() {
    // The first reading spent most of the budget: a look that could take the call past it is
    // not started, and the answer stands as the first reading gave it.
    let mut first = first_reading(0.5);
    first.body = first
        .body
        .replace("\"prompt_tokens\":100", "\"prompt_tokens\":3000");
    let config = [
        OPENAI,
        &[
            ("structure_token_budget", "3500"),
            ("structure_max_output_tokens", "200"),
        ],
    ]
    .concat();
    let (outcome, transport) = run(&contract(), &config, vec![first]);
    assert_eq!(transport.requests.borrow().len(), 1);
    assert_eq!(
        outcome.answer,
        Answer::Ok(json!({ "party": ["Acme Corp.", "Bolt LLC"] }))
    );
    let notes = &outcome.trace.second_looks;
    assert!(
        notes.len() == 1
            && notes[0].starts_with("/jurisdiction: the look failed (")
            && notes[0].contains("3500-token budget"),
        "{notes:?}"
    );
}

/// The answer to whether the text states the one value asked of: `said`.
fn stated(said: &str) -> Reply {
    Reply::answer(json!({ "value_1": said }))
}

#[test]
fn a_needed_value_the_text_does_not_state_is_read_again_from_its_field_passages() {
    let mut needed = schema();
    needed["required"] = json!(["jurisdiction"]);
    let text = contract();
    // The first reading guessed a state no clause names as the law (0.5: in doubt); asked,
    // the model says the text does not state it; the passages about the field hold the
    // governing clause, and the look reads the state surely.
    let replies = vec![reading("Delaware", 0.5), stated("not stated"), look(0.93)];
    let (outcome, transport) = run_inline(&text, needed.clone(), OPENAI, replies);
    assert_eq!(
        outcome.answer,
        Answer::Ok(json!({ "party": ["Acme Corp.", "Bolt LLC"], "jurisdiction": "Ohio" }))
    );
    assert_eq!(
        transport.requests.borrow().len(),
        3,
        "no look twice at one field"
    );
    assert!(asked(&transport, 2).contains(GOVERNING));
    assert_eq!(jurisdiction_read(&outcome, &text), ("Ohio", Some(0.93)));
    assert!(
        outcome.trace.in_doubt.is_empty(),
        "read surely: no longer in doubt"
    );
    let notes = &outcome.trace.second_looks;
    assert_eq!(notes[0], "/jurisdiction (0.5): the text does not state it");
    assert!(
        notes.len() == 2
            && notes[1].starts_with("/jurisdiction: \"Ohio\" (0.93) from its passages (bytes ")
            && notes[1].ends_with(
                "in place of the first reading (0.5), which the text was not found to state"
            ),
        "{notes:?}"
    );
    // A look that finds nothing surely: the call asks for it, with the rest as its partial.
    let nothing = chat_reply(&[("{\"answer\": {}}", 0.99)]);
    let replies = vec![reading("Delaware", 0.5), stated("not stated"), nothing];
    let (outcome, transport) = run_inline(&text, needed.clone(), OPENAI, replies);
    assert_eq!(transport.requests.borrow().len(), 3);
    let Answer::NeedMoreInput(need) = &outcome.answer else {
        panic!("{:?}", outcome.answer)
    };
    assert!(
        need.starts_with(
            "the text was not found to state /jurisdiction (read with confidence 0.5)"
        ),
        "{need}"
    );
    assert_eq!(
        outcome.partial,
        Some(json!({ "party": ["Acme Corp.", "Bolt LLC"] }))
    );
    assert!(
        outcome.trace.second_looks[1].ends_with("do not state it; the answer needs it"),
        "{:?}",
        outcome.trace.second_looks
    );
    // Stated: kept in doubt, and no look.
    let replies = vec![reading("Ohio", 0.5), stated("stated")];
    let (outcome, transport) = run_inline(&text, needed, OPENAI, replies);
    assert_eq!(transport.requests.borrow().len(), 2);
    assert_eq!(outcome.trace.in_doubt, ["/jurisdiction"]);
    assert!(matches!(outcome.answer, Answer::Ok(_)));
}
