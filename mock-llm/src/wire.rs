//! Replies in each provider's wire format, built from real recorded bodies
//! (`tests/provider-api/samples/`) with the answer swapped in.

use serde_json::{Value, json};

use crate::Reply;

/// The internal tool the component delivers answers through in tool mode.
pub const ANSWER_TOOL: &str = "__structured_output__";

/// A provider's wire format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Wire {
    OpenAiChat,
    OpenAiResponses,
    Anthropic,
    Gemini,
}

/// How the answer comes back: as message text (native and prompt modes) or as a call of the
/// answer tool (tool mode).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Form {
    Text,
    Tool,
}

fn sample(text: &str) -> Value {
    serde_json::from_str(text).expect("the recorded samples are JSON")
}

const ANTHROPIC_TEXT: &str = include_str!(
    "../../tests/provider-api/samples/anthropic/output_config_json_schema.response.json"
);
const ANTHROPIC_TOOL: &str =
    include_str!("../../tests/provider-api/samples/anthropic/tool_use.response.json");
const ANTHROPIC_REFUSAL: &str =
    include_str!("../../tests/provider-api/samples/anthropic/refusal.response.json");
const ANTHROPIC_MAX_TOKENS: &str =
    include_str!("../../tests/provider-api/samples/anthropic/max_tokens.response.json");
const GEMINI_TEXT: &str =
    include_str!("../../tests/provider-api/samples/gemini/response_json_schema.response.json");
const GEMINI_CALL: &str =
    include_str!("../../tests/provider-api/samples/gemini/function_call.response.json");
const GEMINI_MAX_TOKENS: &str =
    include_str!("../../tests/provider-api/samples/gemini/max_tokens.response.json");
const GEMINI_SAFETY: &str =
    include_str!("../../tests/provider-api/samples/gemini/finish_safety.response.json");
const RESPONSES_TEXT: &str = include_str!(
    "../../tests/provider-api/samples/openai/responses/structured_output.response.json"
);
const RESPONSES_CALL: &str =
    include_str!("../../tests/provider-api/samples/openai/responses/function_call.response.json");
const RESPONSES_INCOMPLETE: &str =
    include_str!("../../tests/provider-api/samples/openai/responses/incomplete.response.json");

impl Wire {
    /// The model answers `content` (JSON text) as message text or as the answer tool's input.
    pub fn content(self, form: Form, content: &str) -> Reply {
        let body = match (self, form) {
            (Wire::OpenAiChat, Form::Text) => return Reply::text(content),
            (Wire::OpenAiChat, Form::Tool) => return Reply::tool_call(content),
            (Wire::Anthropic, Form::Text) => {
                let mut body = sample(ANTHROPIC_TEXT);
                body["content"] = json!([{ "type": "text", "text": content }]);
                body
            }
            (Wire::Anthropic, Form::Tool) => {
                let mut body = sample(ANTHROPIC_TOOL);
                let input: Value = serde_json::from_str(content)
                    .unwrap_or_else(|_| json!({ "unparseable": content }));
                body["content"][0]["name"] = json!(ANSWER_TOOL);
                body["content"][0]["input"] = input;
                body
            }
            (Wire::Gemini, Form::Text) => {
                let mut body = sample(GEMINI_TEXT);
                body["candidates"][0]["content"]["parts"] = json!([{ "text": content }]);
                body
            }
            (Wire::Gemini, Form::Tool) => {
                let mut body = sample(GEMINI_CALL);
                let args: Value = serde_json::from_str(content)
                    .unwrap_or_else(|_| json!({ "unparseable": content }));
                body["candidates"][0]["content"]["parts"][0]["functionCall"]["name"] =
                    json!(ANSWER_TOOL);
                body["candidates"][0]["content"]["parts"][0]["functionCall"]["args"] = args;
                body
            }
            (Wire::OpenAiResponses, Form::Text) => {
                let mut body = sample(RESPONSES_TEXT);
                let output = body["output"]
                    .as_array_mut()
                    .expect("the sample has output items");
                for item in output.iter_mut().filter(|item| item["type"] == "message") {
                    item["content"] = json!([{ "type": "output_text", "annotations": [], "logprobs": [], "text": content }]);
                }
                body
            }
            (Wire::OpenAiResponses, Form::Tool) => {
                let mut body = sample(RESPONSES_CALL);
                let output = body["output"]
                    .as_array_mut()
                    .expect("the sample has output items");
                for item in output
                    .iter_mut()
                    .filter(|item| item["type"] == "function_call")
                {
                    item["name"] = json!(ANSWER_TOOL);
                    item["arguments"] = json!(content);
                }
                body
            }
        };
        Reply::raw(200, &body.to_string())
    }

    /// The model answers `{"answer": value}`.
    pub fn answer(self, form: Form, value: Value) -> Reply {
        self.content(form, &json!({ "answer": value }).to_string())
    }

    /// The model takes the need path.
    pub fn need(self, form: Form, need: &str) -> Reply {
        self.answer(form, json!({ "_need": need }))
    }

    /// The model refuses (Gemini: a safety stop).
    pub fn refusal(self) -> Reply {
        match self {
            Wire::OpenAiChat => Reply::refusal("I can't help with that."),
            Wire::OpenAiResponses => {
                let mut body = sample(RESPONSES_TEXT);
                let output = body["output"]
                    .as_array_mut()
                    .expect("the sample has output items");
                for item in output.iter_mut().filter(|item| item["type"] == "message") {
                    item["content"] =
                        json!([{ "type": "refusal", "refusal": "I can't help with that." }]);
                }
                Reply::raw(200, &body.to_string())
            }
            Wire::Anthropic => Reply::raw(200, ANTHROPIC_REFUSAL),
            Wire::Gemini => Reply::raw(200, GEMINI_SAFETY),
        }
    }

    /// The answer is cut off by the output token limit.
    pub fn truncated(self) -> Reply {
        match self {
            Wire::OpenAiChat => Reply::truncated("{\"answer\": {\"na"),
            Wire::OpenAiResponses => Reply::raw(200, RESPONSES_INCOMPLETE),
            Wire::Anthropic => Reply::raw(200, ANTHROPIC_MAX_TOKENS),
            Wire::Gemini => Reply::raw(200, GEMINI_MAX_TOKENS),
        }
    }

    /// An error response in the provider's envelope.
    pub fn error(self, status: u16, message: &str) -> Reply {
        match self {
            Wire::OpenAiChat | Wire::OpenAiResponses => {
                let kind = match status {
                    401 => "invalid_api_key",
                    429 => "rate_limit_exceeded",
                    500.. => "server_error",
                    _ => "invalid_request_error",
                };
                Reply::error(status, kind, message)
            }
            Wire::Anthropic => {
                let kind = match status {
                    401 => "authentication_error",
                    403 => "permission_error",
                    404 => "not_found_error",
                    429 => "rate_limit_error",
                    529 => "overloaded_error",
                    500.. => "api_error",
                    _ => "invalid_request_error",
                };
                let body = json!({ "type": "error", "error": { "type": kind, "message": message }, "request_id": "req_mock" });
                Reply::raw(status, &body.to_string())
            }
            Wire::Gemini => {
                let kind = match status {
                    401 => "UNAUTHENTICATED",
                    403 => "PERMISSION_DENIED",
                    404 => "NOT_FOUND",
                    429 => "RESOURCE_EXHAUSTED",
                    503 => "UNAVAILABLE",
                    500.. => "INTERNAL",
                    _ => "INVALID_ARGUMENT",
                };
                let body =
                    json!({ "error": { "code": status, "message": message, "status": kind } });
                Reply::raw(status, &body.to_string())
            }
        }
    }
}
