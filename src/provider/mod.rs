//! LLM providers: each turns a conversation into an HTTP request in its own wire format and an
//! HTTP response into a completion or a typed error. The content stage sees only [`Provider`].
//!
//! - [`openai_chat`]: OpenAI Chat Completions and the servers that speak it, shaped per
//!   [`profile`] (OpenAI itself, Ollama, llama.cpp, vLLM, any other compatible server);
//! - [`openai_responses`]: OpenAI's Responses API;
//! - [`anthropic`]: the Anthropic Messages API;
//! - [`gemini`]: Gemini `generateContent`;
//! - the JSON Schema subset each provider accepts is [`crate::schema::subset`];
//! - [`delivery`]: native, tool and prompt modes; [`retry`]: waiting out rate limits.

pub mod anthropic;
pub mod delivery;
pub mod endpoint;
pub mod gemini;
pub mod openai_chat;
pub mod openai_responses;
pub mod profile;
pub mod retry;
pub mod server;
pub mod window;
pub mod wire;

use std::time::Duration;

use serde_json::Value;

use crate::answer::format::{AnswerFormat, Shape};
use crate::error::StructureError;
use crate::keys;
use crate::outcome::Usage;
use crate::ports::{HttpRequest, HttpResponse, Ports};
use crate::schema::subset::Subset;
use crate::settings::Settings;
pub use delivery::{ANSWER_TOOL, Delivery};
use endpoint::Endpoint;
use server::Server;

/// What the model answered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Delivered {
    /// Plain text (native and prompt modes, or a model ignoring the tool).
    Text(String),
    /// A call of the answer tool: the provider's call id and the arguments as JSON text.
    ToolCall { id: String, arguments: String },
}

impl Delivered {
    /// The JSON text the answer is read from.
    pub fn text(&self) -> &str {
        match self {
            Delivered::Text(text) => text,
            Delivered::ToolCall { arguments, .. } => arguments,
        }
    }
}

/// One turn of the short-lived conversation of a `structure` call (spec §4.1).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Turn {
    /// The input text.
    User(String),
    /// A previous answer, kept so the model sees what it wrote.
    Model(Delivered),
    /// Why the previous answer was rejected (or a reminder to call the tool). After a tool
    /// call it is sent as that call's result, otherwise as a user message.
    Feedback(String),
}

/// The system prompt in two parts: what stays the same across calls with the same schema (the
/// rules, the schema, the manual: worth a provider's prompt cache), and what changes (the time).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SystemPrompt {
    pub stable: String,
    pub volatile: String,
    /// Whether the stable part is worth caching (it holds a manual).
    pub cacheable: bool,
}

impl SystemPrompt {
    /// Both parts as one text.
    pub fn text(&self) -> String {
        format!("{}\n{}", self.stable, self.volatile)
    }
}

/// The system prompt and the turns so far.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Conversation {
    pub system: SystemPrompt,
    pub turns: Vec<Turn>,
}

impl Conversation {
    /// The tool call a feedback turn at `index` answers, if the turn before it was one.
    pub fn answered_call(&self, index: usize) -> Option<&str> {
        match index
            .checked_sub(1)
            .and_then(|previous| self.turns.get(previous))
        {
            Some(Turn::Model(Delivered::ToolCall { id, .. })) => Some(id),
            _ => None,
        }
    }
}

/// A model's answer and what it cost.
#[derive(Debug, Clone, PartialEq)]
pub struct Completion {
    pub delivered: Delivered,
    pub usage: Usage,
    /// The tokens the answer's text was written with and their log-probabilities, where the
    /// provider gave them (empty otherwise).
    pub tokens: Vec<Token>,
}

/// One token of an answer and the natural log of the probability the model gave it.
#[derive(Debug, Clone, PartialEq)]
pub struct Token {
    pub text: String,
    /// The token's bytes, where the provider gives them: a token that ends inside a
    /// character has no text of its own.
    pub bytes: Option<Vec<u8>>,
    pub logprob: f64,
}

/// One provider (or provider profile), ready to be called.
pub trait Provider {
    /// The server the requests go to, and how this call uses it.
    fn endpoint(&self) -> &Endpoint;
    /// `provider/model`, as the trace shows it.
    fn model(&self) -> &str {
        &self.endpoint().model
    }
    /// The profile the requests are shaped for.
    fn profile_name(&self) -> &'static str {
        self.endpoint().profile
    }
    /// The delivery mode chosen for this call.
    fn delivery(&self) -> Delivery {
        self.endpoint().delivery
    }
    /// The schema subset this provider accepts in its delivery mode.
    fn subset(&self) -> &'static Subset {
        self.endpoint().subset
    }
    /// The answer format for `target` (the envelope with the need path), in this provider's subset.
    fn answer_format(&self, target: &Value, shape: Shape) -> AnswerFormat {
        AnswerFormat::build(target, self.subset(), shape)
    }
    /// Whether the system prompt must carry the schema (the provider may not show it to the
    /// model or enforce it): in prompt mode.
    fn schema_in_prompt(&self) -> bool {
        self.delivery() == Delivery::Prompt
    }
    /// The HTTP request asking for the next answer.
    fn request(&self, conversation: &Conversation, format: &AnswerFormat) -> HttpRequest;
    /// What a 2xx response's JSON `body` delivers, or the typed error it stands for.
    fn read(&self, body: &Value) -> Result<Delivered, StructureError>;
    /// What a 2xx response's JSON `body` says the call cost.
    fn usage(&self, body: &Value) -> Usage;
    /// The tokens of the answer's text in a 2xx response's JSON `body`, with their
    /// log-probabilities, when it holds them.
    fn tokens(&self, _body: &Value) -> Vec<Token> {
        Vec::new()
    }
    /// The completion in `response`, or the typed error it stands for (with the tokens it cost).
    fn completion(&self, response: &HttpResponse) -> Result<Completion, StructureError> {
        let body = self.endpoint().json_response(response)?;
        let usage = self.usage(&body);
        self.read(&body)
            .map(|delivered| Completion {
                delivered,
                usage,
                tokens: self.tokens(&body),
            })
            .map_err(|error| error.with_usage(usage))
    }
    /// How long the provider asks to wait before trying `response`'s request again, when its
    /// body says so (headers are read by [`retry`] for every provider).
    fn retry_hint(&self, _response: &HttpResponse) -> Option<Duration> {
        None
    }
}

/// A model written as `provider/model`: `openai/gpt-4.1-mini`, `vllm/meta-llama/Llama-3.1-8B`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModelRef {
    pub provider: String,
    pub name: String,
}

impl ModelRef {
    pub fn parse(text: &str) -> Result<Self, StructureError> {
        match text.split_once('/') {
            Some((provider, name)) if !provider.is_empty() && !name.is_empty() => Ok(Self {
                provider: provider.to_ascii_lowercase(),
                name: name.to_owned(),
            }),
            _ => Err(StructureError::configuration(
                keys::MODEL,
                format!(
                    "model {text:?} must be written provider/model, e.g. openai/gpt-4.1-mini, \
                     anthropic/claude-sonnet-4-5, google/gemini-2.5-flash or ollama/llama3.2 \
                     (set STRUCTURE_MODEL / structure_model)"
                ),
            )),
        }
    }
}

/// The provider for `model` (`provider/model`), configured by `settings`, its server taken for
/// what the settings and the table of hosted models say (no server is asked).
pub fn connect(settings: &Settings, model: &str) -> Result<Box<dyn Provider>, StructureError> {
    let model = ModelRef::parse(model)?;
    let server = Server::known(settings, &model);
    connect_to(settings, model, server)
}

/// The provider for `model`, its server asked first what it is and how much it reads at once
/// when nothing else says ([`server`]).
pub fn open(
    settings: &Settings,
    model: &str,
    ports: &Ports<'_>,
) -> Result<Box<dyn Provider>, StructureError> {
    let model = ModelRef::parse(model)?;
    let server = Server::discover(settings, &model, ports);
    connect_to(settings, model, server)
}

fn connect_to(
    settings: &Settings,
    model: ModelRef,
    server: Server,
) -> Result<Box<dyn Provider>, StructureError> {
    match model.provider.as_str() {
        "anthropic" => Ok(Box::new(anthropic::Anthropic::new(
            settings, model, server,
        )?)),
        "google" | "gemini" => Ok(Box::new(gemini::Gemini::new(settings, model, server)?)),
        "openai" if settings.openai_api == "responses" => Ok(Box::new(
            openai_responses::OpenAiResponses::new(settings, model, server)?,
        )),
        _ => Ok(Box::new(openai_chat::OpenAiChat::new(
            settings, model, server,
        )?)),
    }
}
