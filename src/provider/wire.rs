//! What every provider's wire format shares: error bodies, status classes, the errors an
//! answer's stop reason stands for.

use std::cell::RefCell;
use std::sync::Arc;

use serde::ser::{Serialize, SerializeMap, SerializeSeq, Serializer};
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use crate::error::{ErrorKind, StructureError};
use crate::lru::Recent;
use crate::outcome::Usage;
use crate::ports::HttpResponse;
use crate::provider::conversation::{Delivered, Token};
use crate::provider::delivery::ANSWER_TOOL;
use crate::provider::window::Exceeded;
use crate::schema::walk::pointer;

/// Statuses worth retrying: rate limits, overload (Anthropic's 529), server errors.
pub const RETRYABLE_STATUSES: [u16; 6] = [429, 500, 502, 503, 504, 529];

/// Provider messages longer than this are cut in errors.
const SHOWN_MESSAGE_CHARS: usize = 500;

/// The typed error for an HTTP error response from `server`: the status, the provider's own
/// message and code, whether a retry may help, and what to check. `key_setting` names the
/// environment variable and config key of the API key, e.g. `ANTHROPIC_API_KEY / anthropic_api_key`.
pub fn http_error(
    server: &str,
    response: &HttpResponse,
    key_setting: &str,
    base_url_setting: &str,
) -> StructureError {
    let status = response.status;
    let (mut message, mut code) = error_message(&response.body);
    if let Some(fields) = context_overflow(status, &message, code.as_deref(), &response.body) {
        message.push_str(&fields);
        code = Some(CONTEXT_LENGTH_EXCEEDED.to_owned());
    }
    let hint = match status {
        401 | 403 => format!(" (check {key_setting})"),
        404 => {
            format!(" (check the model in STRUCTURE_MODEL and the base URL in {base_url_setting})")
        }
        429 => " (rate limited or out of quota: retry later)".to_owned(),
        529 => " (the provider is overloaded: retry later)".to_owned(),
        _ => String::new(),
    };
    StructureError::new(
        ErrorKind::Provider {
            status,
            retryable: retryable(response),
            code,
        },
        format!("{server} answered {status}: {message}{hint}"),
    )
}

/// The error code of a request refused for not fitting the model's context window, whatever
/// the server called it (OpenAI's name).
pub const CONTEXT_LENGTH_EXCEEDED: &str = "context_length_exceeded";

/// When a response refuses a request for not fitting the context window: what the message
/// should add of the body's own fields (llama.cpp states the figures only there).
fn context_overflow(status: u16, message: &str, code: Option<&str>, body: &[u8]) -> Option<String> {
    if !matches!(status, 400 | 413 | 422) || Exceeded::read(message, code).is_none() {
        return None;
    }
    let body: Value = serde_json::from_slice(body).ok()?;
    let error = body.get("error").unwrap_or(&body);
    let fields: Vec<String> = ["n_prompt_tokens", "n_ctx"]
        .iter()
        .filter_map(|name| Some(format!("{name}: {}", error.get(*name)?.as_u64()?)))
        .collect();
    Some(if fields.is_empty() {
        String::new()
    } else {
        format!(" ({})", fields.join(", "))
    })
}

/// Whether trying `response`'s request again may succeed: a retryable status, unless the
/// provider says otherwise (`x-should-retry: false`) or the "rate limit" is an exhausted quota.
pub fn retryable(response: &HttpResponse) -> bool {
    if let Some(advice) = response.header("x-should-retry") {
        return advice.trim().eq_ignore_ascii_case("true");
    }
    if !RETRYABLE_STATUSES.contains(&response.status) {
        return false;
    }
    let (_, code) = error_message(&response.body);
    code.as_deref() != Some("insufficient_quota")
}

/// The provider's own message and code from an error body: `{"error": {"message", "code" |
/// "type" | "status"}}` (OpenAI, Anthropic, Gemini), or `{"error": "..."}` (Ollama), else the
/// body itself.
pub fn error_message(body: &[u8]) -> (String, Option<String>) {
    let Ok(value) = serde_json::from_slice::<Value>(body) else {
        return (preview(body), None);
    };
    match value.get("error") {
        Some(Value::Object(error)) => {
            let message = error
                .get("message")
                .and_then(Value::as_str)
                .map_or_else(|| preview(body), cut);
            let code = ["code", "type", "status"]
                .iter()
                .find_map(|key| error.get(*key).and_then(Value::as_str))
                .map(str::to_owned);
            (message, code)
        }
        Some(Value::String(message)) => (cut(message), None),
        _ => (preview(body), None),
    }
}

/// A 2xx body as JSON, or an `invalid-response` error showing what came instead.
pub fn json_body(server: &str, response: &HttpResponse) -> Result<Value, StructureError> {
    serde_json::from_slice(&response.body).map_err(|error| {
        StructureError::invalid_response(format!(
            "{server} answered with a body that is not JSON ({error}): {}",
            preview(&response.body)
        ))
    })
}

/// What a response `body` says a call cost: the sums of the counts at the `prompt` and
/// `completion` JSON pointers, and the count at `cached` (missing counts are 0).
pub fn usage(body: &Value, prompt: &[&str], completion: &[&str], cached: &str) -> Usage {
    let count = |at: &str| pointer(body, at).and_then(Value::as_u64).unwrap_or(0);
    Usage {
        llm_calls: 0,
        prompt_tokens: prompt.iter().map(|pointer| count(pointer)).sum(),
        completion_tokens: completion.iter().map(|pointer| count(pointer)).sum(),
        cached_prompt_tokens: count(cached),
    }
}

/// The error of an answer cut off at the output limit.
pub fn truncated(max_output_tokens: u32) -> StructureError {
    StructureError::new(
        ErrorKind::Truncated,
        format!(
            "the answer was cut off at its output limit (at most {max_output_tokens} tokens, less \
             when the model's context window leaves less after the prompt); raise \
             STRUCTURE_MAX_OUTPUT_TOKENS (structure_max_output_tokens) or ask for less"
        ),
    )
}

/// A model's tool call: the answer when it called the answer tool with arguments (its id, or
/// `default_id` when the provider gave none), else the error of calling another tool.
pub fn tool_call(
    name: &str,
    id: Option<&str>,
    default_id: &str,
    arguments: Option<String>,
) -> Result<Delivered, StructureError> {
    match arguments {
        Some(arguments) if name == ANSWER_TOOL => Ok(Delivered::ToolCall {
            id: id.unwrap_or(default_id).to_owned(),
            arguments,
        }),
        _ => Err(other_tool(name)),
    }
}

/// The error of a model that called a tool other than the answer tool.
pub fn other_tool(name: &str) -> StructureError {
    StructureError::invalid_response(format!(
        "the model called a tool ({name:?}) instead of giving the JSON answer"
    ))
}

/// The error of a model that refused, in its own words.
pub fn refusal(said: &str) -> StructureError {
    StructureError::new(
        ErrorKind::Refusal,
        format!("the model refused to answer: {}", cut(said)),
    )
}

pub fn preview(body: &[u8]) -> String {
    if body.is_empty() {
        return "(empty body)".to_owned();
    }
    cut(&String::from_utf8_lossy(body))
}

pub fn cut(text: &str) -> String {
    if text.chars().count() <= SHOWN_MESSAGE_CHARS {
        return text.to_owned();
    }
    let cut: String = text.chars().take(SHOWN_MESSAGE_CHARS).collect();
    format!("{cut}…")
}

/// `value` as compact JSON, in a buffer with room for `size` bytes from the start (its length
/// when counted already). Written as bytes, not through `Display`, whose formatter passes each
/// piece through `fmt::Write`: four times the instructions for a request body.
pub fn json_bytes(value: &impl Serialize, size: usize) -> Vec<u8> {
    let mut bytes = Vec::with_capacity(size);
    // Writing JSON into memory fails only for a map whose keys are not strings, and no value
    // sent has one.
    let _ = serde_json::to_writer(&mut bytes, value);
    bytes
}

/// Answer schemas written out that an instance keeps, most recently used last: those of the
/// envelopes it keeps (`answer::format`).
const KEPT_SCHEMA_TEXTS: usize = 16;

thread_local! {
    static SCHEMA_TEXTS: RefCell<Recent<Arc<Value>, Arc<RawValue>>> =
        const { RefCell::new(Recent::new(KEPT_SCHEMA_TEXTS)) };
}

/// `schema` as compact JSON: written once for a schema an envelope the instance keeps holds
/// too ([`Recent::of_shared`]), every time for one the caller alone holds. Every request body
/// carries its answer's schema, and writing it out was most of writing the body.
pub fn schema_text(schema: &Arc<Value>) -> Arc<RawValue> {
    SCHEMA_TEXTS.with_borrow_mut(|kept| {
        kept.of_shared(schema, || {
            // Writing a value as JSON into memory fails only for a map whose keys are not
            // strings.
            serde_json::value::to_raw_value(&**schema)
                .map(Arc::from)
                .unwrap_or_else(|_| Arc::from(RawValue::NULL.to_owned()))
        })
    })
}

/// A request body's `fields` written with the `shared` JSON in place of what they hold at its
/// path, of keys and of indices into arrays: a body that takes the answer's schema as the
/// instance keeps it written out ([`schema_text`]), without a copy of it in every body. A path
/// that leads nowhere writes the fields as they are.
pub struct WithShared<'v> {
    pub fields: &'v Map<String, Value>,
    pub shared: Option<(&'v [&'v str], &'v RawValue)>,
}

impl Serialize for WithShared<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        write_object(self.fields, self.shared, serializer)
    }
}

/// `value` with `shared` in place of what it holds at `at`.
struct At<'v> {
    value: &'v Value,
    at: &'v [&'v str],
    shared: &'v RawValue,
}

impl Serialize for At<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let Some((step, rest)) = self.at.split_first() else {
            return self.shared.serialize(serializer);
        };
        match self.value {
            Value::Object(object) => write_object(object, Some((self.at, self.shared)), serializer),
            Value::Array(items) => {
                let index = step.parse::<usize>().ok();
                let mut seq = serializer.serialize_seq(Some(items.len()))?;
                for (at, item) in items.iter().enumerate() {
                    if Some(at) == index {
                        seq.serialize_element(&At {
                            value: item,
                            at: rest,
                            shared: self.shared,
                        })?;
                    } else {
                        seq.serialize_element(item)?;
                    }
                }
                seq.end()
            }
            other => other.serialize(serializer),
        }
    }
}

fn write_object<S: Serializer>(
    object: &Map<String, Value>,
    shared: Option<(&[&str], &RawValue)>,
    serializer: S,
) -> Result<S::Ok, S::Error> {
    let mut map = serializer.serialize_map(Some(object.len()))?;
    for (key, value) in object {
        match shared {
            Some((at, shared)) if at.first() == Some(&key.as_str()) => {
                map.serialize_entry(
                    key,
                    &At {
                        value,
                        at: &at[1..],
                        shared,
                    },
                )?;
            }
            _ => map.serialize_entry(key, value)?,
        }
    }
    map.end()
}

/// `key: value` written at the end of `object`, the compact JSON of an object (what adding the
/// key to the object, when it lacks it, and writing it again would give).
pub fn append_entry(object: &mut Vec<u8>, key: &str, value: &Value) {
    debug_assert_eq!(object.last(), Some(&b'}'), "an object's JSON");
    object.pop();
    if object.last() != Some(&b'{') {
        object.push(b',');
    }
    // Writing JSON into memory cannot fail for a string or a value.
    let _ = serde_json::to_writer(&mut *object, key);
    object.push(b':');
    let _ = serde_json::to_writer(&mut *object, value);
    object.push(b'}');
}

/// The bytes of `value` as compact JSON, counted without keeping them.
pub fn json_len(value: &impl Serialize) -> usize {
    struct Count(usize);
    impl std::io::Write for Count {
        fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
            self.0 += bytes.len();
            Ok(bytes.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut count = Count(0);
    // Writing JSON to a counter cannot fail.
    let _ = serde_json::to_writer(&mut count, value);
    count.0
}

/// The tokens listed in `list` (an array of objects holding each token's text under `text`
/// and its log-probability under `logprob`), as the providers write them: OpenAI's
/// `{"token", "logprob"}`, Gemini's `{"token", "logProbability"}`. Empty when `list` is not
/// such an array, or an entry lacks either. An entry's `bytes` (OpenAI's, llama.cpp's) are kept.
pub fn tokens(list: Option<&Value>, text: &str, logprob: &str) -> Vec<Token> {
    let Some(entries) = list.and_then(Value::as_array) else {
        return Vec::new();
    };
    let read = entries
        .iter()
        .map(|entry| {
            let bytes = (entry.get("bytes").and_then(Value::as_array)).and_then(|bytes| {
                (bytes.iter())
                    .map(|byte| byte.as_u64().and_then(|byte| u8::try_from(byte).ok()))
                    .collect::<Option<Vec<u8>>>()
            });
            Some(Token {
                text: entry.get(text)?.as_str()?.to_owned(),
                bytes,
                logprob: entry.get(logprob)?.as_f64()?,
            })
        })
        .collect::<Option<Vec<Token>>>();
    read.unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_shared_value_is_written_where_its_path_leads_and_nowhere_else() {
        let schema = json!({"type": "object", "properties": {"a": {"type": "string"}}});
        let text = schema_text(&Arc::new(schema.clone()));
        let fields = |body: Value| body.as_object().cloned().unwrap_or_default();
        let written = |body: &Map<String, Value>, at: &[&str]| {
            let body = WithShared {
                fields: body,
                shared: Some((at, &*text)),
            };
            let bytes = json_bytes(&body, 0);
            assert_eq!(bytes.len(), json_len(&body));
            serde_json::from_slice::<Value>(&bytes).unwrap()
        };
        // Through objects, keeping the keys' order.
        let body = fields(json!({"z": 1, "format": {"schema": null, "strict": true}, "a": 2}));
        let shown = written(&body, &["format", "schema"]);
        assert_eq!(
            shown,
            json!({"z": 1, "format": {"schema": schema, "strict": true}, "a": 2})
        );
        let keys: Vec<&String> = shown["format"].as_object().unwrap().keys().collect();
        assert_eq!(keys, ["schema", "strict"]);
        // Through an array's item.
        let body = fields(json!({"tools": [{"name": "x"}, {"name": "t", "input_schema": null}]}));
        assert_eq!(
            written(&body, &["tools", "1", "input_schema"]),
            json!({"tools": [{"name": "x"}, {"name": "t", "input_schema": schema}]})
        );
        // A path that leads nowhere leaves the fields as they are.
        for nowhere in [
            &["tools", "7", "input_schema"][..],
            &["tools", "x"],
            &["none"],
        ] {
            assert_eq!(written(&body, nowhere), Value::Object(body.clone()));
        }
    }

    #[test]
    fn a_schema_is_written_once_while_it_is_shared_and_never_stale() {
        let schema = Arc::new(json!({"type": "object", "required": ["a"]}));
        let kept = Arc::clone(&schema);
        let first = schema_text(&schema);
        assert_eq!(first.get(), schema.to_string());
        assert!(Arc::ptr_eq(&first, &schema_text(&schema)), "written once");
        drop(kept);
        // Equal JSON in another allocation is written on its own, and so is a changed copy.
        let equal = Arc::new((*schema).clone());
        assert!(!Arc::ptr_eq(&first, &schema_text(&equal)));
        let mut changed = (*schema).clone();
        changed["required"] = json!(["b"]);
        let changed = Arc::new(changed);
        assert_eq!(schema_text(&changed).get(), changed.to_string());
        // The kept schema cannot change while it is kept: the cache holds it too.
        let mut schema = schema;
        assert!(Arc::get_mut(&mut schema).is_none());
    }

    #[test]
    fn an_entry_appended_is_the_key_added_and_the_object_written_again() {
        for object in [json!({}), json!({"a": [1, {"b": "}"}], "c": "x\"}"})] {
            let mut bytes = json_bytes(&object, 0);
            append_entry(&mut bytes, "max \"tokens\"", &json!(512));
            let mut added = object.as_object().cloned().unwrap();
            added.insert("max \"tokens\"".into(), json!(512));
            assert_eq!(bytes, json_bytes(&added, 0));
        }
    }
}
