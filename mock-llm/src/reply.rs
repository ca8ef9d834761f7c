//! A scripted reply: a status, headers and a body (a chat completion as OpenAI sends it, an
//! error, or any bytes), and how it goes wrong on the wire.

use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::wire;

/// One scripted HTTP reply.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Reply {
    pub status: u16,
    #[serde(default)]
    pub headers: Vec<(String, String)>,
    /// The body, sent as is (it need not be JSON: malformed bodies are faults to inject).
    pub body: String,
    /// How long to wait before answering.
    #[serde(default)]
    pub delay_ms: u64,
    /// Bytes sent instead of `body` (for bodies that are not UTF-8).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub body_bytes: Option<Vec<u8>>,
    /// How the body goes wrong on the wire, if it does.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fault: Option<Fault>,
}

/// A fault in sending a reply's body.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", tag = "kind")]
pub enum Fault {
    /// Announces the whole body's length, sends its first `after_bytes`, then drops the
    /// connection.
    #[serde(rename_all = "camelCase")]
    Reset { after_bytes: usize },
    /// Sends the body `chunk_bytes` at a time, `every_ms` apart.
    #[serde(rename_all = "camelCase")]
    Drip { chunk_bytes: usize, every_ms: u64 },
    /// Sends the body in chunks without announcing its length (chunked transfer encoding).
    #[serde(rename_all = "camelCase")]
    Chunked { chunk_bytes: usize },
}

impl Reply {
    /// A chat completion whose message content is `content`, verbatim.
    pub fn text(content: &str) -> Reply {
        Reply::completion(
            json!({ "role": "assistant", "content": content, "refusal": null }),
            "stop",
        )
    }

    /// A chat completion answering with `value` in the envelope the component asks for:
    /// `{"answer": value}`.
    pub fn answer(value: Value) -> Reply {
        Reply::text(&json!({ "answer": value }).to_string())
    }

    /// A chat completion taking the need path: `{"answer": {"_need": need}}`.
    pub fn need(need: &str) -> Reply {
        Reply::answer(json!({ "_need": need }))
    }

    /// A chat completion calling the answer tool with `arguments` (JSON text), as OpenAI sends
    /// a forced function call.
    pub fn tool_call(arguments: &str) -> Reply {
        Reply::completion(
            json!({
                "role": "assistant",
                "content": null,
                "refusal": null,
                "tool_calls": [{
                    "id": "call_mock",
                    "type": "function",
                    "function": { "name": wire::ANSWER_TOOL, "arguments": arguments },
                }],
            }),
            "tool_calls",
        )
    }

    /// A refusal as OpenAI sends it: `message.refusal` set, `content` null.
    pub fn refusal(text: &str) -> Reply {
        Reply::completion(
            json!({ "role": "assistant", "content": null, "refusal": text }),
            "stop",
        )
    }

    /// An answer cut off by the token limit: `finish_reason: length`, partial JSON.
    pub fn truncated(partial: &str) -> Reply {
        Reply::completion(
            json!({ "role": "assistant", "content": partial, "refusal": null }),
            "length",
        )
    }

    /// An error in OpenAI's envelope: `{"error": {"message", "type", "code"}}`.
    pub fn error(status: u16, kind: &str, message: &str) -> Reply {
        let body =
            json!({ "error": { "message": message, "type": kind, "param": null, "code": kind } });
        Reply::raw(status, &body.to_string())
    }

    /// Any status and body.
    pub fn raw(status: u16, body: &str) -> Reply {
        Reply {
            status,
            headers: vec![("content-type".to_owned(), "application/json".to_owned())],
            body: body.to_owned(),
            delay_ms: 0,
            body_bytes: None,
            fault: None,
        }
    }

    /// Any status and body bytes (not necessarily UTF-8).
    pub fn bytes(status: u16, body: Vec<u8>) -> Reply {
        Reply {
            body_bytes: Some(body),
            ..Reply::raw(status, "")
        }
    }

    pub fn with_fault(mut self, fault: Fault) -> Reply {
        self.fault = Some(fault);
        self
    }

    pub fn with_delay(mut self, delay: Duration) -> Reply {
        self.delay_ms = delay.as_millis() as u64;
        self
    }

    /// The same completion, its `usage` saying it took these tokens.
    pub fn with_usage(mut self, prompt_tokens: u64, completion_tokens: u64) -> Reply {
        if let Ok(mut body) = serde_json::from_str::<Value>(&self.body) {
            body["usage"] = json!({
                "prompt_tokens": prompt_tokens,
                "completion_tokens": completion_tokens,
                "total_tokens": prompt_tokens + completion_tokens,
                "prompt_tokens_details": { "cached_tokens": 0 },
            });
            self.body = body.to_string();
        }
        self
    }

    /// The same chat completion with `logprobs` as OpenAI gives them: its content one token a
    /// character, each of `probability`.
    pub fn with_token_probability(mut self, probability: f64) -> Reply {
        if let Ok(mut body) = serde_json::from_str::<Value>(&self.body)
            && let Some(content) = body
                .pointer("/choices/0/message/content")
                .and_then(Value::as_str)
        {
            let tokens: Vec<Value> = (content.chars())
                .map(|c| {
                    let text = c.to_string();
                    json!({ "token": text, "logprob": probability.ln(), "bytes": text.as_bytes() })
                })
                .collect();
            body["choices"][0]["logprobs"] = json!({ "content": tokens });
            self.body = body.to_string();
        }
        self
    }

    pub fn with_header(mut self, name: &str, value: &str) -> Reply {
        self.headers.push((name.to_owned(), value.to_owned()));
        self
    }

    fn completion(message: Value, finish_reason: &str) -> Reply {
        let body = json!({
            "id": "chatcmpl-mock",
            "object": "chat.completion",
            "created": 1_767_225_600,
            "model": "mock",
            "choices": [{ "index": 0, "message": message, "logprobs": null, "finish_reason": finish_reason }],
            "usage": {
                "prompt_tokens": 100,
                "completion_tokens": 20,
                "total_tokens": 120,
                "prompt_tokens_details": { "cached_tokens": 0 },
            },
        });
        Reply::raw(200, &body.to_string())
    }
}
