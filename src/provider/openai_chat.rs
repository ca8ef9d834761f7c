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
use crate::provider::delivery::{self, ANSWER_TOOL, Delivery};
use crate::provider::profile::Profile;
use crate::provider::{Completion, Conversation, Delivered, ModelRef, Provider, Turn, retry, wire};
use crate::schema::subset::Subset;
use crate::secret::Secret;
use crate::settings::Settings;

const KEY_SETTING: &str = "OPENAI_API_KEY / openai_api_key";
const BASE_URL_SETTING: &str = "OPENAI_BASE_URL";

pub struct OpenAiChat {
    /// `provider/model` as configured.
    model: String,
    /// The model name the server knows.
    model_name: String,
    profile: Profile,
    delivery: Delivery,
    base_url: String,
    api_key: Option<Secret>,
    max_output_tokens: u32,
    timeout: Duration,
    max_response_bytes: usize,
}

impl OpenAiChat {
    pub fn new(settings: &Settings, model: ModelRef) -> Result<Self, StructureError> {
        let profile = Profile::select(
            &model,
            settings.openai_base_url.as_deref(),
            settings.provider_profile.as_deref(),
        )?;
        let base_url = wire::base_url(
            settings.openai_base_url.as_deref(),
            profile.default_base_url(),
            keys::OPENAI_BASE_URL,
            BASE_URL_SETTING,
        )?;
        if profile.requires_api_key() && settings.openai_api_key.is_none() {
            return Err(StructureError::configuration(
                keys::OPENAI_API_KEY,
                "no OpenAI API key: set OPENAI_API_KEY (openai_api_key), or point OPENAI_BASE_URL \
                 (openai_base_url) at an OpenAI-compatible server",
            ));
        }
        let label = format!("{}/{}", model.provider, model.name);
        let delivery = delivery::select(
            settings.delivery,
            profile.capabilities(),
            settings.require_provider_strict_output,
            &label,
        )?;
        Ok(Self {
            model: label,
            model_name: model.name,
            profile,
            delivery,
            base_url,
            api_key: settings.openai_api_key.clone(),
            max_output_tokens: settings.max_output_tokens,
            timeout: settings.request_timeout,
            max_response_bytes: settings.limits.response_bytes,
        })
    }

    fn server(&self) -> String {
        match self.profile {
            Profile::OpenAi => "OpenAI".to_owned(),
            other => format!("the {} server at {}", other.name(), self.base_url),
        }
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
}

impl Provider for OpenAiChat {
    fn model(&self) -> &str {
        &self.model
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
        body.insert("model".into(), json!(self.model_name));
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
                            "description": "Deliver the answer: the structured object, or what the text lacks.",
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
            json!(self.max_output_tokens),
        );
        if let Some(temperature) = self.profile.temperature() {
            body.insert("temperature".into(), json!(temperature));
        }
        let mut headers = vec![("content-type".to_owned(), "application/json".to_owned())];
        if let Some(key) = &self.api_key {
            headers.push((
                "authorization".to_owned(),
                format!("Bearer {}", key.expose()),
            ));
        }
        HttpRequest {
            method: "POST",
            url: format!("{}/chat/completions", self.base_url),
            headers,
            body: Value::Object(body).to_string().into_bytes(),
            timeout: self.timeout,
            max_response_bytes: self.max_response_bytes,
        }
    }

    fn completion(&self, response: &HttpResponse) -> Result<Completion, StructureError> {
        if !(200..300).contains(&response.status) {
            return Err(wire::http_error(
                &self.server(),
                response,
                KEY_SETTING,
                BASE_URL_SETTING,
            ));
        }
        let body = wire::json_body(&self.server(), response)?;
        let usage = usage(&body);
        let with_usage = |error: StructureError| error.with_usage(usage);
        let Some(choice) = body.get("choices").and_then(|choices| choices.get(0)) else {
            let (message, _) = wire::error_message(&response.body);
            return Err(with_usage(StructureError::invalid_response(format!(
                "{} answered without a choice: {message}",
                self.server()
            ))));
        };
        let message = choice.get("message").unwrap_or(&Value::Null);
        if let Some(refusal) = message
            .get("refusal")
            .and_then(Value::as_str)
            .filter(|text| !text.is_empty())
        {
            return Err(with_usage(StructureError::new(
                ErrorKind::Refusal,
                format!("the model refused to answer: {}", wire::cut(refusal)),
            )));
        }
        match choice.get("finish_reason").and_then(Value::as_str) {
            Some("length") => return Err(with_usage(truncated(self.max_output_tokens))),
            Some("content_filter") => {
                return Err(with_usage(StructureError::new(
                    ErrorKind::Refusal,
                    "the provider's content filter blocked the answer",
                )));
            }
            _ => {}
        }
        if let Some(call) = message.get("tool_calls").and_then(|calls| calls.get(0)) {
            let name = call
                .pointer("/function/name")
                .and_then(Value::as_str)
                .unwrap_or_default();
            let arguments = call.pointer("/function/arguments").and_then(Value::as_str);
            return match arguments {
                Some(arguments) if name == ANSWER_TOOL => Ok(Completion {
                    delivered: Delivered::ToolCall {
                        id: call
                            .get("id")
                            .and_then(Value::as_str)
                            .unwrap_or("call_0")
                            .to_owned(),
                        arguments: arguments.to_owned(),
                    },
                    usage,
                }),
                _ => Err(with_usage(StructureError::invalid_response(format!(
                    "the model called a tool ({name:?}) instead of giving the JSON answer"
                )))),
            };
        }
        match message.get("content").and_then(Value::as_str) {
            Some(text) => Ok(Completion {
                delivered: Delivered::Text(text.to_owned()),
                usage,
            }),
            None => Err(with_usage(StructureError::invalid_response(format!(
                "{} answered without message content",
                self.server()
            )))),
        }
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

pub fn truncated(max_output_tokens: u32) -> StructureError {
    StructureError::new(
        ErrorKind::Truncated,
        format!(
            "the answer was cut off at the output limit of {max_output_tokens} tokens; raise \
             STRUCTURE_MAX_OUTPUT_TOKENS (structure_max_output_tokens) or ask for less"
        ),
    )
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
