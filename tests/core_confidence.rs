//! Confidence: each source of `ok` data carries the probability of the tokens its value was
//! written with, read from the log-probabilities each wire format returns (OpenAI Chat and
//! Responses, the local servers, Gemini when asked); none from Anthropic; a server that
//! refuses them is asked again without; `structure_min_confidence` drops an unsure optional
//! value and asks for an unsure required one.

mod support;

use mock_llm::Reply;
use serde_json::{Value, json};
use structure::outcome::Source;
use structure::provider::{Provider, connect};
use structure::settings::Settings;
use structure::{Answer, Outcome, SchemaInput, StructureRequest};

use support::{MapConfig, ScriptedTransport, chat_reply, ports, run_inline};

const TEXT: &str = "Ada Lovelace, ada@example.org";

fn schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "name": { "type": "string" },
            "email": { "type": "string" }
        },
        "required": ["name"],
        "additionalProperties": false
    })
}

/// The answer's text, token by token, with each token's probability: the name at 0.9, the
/// email at 0.7589 (the geometric mean of 0.8 and 0.72), the rest sure.
const TOKENS: &[(&str, f64)] = &[
    ("{\"answer\": {\"name\": ", 1.0),
    ("\"Ada Lovelace\"", 0.9),
    (", \"email\": ", 1.0),
    ("\"ada@", 0.8),
    ("example.org\"", 0.72),
    ("}}", 1.0),
];

fn answer_text() -> String {
    TOKENS.iter().map(|(text, _)| *text).collect()
}

/// The tokens as OpenAI writes them (`token`, `logprob`, `bytes`), or under other names.
fn token_list(text_key: &str, logprob_key: &str) -> Value {
    TOKENS
        .iter()
        .map(|(text, probability)| {
            json!({ text_key: text, logprob_key: probability.ln(), "bytes": text.as_bytes() })
        })
        .collect()
}

fn chat_body() -> String {
    json!({
        "choices": [{
            "message": { "role": "assistant", "content": answer_text() },
            "finish_reason": "stop",
            "logprobs": { "content": token_list("token", "logprob") }
        }],
        "usage": { "prompt_tokens": 100, "completion_tokens": 20 }
    })
    .to_string()
}

fn run(config: &[(&str, &str)], replies: Vec<Reply>) -> (Outcome, ScriptedTransport) {
    run_inline(TEXT, schema(), config, replies)
}

fn confidences(outcome: &Outcome) -> Vec<(String, Option<f64>)> {
    (outcome.sources.iter())
        .map(
            |Source {
                 pointer,
                 confidence,
                 ..
             }| (pointer.clone(), *confidence),
        )
        .collect()
}

fn expected() -> Vec<(String, Option<f64>)> {
    vec![("/name".into(), Some(0.9)), ("/email".into(), Some(0.7589))]
}

const OPENAI: &[(&str, &str)] = &[
    ("structure_model", "openai/gpt-4.1-mini"),
    ("openai_api_key", "sk-test"),
];

#[test]
fn openai_chat_is_asked_for_logprobs_and_each_value_gets_its_confidence() {
    let (outcome, transport) = run(OPENAI, vec![Reply::raw(200, &chat_body())]);
    assert_eq!(transport.body(0)["logprobs"], true);
    assert_eq!(transport.body(0)["top_logprobs"], 1);
    assert!(matches!(outcome.answer, Answer::Ok(_)));
    assert_eq!(confidences(&outcome), expected());
    let json = outcome.to_json();
    assert_eq!(json["sources"][0]["confidence"], 0.9);
}

#[test]
fn reasoning_models_and_servers_not_known_to_give_logprobs_are_not_asked() {
    let reasoning = [
        ("structure_model", "openai/o3-mini"),
        ("openai_api_key", "sk-test"),
    ];
    let (outcome, transport) = run(&reasoning, vec![Reply::raw(200, &chat_body())]);
    assert!(transport.body(0).get("logprobs").is_none());
    assert_eq!(
        confidences(&outcome),
        expected(),
        "logprobs a server sends unasked are read all the same"
    );
    let (_, transport) = run(
        &[
            ("structure_model", "openai/some-model"),
            ("openai_base_url", "http://127.0.0.1:9/v1"),
        ],
        vec![Reply::raw(200, &chat_body())],
    );
    assert!(
        transport.body(0).get("logprobs").is_none(),
        "an unknown server"
    );
    let off = [OPENAI, &[("structure_logprobs", "off")]].concat();
    let (_, transport) = run(&off, vec![Reply::raw(200, &chat_body())]);
    assert!(transport.body(0).get("logprobs").is_none(), "switched off");
}

#[test]
fn the_local_servers_are_asked() {
    for model in ["llamacpp/smollm2", "vllm/qwen", "ollama/llama3.2"] {
        let config = [
            ("structure_model", model),
            ("openai_base_url", "http://127.0.0.1:9/v1"),
        ];
        let (outcome, transport) = run(&config, vec![Reply::raw(200, &chat_body())]);
        assert_eq!(transport.body(0)["logprobs"], true, "{model}");
        assert_eq!(confidences(&outcome), expected(), "{model}");
    }
}

#[test]
fn the_responses_api_gives_the_final_messages_logprobs() {
    let body = json!({
        "status": "completed",
        "output": [{
            "type": "message",
            "role": "assistant",
            "content": [{
                "type": "output_text",
                "text": answer_text(),
                "annotations": [],
                "logprobs": token_list("token", "logprob")
            }]
        }],
        "usage": { "input_tokens": 100, "output_tokens": 20 }
    });
    let config = [OPENAI, &[("structure_openai_api", "responses")]].concat();
    let (outcome, transport) = run(&config, vec![Reply::raw(200, &body.to_string())]);
    assert_eq!(
        transport.body(0)["include"],
        json!(["message.output_text.logprobs"])
    );
    assert_eq!(confidences(&outcome), expected());
}

#[test]
fn gemini_is_asked_only_when_set_on_and_gives_its_chosen_candidates() {
    let body = json!({
        "candidates": [{
            "content": { "role": "model", "parts": [{ "text": answer_text() }] },
            "finishReason": "STOP",
            "logprobsResult": { "chosenCandidates": token_list("token", "logProbability") }
        }],
        "usageMetadata": { "promptTokenCount": 100, "candidatesTokenCount": 20 }
    });
    let gemini = [
        ("structure_model", "google/gemini-2.5-flash"),
        ("gemini_api_key", "g-test"),
    ];
    let (_, transport) = run(&gemini, vec![Reply::raw(200, &body.to_string())]);
    assert!(
        transport.body(0)["generationConfig"]
            .get("responseLogprobs")
            .is_none(),
        "Gemini refuses them for many models: not asked by default"
    );
    let on = [&gemini[..], &[("structure_logprobs", "on")]].concat();
    let (outcome, transport) = run(&on, vec![Reply::raw(200, &body.to_string())]);
    assert_eq!(
        transport.body(0)["generationConfig"]["responseLogprobs"],
        true
    );
    assert_eq!(confidences(&outcome), expected());
}

#[test]
fn anthropic_gives_none_and_its_sources_have_no_confidence() {
    let body = json!({
        "type": "message",
        "role": "assistant",
        "content": [{ "type": "text", "text": answer_text() }],
        "stop_reason": "end_turn",
        "usage": { "input_tokens": 100, "output_tokens": 20 }
    });
    let config = [
        ("structure_model", "anthropic/claude-sonnet-4-5"),
        ("anthropic_api_key", "sk-ant-test"),
        ("structure_delivery", "native"),
    ];
    let (outcome, transport) = run(&config, vec![Reply::raw(200, &body.to_string())]);
    assert!(!transport.body(0).to_string().contains("logprob"));
    assert_eq!(
        confidences(&outcome),
        [("/name".to_owned(), None), ("/email".to_owned(), None)]
    );
    assert!(outcome.to_json()["sources"][0].get("confidence").is_none());
}

#[test]
fn a_server_that_refuses_logprobs_is_asked_again_without() {
    let config = [
        ("structure_model", "openai/some-model"),
        ("openai_base_url", "http://127.0.0.1:9/v1"),
        ("structure_logprobs", "on"),
    ];
    let refusal = Reply::error(
        400,
        "invalid_request_error",
        "logprobs is not supported for this model",
    );
    let (outcome, transport) = run(&config, vec![refusal, Reply::raw(200, &chat_body())]);
    assert_eq!(transport.body(0)["logprobs"], true);
    assert!(transport.body(1).get("logprobs").is_none());
    assert!(matches!(outcome.answer, Answer::Ok(_)));
    assert_eq!(outcome.usage.llm_calls, 2);
}

/// A chat answer whose email is written with probability `email` and whose form (keys and
/// punctuation) with `form`; the name at 0.9.
fn answer_with(email: f64, form: f64) -> Reply {
    chat_reply(&[
        ("{\"answer\": {\"name\": ", form),
        ("\"Ada Lovelace\"", 0.9),
        (", \"email\": ", form),
        ("\"ada@example.org\"", email),
        ("}}", form),
    ])
}

#[test]
fn by_default_a_model_sure_of_its_answers_form_is_held_to_0_7_and_one_that_is_not_is_not() {
    // Sure of the form: its probabilities mean something, an email under 0.7 is dropped, one
    // at 0.7 or more kept.
    for email in [0.3, 0.69] {
        let (outcome, _) = run(OPENAI, vec![answer_with(email, 0.98)]);
        assert_eq!(
            outcome.answer,
            Answer::Ok(json!({ "name": "Ada Lovelace" })),
            "{email}"
        );
        assert_eq!(outcome.trace.low_confidence, ["/email"]);
    }
    let (outcome, _) = run(OPENAI, vec![answer_with(0.71, 0.98)]);
    assert!(outcome.trace.low_confidence.is_empty(), "{outcome:?}");
    assert_eq!(structure::settings::choices::AUTO_MIN_CONFIDENCE, 0.7);
    // Unsure of the very form the schema fixes: a model that does not read; nothing held.
    let (outcome, _) = run(OPENAI, vec![answer_with(0.3, 0.4)]);
    assert_eq!(
        outcome.answer,
        Answer::Ok(json!({ "name": "Ada Lovelace", "email": "ada@example.org" }))
    );
    // Off, or a threshold of one's own, whatever the form.
    let off = [OPENAI, &[("structure_min_confidence", "off")]].concat();
    let (outcome, _) = run(&off, vec![answer_with(0.3, 0.98)]);
    assert!(outcome.trace.low_confidence.is_empty());
    let own = [OPENAI, &[("structure_min_confidence", "0.2")]].concat();
    let (outcome, _) = run(&own, vec![answer_with(0.1, 0.4)]);
    assert_eq!(outcome.trace.low_confidence, ["/email"]);
}

#[test]
fn min_confidence_drops_an_unsure_optional_value_and_asks_for_an_unsure_required_one() {
    let config = [OPENAI, &[("structure_min_confidence", "0.8")]].concat();
    let (outcome, _) = run(&config, vec![Reply::raw(200, &chat_body())]);
    assert_eq!(
        outcome.answer,
        Answer::Ok(json!({ "name": "Ada Lovelace" }))
    );
    assert_eq!(outcome.trace.low_confidence, ["/email"]);
    assert_eq!(confidences(&outcome), [("/name".to_owned(), Some(0.9))]);
    assert_eq!(
        outcome.to_json()["trace"]["lowConfidence"],
        json!(["/email"])
    );

    // A value the answer needs under the threshold is not asked for before the model is asked
    // whether the text states it: stated, it is kept, named in trace.inDoubt; not, the call
    // asks for it.
    let config = [OPENAI, &[("structure_min_confidence", "0.95")]].concat();
    let stated = |said: &str| Reply::answer(json!({ "value_1": said }));
    let replies = |said: &str| vec![Reply::raw(200, &chat_body()), stated(said)];
    let (outcome, transport) = run(&config, replies("stated"));
    assert_eq!(
        outcome.answer,
        Answer::Ok(json!({ "name": "Ada Lovelace" })),
        "{outcome:?}"
    );
    assert_eq!(outcome.trace.in_doubt, ["/name"]);
    assert_eq!(
        outcome.trace.second_looks,
        ["/name (0.9): the text states it; kept in doubt"]
    );
    assert_eq!((outcome.usage.llm_calls, transport.count()), (2, 2));
    let asked = transport.body(1).to_string();
    assert!(
        asked.contains("Whether the text states the name") && asked.contains("Ada Lovelace"),
        "{asked}"
    );
    let (outcome, _) = run(&config, replies("not stated"));
    let Answer::NeedMoreInput(need) = &outcome.answer else {
        panic!("{outcome:?}");
    };
    assert!(
        need.contains("/name (read with confidence 0.9)")
            && need.contains("structure_min_confidence"),
        "{need}"
    );
    assert!(outcome.sources.is_empty() && outcome.trace.in_doubt.is_empty());
    // What the text did give comes with it: here nothing else (the email was dropped).
    assert_eq!(outcome.partial, Some(json!({})));
    assert_eq!(outcome.to_json()["partial"], json!({}));

    // One no span writes (the text names her otherwise) is asked about the same way.
    let unwritten = "Lord Byron's daughter, ada@example.org";
    let (outcome, transport) = run_inline(unwritten, schema(), &config, replies("stated"));
    assert_eq!(outcome.trace.in_doubt, ["/name"], "{outcome:?}");
    assert_eq!(transport.count(), 2);
    let (outcome, _) = run_inline(unwritten, schema(), &config, replies("not stated"));
    assert!(
        matches!(&outcome.answer, Answer::NeedMoreInput(need) if need.contains("/name (read with confidence 0.9)")),
        "{outcome:?}"
    );
    assert_eq!(
        outcome.trace.second_looks,
        ["/name (0.9): the text does not state it"]
    );

    let mut settings = serde_json::Map::new();
    settings.insert("minConfidence".into(), json!(1.5));
    let request = StructureRequest::new(TEXT, SchemaInput::Inline(schema()), None)
        .unwrap()
        .with_settings(settings);
    let transport = ScriptedTransport::new(Vec::new());
    let config = MapConfig::with(OPENAI);
    let error = structure::structure(
        &request,
        &structure::Scope::default(),
        &ports(&transport, &config),
    )
    .unwrap_err();
    assert!(
        error
            .message
            .contains("structure_min_confidence must be auto, off or a number from 0 to 1"),
        "{}",
        error.message
    );
}

#[test]
fn the_threshold_weighs_what_the_text_says_beside_the_models_confidence() {
    // The text labels the email with its field's name: the model's 0.3 does not drop it.
    let labelled = "Name: Ada Lovelace. Email: ada@example.org";
    let (outcome, _) = run_inline(labelled, schema(), OPENAI, vec![answer_with(0.3, 0.98)]);
    assert_eq!(
        outcome.answer,
        Answer::Ok(json!({ "name": "Ada Lovelace", "email": "ada@example.org" }))
    );
    assert!(outcome.trace.low_confidence.is_empty());
    // The confidence reported is still the model's.
    assert_eq!(confidences(&outcome)[1], ("/email".to_owned(), Some(0.3)));

    // Two values read from the one span: the less sure one, over the threshold, is dropped.
    let schema = json!({
        "type": "object",
        "properties": { "name": { "type": "string" }, "company": { "type": "string" } },
        "required": ["name"],
        "additionalProperties": false
    });
    let reply = || {
        chat_reply(&[
            ("{\"answer\": {\"name\": ", 0.98),
            ("\"Ada Lovelace\"", 0.95),
            (", \"company\": ", 0.98),
            ("\"Ada Lovelace\"", 0.85),
            ("}}", 0.98),
        ])
    };
    let (outcome, _) = run_inline(TEXT, schema.clone(), OPENAI, vec![reply()]);
    assert_eq!(
        outcome.answer,
        Answer::Ok(json!({ "name": "Ada Lovelace" }))
    );
    assert_eq!(outcome.trace.low_confidence, ["/company"]);
    // With the threshold off, nothing is weighed.
    let off = [OPENAI, &[("structure_min_confidence", "off")]].concat();
    let (outcome, _) = run_inline(TEXT, schema, &off, vec![reply()]);
    assert_eq!(
        outcome.answer,
        Answer::Ok(json!({ "name": "Ada Lovelace", "company": "Ada Lovelace" }))
    );
}

#[test]
fn a_recorded_openai_answer_spells_its_text_with_its_tokens() {
    let recorded = support::provider_api("corpus/logprobsParam/chat-completions/response.json");
    let settings = Settings::load(&MapConfig::with(OPENAI)).unwrap();
    let provider: Box<dyn Provider> = connect(&settings, &settings.model).unwrap();
    let tokens = provider.tokens(&recorded);
    let spelled: String = tokens.iter().map(|token| token.text.as_str()).collect();
    assert_eq!(spelled, recorded["choices"][0]["message"]["content"]);
    assert!(
        tokens
            .iter()
            .all(|token| token.logprob <= 0.0 && token.bytes.is_some())
    );
}

#[test]
fn a_model_unsure_of_its_form_loses_the_optional_values_it_read_from_a_needed_values_words() {
    let text = "Tom Becker, tom@example.org, from Hamburg";
    let schema = json!({
        "type": "object",
        "properties": {
            "name": { "type": "string" },
            "email": { "type": "string" },
            "surname": { "type": "string" },
            "tags": { "type": "array", "items": { "type": "string" } },
            "city": { "type": "string" },
            "region": { "type": "string" }
        },
        "required": ["name", "email"],
        "additionalProperties": false
    });
    // A model unsure of the form (0.4): the surname inside the name, the tag that copies the
    // name; the city and the region, both optional, share a span and stay.
    let reply = |form: f64| {
        chat_reply(&[
            ("{\"answer\": {\"name\": ", form),
            ("\"Tom Becker\"", 0.3),
            (", \"email\": ", form),
            ("\"tom@example.org\"", 0.2),
            (", \"surname\": ", form),
            ("\"Becker\"", 0.5),
            (", \"tags\": [", form),
            ("\"Tom Becker\"", 0.6),
            ("], \"city\": ", form),
            ("\"Hamburg\"", 0.4),
            (", \"region\": ", form),
            ("\"Hamburg\"", 0.4),
            ("}}", form),
        ])
    };
    let (outcome, _) = run_inline(text, schema.clone(), OPENAI, vec![reply(0.4)]);
    assert_eq!(
        outcome.answer,
        Answer::Ok(json!({
            "name": "Tom Becker",
            "email": "tom@example.org",
            "city": "Hamburg",
            "region": "Hamburg"
        }))
    );
    let left_out = &outcome.trace.left_out;
    assert_eq!(left_out.len(), 2, "{left_out:?}");
    assert!(
        left_out[0].starts_with("/surname (\"Becker\"): read from the words of /name")
            && left_out[1].starts_with("/tags/0 (\"Tom Becker\"): read from the words of /name"),
        "{left_out:?}"
    );
    assert!(outcome.trace.low_confidence.is_empty());
    let pointers: Vec<&str> = (outcome.sources.iter())
        .map(|source| source.pointer.as_str())
        .collect();
    assert_eq!(pointers, ["/name", "/email", "/city", "/region"]);

    // A model sure of its form is held to the threshold instead; with the threshold off, or
    // no log-probabilities to judge the form by, nothing is left out.
    // (Its unsure name and email, which the answer needs, are said not to be stated: the call
    // asks for them.)
    let neither = Reply::answer(json!({ "value_1": "not stated", "value_2": "not stated" }));
    let (outcome, _) = run_inline(text, schema.clone(), OPENAI, vec![reply(0.99), neither]);
    assert!(outcome.trace.left_out.is_empty());
    assert!(
        matches!(outcome.answer, Answer::NeedMoreInput(_)),
        "{outcome:?}"
    );
    let off = [OPENAI, &[("structure_min_confidence", "off")]].concat();
    let (outcome, _) = run_inline(text, schema.clone(), &off, vec![reply(0.4)]);
    let Answer::Ok(data) = &outcome.answer else {
        panic!("{outcome:?}");
    };
    assert_eq!(data["surname"], "Becker");
    let plain = Reply::answer(
        json!({ "name": "Tom Becker", "email": "tom@example.org", "surname": "Becker" }),
    );
    let (outcome, _) = run_inline(text, schema, OPENAI, vec![plain]);
    let Answer::Ok(data) = &outcome.answer else {
        panic!("{outcome:?}");
    };
    assert_eq!(data["surname"], "Becker");
}

#[test]
fn two_needed_values_a_model_unsure_of_its_form_read_from_one_span_both_stay() {
    // Asking would tell the caller the text lacks what it states: the weak reader's answer
    // stands, wrong as it may be.
    let schema = json!({
        "type": "object",
        "properties": { "subject": { "type": "string" }, "object": { "type": "string" } },
        "required": ["subject", "object"],
        "additionalProperties": false
    });
    let reply = chat_reply(&[
        ("{\"answer\": {\"subject\": ", 0.3),
        ("\"Marie Curie\"", 0.5),
        (", \"object\": ", 0.3),
        ("\"Marie Curie\"", 0.5),
        ("}}", 0.3),
    ]);
    let text = "Marie Curie discovered polonium.";
    let (outcome, _) = run_inline(text, schema, OPENAI, vec![reply]);
    assert_eq!(
        outcome.answer,
        Answer::Ok(json!({ "subject": "Marie Curie", "object": "Marie Curie" }))
    );
    assert!(outcome.trace.left_out.is_empty());
}

#[test]
fn a_needed_value_the_text_does_not_state_is_asked_for_with_the_rest_of_the_answer() {
    // Never answered with nothing: the values the text did give come back as `partial`, with
    // their sources; the value still in doubt that the text states stays named in the trace.
    let schema = json!({
        "type": "object",
        "properties": {
            "parties": { "type": "array", "items": { "type": "string" }, "minItems": 2 },
            "law": { "type": "string" },
            "signed": { "type": "string" },
            "city": { "type": "string" }
        },
        "required": ["parties", "law", "signed"],
        "additionalProperties": false
    });
    let reply = chat_reply(&[
        ("{\"answer\": {\"parties\": [", 0.99),
        ("\"Acme Corp.\"", 0.99),
        (", ", 0.99),
        ("\"Widget LLC\"", 0.4),
        ("], \"law\": ", 0.99),
        ("\"Ohio\"", 0.4),
        (", \"signed\": ", 0.99),
        ("\"Monday\"", 0.99),
        (", \"city\": ", 0.99),
        ("\"Dayton\"", 0.99),
        ("}}", 0.99),
    ]);
    let text = "Acme Corp. and Widget LLC signed on Monday in Dayton.";
    // The second party is stated; the law is not.
    let said = Reply::answer(json!({ "value_1": "not stated", "value_2": "stated" }));
    let (outcome, _) = run_inline(text, schema, OPENAI, vec![reply, said]);
    let Answer::NeedMoreInput(need) = &outcome.answer else {
        panic!("{outcome:?}");
    };
    assert!(need.contains("/law (read with confidence 0.4)"), "{need}");
    let partial =
        json!({ "parties": ["Acme Corp.", "Widget LLC"], "signed": "Monday", "city": "Dayton" });
    assert_eq!(outcome.partial, Some(partial.clone()));
    let pointers: Vec<&str> = (outcome.sources.iter())
        .map(|source| source.pointer.as_str())
        .collect();
    assert_eq!(pointers, ["/parties/0", "/parties/1", "/signed", "/city"]);
    assert_eq!(outcome.trace.in_doubt, ["/parties/1"]);
    let written = outcome.to_json();
    assert_eq!(written["status"], "need-more-input");
    assert_eq!(written["partial"], partial);
    assert_eq!(written["sources"].as_array().map(Vec::len), Some(4));
    assert!(written.get("data").is_none(), "{written}");
}
