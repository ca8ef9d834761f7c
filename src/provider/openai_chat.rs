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
use crate::outcome::Usage;
use crate::ports::{HttpRequest, HttpResponse};
use crate::provider::delivery::{self, ANSWER_TOOL, ANSWER_TOOL_DESCRIPTION, Delivery};
use crate::provider::endpoint::{self, Endpoint};
use crate::provider::profile::Profile;
use crate::provider::{Completion, Conversation, Delivered, ModelRef, Provider, Turn, retry, wire};
use crate::schema::subset::Subset;
use crate::settings::Settings;

pub struct OpenAiChat {
    endpoint: Endpoint,
    profile: Profile,
    delivery: Delivery,
}

impl OpenAiChat {
    pub fn new(settings: &Settings, model: ModelRef) -> Result<Self, StructureError> {
        let profile = Profile::select(
            &model,
            settings.openai_base_url.as_deref(),
            settings.provider_profile.as_deref(),
        )?;
        let base_url = endpoint::base_url(
            settings.openai_base_url.as_deref(),
            profile.default_base_url(),
            keys::OPENAI_BASE_URL,
        )?;
        if profile.requires_api_key() && settings.openai_api_key.is_none() {
            return Err(StructureError::configuration(
                keys::OPENAI_API_KEY,
                "no OpenAI API key: set OPENAI_API_KEY (openai_api_key), or point OPENAI_BASE_URL \
                 (openai_base_url) at an OpenAI-compatible server",
            ));
        }
        let server = match profile {
            Profile::OpenAi => "OpenAI".to_owned(),
            other => format!("the {} server at {base_url}", other.name()),
        };
        let mut endpoint = Endpoint::new(
            &model,
            server,
            base_url,
            keys::OPENAI_API_KEY,
            keys::OPENAI_BASE_URL,
            settings,
        );
        if let Some(key) = &settings.openai_api_key {
            endpoint = endpoint.with_header("authorization", format!("Bearer {}", key.expose()));
        }
        let delivery = delivery::select_for(settings, profile.capabilities(), &endpoint.model)?;
        Ok(Self {
            endpoint,
            profile,
            delivery,
        })
    }

    fn messages(&self, conversation: &Conversation) -> Vec<Value> {
        let mut messages = vec![json!({ "role": "system", "content": conversation.system.text() })];
        for (index, turn) in conversation.turns.iter().enumerate() {
            messages.push(match turn {
                Turn::User(text) => json!({ "role": "user", "content": text }),
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

    /// What the first choice of a 2xx `body` delivers: the answer tool's call or the text.
    fn read(&self, body: &Value, response: &HttpResponse) -> Result<Delivered, StructureError> {
        let Some(choice) = body.get("choices").and_then(|choices| choices.get(0)) else {
            let (message, _) = wire::error_message(&response.body);
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
                    ErrorKind::Refusal,
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
            return match call.pointer("/function/arguments").and_then(Value::as_str) {
                Some(arguments) if name == ANSWER_TOOL => Ok(Delivered::ToolCall {
                    id: call
                        .get("id")
                        .and_then(Value::as_str)
                        .unwrap_or("call_0")
                        .to_owned(),
                    arguments: arguments.to_owned(),
                }),
                _ => Err(wire::other_tool(name)),
            };
        }
        match message.get("content").and_then(Value::as_str) {
            Some(text) => Ok(Delivered::Text(text.to_owned())),
            None => Err(StructureError::invalid_response(format!(
                "{} answered without message content",
                self.endpoint.server
            ))),
        }
    }
}

impl Provider for OpenAiChat {
    fn model(&self) -> &str {
        &self.endpoint.model
    }

    fn profile_name(&self) -> &'static str {
        self.profile.name()
    }

    fn delivery(&self) -> Delivery {
        self.delivery
    }

    fn subset(&self) -> &'static Subset {
        self.profile.subset(self.delivery)
    }

    fn schema_in_prompt(&self) -> bool {
        self.delivery == Delivery::Prompt || self.profile.schema_in_prompt()
    }

    fn request(&self, conversation: &Conversation, format: &AnswerFormat) -> HttpRequest {
        let mut body = Map::new();
        body.insert("model".into(), json!(self.endpoint.model_name));
        body.insert("messages".into(), Value::Array(self.messages(conversation)));
        match self.delivery {
            Delivery::Native => {
                body.insert(
                    "response_format".into(),
                    self.profile.response_format(format),
                );
            }
            Delivery::Tool => {
                body.insert(
                    "tools".into(),
                    json!([{
                        "type": "function",
                        "function": {
                            "name": ANSWER_TOOL,
                            "description": ANSWER_TOOL_DESCRIPTION,
                            "parameters": format.schema,
                            "strict": true,
                        },
                    }]),
                );
                body.insert(
                    "tool_choice".into(),
                    json!({ "type": "function", "function": { "name": ANSWER_TOOL } }),
                );
                body.insert("parallel_tool_calls".into(), json!(false));
            }
            Delivery::Prompt => {}
        }
        body.insert(
            self.profile.token_limit_field().into(),
            json!(self.endpoint.max_output_tokens),
        );
        if let Some(temperature) = self.profile.temperature() {
            body.insert("temperature".into(), json!(temperature));
        }
        self.endpoint.post_json("/chat/completions", body)
    }

    fn completion(&self, response: &HttpResponse) -> Result<Completion, StructureError> {
        let body = self.endpoint.json_response(response)?;
        let usage = usage(&body);
        self.read(&body, response)
            .map(|delivered| Completion { delivered, usage })
            .map_err(|error| error.with_usage(usage))
    }

    fn retry_hint(&self, response: &HttpResponse) -> Option<Duration> {
        openai_retry_hint(response)
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

fn usage(body: &Value) -> Usage {
    let count = |pointer: &str| body.pointer(pointer).and_then(Value::as_u64).unwrap_or(0);
    Usage {
        llm_calls: 0,
        prompt_tokens: count("/usage/prompt_tokens"),
        completion_tokens: count("/usage/completion_tokens"),
        cached_prompt_tokens: count("/usage/prompt_tokens_details/cached_tokens"),
    }
}
