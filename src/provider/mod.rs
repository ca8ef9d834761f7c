//! LLM providers: each turns a conversation into an HTTP request in its own wire format and its
//! HTTP response into a completion or a typed error. The content stage sees only [`Provider`].
//!
//! - [`openai_chat`]: OpenAI Chat Completions and the servers that speak it, shaped per
//!   [`profile`] (OpenAI itself, Ollama, llama.cpp, vLLM, any other compatible server);
//! - [`strict_schema`]: OpenAI's strict structured-output subset and the way back.

pub mod openai_chat;
pub mod profile;
pub mod strict_schema;

use crate::answer::format::AnswerFormat;
use crate::error::StructureError;
use crate::outcome::Usage;
use crate::ports::{HttpRequest, HttpResponse};
use crate::settings::Settings;
use serde_json::Value;

/// Who speaks a turn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    User,
    Assistant,
}

/// The short-lived conversation of one `structure` call (spec §4.1): the system prompt, the
/// input, and for each failed iteration the model's answer and the reason it was rejected.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Conversation {
    pub system: String,
    pub turns: Vec<(Role, String)>,
}

/// A model's answer text and what it cost.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Completion {
    pub text: String,
    pub usage: Usage,
}

/// One provider (or provider profile), ready to be called.
pub trait Provider {
    /// `provider/model`, as the trace shows it.
    fn model(&self) -> &str;
    /// The profile the requests are shaped for.
    fn profile_name(&self) -> &'static str;
    /// The answer format for `target`, in the form this provider accepts.
    fn answer_format(&self, target: &Value) -> AnswerFormat;
    /// Whether the system prompt must carry the schema (the provider may not show or enforce it).
    fn schema_in_prompt(&self) -> bool;
    /// The HTTP request asking for the next answer.
    fn request(&self, conversation: &Conversation, format: &AnswerFormat) -> HttpRequest;
    /// The completion in `response`, or the typed error it stands for (with the tokens it cost).
    fn completion(&self, response: &HttpResponse) -> Result<Completion, StructureError>;
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
                crate::settings::keys::MODEL,
                format!(
                    "model {text:?} must be written provider/model, e.g. openai/gpt-4.1-mini or \
                     ollama/llama3.2 (set STRUCTURE_MODEL / structure_model)"
                ),
            )),
        }
    }
}

/// The provider the settings select.
pub fn connect(settings: &Settings) -> Result<Box<dyn Provider>, StructureError> {
    let model = ModelRef::parse(&settings.model)?;
    Ok(Box::new(openai_chat::OpenAiChat::new(settings, model)?))
}
