//! OpenAI's Responses API (`POST {base}/responses`), chosen with `structure_openai_api=responses`.
//!
//! Native mode sends `text.format` (`json_schema`, strict); tool mode sends the answer tool as a
//! strict function and forces it. Earlier answers go back as assistant messages, earlier tool
//! calls as `function_call` items answered by `function_call_output` items (without item ids,
//! so no reasoning items need replaying).

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
use crate::provider::delivery::{self, ANSWER_TOOL, Capabilities, Delivery};
use crate::provider::endpoint::{self, Endpoint, LlmBody};
use crate::provider::model::ModelRef;
use crate::provider::openai_chat::{openai_endpoint, openai_retry_hint};
use crate::provider::profile::{self, Profile};
use crate::provider::server::Server;
use crate::provider::window::Window;
use crate::provider::wire;
use crate::schema::subset::OPENAI_STRICT;
use crate::settings::Settings;

/// The API rejects smaller output limits.
const MIN_OUTPUT_TOKENS: u32 = 16;

pub struct OpenAiResponses {
    endpoint: Endpoint,
}

impl OpenAiResponses {
    pub fn new(
        settings: &Settings,
        model: ModelRef,
        server: Server,
    ) -> Result<Self, StructureError> {
        let base_url =
            endpoint::base_url(settings, keys::OPENAI_BASE_URL, keys::OPENAI_DEFAULT_URL)?;
        if settings.openai_api_key.is_none() && base_url == keys::OPENAI_DEFAULT_URL {
            return Err(StructureError::configuration(
                keys::OPENAI_API_KEY,
                "no OpenAI API key: set OPENAI_API_KEY (openai_api_key), or point OPENAI_BASE_URL \
                 (openai_base_url) at a server that speaks the Responses API",
            ));
        }
        let name = if base_url == keys::OPENAI_DEFAULT_URL {
            "OpenAI".to_owned()
        } else {
            format!("the Responses API at {base_url}")
        };
        let kind = (base_url == keys::OPENAI_DEFAULT_URL).then_some(Profile::OpenAi);
        let window = (server.window).unwrap_or_else(|| Window::default_for(&model.provider, kind));
        let mut endpoint = openai_endpoint(&model, name, base_url, settings, window);
        endpoint.max_output_tokens = endpoint.max_output_tokens.max(MIN_OUTPUT_TOKENS);
        let known = kind.is_some() && !profile::openai_reasoning(&endpoint.model_name);
        let strict = ("openai-responses", |_| &OPENAI_STRICT);
        let endpoint = endpoint.delivering_chosen(settings, Capabilities::BOTH, strict)?;
        Ok(Self {
            endpoint: endpoint.asking_logprobs(settings.logprobs.ask(known)),
        })
    }

    fn input(&self, conversation: &Conversation) -> Vec<Value> {
        let mut input = Vec::new();
        for (index, turn) in conversation.turns.iter().enumerate() {
            input.push(match turn {
                Turn::User(text) => match conversation.attached_to(index) {
                    Some(attachment) => json!({
                        "role": "user",
                        "content": [{ "type": "input_text", "text": text }, part(attachment)],
                    }),
                    None => json!({ "role": "user", "content": text }),
                },
                Turn::Model(Delivered::Text(text)) => json!({ "role": "assistant", "content": text }),
                Turn::Model(Delivered::ToolCall { id, arguments }) => json!({
                    "type": "function_call", "call_id": id, "name": ANSWER_TOOL, "arguments": arguments,
                }),
                Turn::Feedback(text) => match conversation.answered_call(index) {
                    Some(id) => json!({ "type": "function_call_output", "call_id": id, "output": text }),
                    None => json!({ "role": "user", "content": text }),
                },
            });
        }
        input
    }

    /// The error an `incomplete` or `failed` response stands for.
    fn check_status(&self, body: &Value) -> Result<(), StructureError> {
        match body.get("status").and_then(Value::as_str) {
            Some("incomplete") => {
                let reason = body
                    .pointer("/incomplete_details/reason")
                    .and_then(Value::as_str)
                    .unwrap_or_default();
                Err(if reason == "content_filter" {
                    StructureError::new(
                        ErrorKind::Blocked {
                            reason: reason.to_owned(),
                        },
                        "the provider's content filter blocked the answer",
                    )
                } else {
                    wire::truncated(self.endpoint.max_output_tokens)
                })
            }
            Some("failed") => {
                let message = body
                    .pointer("/error/message")
                    .and_then(Value::as_str)
                    .unwrap_or("no reason given");
                Err(StructureError::invalid_response(format!(
                    "{} reports the response failed: {}",
                    self.endpoint.server,
                    wire::cut(message)
                )))
            }
            _ => Ok(()),
        }
    }
}

/// A document given as it is, as a Responses input part: an image by its data URL, a PDF as a
/// file.
fn part(attachment: &Attachment) -> Value {
    match attachment.media_type {
        MediaType::Pdf => json!({
            "type": "input_file",
            "filename": attachment.file_name(),
            "file_data": attachment.data_url(),
        }),
        _ => json!({ "type": "input_image", "image_url": attachment.data_url(), "detail": "auto" }),
    }
}

impl Provider for OpenAiResponses {
    fn endpoint(&self) -> &Endpoint {
        &self.endpoint
    }

    fn request(&self, conversation: &Conversation, format: &AnswerFormat) -> HttpRequest {
        let mut body = Map::new();
        body.insert("model".into(), json!(self.endpoint.model_name));
        body.insert("instructions".into(), json!(conversation.system.text()));
        body.insert("input".into(), Value::Array(self.input(conversation)));
        let schema_at: Option<&'static [&'static str]> = match self.endpoint.delivery {
            Delivery::Native => {
                let text = json!({ "format": {
                    "type": "json_schema", "name": format.name, "schema": null, "strict": true,
                } });
                body.insert("text".into(), text);
                Some(&["text", "format", "schema"])
            }
            Delivery::Tool => {
                let mut tool = Map::new();
                tool.insert("type".into(), json!("function"));
                tool.extend(delivery::strict_function());
                body.insert("tools".into(), Value::Array(vec![Value::Object(tool)]));
                body.insert(
                    "tool_choice".into(),
                    json!({ "type": "function", "name": ANSWER_TOOL }),
                );
                body.insert("parallel_tool_calls".into(), json!(false));
                Some(&["tools", "0", "parameters"])
            }
            Delivery::Prompt => None,
        };
        if self.endpoint.asks_logprobs() {
            body.insert("include".into(), json!(["message.output_text.logprobs"]));
        }
        body.insert("store".into(), json!(false));
        let body = LlmBody::new(body, schema_at, &format.schema);
        self.endpoint
            .post_llm("/responses", body, &["max_output_tokens"], 0)
    }

    fn retry_hint(&self, response: &HttpResponse) -> Option<Duration> {
        openai_retry_hint(response)
    }

    /// What a 2xx `body` delivers: the answer tool's call, or the final message's text.
    fn read(&self, body: &Value) -> Result<Delivered, StructureError> {
        self.check_status(body)?;
        let output = body
            .get("output")
            .and_then(Value::as_array)
            .map(Vec::as_slice)
            .unwrap_or_default();
        if let Some(call) = output
            .iter()
            .find(|item| item.get("type").and_then(Value::as_str) == Some("function_call"))
        {
            let name = call.get("name").and_then(Value::as_str).unwrap_or_default();
            let arguments = call.get("arguments").and_then(Value::as_str);
            let id = call.get("call_id").and_then(Value::as_str);
            return wire::tool_call(name, id, "call_0", arguments.map(str::to_owned));
        }
        let Some(message) = final_message(output) else {
            return Err(StructureError::invalid_response(format!(
                "{} answered without a message",
                self.endpoint.server
            )));
        };
        let parts = message
            .get("content")
            .and_then(Value::as_array)
            .map(Vec::as_slice)
            .unwrap_or_default();
        if let Some(refusal) = parts
            .iter()
            .find_map(|part| part.get("refusal").and_then(Value::as_str))
        {
            return Err(wire::refusal(refusal));
        }
        Ok(Delivered::Text(
            parts
                .iter()
                .filter(|part| part.get("type").and_then(Value::as_str) == Some("output_text"))
                .filter_map(|part| part.get("text").and_then(Value::as_str))
                .collect(),
        ))
    }

    /// The log-probabilities of the final message's text, part after part.
    fn tokens(&self, body: &Value) -> Vec<Token> {
        let output = (body.get("output").and_then(Value::as_array))
            .map(Vec::as_slice)
            .unwrap_or_default();
        let parts = final_message(output)
            .and_then(|message| message.get("content"))
            .and_then(Value::as_array);
        (parts.into_iter().flatten())
            .filter(|part| part.get("type").and_then(Value::as_str) == Some("output_text"))
            .flat_map(|part| wire::tokens(part.get("logprobs"), "token", "logprob"))
            .collect()
    }

    fn usage(&self, body: &Value) -> Usage {
        wire::usage(
            body,
            &["/usage/input_tokens"],
            &["/usage/output_tokens"],
            "/usage/input_tokens_details/cached_tokens",
        )
    }
}

/// The message of `output` that holds the answer: the one in the `final_answer` phase, else
/// the last.
fn final_message(output: &[Value]) -> Option<&Value> {
    let messages: Vec<&Value> = output
        .iter()
        .filter(|item| item.get("type").and_then(Value::as_str) == Some("message"))
        .collect();
    messages
        .iter()
        .rev()
        .find(|item| item.get("phase").and_then(Value::as_str) == Some("final_answer"))
        .or(messages.last())
        .copied()
}
