//! OpenAI Chat Completions (`POST {base}/chat/completions`), the wire format of OpenAI and of
//! most local and hosted OpenAI-compatible servers.
//!
//! Native mode sends `response_format` (`json_schema` with `strict: true`, or llama.cpp's
//! `json_object` with a `schema`); tool mode sends the answer tool as a strict function and
//! forces it with `tool_choice`; prompt mode sends neither.

use std::time::Duration;

use serde_json::{Map, Value, json};

use crate::answer::format::AnswerFormat;
use crate::error::{ErrorKind, StructureError};
use crate::keys;
use crate::media_type::{Attachment, MediaType};
use crate::outcome::Usage;
use crate::ports::{HttpRequest, HttpResponse};
use crate::provider::contract::Provider;
use crate::provider::conversation::{Conversation, Delivered, Token, Turn};
use crate::provider::delivery::{self, ANSWER_TOOL, Delivery};
use crate::provider::endpoint::{self, Endpoint, LlmBody};
use crate::provider::model::ModelRef;
use crate::provider::profile::Profile;
use crate::provider::server::Server;
use crate::provider::window::Window;
use crate::provider::{retry, wire};
use crate::schema::walk;
use crate::settings::Settings;

pub struct OpenAiChat {
    endpoint: Endpoint,
    profile: Profile,
}

impl OpenAiChat {
    pub fn new(
        settings: &Settings,
        model: ModelRef,
        server: Server,
    ) -> Result<Self, StructureError> {
        let profile = Profile::select(
            &model,
            settings.openai_base_url.as_deref(),
            settings.provider_profile.as_deref(),
            server.kind,
        )?;
        let base_url =
            endpoint::base_url(settings, keys::OPENAI_BASE_URL, profile.default_base_url())?;
        if profile.requires_api_key() && settings.openai_api_key.is_none() {
            return Err(StructureError::configuration(
                keys::OPENAI_API_KEY,
                "no OpenAI API key: set OPENAI_API_KEY (openai_api_key), or point OPENAI_BASE_URL \
                 (openai_base_url) at an OpenAI-compatible server",
            ));
        }
        let name = match profile {
            Profile::OpenAi => "OpenAI".to_owned(),
            other => format!("the {} server at {base_url}", other.name()),
        };
        let window =
            (server.window).unwrap_or_else(|| Window::default_for(&model.provider, Some(profile)));
        let endpoint = openai_endpoint(&model, name, base_url, settings, window);
        let logprobs = (settings.logprobs).ask(profile.gives_logprobs(&endpoint.model_name));
        let enforced = (profile.name(), |delivery| profile.subset(delivery));
        Ok(Self {
            endpoint: endpoint
                .delivering_chosen(settings, profile.capabilities(), enforced)?
                .serving(settings.request_timeout(profile.name()), server.slots)
                .asking_logprobs(logprobs),
            profile,
        })
    }

    fn messages(&self, conversation: &Conversation) -> Vec<Value> {
        let mut messages = vec![json!({ "role": "system", "content": conversation.system.text() })];
        for (index, turn) in conversation.turns.iter().enumerate() {
            messages.push(match turn {
                Turn::User(text) => match conversation.attached_to(index) {
                    Some(attachment) => json!({
                        "role": "user",
                        "content": [{ "type": "text", "text": text }, part(attachment)],
                    }),
                    None => json!({ "role": "user", "content": text }),
                },
                Turn::Model(Delivered::Text(text)) => {
                    json!({ "role": "assistant", "content": text })
                }
                Turn::Model(Delivered::ToolCall { id, arguments }) => json!({
                    "role": "assistant",
                    "content": null,
                    "tool_calls": [{
                        "id": id,
                        "type": "function",
                        "function": { "name": ANSWER_TOOL, "arguments": arguments },
                    }],
                }),
                Turn::Feedback(text) => match conversation.answered_call(index) {
                    Some(id) => json!({ "role": "tool", "tool_call_id": id, "content": text }),
                    None => json!({ "role": "user", "content": text }),
                },
            });
        }
        messages
    }
}

/// A document given as it is, as a Chat Completions content part: an image by its data URL, a
/// PDF as a file.
fn part(attachment: &Attachment) -> Value {
    match attachment.media_type {
        MediaType::Pdf => json!({
            "type": "file",
            "file": { "filename": attachment.file_name(), "file_data": attachment.data_url() },
        }),
        _ => json!({ "type": "image_url", "image_url": { "url": attachment.data_url() } }),
    }
}

impl Provider for OpenAiChat {
    fn endpoint(&self) -> &Endpoint {
        &self.endpoint
    }

    fn schema_in_prompt(&self) -> bool {
        self.endpoint.delivery == Delivery::Prompt || self.profile.schema_in_prompt()
    }

    fn request(&self, conversation: &Conversation, format: &AnswerFormat) -> HttpRequest {
        let mut body = Map::new();
        body.insert("model".into(), json!(self.endpoint.model_name));
        body.insert("messages".into(), Value::Array(self.messages(conversation)));
        let schema_at: Option<&'static [&'static str]> = match self.endpoint.delivery {
            Delivery::Native => {
                let (response_format, at) = self.profile.response_format(format);
                body.insert("response_format".into(), response_format);
                Some(at)
            }
            Delivery::Tool => {
                let mut tool = json!({ "type": "function" });
                tool["function"] = Value::Object(delivery::strict_function());
                body.insert("tools".into(), Value::Array(vec![tool]));
                body.insert(
                    "tool_choice".into(),
                    json!({ "type": "function", "function": { "name": ANSWER_TOOL } }),
                );
                body.insert("parallel_tool_calls".into(), json!(false));
                Some(&["tools", "0", "function", "parameters"])
            }
            Delivery::Prompt => None,
        };
        if self.endpoint.asks_logprobs() {
            // One alternative a token: llama-cpp-python gives none without `top_logprobs`, and
            // llama.cpp's server none when it is 0.
            body.insert("logprobs".into(), json!(true));
            body.insert("top_logprobs".into(), json!(1));
        }
        if let Some(temperature) = self.profile.temperature() {
            body.insert("temperature".into(), json!(temperature));
        }
        let body = LlmBody::new(body, schema_at, &format.schema);
        // A server that turns the schema into a grammar does not show it to the model.
        let unread = match (self.endpoint.delivery, self.profile.schema_is_grammar()) {
            (Delivery::Native, true) => body.schema_bytes(),
            _ => 0,
        };
        self.endpoint.post_llm(
            "/chat/completions",
            body,
            &[self.profile.token_limit_field()],
            unread,
        )
    }

    fn retry_hint(&self, response: &HttpResponse) -> Option<Duration> {
        openai_retry_hint(response)
    }

    /// What the first choice of a 2xx `body` delivers: the answer tool's call or the text.
    fn read(&self, body: &Value) -> Result<Delivered, StructureError> {
        let Some(choice) = body.get("choices").and_then(|choices| choices.get(0)) else {
            let (message, _) = wire::error_message(body.to_string().as_bytes());
            return Err(StructureError::invalid_response(format!(
                "{} answered without a choice: {message}",
                self.endpoint.server
            )));
        };
        let message = choice.get("message").unwrap_or(&Value::Null);
        if let Some(refusal) = message
            .get("refusal")
            .and_then(Value::as_str)
            .filter(|text| !text.is_empty())
        {
            return Err(wire::refusal(refusal));
        }
        match choice.get("finish_reason").and_then(Value::as_str) {
            Some("length") => return Err(wire::truncated(self.endpoint.max_output_tokens)),
            Some("content_filter") => {
                return Err(StructureError::new(
                    ErrorKind::Blocked {
                        reason: "content_filter".to_owned(),
                    },
                    "the provider's content filter blocked the answer",
                ));
            }
            _ => {}
        }
        if let Some(call) = message.get("tool_calls").and_then(|calls| calls.get(0)) {
            let name = call
                .pointer("/function/name")
                .and_then(Value::as_str)
                .unwrap_or_default();
            let arguments = call.pointer("/function/arguments").and_then(Value::as_str);
            let id = call.get("id").and_then(Value::as_str);
            return wire::tool_call(name, id, "call_0", arguments.map(str::to_owned));
        }
        match message.get("content").and_then(Value::as_str) {
            Some(text) => Ok(Delivered::Text(text.to_owned())),
            None => Err(StructureError::invalid_response(format!(
                "{} answered without message content",
                self.endpoint.server
            ))),
        }
    }

    fn tokens(&self, body: &Value) -> Vec<Token> {
        let content = walk::pointer(body, "/choices/0/logprobs/content");
        wire::tokens(content, "token", "logprob")
    }

    fn usage(&self, body: &Value) -> Usage {
        wire::usage(
            body,
            &["/usage/prompt_tokens"],
            &["/usage/completion_tokens"],
            "/usage/prompt_tokens_details/cached_tokens",
        )
    }
}

/// An endpoint that takes OpenAI's key as a bearer token, when one is configured.
pub(crate) fn openai_endpoint(
    model: &ModelRef,
    server: String,
    base_url: String,
    settings: &Settings,
    window: Window,
) -> Endpoint {
    let endpoint = Endpoint::new(
        model,
        server,
        base_url,
        keys::OPENAI_API_KEY,
        keys::OPENAI_BASE_URL,
        settings,
        window,
    );
    match &settings.openai_api_key {
        Some(key) => endpoint.with_header("authorization", format!("Bearer {}", key.expose())),
        None => endpoint,
    }
}

/// OpenAI writes how long to wait into rate-limit messages ("Please try again in 1.92s") and
/// into `x-ratelimit-reset-requests` / `-tokens` headers ("6m0s", "20ms").
pub fn openai_retry_hint(response: &HttpResponse) -> Option<Duration> {
    let (message, _) = wire::error_message(&response.body);
    if let Some(rest) = message.split("try again in ").nth(1) {
        let token = rest
            .split_whitespace()
            .next()
            .unwrap_or_default()
            .trim_end_matches(['.', ',']);
        if let Some(wait) = retry::parse_duration_text(token) {
            return Some(wait);
        }
    }
    ["x-ratelimit-reset-requests", "x-ratelimit-reset-tokens"]
        .iter()
        .filter_map(|name| response.header(name).and_then(retry::parse_duration_text))
        .max()
}
