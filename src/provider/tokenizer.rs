//! How many tokens a text takes, asked of the server that will read it. A request's prompt is
//! estimated at [`BYTES_PER_TOKEN`](crate::provider::window::BYTES_PER_TOKEN) bytes a token,
//! which errs on the side of a smaller request: English prose runs at four or more, so a
//! contract that fits a local model's window by a third is estimated over it. Before such a text
//! is read in parts, the servers that can count are asked to:
//!
//! | server | asked | says |
//! |---|---|---|
//! | llama.cpp | `POST /tokenize` `{"content"}` | `tokens` |
//! | llama-cpp-python | `POST /extras/tokenize/count` `{"input"}` | `count` |
//! | vLLM | `POST /tokenize` `{"model", "prompt"}` | `count` |
//!
//! A prompt that would not fit even at [`MAX_BYTES_PER_TOKEN`] bytes a token is not counted: no
//! count could fit it. A server whose kind is not known (an `openai/` model at a base URL, its
//! window set) is asked each way in turn. Ollama and hosted providers count nothing before a
//! request: their texts keep the estimate. A count that fails or makes no sense (no answer, an
//! error, fewer tokens than a token a byte of [`MAX_BYTES_PER_TOKEN`] allows) counts nothing:
//! the text is read in parts, as before.

use std::time::Duration;

use serde_json::{Value, json};

use crate::ports::{HttpRequest, Ports};
use crate::provider::endpoint::Endpoint;
use crate::provider::profile::Profile;
use crate::provider::server::{self, Answer};
use crate::provider::window::MAX_BYTES_PER_TOKEN;

/// The longest a count may take: a server of one slot counts after the request it is serving.
const COUNT_TIMEOUT: Duration = Duration::from_secs(60);
/// The most bytes of a count's answer read (llama.cpp lists every token's id).
const COUNT_RESPONSE_BYTES: usize = 16 << 20;

/// The tokens `text` takes in the model of `endpoint`, as its server counts them; `None` when
/// its kind of server cannot say, or did not.
pub fn count(endpoint: &Endpoint, text: &str, ports: &Ports<'_>) -> Option<u64> {
    let root = endpoint
        .base_url
        .strip_suffix("/v1")
        .unwrap_or(&endpoint.base_url);
    let llama_cpp = || {
        ask(
            &format!("{root}/tokenize"),
            json!({ "content": text }),
            ports,
        )
    };
    let llama_cpp_python = || {
        let body = json!({ "input": text, "model": endpoint.model_name });
        ask(&format!("{root}/extras/tokenize/count"), body, ports)
    };
    let vllm = || {
        let body = json!({ "model": endpoint.model_name, "prompt": text });
        ask(&format!("{root}/tokenize"), body, ports)
    };
    let asked = match Profile::named(endpoint.profile)? {
        Profile::LlamaCpp => llama_cpp().or_else(llama_cpp_python),
        Profile::Vllm => vllm(),
        // A server at a base URL of its own whose kind no probe said (its window was set).
        Profile::OpenAiCompatible => llama_cpp().or_else(vllm).or_else(llama_cpp_python),
        Profile::OpenAi | Profile::Ollama => None,
    }?;
    // A count under a token for every MAX_BYTES_PER_TOKEN bytes counts something else.
    let least = (text.len() as f64 / MAX_BYTES_PER_TOKEN).floor() as u64;
    (asked >= least).then_some(asked)
}

/// What a server's count at `url` of `body` says: `count`, or the length of `tokens`.
fn ask(url: &str, body: Value, ports: &Ports<'_>) -> Option<u64> {
    let request = HttpRequest {
        timeout: COUNT_TIMEOUT,
        max_response_bytes: COUNT_RESPONSE_BYTES,
        ..server::probe_request("POST", url, body)
    };
    match server::answer(&request, ports) {
        Answer::Json(answer) => counted(&answer),
        Answer::Other | Answer::Unreachable => None,
    }
}

/// The tokens a count's `answer` says: its `count`, or how many `tokens` it lists.
fn counted(answer: &Value) -> Option<u64> {
    answer
        .get("count")
        .and_then(Value::as_u64)
        .or_else(|| Some(answer.get("tokens")?.as_array()?.len() as u64))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_count_is_read_from_either_field() {
        let read = |answer: Value| counted(&answer);
        assert_eq!(read(json!({ "count": 7, "tokens": [1] })), Some(7));
        assert_eq!(read(json!({ "tokens": [1, 2, 3] })), Some(3));
        assert_eq!(read(json!({ "detail": "Not Found" })), None);
    }
}
