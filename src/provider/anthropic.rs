//! The Anthropic Messages API (`POST {base}/v1/messages`).
//!
//! Native mode sends `output_config.format` (structured outputs, GA) on the models that have it;
//! tool mode sends the answer tool (strict where the model supports it) and forces it with
//! `tool_choice`, and the `tool_use` input is the answer. The stable part of the system prompt
//! (rules, schema, manual) carries `cache_control` when it holds a manual, so a long manual is
//! read from Anthropic's prompt cache instead of being paid for on every call.

use serde_json::{Map, Value, json};

use crate::answer::format::AnswerFormat;
use crate::error::{ErrorKind, StructureError};
use crate::keys;
use crate::media_type::{Attachment, MediaType};
use crate::outcome::Usage;
use crate::ports::HttpRequest;
use crate::provider::contract::Provider;
use crate::provider::conversation::{Conversation, Delivered, Turn};
use crate::provider::delivery::{ANSWER_TOOL, ANSWER_TOOL_DESCRIPTION, Capabilities, Delivery};
use crate::provider::endpoint::{self, Endpoint, LlmBody};
use crate::provider::model::ModelRef;
use crate::provider::server::Server;
use crate::provider::window::Window;
use crate::provider::wire;
use crate::schema::subset::ANTHROPIC;
use crate::settings::Settings;

/// The API version header; the only one the Messages API has.
pub const API_VERSION: &str = "2023-06-01";

pub struct Anthropic {
    endpoint: Endpoint,
    /// The model has structured outputs (and strict tools).
    structured_outputs: bool,
}

impl Anthropic {
    pub fn new(
        settings: &Settings,
        model: ModelRef,
        server: Server,
    ) -> Result<Self, StructureError> {
        let base_url = endpoint::base_url(
            settings,
            keys::ANTHROPIC_BASE_URL,
            keys::ANTHROPIC_DEFAULT_URL,
        )?;
        // The SDKs' base URL has no version; accept one written with it.
        let base_url = base_url.strip_suffix("/v1").unwrap_or(&base_url).to_owned();
        let Some(api_key) = &settings.anthropic_api_key else {
            return Err(StructureError::configuration(
                keys::ANTHROPIC_API_KEY,
                "no Anthropic API key: set ANTHROPIC_API_KEY (anthropic_api_key)",
            ));
        };
        let endpoint = Endpoint::new(
            &model,
            "Anthropic".to_owned(),
            base_url,
            keys::ANTHROPIC_API_KEY,
            keys::ANTHROPIC_BASE_URL,
            settings,
            (server.window).unwrap_or_else(|| Window::default_for(&model.provider, None)),
        )
        .with_header("x-api-key", api_key.expose())
        .with_header("anthropic-version", API_VERSION);
        let structured_outputs = has_structured_outputs(&model.name);
        let capabilities = Capabilities {
            native: structured_outputs,
            tool: true,
        };
        Ok(Self {
            endpoint: endpoint.delivering_chosen(
                settings,
                capabilities,
                ("anthropic", |_| &ANTHROPIC),
            )?,
            structured_outputs,
        })
    }

    fn messages(&self, conversation: &Conversation) -> Vec<Value> {
        let mut messages = Vec::new();
        for (index, turn) in conversation.turns.iter().enumerate() {
            messages.push(match turn {
                // The picture first, as Anthropic advises.
                Turn::User(text) => match conversation.attached_to(index) {
                    Some(attachment) => json!({
                        "role": "user",
                        "content": [block(attachment), { "type": "text", "text": text }],
                    }),
                    None => json!({ "role": "user", "content": text }),
                },
                Turn::Model(Delivered::Text(text)) => json!({ "role": "assistant", "content": text }),
                Turn::Model(Delivered::ToolCall { id, arguments }) => {
                    let input = serde_json::from_str::<Value>(arguments).unwrap_or_else(|_| json!({}));
                    json!({
                        "role": "assistant",
                        "content": [{ "type": "tool_use", "id": id, "name": ANSWER_TOOL, "input": input }],
                    })
                }
                Turn::Feedback(text) => match conversation.answered_call(index) {
                    Some(id) => json!({
                        "role": "user",
                        "content": [{ "type": "tool_result", "tool_use_id": id, "content": text, "is_error": true }],
                    }),
                    None => json!({ "role": "user", "content": text }),
                },
            });
        }
        messages
    }

    /// The error the stop reason stands for, if any: a refusal (in the model's `text`), the
    /// output limit, a paused turn.
    fn check_stop(&self, body: &Value, text: &str) -> Result<(), StructureError> {
        let stop_reason = body
            .get("stop_reason")
            .and_then(Value::as_str)
            .unwrap_or_default();
        match stop_reason.to_ascii_lowercase().as_str() {
            "refusal" => {
                let category = body
                    .pointer("/stop_details/category")
                    .and_then(Value::as_str)
                    .map(|category| format!(" ({category})"))
                    .unwrap_or_default();
                let said = if text.trim().is_empty() {
                    "no reason given".to_owned()
                } else {
                    wire::cut(text.trim())
                };
                Err(StructureError::new(
                    ErrorKind::Refusal,
                    format!("the model refused to answer{category}: {said}"),
                ))
            }
            "max_tokens" | "model_context_window_exceeded" | "stop_sequence" => {
                Err(wire::truncated(self.endpoint.max_output_tokens))
            }
            "pause_turn" => Err(StructureError::invalid_response(
                "Anthropic paused the turn (pause_turn), which only server tools cause",
            )),
            _ => Ok(()),
        }
    }
}

/// Structured outputs and strict tools: Claude 4.5 and later (Opus, Sonnet, Haiku), and the
/// newer families; not Claude 3, Sonnet 4, Opus 4 or 4.1.
pub fn has_structured_outputs(model: &str) -> bool {
    let Some(rest) = model.strip_prefix("claude-") else {
        return true;
    };
    let parts: Vec<&str> = rest.split('-').collect();
    // `claude-3-5-sonnet-…`, `claude-3-opus-…`: the version comes first.
    if parts
        .first()
        .is_some_and(|part| part.chars().all(|c| c.is_ascii_digit()))
    {
        return false;
    }
    match (
        parts.get(1).and_then(|major| major.parse::<u32>().ok()),
        parts.get(2),
    ) {
        (Some(major), _) if major >= 5 => true,
        (Some(4), Some(minor)) if minor.len() <= 2 => {
            minor.parse::<u32>().is_ok_and(|minor| minor >= 5)
        }
        (Some(_), _) => false,
        // A family without a version number (e.g. a new name): assume it is current.
        (None, _) => true,
    }
}

/// A document given as it is, as a Messages content block: an image, or a PDF as a document.
fn block(attachment: &Attachment) -> Value {
    let kind = match attachment.media_type {
        MediaType::Pdf => "document",
        _ => "image",
    };
    json!({
        "type": kind,
        "source": {
            "type": "base64",
            "media_type": attachment.media_type.name(),
            "data": attachment.base64(),
        },
    })
}

impl Provider for Anthropic {
    fn endpoint(&self) -> &Endpoint {
        &self.endpoint
    }

    fn request(&self, conversation: &Conversation, format: &AnswerFormat) -> HttpRequest {
        let mut stable = json!({ "type": "text", "text": conversation.system.stable });
        if conversation.system.cacheable {
            stable["cache_control"] = json!({ "type": "ephemeral" });
        }
        let mut system = vec![stable];
        // Anthropic refuses an empty text block: the changing part only when there is one.
        if !conversation.system.volatile.is_empty() {
            system.push(json!({ "type": "text", "text": conversation.system.volatile }));
        }
        let mut body = Map::new();
        body.insert("model".into(), json!(self.endpoint.model_name));
        body.insert("system".into(), Value::Array(system));
        body.insert("messages".into(), Value::Array(self.messages(conversation)));
        let schema_at: Option<&'static [&'static str]> = match self.endpoint.delivery {
            Delivery::Native => {
                let output_config = json!({ "format": { "type": "json_schema", "schema": null } });
                body.insert("output_config".into(), output_config);
                Some(&["output_config", "format", "schema"])
            }
            Delivery::Tool => {
                let mut tool = json!({
                    "name": ANSWER_TOOL,
                    "description": format!("{ANSWER_TOOL_DESCRIPTION} Call it exactly once."),
                    "input_schema": null,
                });
                if self.structured_outputs {
                    tool["strict"] = json!(true);
                }
                body.insert("tools".into(), Value::Array(vec![tool]));
                body.insert(
                    "tool_choice".into(),
                    json!({ "type": "tool", "name": ANSWER_TOOL, "disable_parallel_tool_use": true }),
                );
                Some(&["tools", "0", "input_schema"])
            }
            Delivery::Prompt => None,
        };
        let body = LlmBody::new(body, schema_at, &format.schema);
        self.endpoint
            .post_llm("/v1/messages", body, &["max_tokens"], 0)
    }

    /// What a 2xx `body` delivers: the answer tool's call, or the text blocks.
    fn read(&self, body: &Value) -> Result<Delivered, StructureError> {
        let blocks = body
            .get("content")
            .and_then(Value::as_array)
            .map(Vec::as_slice)
            .unwrap_or_default();
        let text: String = blocks
            .iter()
            .filter(|block| block.get("type").and_then(Value::as_str) == Some("text"))
            .filter_map(|block| block.get("text").and_then(Value::as_str))
            .collect();
        self.check_stop(body, &text)?;
        let calls = || {
            blocks
                .iter()
                .filter(|block| block.get("type").and_then(Value::as_str) == Some("tool_use"))
        };
        // The answer tool's call wherever it is among the blocks, else the first other call.
        let Some(call) = calls()
            .find(|block| tool_name(block) == ANSWER_TOOL)
            .or_else(|| calls().next())
        else {
            return Ok(Delivered::Text(text));
        };
        let arguments = call
            .get("input")
            .cloned()
            .unwrap_or(Value::Null)
            .to_string();
        let id = call.get("id").and_then(Value::as_str);
        wire::tool_call(tool_name(call), id, "toolu_0", Some(arguments))
    }

    /// Anthropic counts cached input apart: the prompt is input + cache writes + cache reads.
    fn usage(&self, body: &Value) -> Usage {
        wire::usage(
            body,
            &[
                "/usage/input_tokens",
                "/usage/cache_creation_input_tokens",
                "/usage/cache_read_input_tokens",
            ],
            &["/usage/output_tokens"],
            "/usage/cache_read_input_tokens",
        )
    }
}

/// The name of a `tool_use` block.
fn tool_name(block: &Value) -> &str {
    block
        .get("name")
        .and_then(Value::as_str)
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::has_structured_outputs;

    #[test]
    fn structured_outputs_start_with_claude_4_5() {
        for model in [
            "claude-sonnet-4-5",
            "claude-sonnet-4-5-20250929",
            "claude-opus-4-6",
            "claude-haiku-4-5-20251001",
            "claude-opus-5",
            "claude-sonnet-5-1",
            "claude-fable-5",
        ] {
            assert!(has_structured_outputs(model), "{model}");
        }
        for model in [
            "claude-sonnet-4-20250514",
            "claude-opus-4-1",
            "claude-opus-4-0",
            "claude-3-5-sonnet-20241022",
            "claude-3-opus-20240229",
        ] {
            assert!(!has_structured_outputs(model), "{model}");
        }
    }
}
