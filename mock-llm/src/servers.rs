//! The kinds of server the mock can stand for, as they answer what `structure` asks before the
//! first call (their model list, llama.cpp's `/props`, Ollama's `/api/version`, `/api/ps` and
//! `/api/show`), and how each refuses a request longer than its context window. The bodies
//! are the servers' own, as their documentation and code write them (llama.cpp
//! `tools/server/README.md`, llama-cpp-python `llama_cpp/server/errors.py`, Ollama
//! `docs/api.md`, vLLM `entrypoints/openai/serving_engine.py`).
//!
//! The mock counts a request's tokens as a model's tokenizer roughly would: the characters of
//! its messages' text (and of a schema it is told about), four to a token.

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::Reply;

/// The server the mock stands for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind")]
pub enum Server {
    /// An endpoint that answers like OpenAI: a model list and nothing else; with a context
    /// limit, requests whose prompt and `max_tokens` pass it are refused in OpenAI's words.
    #[serde(rename = "openai", rename_all = "camelCase")]
    OpenAi { context_limit: Option<u32> },
    /// llama.cpp's `llama-server`, run with `-c n_ctx`.
    #[serde(rename = "llamacpp", rename_all = "camelCase")]
    LlamaCpp { n_ctx: u32 },
    /// llama-cpp-python's server: it states no window anywhere.
    #[serde(rename = "llama-cpp-python", rename_all = "camelCase")]
    LlamaCppPython { n_ctx: u32 },
    /// Ollama, with the model's `num_ctx` among its parameters when `num_ctx` is set.
    #[serde(rename = "ollama", rename_all = "camelCase")]
    Ollama { num_ctx: Option<u32> },
    /// vLLM, run with `--max-model-len`.
    #[serde(rename = "vllm", rename_all = "camelCase")]
    Vllm { max_model_len: u32 },
}

impl Default for Server {
    fn default() -> Self {
        Server::OpenAi {
            context_limit: None,
        }
    }
}

impl Server {
    /// The model name the lists show.
    const MODEL: &'static str = "mock-model";

    /// The answer to a request that is not a model request (`GET /v1/models`, `/props`, a
    /// count of `body`'s tokens, ...), or `None` for a model request.
    pub fn answer(&self, method: &str, path: &str, body: &str) -> Option<Reply> {
        let model_request = method == "POST"
            && (path.ends_with("/chat/completions")
                || path.ends_with("/responses")
                || path.ends_with("/messages")
                || path.contains(":generateContent"));
        if model_request {
            return None;
        }
        let found = |body: Value| Some(Reply::raw(200, &body.to_string()));
        match (self, method, path) {
            (_, "GET", "/v1/models") => found(self.models()),
            (Server::LlamaCpp { n_ctx }, "GET", "/props") => found(json!({
                "default_generation_settings": {
                    "id": 0, "id_task": -1, "n_ctx": n_ctx, "speculative": false,
                    "is_processing": false, "params": { "n_predict": -1, "temperature": 0.8 },
                },
                "total_slots": 1,
                "model_path": "/models/mock-model.gguf",
                "chat_template": "...",
                "build_info": "b6800-abcdef12",
            })),
            // Each counts as the mock's model reads: four characters to a token.
            (Server::LlamaCpp { .. }, "POST", "/tokenize") => Some(counted(
                body,
                "content",
                |tokens| json!({ "tokens": vec![1; tokens as usize] }),
            )),
            (Server::LlamaCppPython { .. }, "POST", "/extras/tokenize/count") => {
                Some(counted(body, "input", |tokens| json!({ "count": tokens })))
            }
            (Server::Vllm { max_model_len }, "POST", "/tokenize") => Some(counted(
                body,
                "prompt",
                |tokens| json!({ "count": tokens, "max_model_len": max_model_len, "tokens": vec![1; tokens as usize] }),
            )),
            (Server::Ollama { .. }, "GET", "/api/version") => found(json!({ "version": "0.12.3" })),
            (Server::Ollama { .. }, "GET", "/api/ps") => found(json!({ "models": [] })),
            (Server::Ollama { num_ctx }, "POST", "/api/show") => {
                let mut parameters = "stop                           \"<|eot_id|>\"".to_owned();
                if let Some(tokens) = num_ctx {
                    parameters.push_str(&format!("\nnum_ctx                        {tokens}"));
                }
                found(json!({
                    "parameters": parameters,
                    "details": { "format": "gguf", "family": "llama", "parameter_size": "3.2B" },
                    "model_info": { "general.architecture": "llama", "llama.context_length": 131072 },
                    "capabilities": ["completion"],
                }))
            }
            _ => Some(Reply::error(
                404,
                "not_found",
                &format!("{method} {path} not found"),
            )),
        }
    }

    fn models(&self) -> Value {
        let entry = match self {
            Server::OpenAi { .. } => {
                json!({ "id": Self::MODEL, "object": "model", "created": 1_686_935_002, "owned_by": "openai" })
            }
            Server::LlamaCpp { n_ctx } => json!({
                "id": Self::MODEL, "object": "model", "created": 1_735_142_223, "owned_by": "llamacpp",
                "meta": { "vocab_type": 2, "n_vocab": 49152, "n_ctx_train": 8192, "n_embd": 576,
                          "n_params": 134_515_008, "size": 101_000_000, "n_ctx": n_ctx },
            }),
            Server::LlamaCppPython { .. } => {
                json!({ "id": Self::MODEL, "object": "model", "owned_by": "me", "permissions": [] })
            }
            Server::Ollama { .. } => {
                json!({ "id": "mock-model:latest", "object": "model", "created": 1_736_290_034, "owned_by": "library" })
            }
            Server::Vllm { max_model_len } => json!({
                "id": Self::MODEL, "object": "model", "created": 1_735_142_223, "owned_by": "vllm",
                "root": Self::MODEL, "parent": null, "max_model_len": max_model_len,
                "permission": [{ "id": "modelperm-mock", "object": "model_permission", "allow_sampling": true }],
            }),
        };
        json!({ "object": "list", "data": [entry] })
    }

    /// The refusal of a model request `body` (a chat completion) when it does not fit the
    /// window this server was started with, in the server's own words: llama.cpp and
    /// llama-cpp-python count the prompt alone, OpenAI and vLLM the prompt and `max_tokens`.
    /// `None` when it fits (or the server has no window).
    pub fn refusal(&self, body: &Value) -> Option<Reply> {
        let window = match self {
            Server::LlamaCpp { n_ctx } | Server::LlamaCppPython { n_ctx } => *n_ctx,
            Server::Vllm { max_model_len } => *max_model_len,
            // Ollama cuts a long prompt silently.
            Server::Ollama { .. } => return None,
            Server::OpenAi { context_limit } => (*context_limit)?,
        };
        let prompt = prompt_tokens(body);
        let completion = ["max_tokens", "max_completion_tokens"]
            .iter()
            .find_map(|key| body.get(*key).and_then(Value::as_u64))
            .unwrap_or(0) as u32;
        match self {
            Server::LlamaCpp { .. } if prompt >= window => Some(Reply::raw(
                400,
                &json!({ "error": {
                    "code": 400,
                    "message": format!("request ({prompt} tokens) exceeds the available context size ({window} tokens), try increasing it"),
                    "type": "exceed_context_size_error",
                    "n_prompt_tokens": prompt,
                    "n_ctx": window,
                } })
                .to_string(),
            )),
            Server::LlamaCppPython { .. } if prompt >= window => Some(openai_refusal(window, prompt, completion)),
            Server::OpenAi { .. } | Server::Vllm { .. } if prompt + completion > window => {
                Some(openai_refusal(window, prompt, completion))
            }
            _ => None,
        }
    }
}

/// OpenAI's refusal for length, which vLLM and llama-cpp-python copy.
fn openai_refusal(window: u32, prompt: u32, completion: u32) -> Reply {
    Reply::raw(
        400,
        &json!({ "error": {
            "message": format!(
                "This model's maximum context length is {window} tokens. However, you requested {} tokens ({prompt} in the messages, {completion} in the completion). Please reduce the length of the messages or completion.",
                prompt + completion
            ),
            "type": "invalid_request_error",
            "param": "messages",
            "code": "context_length_exceeded",
        } })
        .to_string(),
    )
}

/// The answer to a count of the text at `field` of the JSON `body` (four characters to a
/// token), as `answer` writes the tokens; a 400 for a body without that text.
fn counted(body: &str, field: &str, answer: impl Fn(u32) -> Value) -> Reply {
    let text = serde_json::from_str::<Value>(body)
        .ok()
        .and_then(|body| Some(body.get(field)?.as_str()?.chars().count()));
    match text {
        Some(chars) => Reply::raw(200, &answer(chars.div_ceil(4) as u32).to_string()),
        None => Reply::error(400, "invalid_request", &format!("{field} is required")),
    }
}

/// A chat request's prompt in tokens, four characters of its messages' text to a token.
pub fn prompt_tokens(body: &Value) -> u32 {
    let chars: usize = body
        .get("messages")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|message| message.get("content").and_then(Value::as_str))
        .map(|text| text.chars().count())
        .sum();
    (chars.div_ceil(4) + 8) as u32
}
