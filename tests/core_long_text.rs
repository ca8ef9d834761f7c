//! One object from a text longer than the model's window: the window known (set, discovered or
//! learned from a refusal), every request's answer clamped to what the window leaves, the text
//! read in parts whose answers are merged, a disagreement settled by one short call, a required
//! value no part gives asked for, never invented.

mod support;

use std::cell::RefCell;

use mock_llm::document::{Reader, Terms, is_choice, planted_document, terms_schema};
use mock_llm::servers::Server;
use mock_llm::{Recorded, Reply};
use serde_json::{Value, json};
use structure::ports::{
    HttpRequest, HttpResponse, MemoryKeyValue, Ports, Transport, TransportError,
};
use structure::{Answer, ErrorKind, Outcome, SchemaInput, StructureError, StructureRequest};

use support::{FixedClock, MapConfig};

/// A model server of `kind` whose model reads contracts ([`Reader`]): it answers what it is
/// asked about itself as that kind of server does, and refuses a request over its window in
/// its words. Every model request's body is kept.
struct ContractModel {
    kind: Server,
    /// Each token's probability, in the answers' `logprobs` (none when `None`).
    token_probability: Option<f64>,
    sent: RefCell<Vec<Value>>,
    probes: RefCell<Vec<String>>,
    refused: RefCell<usize>,
}

impl ContractModel {
    fn new(kind: Server) -> Self {
        Self {
            kind,
            token_probability: None,
            sent: RefCell::default(),
            probes: RefCell::default(),
            refused: RefCell::default(),
        }
    }

    fn choices(&self) -> Vec<Value> {
        self.sent
            .borrow()
            .iter()
            .filter(|body| is_choice(body))
            .cloned()
            .collect()
    }
}

impl Transport for ContractModel {
    fn send(&self, request: &HttpRequest) -> Result<HttpResponse, TransportError> {
        let path = request
            .url
            .split_once("127.0.0.1:9")
            .map_or("", |(_, path)| path);
        let recorded = Recorded {
            method: request.method.to_owned(),
            path: path.to_owned(),
            headers: request.headers.clone(),
            body: String::from_utf8_lossy(&request.body).into_owned(),
        };
        let reply = if let Some(reply) = self.kind.answer(request.method, path, &recorded.body) {
            self.probes
                .borrow_mut()
                .push(format!("{} {path}", request.method));
            reply
        } else {
            self.sent.borrow_mut().push(recorded.json());
            match self.kind.refusal(&recorded.json()) {
                Some(refusal) => {
                    *self.refused.borrow_mut() += 1;
                    refusal
                }
                None => {
                    let reply = fixed(&recorded.json())
                        .unwrap_or_else(|| Reader::default().reply(&recorded));
                    match self.token_probability {
                        Some(probability) => reply.with_token_probability(probability),
                        None => reply,
                    }
                }
            }
        };
        Ok(response(reply))
    }
}

/// A model told its answer broke a rule keeps the first two parties of the answer it gave.
fn fixed(body: &Value) -> Option<Reply> {
    let messages = body["messages"].as_array()?;
    let told = messages.last()?["content"]
        .as_str()?
        .contains("did not conform");
    let given: Value = serde_json::from_str(messages.get(2)?["content"].as_str()?).ok()?;
    let mut answer = given["answer"].clone();
    answer["parties"].as_array_mut()?.truncate(2);
    told.then(|| Reply::answer(answer))
}

fn response(reply: Reply) -> HttpResponse {
    HttpResponse {
        status: reply.status,
        headers: reply.headers,
        body: reply.body.into_bytes(),
    }
}

fn config(extra: &[(&str, &str)]) -> MapConfig {
    let mut config = MapConfig::local();
    for (key, value) in extra {
        config.values.insert((*key).to_owned(), (*value).to_owned());
    }
    config
}

fn run(
    text: &str,
    model: &ContractModel,
    config: &MapConfig,
    key_value: &MemoryKeyValue,
) -> Result<Outcome, StructureError> {
    run_against(terms_schema(), text, model, config, key_value)
}

fn run_against(
    schema: Value,
    text: &str,
    model: &dyn Transport,
    config: &MapConfig,
    key_value: &MemoryKeyValue,
) -> Result<Outcome, StructureError> {
    let request = StructureRequest::new(text, SchemaInput::Inline(schema), None).unwrap();
    run_request(&request, model, config, key_value)
}

fn run_request(
    request: &StructureRequest,
    model: &dyn Transport,
    config: &MapConfig,
    key_value: &MemoryKeyValue,
) -> Result<Outcome, StructureError> {
    let clock = FixedClock::default();
    let ports = Ports {
        transport: model,
        config,
        key_value,
        clock: &clock,
    };
    structure::structure(request, &structure::Scope::default(), &ports)
}

/// `model`, but the model requests `twist` answers itself (kept among `model.sent` too), and
/// the calls in flight at once and each model request's timeout noted.
struct Twisted<'a> {
    model: &'a ContractModel,
    twist: &'a dyn Fn(&Value) -> Option<Reply>,
    in_flight: RefCell<Vec<usize>>,
    timeouts: RefCell<Vec<std::time::Duration>>,
}

impl<'a> Twisted<'a> {
    fn new(model: &'a ContractModel, twist: &'a dyn Fn(&Value) -> Option<Reply>) -> Self {
        Self {
            model,
            twist,
            in_flight: RefCell::default(),
            timeouts: RefCell::default(),
        }
    }
}

impl Transport for Twisted<'_> {
    fn send(&self, request: &HttpRequest) -> Result<HttpResponse, TransportError> {
        let body: Value = serde_json::from_slice(&request.body).unwrap_or(Value::Null);
        if body.get("messages").is_some() {
            self.timeouts.borrow_mut().push(request.timeout);
        }
        if let Some(reply) = (self.twist)(&body) {
            self.model.sent.borrow_mut().push(body);
            return Ok(response(reply));
        }
        self.model.send(request)
    }

    fn pump(&self, max_in_flight: usize, work: &mut dyn structure::ports::Pump) {
        self.in_flight.borrow_mut().push(max_in_flight);
        while let structure::ports::Next::Start(id, request) = work.next() {
            let result = self.send(&request);
            work.done(id, result);
        }
    }
}

/// The text of a model request: its first user message.
fn asked_text(body: &Value) -> &str {
    (body["messages"].as_array().into_iter().flatten())
        .find(|message| message["role"] == "user")
        .and_then(|message| message["content"].as_str())
        .unwrap_or("")
}

fn data(outcome: &Outcome) -> &Value {
    match &outcome.answer {
        Answer::Ok(data) => data,
        other => panic!("{other:?}"),
    }
}

/// Every source with a span is the whole text's own slice, in code points and in UTF-16.
fn assert_sources_are_slices(outcome: &Outcome, text: &str) {
    let chars: Vec<char> = text.chars().collect();
    let utf16: Vec<u16> = text.encode_utf16().collect();
    for source in &outcome.sources {
        let Some(span) = &source.span else { continue };
        let slice: String = chars[span.start..span.end].iter().collect();
        assert_eq!(slice, span.text, "{source:?}");
        assert_eq!(
            String::from_utf16(&utf16[span.utf16_start..span.utf16_end]).unwrap(),
            span.text
        );
    }
}

#[test]
fn a_text_the_window_holds_is_one_call() {
    let text = planted_document(1_500, &Terms::default());
    let model = ContractModel::new(Server::default());
    let outcome = run(
        &text,
        &model,
        &config(&[("structure_context_tokens", "8192")]),
        &MemoryKeyValue::default(),
    )
    .unwrap();
    assert_eq!(data(&outcome)["parties"].as_array().unwrap().len(), 3);
    assert_eq!(outcome.usage.llm_calls, 1);
    assert_eq!(outcome.trace.chunks, 0);
}

#[test]
fn a_text_the_estimate_puts_over_the_window_is_one_call_when_the_server_counts_it_in() {
    // Three bytes a token puts this text over a 4,096-token window; the servers count four.
    let text = planted_document(10_000, &Terms::default());
    let window = ("structure_context_tokens", "4096");
    // The kind of server named, or not (a window set is not probed for it): asked each way.
    for (kind, profile, count) in [
        (Server::LlamaCpp { n_ctx: 4096 }, None, "POST /tokenize"),
        (
            Server::LlamaCppPython { n_ctx: 4096 },
            None,
            "POST /extras/tokenize/count",
        ),
        (
            Server::LlamaCppPython { n_ctx: 4096 },
            Some("llamacpp"),
            "POST /extras/tokenize/count",
        ),
        (
            Server::Vllm {
                max_model_len: 4096,
            },
            Some("vllm"),
            "POST /tokenize",
        ),
    ] {
        let model = ContractModel::new(kind);
        let mut settings = vec![window];
        settings.extend(profile.map(|profile| ("structure_provider_profile", profile)));
        let outcome = run(
            &text,
            &model,
            &config(&settings),
            &MemoryKeyValue::default(),
        )
        .unwrap();
        assert_eq!(outcome.trace.chunks, 0, "{kind:?}");
        assert_eq!(outcome.usage.llm_calls, 1, "{kind:?}");
        assert_eq!(data(&outcome)["governing_law"], "Delaware", "{kind:?}");
        assert_eq!(*model.refused.borrow(), 0, "{kind:?}");
        assert!(
            model.probes.borrow().iter().any(|probe| probe == count),
            "{kind:?}"
        );
    }
    // A server that counts nothing keeps the estimate: the text is read in parts.
    let ollama = ContractModel::new(Server::Ollama {
        num_ctx: Some(4096),
    });
    let outcome = run(
        &text,
        &ollama,
        &config(&[window]),
        &MemoryKeyValue::default(),
    )
    .unwrap();
    assert!(outcome.trace.chunks > 1);
    // A text the count would put over the window too is read in parts, no request refused;
    // one too long at even five bytes a token is not counted at all.
    for (chars, counted) in [(15_000, true), (20_000, false)] {
        let longer = planted_document(chars, &Terms::default());
        let model = ContractModel::new(Server::LlamaCpp { n_ctx: 4096 });
        let key_value = MemoryKeyValue::default();
        let outcome = run(&longer, &model, &config(&[window]), &key_value).unwrap();
        assert!(outcome.trace.chunks > 1, "{chars}");
        assert_eq!(*model.refused.borrow(), 0, "{chars}");
        assert_eq!(data(&outcome)["governing_law"], "Delaware", "{chars}");
        let asked = (model.probes.borrow().iter()).any(|probe| probe == "POST /tokenize");
        assert_eq!(asked, counted, "{chars}");
    }
}

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

    // Held to 0.95, the required date is asked for; to 0.85, nothing is dropped.
    let held = config_with(&config, &[("structure_min_confidence", "0.95")]);
    let outcome = run(&text, &model, &held, &MemoryKeyValue::default()).unwrap();
    let Answer::NeedMoreInput(need) = &outcome.answer else {
        panic!("{:?}", outcome.answer);
    };
    assert!(need.contains("/effective_date (0.9)"), "{need}");
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
fn a_refusal_for_length_teaches_the_window_and_the_call_is_read_in_parts() {
    let text = planted_document(30_000, &Terms::default());
    let model = ContractModel::new(Server::OpenAi {
        context_limit: Some(2048),
    });
    let key_value = MemoryKeyValue::default();
    // No window set, the server says none: the default (8,192) is too large for this one.
    let outcome = run(&text, &model, &config(&[]), &key_value).unwrap();
    assert_eq!(data(&outcome)["governing_law"], "Delaware");
    let window = outcome.trace.context_window.as_ref().unwrap();
    assert_eq!((window.tokens, window.from.as_str()), (2048, "learned"));
    assert!(outcome.trace.chunks > 1);
    assert_eq!(*model.refused.borrow(), 1, "the whole text, once");
    // The refused call counts: it was made.
    assert_eq!(outcome.usage.llm_calls as usize, model.sent.borrow().len());
    // The next call is planned with what was learned: no request is refused.
    let again = run(&text, &model, &config(&[]), &key_value).unwrap();
    assert_eq!(data(&again)["governing_law"], "Delaware");
    assert_eq!(*model.refused.borrow(), 1, "no refusal the second time");
    assert_eq!(again.trace.context_window.as_ref().unwrap().from, "learned");
}

#[test]
fn a_request_that_cannot_leave_its_answer_room_is_never_sent() {
    let model = ContractModel::new(Server::default());
    let mut schema = terms_schema();
    schema["description"] = json!("x".repeat(3_000));
    let request = StructureRequest::new("Party: Ada.", SchemaInput::Inline(schema), None).unwrap();
    let config = config(&[
        ("structure_context_tokens", "512"),
        ("structure_delivery", "native"),
    ]);
    let error = run_request(&request, &model, &config, &MemoryKeyValue::default()).unwrap_err();
    assert!(
        matches!(&error.kind, ErrorKind::Configuration { key } if key == "structure_context_tokens"),
        "{error:?}"
    );
    assert!(model.sent.borrow().is_empty(), "nothing was sent");
}

#[test]
fn the_server_says_its_kind_and_window_and_is_asked_once() {
    let text = planted_document(1_000, &Terms::default());
    for (kind, profile, tokens, from) in [
        (Server::LlamaCpp { n_ctx: 4096 }, "llamacpp", 4096, "server"),
        (
            Server::LlamaCppPython { n_ctx: 4096 },
            "llamacpp",
            2048,
            "default",
        ),
        (
            Server::Ollama {
                num_ctx: Some(8192),
            },
            "ollama",
            8192,
            "server",
        ),
        (Server::Ollama { num_ctx: None }, "ollama", 4096, "server"),
        (
            Server::Vllm {
                max_model_len: 16384,
            },
            "vllm",
            16384,
            "server",
        ),
        (Server::default(), "openai-compatible", 8192, "default"),
    ] {
        let model = ContractModel::new(kind);
        let key_value = MemoryKeyValue::default();
        let outcome = run(&text, &model, &config(&[]), &key_value).unwrap();
        assert_eq!(outcome.trace.provider_profile, profile, "{kind:?}");
        let window = outcome.trace.context_window.as_ref().unwrap();
        assert_eq!(
            (window.tokens, window.from.as_str()),
            (tokens, from),
            "{kind:?}"
        );
        assert!(!model.probes.borrow().is_empty());
        // What the server said is kept: the next call asks nothing.
        let asked = model.probes.borrow().len();
        run(&text, &model, &config(&[]), &key_value).unwrap();
        assert_eq!(model.probes.borrow().len(), asked, "{kind:?}");
    }
}

#[test]
fn a_server_is_not_asked_when_the_profile_the_window_or_the_model_is_known() {
    let text = planted_document(1_000, &Terms::default());
    for extra in [
        [("structure_provider_profile", "llamacpp")],
        [("structure_context_tokens", "4096")],
        [("structure_model", "openai/gpt-4.1-mini")],
    ] {
        let model = ContractModel::new(Server::LlamaCpp { n_ctx: 4096 });
        run(&text, &model, &config(&extra), &MemoryKeyValue::default()).unwrap();
        assert!(
            model.probes.borrow().is_empty(),
            "{extra:?}: {:?}",
            model.probes.borrow()
        );
    }
}

#[test]
fn a_per_model_window_applies_to_its_model_only() {
    let text = planted_document(1_000, &Terms::default());
    let model = ContractModel::new(Server::default());
    let windows = r#"{"openai/test-model": 3000, "openai/other": 9000}"#;
    let outcome = run(
        &text,
        &model,
        &config(&[("structure_context_tokens", windows)]),
        &MemoryKeyValue::default(),
    )
    .unwrap();
    let window = outcome.trace.context_window.as_ref().unwrap();
    assert_eq!((window.tokens, window.from.as_str()), (3000, "setting"));
}

#[test]
fn a_text_that_leaves_an_objects_answer_room_is_read_whole_in_one_call() {
    // About 6,000 tokens of an 8,192 window at three bytes a token: a quarter of the window is
    // not left for the answer, a thirty-second is, and one object needs no more.
    let text = planted_document(18_000, &Terms::default());
    let model = ContractModel::new(Server::default());
    let config = config(&[("structure_context_tokens", "8192")]);
    let outcome = run(&text, &model, &config, &MemoryKeyValue::default()).unwrap();
    assert_eq!(data(&outcome)["parties"].as_array().unwrap().len(), 3);
    assert_eq!((outcome.usage.llm_calls, outcome.trace.chunks), (1, 0));
}

#[test]
fn an_answer_the_window_cuts_off_is_read_in_parts_instead() {
    let text = planted_document(18_000, &Terms::default());
    let model = ContractModel::new(Server::default());
    let whole = text.clone();
    let cut = move |body: &Value| {
        (asked_text(body) == whole).then(|| Reply::truncated(r#"{"answer": {"parties": ["Acme"#))
    };
    let twisted = Twisted::new(&model, &cut);
    let config = config(&[("structure_context_tokens", "8192")]);
    let outcome = run_against(
        terms_schema(),
        &text,
        &twisted,
        &config,
        &MemoryKeyValue::default(),
    )
    .unwrap();
    assert_eq!(data(&outcome)["governing_law"], "Delaware");
    assert!(outcome.trace.chunks > 1, "read in parts");
    assert_eq!(
        outcome.usage.llm_calls as usize,
        model.sent.borrow().len(),
        "the cut-off call counts"
    );
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
    let outcome = run_against(
        terms_schema(),
        &text,
        &twisted,
        &config,
        &MemoryKeyValue::default(),
    )
    .unwrap();
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
    let outcome = run_against(
        terms_schema(),
        &text,
        &twisted,
        &config,
        &MemoryKeyValue::default(),
    )
    .unwrap();
    assert!(
        matches!(outcome.answer, Answer::Stale(_)),
        "{:?}",
        outcome.answer
    );
    assert!(outcome.trace.left_out.is_empty());
}

#[test]
fn calls_in_flight_and_request_timeouts_fit_the_servers_kind() {
    let text = planted_document(40_000, &Terms::default());
    let none = |_: &Value| None;
    // llama.cpp (it says so, and its one slot): one request at a time, ten minutes each.
    let model = ContractModel::new(Server::LlamaCpp { n_ctx: 2048 });
    let twisted = Twisted::new(&model, &none);
    let outcome = run_against(
        terms_schema(),
        &text,
        &twisted,
        &config(&[]),
        &MemoryKeyValue::default(),
    )
    .unwrap();
    assert!(outcome.trace.chunks > 1);
    assert_eq!(*twisted.in_flight.borrow(), [1]);
    assert!(twisted.timeouts.borrow().iter().all(|t| t.as_secs() == 600));
    // vLLM serves many at once; a setting says what it says.
    for (server, set, calls) in [
        (
            Server::Vllm {
                max_model_len: 2048,
            },
            None,
            4,
        ),
        (Server::LlamaCpp { n_ctx: 2048 }, Some("3"), 3),
    ] {
        let model = ContractModel::new(server);
        let twisted = Twisted::new(&model, &none);
        let config = match set {
            Some(calls) => config(&[("structure_max_concurrent_calls", calls)]),
            None => config(&[]),
        };
        run_against(
            terms_schema(),
            &text,
            &twisted,
            &config,
            &MemoryKeyValue::default(),
        )
        .unwrap();
        assert_eq!(*twisted.in_flight.borrow(), [calls]);
    }
    // A hosted provider's requests keep two minutes.
    let model = ContractModel::new(Server::default());
    let twisted = Twisted::new(&model, &none);
    let config = config(&[
        ("structure_context_tokens", "2048"),
        ("structure_provider_profile", "openai-compatible"),
    ]);
    run_against(
        terms_schema(),
        &text,
        &twisted,
        &config,
        &MemoryKeyValue::default(),
    )
    .unwrap();
    assert!(twisted.timeouts.borrow().iter().all(|t| t.as_secs() == 120));
}

#[test]
fn a_guessed_window_never_refuses_a_request_before_it_is_sent() {
    // A schema of about 12,000 tokens against a server that states no window (8,192 guessed).
    let mut schema = terms_schema();
    schema["description"] = json!("A contract's terms. ".repeat(1_800));
    let model = ContractModel::new(Server::default());
    let outcome = run_against(
        schema.clone(),
        "Party: Ada Lovelace. This Agreement is effective as of 2021-03-04.",
        &model,
        &config(&[]),
        &MemoryKeyValue::default(),
    )
    .unwrap();
    assert_eq!(data(&outcome)["parties"], json!(["Ada Lovelace"]));
    assert_eq!(outcome.usage.llm_calls, 1);
    assert_eq!(
        outcome.trace.context_window.as_ref().unwrap().from,
        "default"
    );
    // A window that was set is known: the same request is refused before it is sent.
    let model = ContractModel::new(Server::default());
    let error = run_against(
        schema,
        "Party: Ada Lovelace.",
        &model,
        &config(&[("structure_context_tokens", "8192")]),
        &MemoryKeyValue::default(),
    )
    .unwrap_err();
    assert!(
        matches!(&error.kind, ErrorKind::Configuration { key } if key == "structure_context_tokens"),
        "{error:?}"
    );
    assert!(model.sent.borrow().is_empty());
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
    let outcome = run_against(
        terms_schema(),
        &text,
        &twisted,
        &config,
        &MemoryKeyValue::default(),
    )
    .unwrap();
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
