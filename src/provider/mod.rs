//! LLM providers: each turns a conversation into an HTTP request in its own wire format and an
//! HTTP response into a completion or a typed error. The content stage sees only [`Provider`].
//!
//! - [`openai_chat`]: OpenAI Chat Completions and the servers that speak it, shaped per
//!   [`profile`] (OpenAI itself, Ollama, llama.cpp, vLLM, any other compatible server);
//! - [`openai_responses`]: OpenAI's Responses API;
//! - [`anthropic`]: the Anthropic Messages API;
//! - [`gemini`]: Gemini `generateContent`;
//! - the JSON Schema subset each provider accepts is [`crate::schema::subset`];
//! - [`delivery`]: native, tool and prompt modes; [`retry`]: waiting out rate limits;
//! - what they share: [`contract`] (the trait), [`conversation`] (what is sent and comes back),
//!   [`model`] (`provider/model`), [`endpoint`] (the server), [`vision`] (which models read
//!   images and PDFs), [`server`] (what kind of server it is, its window) and [`tokenizer`]
//!   (its count of a text's tokens).

pub mod anthropic;
pub mod contract;
pub mod conversation;
pub mod delivery;
pub mod endpoint;
pub mod gemini;
pub mod model;
pub mod openai_chat;
pub mod openai_responses;
pub mod profile;
pub mod retry;
pub mod server;
pub mod tokenizer;
pub mod vision;
pub mod window;
pub mod wire;

use crate::error::StructureError;
use crate::ports::Ports;
use crate::settings::Settings;
pub use contract::Provider;
pub use conversation::{Completion, Conversation, Delivered, SystemPrompt, Token, Turn};
pub use delivery::{ANSWER_TOOL, Delivery};
pub use model::ModelRef;
use server::Server;

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
