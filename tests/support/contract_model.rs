//! A model server of any kind whose model reads contracts, and the helpers the tests of long
//! texts and of context windows share (`core_long_text.rs`, `core_window.rs`).

use std::cell::RefCell;

use mock_llm::document::{Reader, is_choice, terms_schema};
use mock_llm::servers::Server;
use mock_llm::{Recorded, Reply};
use serde_json::Value;
use structure::ports::{
    HttpRequest, HttpResponse, MemoryKeyValue, Ports, Transport, TransportError,
};
use structure::{Answer, Outcome, SchemaInput, StructureError, StructureRequest};

use super::{FixedClock, MapConfig};

/// A model server of `kind` whose model reads contracts ([`Reader`]): it answers what it is
/// asked about itself as that kind of server does, and refuses a request over its window in
/// its words. Every model request's body is kept.
pub struct ContractModel {
    pub kind: Server,
    /// Each token's probability, in the answers' `logprobs` (none when `None`).
    pub token_probability: Option<f64>,
    pub sent: RefCell<Vec<Value>>,
    pub probes: RefCell<Vec<String>>,
    pub refused: RefCell<usize>,
}

impl ContractModel {
    pub fn new(kind: Server) -> Self {
        Self {
            kind,
            token_probability: None,
            sent: RefCell::default(),
            probes: RefCell::default(),
            refused: RefCell::default(),
        }
    }

    pub fn choices(&self) -> Vec<Value> {
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
pub fn fixed(body: &Value) -> Option<Reply> {
    let messages = body["messages"].as_array()?;
    let told = messages.last()?["content"]
        .as_str()?
        .contains("did not conform");
    let given: Value = serde_json::from_str(messages.get(2)?["content"].as_str()?).ok()?;
    let mut answer = given["answer"].clone();
    answer["parties"].as_array_mut()?.truncate(2);
    told.then(|| Reply::answer(answer))
}

pub fn response(reply: Reply) -> HttpResponse {
    HttpResponse {
        status: reply.status,
        headers: reply.headers,
        body: reply.body.into_bytes(),
    }
}

pub fn config(extra: &[(&str, &str)]) -> MapConfig {
    let mut config = MapConfig::local();
    for (key, value) in extra {
        config.values.insert((*key).to_owned(), (*value).to_owned());
    }
    config
}

pub fn run(
    text: &str,
    model: &ContractModel,
    config: &MapConfig,
    key_value: &MemoryKeyValue,
) -> Result<Outcome, StructureError> {
    run_against(terms_schema(), text, model, config, key_value)
}

pub fn run_against(
    schema: Value,
    text: &str,
    model: &dyn Transport,
    config: &MapConfig,
    key_value: &MemoryKeyValue,
) -> Result<Outcome, StructureError> {
    let request = StructureRequest::new(text, SchemaInput::Inline(schema), None).unwrap();
    run_request(&request, model, config, key_value)
}

/// [`run_against`] the contract schema through `transport`, with an empty store: its outcome.
pub fn run_terms(text: &str, transport: &dyn Transport, config: &MapConfig) -> Outcome {
    run_against(
        terms_schema(),
        text,
        transport,
        config,
        &MemoryKeyValue::default(),
    )
    .unwrap()
}

pub fn run_request(
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
    let result = structure::structure(request, &structure::Scope::default(), &ports);
    super::assert_published(
        &result
            .as_ref()
            .map_or_else(StructureError::to_json, Outcome::to_json),
    );
    result
}

/// `model`, but the model requests `twist` answers itself (kept among `model.sent` too), and
/// the calls in flight at once and each model request's timeout noted.
pub struct Twisted<'a> {
    pub model: &'a ContractModel,
    pub twist: &'a dyn Fn(&Value) -> Option<Reply>,
    pub in_flight: RefCell<Vec<usize>>,
    pub timeouts: RefCell<Vec<std::time::Duration>>,
}

impl<'a> Twisted<'a> {
    pub fn new(model: &'a ContractModel, twist: &'a dyn Fn(&Value) -> Option<Reply>) -> Self {
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
pub fn asked_text(body: &Value) -> &str {
    (body["messages"].as_array().into_iter().flatten())
        .find(|message| message["role"] == "user")
        .and_then(|message| message["content"].as_str())
        .unwrap_or("")
}

pub fn data(outcome: &Outcome) -> &Value {
    match &outcome.answer {
        Answer::Ok(data) => data,
        other => panic!("{other:?}"),
    }
}

/// Every source with a span is the whole text's own slice, in code points and in UTF-16.
pub fn assert_sources_are_slices(outcome: &Outcome, text: &str) {
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
