//! The engine's HTTP face: what a llama.cpp server answers, as the component asks it
//! (`src/provider/server.rs`, `tokenizer.rs`, `openai_chat.rs`), over any [`Decoder`]:
//!
//! | request | answer |
//! |---|---|
//! | `GET /v1/models` | the model, `owned_by: "llamacpp"`, its window in `meta.n_ctx` |
//! | `GET /props` | `default_generation_settings.n_ctx` and `total_slots: 1` |
//! | `POST /tokenize` `{"content"}` | `tokens` |
//! | `POST /v1/chat/completions` | the answer, its grammar the request's JSON schema, each token's log-probability when asked, the prompt tokens the cache already held |
//!
//! Errors are llama.cpp's too: a prompt the window cannot hold is `exceed_context_size_error`
//! with `n_prompt_tokens` and `n_ctx` (the component learns the window from it).

use serde_json::{Map, Value, json};

use crate::relay::{Answer, Relayed};

/// A token as the engine counts it.
pub type Token = i32;

/// What the engine runs: a model with its chat template, its tokenizer and a context to decode
/// in. [`super::session::Session`] is llama.cpp's; tests use their own.
pub trait Decoder {
    /// The model's context window in tokens.
    fn window(&self) -> u32;
    /// `messages` (role, content) in the model's chat template, ready for the answer.
    fn template(&self, messages: &[(String, String)]) -> Result<String, String>;
    /// `text`'s tokens (special tokens read as such).
    fn tokenize(&self, text: &str) -> Vec<Token>;
    /// A grammar that holds answers to `schema` (a JSON Schema).
    fn grammar(&self, schema: &Value) -> Result<String, String>;
    /// The answer to `prompt`, greedily, within `grammar` and `max_tokens`.
    fn generate(
        &mut self,
        prompt: &[Token],
        grammar: Option<&str>,
        max_tokens: u32,
        sampling: Sampling,
    ) -> Result<Generation, String>;
}

/// How an answer's tokens are chosen, besides greedily within the grammar.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Sampling {
    /// The likeliest tokens to report beside each (0: none).
    pub top: usize,
    /// A token among the answer's last [`Sampling::repeat_last_n`] has its logit divided by
    /// this (multiplied, when negative); 1: off.
    pub repeat_penalty: f32,
    pub repeat_last_n: usize,
}

/// The repeat penalty OpenAI-compatible local servers apply unless asked otherwise
/// (llama-cpp-python's server: 1.1 over the last 64 tokens): what the eval's server ran with,
/// and what keeps a small model from writing one array item for ever.
pub const DEFAULT_REPEAT_PENALTY: f32 = 1.1;
pub const DEFAULT_REPEAT_LAST_N: usize = 64;

/// An answer as it was decoded.
#[derive(Debug, Clone, PartialEq)]
pub struct Generation {
    pub tokens: Vec<Sampled>,
    pub finish: Finish,
    /// The prompt's tokens that the context held from the request before (not decoded again).
    pub cached_tokens: usize,
}

/// One token of an answer: its bytes, its log-probability among the whole vocabulary's raw
/// logits (as llama.cpp's server gives it), and the likeliest tokens there.
#[derive(Debug, Clone, PartialEq)]
pub struct Sampled {
    pub bytes: Vec<u8>,
    pub logprob: f64,
    pub top: Vec<(Vec<u8>, f64)>,
}

/// Why an answer ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Finish {
    /// The model ended it (its grammar was complete).
    Stop,
    /// `max_tokens` or the window ran out.
    Length,
}

/// The answer to `request`, which came to the engine's origin, as `name`'s server.
pub fn answer(decoder: &mut dyn Decoder, name: &str, request: &Relayed) -> Answer {
    let path = request
        .url
        .split_once("://")
        .map_or(request.url.as_str(), |(_, rest)| {
            rest.find('/').map_or("/", |at| &rest[at..])
        });
    let path = path.split('?').next().unwrap_or(path);
    match (request.method.as_str(), path) {
        ("GET", "/v1/models") => ok(models(name, decoder.window())),
        ("GET", "/props") => ok(props(name, decoder.window())),
        ("POST", "/tokenize") => tokenize(decoder, &request.body),
        ("POST", "/v1/chat/completions") => chat(decoder, name, &request.body),
        _ => error(
            404,
            "not_found_error",
            &format!("{} {path} is not served here", request.method),
        ),
    }
}

fn ok(body: Value) -> Answer {
    Answer {
        status: 200,
        body: body.to_string().into(),
    }
}

/// An error as llama.cpp's server writes it.
pub fn error(status: u16, kind: &str, message: &str) -> Answer {
    error_with(status, kind, message, Map::new())
}

fn error_with(status: u16, kind: &str, message: &str, extra: Map<String, Value>) -> Answer {
    let mut error = json!({ "code": status, "message": message, "type": kind });
    if let Value::Object(fields) = &mut error {
        fields.extend(extra);
    }
    Answer {
        status,
        body: json!({ "error": error }).to_string().into(),
    }
}

fn models(name: &str, window: u32) -> Value {
    json!({ "object": "list", "data": [{
        "id": name, "object": "model", "created": 0, "owned_by": "llamacpp",
        "meta": { "n_ctx": window, "n_ctx_train": window }
    }] })
}

fn props(name: &str, window: u32) -> Value {
    json!({
        "default_generation_settings": { "n_ctx": window },
        "total_slots": 1,
        "model_alias": name,
    })
}

fn tokenize(decoder: &dyn Decoder, body: &[u8]) -> Answer {
    let Ok(body) = serde_json::from_slice::<Value>(body) else {
        return error(400, "invalid_request_error", "the body is not JSON");
    };
    let Some(content) = body.get("content").and_then(Value::as_str) else {
        return error(400, "invalid_request_error", "content is missing");
    };
    ok(json!({ "tokens": decoder.tokenize(content) }))
}

/// A chat completion request, read.
struct Chat {
    messages: Vec<(String, String)>,
    schema: Option<Value>,
    max_tokens: Option<u32>,
    /// The likeliest tokens to give beside each: `None` without `logprobs`.
    top: Option<usize>,
    repeat_penalty: f32,
    repeat_last_n: usize,
}

/// What a chat completion request asks, or why it cannot be answered.
fn read_chat(body: &[u8]) -> Result<Chat, Answer> {
    let refuse = |message: &str| error(400, "invalid_request_error", message);
    let body: Value = serde_json::from_slice(body).map_err(|_| refuse("the body is not JSON"))?;
    let Some(list) = body.get("messages").and_then(Value::as_array) else {
        return Err(refuse("messages is missing"));
    };
    let mut messages = Vec::with_capacity(list.len());
    for message in list {
        let role = message
            .get("role")
            .and_then(Value::as_str)
            .unwrap_or("user");
        let content = match message.get("content") {
            Some(Value::String(text)) => text.clone(),
            Some(Value::Array(parts)) => {
                if parts
                    .iter()
                    .any(|part| part.get("type").and_then(Value::as_str) != Some("text"))
                {
                    return Err(refuse(
                        "the local model reads text only, not images or files",
                    ));
                }
                let texts = parts
                    .iter()
                    .filter_map(|part| part.get("text").and_then(Value::as_str));
                texts.collect::<Vec<_>>().join("\n")
            }
            _ => String::new(),
        };
        messages.push((role.to_owned(), content));
    }
    // llama.cpp's `json_object` with its `schema`, or OpenAI's `json_schema`.
    let format = body.get("response_format");
    let schema = (format.and_then(|format| format.get("schema")))
        .or_else(|| format.and_then(|format| format.pointer("/json_schema/schema")))
        .filter(|schema| !schema.is_null())
        .cloned();
    let max_tokens = (body
        .get("max_tokens")
        .or_else(|| body.get("max_completion_tokens")))
    .and_then(Value::as_u64)
    .map(|tokens| u32::try_from(tokens).unwrap_or(u32::MAX));
    let top = (body.get("logprobs").and_then(Value::as_bool) == Some(true)).then(|| {
        let top = body
            .get("top_logprobs")
            .and_then(Value::as_u64)
            .unwrap_or(0);
        usize::try_from(top.min(20)).unwrap_or(0)
    });
    // llama.cpp's own fields, when a caller sets them.
    let repeat_penalty = (body.get("repeat_penalty").and_then(Value::as_f64))
        .map_or(DEFAULT_REPEAT_PENALTY, |p| p as f32);
    let repeat_last_n = (body.get("repeat_last_n").and_then(Value::as_u64))
        .map_or(DEFAULT_REPEAT_LAST_N, |n| {
            usize::try_from(n).unwrap_or(DEFAULT_REPEAT_LAST_N)
        });
    Ok(Chat {
        messages,
        schema,
        max_tokens,
        top,
        repeat_penalty,
        repeat_last_n,
    })
}

fn chat(decoder: &mut dyn Decoder, name: &str, body: &[u8]) -> Answer {
    let chat = match read_chat(body) {
        Ok(chat) => chat,
        Err(answer) => return answer,
    };
    let prompt = match decoder.template(&chat.messages) {
        Ok(prompt) => decoder.tokenize(&prompt),
        Err(message) => return error(500, "server_error", &message),
    };
    let window = decoder.window();
    let prompt_tokens = u32::try_from(prompt.len()).unwrap_or(u32::MAX);
    if prompt_tokens >= window {
        let mut extra = Map::new();
        extra.insert("n_prompt_tokens".into(), json!(prompt_tokens));
        extra.insert("n_ctx".into(), json!(window));
        let message = format!(
            "the request exceeds the available context size ({window} tokens), try increasing it \
             (n_prompt_tokens: {prompt_tokens}, n_ctx: {window})"
        );
        return error_with(400, "exceed_context_size_error", &message, extra);
    }
    let grammar = match &chat.schema {
        Some(schema) => match decoder.grammar(schema) {
            Ok(grammar) => Some(grammar),
            Err(message) => return error(400, "invalid_request_error", &message),
        },
        None => None,
    };
    let room = window - prompt_tokens;
    let max_tokens = chat.max_tokens.map_or(room, |asked| asked.min(room));
    let sampling = Sampling {
        top: chat.top.unwrap_or(0),
        repeat_penalty: chat.repeat_penalty,
        repeat_last_n: chat.repeat_last_n,
    };
    match decoder.generate(&prompt, grammar.as_deref(), max_tokens, sampling) {
        Ok(generation) => ok(completion(
            name,
            &generation,
            prompt.len(),
            chat.top.is_some(),
        )),
        Err(message) => error(500, "server_error", &message),
    }
}

/// The chat completion of `generation`, as OpenAI's API and llama.cpp's server write it.
fn completion(name: &str, generation: &Generation, prompt_tokens: usize, logprobs: bool) -> Value {
    let bytes: Vec<u8> = generation
        .tokens
        .iter()
        .flat_map(|token| token.bytes.iter().copied())
        .collect();
    let content = String::from_utf8_lossy(&bytes);
    let finish = match generation.finish {
        Finish::Stop => "stop",
        Finish::Length => "length",
    };
    let piece = |bytes: &[u8], logprob: f64| json!({ "token": String::from_utf8_lossy(bytes), "logprob": logprob, "bytes": bytes });
    let logprobs = logprobs.then(|| {
        let content: Vec<Value> = (generation.tokens.iter())
            .map(|token| {
                let mut entry = piece(&token.bytes, token.logprob);
                let top: Vec<Value> = token
                    .top
                    .iter()
                    .map(|(bytes, logprob)| piece(bytes, *logprob))
                    .collect();
                entry["top_logprobs"] = Value::Array(top);
                entry
            })
            .collect();
        json!({ "content": content })
    });
    json!({
        "id": "chatcmpl-local",
        "object": "chat.completion",
        "created": 0,
        "model": name,
        "choices": [{
            "index": 0,
            "message": { "role": "assistant", "content": content },
            "logprobs": logprobs,
            "finish_reason": finish,
        }],
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": generation.tokens.len(),
            "total_tokens": prompt_tokens + generation.tokens.len(),
            "prompt_tokens_details": { "cached_tokens": generation.cached_tokens },
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A decoder whose tokens are bytes, whose template joins the messages, and whose answer is
    /// `{"a": 1}` a byte a token, each of probability one half.
    struct Bytes {
        window: u32,
        generated: Vec<(Vec<Token>, Option<String>, u32, Sampling)>,
    }

    impl Decoder for Bytes {
        fn window(&self) -> u32 {
            self.window
        }
        fn template(&self, messages: &[(String, String)]) -> Result<String, String> {
            Ok(messages
                .iter()
                .map(|(role, content)| format!("{role}: {content}\n"))
                .collect())
        }
        fn tokenize(&self, text: &str) -> Vec<Token> {
            text.bytes().map(Token::from).collect()
        }
        fn grammar(&self, schema: &Value) -> Result<String, String> {
            Ok(format!("root ::= {schema}"))
        }
        fn generate(
            &mut self,
            prompt: &[Token],
            grammar: Option<&str>,
            max: u32,
            sampling: Sampling,
        ) -> Result<Generation, String> {
            self.generated
                .push((prompt.to_vec(), grammar.map(str::to_owned), max, sampling));
            let tokens = (br#"{"a": 1}"#.iter())
                .map(|byte| Sampled {
                    bytes: vec![*byte],
                    logprob: 0.5f64.ln(),
                    top: vec![(vec![*byte], 0.5f64.ln())],
                })
                .collect();
            Ok(Generation {
                tokens,
                finish: Finish::Stop,
                cached_tokens: 3,
            })
        }
    }

    fn post(decoder: &mut Bytes, path: &str, body: Value) -> (u16, Value) {
        let request = Relayed {
            method: "POST".into(),
            url: format!("http://local-model.structure.invalid{path}"),
            headers: Vec::new(),
            body: body.to_string().into(),
        };
        let answer = answer(decoder, "tiny", &request);
        (answer.status, serde_json::from_slice(&answer.body).unwrap())
    }

    #[test]
    fn a_chat_completion_is_decoded_within_its_schemas_grammar_with_each_tokens_logprob() {
        let mut decoder = Bytes {
            window: 4096,
            generated: Vec::new(),
        };
        let body = json!({
            "model": "tiny",
            "messages": [{ "role": "system", "content": "S" }, { "role": "user", "content": [{ "type": "text", "text": "U" }] }],
            "response_format": { "type": "json_object", "schema": { "type": "object" } },
            "max_tokens": 100, "temperature": 0, "logprobs": true, "top_logprobs": 1,
        });
        let (status, answer) = post(&mut decoder, "/v1/chat/completions", body);
        assert_eq!(status, 200, "{answer}");
        assert_eq!(answer["choices"][0]["message"]["content"], r#"{"a": 1}"#);
        assert_eq!(answer["choices"][0]["finish_reason"], "stop");
        let tokens = &answer["choices"][0]["logprobs"]["content"];
        assert_eq!(
            (tokens[0]["token"].as_str(), tokens[0]["bytes"][0].as_u64()),
            (Some("{"), Some(123))
        );
        assert_eq!(tokens[0]["top_logprobs"][0]["token"], "{");
        assert_eq!(answer["usage"]["prompt_tokens"], 18);
        assert_eq!(answer["usage"]["completion_tokens"], 8);
        assert_eq!(answer["usage"]["prompt_tokens_details"]["cached_tokens"], 3);
        let (prompt, grammar, max, sampling) = decoder.generated.pop().unwrap();
        assert_eq!(
            String::from_utf8(prompt.iter().map(|&t| t as u8).collect()).unwrap(),
            "system: S\nuser: U\n"
        );
        assert_eq!(
            (grammar.as_deref(), max, sampling.top),
            (Some(r#"root ::= {"type":"object"}"#), 100, 1)
        );
        assert_eq!(
            (sampling.repeat_penalty, sampling.repeat_last_n),
            (1.1, 64),
            "llama-cpp-python's server's"
        );
        // OpenAI's json_schema form, no logprobs asked: none given; the answer's room is the window's.
        let body = json!({ "messages": [{ "role": "user", "content": "U" }],
            "response_format": { "type": "json_schema", "json_schema": { "name": "a", "schema": { "type": "string" } } } });
        let (_, answer) = post(&mut decoder, "/v1/chat/completions", body);
        assert!(answer["choices"][0]["logprobs"].is_null());
        let (_, grammar, max, _) = decoder.generated.pop().unwrap();
        assert_eq!(
            (grammar.as_deref(), max),
            (Some(r#"root ::= {"type":"string"}"#), 4096 - 8)
        );
    }

    #[test]
    fn a_prompt_the_window_cannot_hold_is_refused_as_llama_cpp_refuses_it() {
        let mut decoder = Bytes {
            window: 10,
            generated: Vec::new(),
        };
        let body = json!({ "messages": [{ "role": "user", "content": "a long question" }] });
        let (status, answer) = post(&mut decoder, "/v1/chat/completions", body);
        assert_eq!(
            (status, answer["error"]["type"].as_str()),
            (400, Some("exceed_context_size_error"))
        );
        assert_eq!(
            (
                answer["error"]["n_prompt_tokens"].as_u64(),
                answer["error"]["n_ctx"].as_u64()
            ),
            (Some(22), Some(10))
        );
        assert!(decoder.generated.is_empty());
        let image = json!({ "messages": [{ "role": "user", "content": [{ "type": "image_url", "image_url": { "url": "data:" } }] }] });
        let (status, answer) = post(&mut decoder, "/v1/chat/completions", image);
        assert_eq!(status, 400, "{answer}");
        assert!(
            answer["error"]["message"]
                .as_str()
                .unwrap()
                .contains("text only")
        );
    }

    #[test]
    fn the_server_says_what_it_is_how_much_it_reads_and_counts_tokens() {
        let mut decoder = Bytes {
            window: 8192,
            generated: Vec::new(),
        };
        let get = |decoder: &mut Bytes, path: &str| {
            let request = Relayed {
                method: "GET".into(),
                url: format!("http://h{path}"),
                headers: Vec::new(),
                body: Default::default(),
            };
            let answer = answer(decoder, "tiny", &request);
            (
                answer.status,
                serde_json::from_slice::<Value>(&answer.body).unwrap(),
            )
        };
        let (_, models) = get(&mut decoder, "/v1/models");
        assert_eq!(models["data"][0]["owned_by"], "llamacpp");
        assert_eq!(models["data"][0]["meta"]["n_ctx"], 8192);
        let (_, props) = get(&mut decoder, "/props");
        assert_eq!(
            (
                props["default_generation_settings"]["n_ctx"].as_u64(),
                props["total_slots"].as_u64()
            ),
            (Some(8192), Some(1))
        );
        let (status, _) = get(&mut decoder, "/api/version");
        assert_eq!(status, 404);
        let (_, tokens) = post(&mut decoder, "/tokenize", json!({ "content": "abc" }));
        assert_eq!(tokens["tokens"], json!([97, 98, 99]));
    }
}
