//! One object from a text longer than the model's window: the text read in parts whose answers
//! are merged, a disagreement settled by one short call, a required value no part gives asked
//! for, never invented. How the window is known and every request fits it: `core_window.rs`.

mod support;

use mock_llm::Reply;
use mock_llm::document::{Terms, is_choice, planted_document, terms_schema};
use mock_llm::servers::Server;
use serde_json::{Value, json};
use structure::ports::MemoryKeyValue;
use structure::{Answer, SchemaInput, StructureRequest};

use support::MapConfig;
use support::contract_model::{
    ContractModel, Twisted, asked_text, assert_sources_are_slices, config, data, run, run_against,
    run_request, run_terms,
};

#[test]
fn a_long_text_is_read_in_parts_and_merged_into_one_object() {
    let text = planted_document(40_000, &Terms::default());
    let model = ContractModel::new(Server::default());
    let config = config(&[("structure_context_tokens", "2048")]);
    let outcome = run(&text, &model, &config, &MemoryKeyValue::default()).unwrap();
    let data = data(&outcome);
    assert_eq!(
        data,
        &json!({
            "effective_date": "2021-03-04",
            "parties": ["Acme Widgets Inc.", "Zoë Kim", "Łukasz Nowak LLC"],
            "governing_law": "Delaware",
            "term_months": 24,
        })
    );
    let chunks = outcome.trace.chunks;
    assert!(chunks > 5, "{chunks} chunks");
    assert!(
        outcome.usage.llm_calls <= chunks + 2,
        "{} calls",
        outcome.usage.llm_calls
    );
    assert!(
        model.choices().is_empty(),
        "nothing to choose: no part disagrees"
    );
    // Each value's chunk, and its span in the whole text.
    assert_eq!(outcome.trace.chunk_of["/parties/0"], 0);
    assert_eq!(outcome.trace.chunk_of["/parties/2"], chunks - 1);
    assert_sources_are_slices(&outcome, &text);
    let last_party = outcome
        .sources
        .iter()
        .find(|s| s.pointer == "/parties/2")
        .unwrap();
    assert!(last_party.span.as_ref().unwrap().start > text.chars().count() * 9 / 10);
    // Every request fits the window: its prompt, as the server counts it (this one a token per
    // four bytes of the request, which the component learns from its answers), and its answer.
    for body in model.sent.borrow().iter() {
        let bytes = serde_json::to_vec(body).unwrap().len() as u64;
        let max_tokens = body["max_tokens"].as_u64().unwrap();
        assert!(
            bytes / 4 + max_tokens <= 2048,
            "{bytes} bytes, {max_tokens} to answer"
        );
    }
}

#[test]
fn a_long_pdf_read_in_parts_gives_each_value_its_page_and_its_boxes() {
    // The planted contract written as a PDF: lines of at most 90 characters, 50 lines a page.
    let text = planted_document(40_000, &Terms::default());
    let mut lines = vec![String::new()];
    for word in text.split_whitespace() {
        let line = lines.last_mut().unwrap();
        if line.len() + word.len() >= 90 {
            lines.push(String::new());
        }
        let line = lines.last_mut().unwrap();
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(word);
    }
    let pages: Vec<String> = lines.chunks(50).map(|page| page.join("\n")).collect();
    let pages: Vec<&str> = pages.iter().map(String::as_str).collect();
    let document =
        structure::request::Document::new(mock_llm::pdf::with_pages(&pages), "application/pdf")
            .unwrap();
    let request =
        StructureRequest::for_document(document, SchemaInput::Inline(terms_schema()), None)
            .unwrap();
    let model = ContractModel::new(Server::default());
    let config = config(&[("structure_context_tokens", "2048")]);
    let outcome = run_request(&request, &model, &config, &MemoryKeyValue::default()).unwrap();
    assert!(outcome.trace.chunks > 5, "read in parts");
    assert_eq!(outcome.trace.page_sizes.len(), pages.len());
    let spanned: Vec<_> = (outcome.sources.iter())
        .filter(|source| source.span.is_some())
        .collect();
    assert!(spanned.len() >= 5, "{:?}", outcome.sources);
    for source in spanned {
        assert!(!source.boxes.is_empty(), "{source:?}");
        assert!(
            (source.boxes.iter()).all(|line| Some(line.page) == source.page),
            "{source:?}"
        );
    }
}

#[test]
fn a_list_from_several_parts_keeps_what_the_document_states_as_that_field() {
    // A part's reader takes the counsel a clause names for a party; the question which items
    // the document states as parties, with the passage of each, leaves the counsel out.
    let terms = Terms {
        counsel: vec![("Baker Lane LLP".to_owned(), 0.3)],
        ..Terms::default()
    };
    let text = planted_document(40_000, &terms);
    let model = ContractModel::new(Server::default());
    let config = config(&[("structure_context_tokens", "2048")]);
    let outcome = run(&text, &model, &config, &MemoryKeyValue::default()).unwrap();
    assert_eq!(
        data(&outcome)["parties"],
        json!(["Acme Widgets Inc.", "Zoë Kim", "Łukasz Nowak LLC"])
    );
    assert_eq!(
        outcome.trace.left_out,
        [
            "left out /parties item \"Baker Lane LLP\": read by a part, but the document does not \
          state it as one of parties (asked of the items the parts gave)"
        ]
    );
    assert_sources_are_slices(&outcome, &text);
    assert_eq!(
        outcome.trace.chunk_of["/parties/2"],
        outcome.trace.chunks - 1
    );

    // A question with no valid answer keeps the list whole, and says so.
    let twist = |body: &Value| {
        mock_llm::document::is_membership(body).then(|| Reply::answer(json!({ "parties 1": 7 })))
    };
    let twisted = Twisted::new(&model, &twist);
    let outcome = run_against(
        terms_schema(),
        &text,
        &twisted,
        &config,
        &MemoryKeyValue::default(),
    )
    .unwrap();
    assert_eq!(data(&outcome)["parties"].as_array().unwrap().len(), 4);
    assert!(
        outcome.trace.left_out[0].starts_with("kept every item of /parties: the question"),
        "{:?}",
        outcome.trace.left_out
    );
}

#[test]
fn values_read_in_parts_keep_the_confidence_their_part_gave_them() {
    let text = planted_document(40_000, &Terms::default());
    let mut model = ContractModel::new(Server::default());
    model.token_probability = Some(0.9);
    let config = config(&[("structure_context_tokens", "2048")]);
    let outcome = run(&text, &model, &config, &MemoryKeyValue::default()).unwrap();
    assert!(outcome.trace.chunks > 5);
    let confidence = |pointer: &str| {
        (outcome.sources.iter())
            .find(|source| source.pointer == pointer)
            .and_then(|source| source.confidence)
    };
    // A token a character, each of 0.9: every value read from a part is 0.9.
    assert_eq!(confidence("/governing_law"), Some(0.9));
    assert_eq!(confidence("/parties/2"), Some(0.9));

    // Held to 0.95, the required date, which the text writes, is kept, named in doubt, once the
    // model says the text states it; to 0.85, nothing is dropped.
    let held = config_with(&config, &[("structure_min_confidence", "0.95")]);
    let mut model = ContractModel::new(Server::default());
    model.token_probability = Some(0.9);
    let outcome = run(&text, &model, &held, &MemoryKeyValue::default()).unwrap();
    assert_eq!(data(&outcome)["effective_date"], "2021-03-04");
    // The question read the passage around the date, not the 40,000 characters.
    let question = (model.sent.borrow().iter())
        .find(|body| body.to_string().contains("not stated"))
        .map(|body| asked_text(body).to_owned())
        .unwrap();
    assert!(
        question.contains("effective as of 2021-03-04") && question.len() < 2_000,
        "{question}"
    );
    assert_eq!(outcome.trace.in_doubt, ["/effective_date"]);
    assert_eq!(
        outcome.trace.second_looks[0],
        "/effective_date (0.9): the text states it; kept in doubt"
    );
    let held = config_with(&config, &[("structure_min_confidence", "0.85")]);
    let outcome = run(&text, &model, &held, &MemoryKeyValue::default()).unwrap();
    assert!(outcome.trace.low_confidence.is_empty());
    assert_eq!(data(&outcome)["parties"].as_array().unwrap().len(), 3);
}

fn config_with(base: &MapConfig, extra: &[(&str, &str)]) -> MapConfig {
    let mut config = MapConfig::with(&[]);
    config.values = base.values.clone();
    for (key, value) in extra {
        config.values.insert((*key).to_owned(), (*value).to_owned());
    }
    config
}

#[test]
fn parts_that_disagree_are_settled_by_one_short_call_that_sees_the_candidates() {
    let terms = Terms {
        superseded_date: Some(("2019-07-01".into(), 0.8)),
        ..Terms::default()
    };
    let text = planted_document(40_000, &terms);
    let model = ContractModel::new(Server::default());
    let outcome = run(
        &text,
        &model,
        &config(&[("structure_context_tokens", "2048")]),
        &MemoryKeyValue::default(),
    )
    .unwrap();
    assert_eq!(data(&outcome)["effective_date"], "2021-03-04");
    let choices = model.choices();
    assert_eq!(choices.len(), 1, "one call settles the disagreement");
    let question = choices[0]["messages"][1]["content"].as_str().unwrap();
    assert!(
        question.contains("2019-07-01") && question.contains("2021-03-04"),
        "{question}"
    );
    assert!(
        question.contains("superseded draft"),
        "each candidate with its passage: {question}"
    );
    assert!(
        question.len() < 2_000,
        "only the candidates, not the text: {question}"
    );
    assert_eq!(
        choices[0]["response_format"]["json_schema"]["schema"]["properties"]["answer"]["properties"]
            ["effective_date"]["enum"],
        json!(["2021-03-04", "2019-07-01"]),
        "the answer can only be one of the candidates"
    );
    assert!(outcome.usage.llm_calls <= outcome.trace.chunks + 2);
    let source = outcome
        .sources
        .iter()
        .find(|s| s.pointer == "/effective_date")
        .unwrap();
    assert_eq!(source.span.as_ref().unwrap().text, "2021-03-04");
}

#[test]
fn a_required_value_only_the_last_part_gives_is_found_and_one_no_part_gives_is_asked_for() {
    let last = Terms {
        effective_date: Some(("2023-11-30".into(), 0.98)),
        ..Terms::default()
    };
    let text = planted_document(40_000, &last);
    let model = ContractModel::new(Server::default());
    let config = config(&[("structure_context_tokens", "2048")]);
    let outcome = run(&text, &model, &config, &MemoryKeyValue::default()).unwrap();
    assert_eq!(data(&outcome)["effective_date"], "2023-11-30");
    assert_eq!(
        outcome.trace.chunk_of["/effective_date"],
        outcome.trace.chunks - 1
    );

    // A decoy: an optional value no part gives stays out; a required one is asked for.
    let lacking = Terms {
        effective_date: None,
        governing_law: None,
        ..Terms::default()
    };
    let text = planted_document(40_000, &lacking);
    let outcome = run(&text, &model, &config, &MemoryKeyValue::default()).unwrap();
    let Answer::NeedMoreInput(need) = &outcome.answer else {
        panic!("{:?}", outcome.answer)
    };
    assert!(need.contains("/effective_date"), "{need}");
    // What the parts did give comes with the question, each value where the text writes it.
    let partial = outcome.partial.as_ref().expect("the parts' answer");
    assert_eq!(partial["parties"][0], "Acme Widgets Inc.");
    assert!(partial.get("effective_date").is_none(), "{partial}");
    assert!(
        (outcome.sources.iter()).any(|source| source.pointer == "/parties/0"),
        "{:?}",
        outcome.sources
    );
}

#[test]
fn a_merged_object_that_breaks_a_rule_of_the_whole_is_fixed_in_the_usual_loop() {
    let text = planted_document(40_000, &Terms::default());
    let model = ContractModel::new(Server::default());
    let mut schema = terms_schema();
    schema["properties"]["parties"]["maxItems"] = json!(2);
    let config = config(&[("structure_context_tokens", "2048")]);
    let outcome = run_against(schema, &text, &model, &config, &MemoryKeyValue::default()).unwrap();
    assert_eq!(
        data(&outcome)["parties"],
        json!(["Acme Widgets Inc.", "Zoë Kim"])
    );
    assert_eq!(
        outcome.trace.reasons.len(),
        1,
        "{:?}",
        outcome.trace.reasons
    );
    assert_eq!(outcome.trace.reasons[0].pointer, "/parties");
    // The fix saw the passages the values came from, not the whole text.
    let fix = model.sent.borrow().last().cloned().unwrap();
    let passages = fix["messages"][1]["content"].as_str().unwrap();
    assert!(
        passages.contains("Party: Łukasz Nowak LLC") && passages.len() < 5_000,
        "{passages}"
    );
    assert!(outcome.usage.llm_calls <= outcome.trace.chunks + 2);
    assert_sources_are_slices(&outcome, &text);
}

#[test]
fn an_optional_value_that_stays_invalid_is_left_out_not_the_answer() {
    // "0 months" breaks `minimum: 1`, and the model says it again when told.
    let zero = Terms {
        term_months: Some((0, 0.6)),
        ..Terms::default()
    };
    let model = ContractModel::new(Server::default());
    for (chars, window) in [(1_500, "8192"), (40_000, "2048")] {
        let text = planted_document(chars, &zero);
        let config = config(&[("structure_context_tokens", window)]);
        let outcome = run(&text, &model, &config, &MemoryKeyValue::default()).unwrap();
        let data = data(&outcome);
        assert_eq!(data["governing_law"], "Delaware", "{chars}");
        // (Told of a broken rule, this mock model also drops its third party.)
        assert!(data["parties"].as_array().unwrap().len() >= 2, "{chars}");
        assert!(data.get("term_months").is_none(), "{chars}: {data}");
        let left_out = &outcome.trace.left_out;
        assert!(
            left_out.len() == 1 && left_out[0].contains("left out /term_months"),
            "{chars}: {left_out:?}"
        );
        assert!(outcome.sources.iter().all(|s| s.pointer != "/term_months"));
    }
}

#[test]
fn a_part_whose_answer_stays_invalid_loses_its_own_values_not_the_documents() {
    let text = planted_document(40_000, &Terms::default());
    let model = ContractModel::new(Server::default());
    let garble = |body: &Value| {
        asked_text(body)
            .contains("Zoë Kim")
            .then(|| Reply::answer(json!("I cannot say")))
    };
    let twisted = Twisted::new(&model, &garble);
    let config = config(&[("structure_context_tokens", "2048")]);
    let outcome = run_terms(&text, &twisted, &config);
    let data = data(&outcome);
    assert_eq!(
        data["parties"],
        json!(["Acme Widgets Inc.", "Łukasz Nowak LLC"])
    );
    assert_eq!(
        (data["governing_law"].as_str(), data["term_months"].as_u64()),
        (Some("Delaware"), Some(24))
    );
    let left_out = &outcome.trace.left_out;
    assert!(
        !left_out.is_empty()
            && left_out
                .iter()
                .all(|line| line.starts_with("left out the part: characters ")),
        "{left_out:?}"
    );
    assert_sources_are_slices(&outcome, &text);

    // Every part's answer stays invalid: nothing was read, and the result says why.
    let everything = |_: &Value| Some(Reply::answer(json!("I cannot say")));
    let twisted = Twisted::new(&model, &everything);
    let outcome = run_terms(&text, &twisted, &config);
    assert!(
        matches!(outcome.answer, Answer::Stale(_)),
        "{:?}",
        outcome.answer
    );
    assert!(outcome.trace.left_out.is_empty());
}

#[test]
fn a_choice_that_stays_invalid_leaves_an_optional_field_out_and_asks_for_a_required_one() {
    let terms = Terms {
        superseded_date: Some(("2019-07-01".into(), 0.8)),
        ..Terms::default()
    };
    let text = planted_document(40_000, &terms);
    let model = ContractModel::new(Server::default());
    let garbled =
        |body: &Value| is_choice(body).then(|| Reply::answer(json!({ "effective_date": 7 })));
    let config = config(&[("structure_context_tokens", "2048")]);
    // Required: asked for, with what the parts gave; never guessed, never the choice's errors.
    let twisted = Twisted::new(&model, &garbled);
    let outcome = run_terms(&text, &twisted, &config);
    let Answer::NeedMoreInput(need) = &outcome.answer else {
        panic!("{:?}", outcome.answer)
    };
    assert!(
        need.contains("/effective_date (")
            && need.contains("2019-07-01")
            && need.contains("2021-03-04"),
        "{need}"
    );
    // Optional: left out, the rest kept.
    let mut schema = terms_schema();
    schema["required"] = json!(["parties"]);
    let twisted = Twisted::new(&model, &garbled);
    let outcome =
        run_against(schema, &text, &twisted, &config, &MemoryKeyValue::default()).unwrap();
    let data = data(&outcome);
    assert!(data.get("effective_date").is_none(), "{data}");
    assert_eq!(data["parties"].as_array().unwrap().len(), 3);
    let left_out = &outcome.trace.left_out;
    assert!(
        left_out.len() == 1 && left_out[0].starts_with("left out /effective_date: "),
        "{left_out:?}"
    );
}
