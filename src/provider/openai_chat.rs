//! OpenAI Chat Completions (`POST {base}/chat/completions`), the wire format of OpenAI and of
//! most local and hosted OpenAI-compatible servers.

use std::time::Duration;

use serde_json::{Map, Value, json};

use crate::answer::format::AnswerFormat;
use crate::error::{ErrorKind, StructureError};
use crate::outcome::Usage;
use crate::ports::{HttpRequest, HttpResponse};
use crate::provider::profile::Profile;
use crate::provider::{Completion, Conversation, ModelRef, Provider, Role};
use crate::settings::{Secret, Settings, keys};

/// Provider messages longer than this are cut in errors.
const SHOWN_MESSAGE_CHARS: usize = 500;

pub struct OpenAiChat {
    /// `provider/model` as configured.
    model: String,
    /// The model name the server knows.
    model_name: String,
    profile: Profile,
    base_url: String,
    api_key: Option<Secret>,
    max_output_tokens: u32,
    timeout: Duration,
}

impl OpenAiChat {
    pub fn new(settings: &Settings, model: ModelRef) -> Result<Self, StructureError> {
        let profile = Profile::select(
            &model,
            settings.openai_base_url.as_deref(),
            settings.provider_profile.as_deref(),
        )?;
        let base_url = settings
            .openai_base_url
            .as_deref()
            .unwrap_or(profile.default_base_url())
            .trim_end_matches('/')
            .to_owned();
        if !(base_url.starts_with("http://") || base_url.starts_with("https://")) {
            return Err(StructureError::configuration(
                keys::OPENAI_BASE_URL,
                format!(
                    "base URL {base_url:?} must start with http:// or https://, e.g. \
                     http://localhost:11434/v1 (set OPENAI_BASE_URL / openai_base_url)"
                ),
            ));
        }
        if profile.requires_api_key() && settings.openai_api_key.is_none() {
            return Err(StructureError::configuration(
                keys::OPENAI_API_KEY,
                "no OpenAI API key: set OPENAI_API_KEY (openai_api_key), or point OPENAI_BASE_URL \
                 (openai_base_url) at an OpenAI-compatible server",
            ));
        }
        Ok(Self {
            model: format!("{}/{}", model.provider, model.name),
            model_name: model.name,
            profile,
            base_url,
            api_key: settings.openai_api_key.clone(),
            max_output_tokens: settings.max_output_tokens,
            timeout: settings.request_timeout,
        })
    }

    fn server(&self) -> String {
        match self.profile {
            Profile::OpenAi => "OpenAI".to_owned(),
            other => format!("the {} server at {}", other.name(), self.base_url),
        }
    }

    fn provider_error(&self, response: &HttpResponse) -> StructureError {
        let status = response.status;
        let (message, code) = error_message(&response.body);
        let hint = match status {
            401 | 403 => " (check OPENAI_API_KEY / openai_api_key)",
            404 => " (check the model in STRUCTURE_MODEL and the base URL in OPENAI_BASE_URL)",
            429 => " (rate limited or out of quota: retry later)",
            _ => "",
        };
        let retryable = matches!(status, 408 | 409 | 429) || status >= 500;
        StructureError::new(
            ErrorKind::Provider {
                status,
                retryable,
                code,
            },
            format!("{} answered {status}: {message}{hint}", self.server()),
        )
    }
}

impl Provider for OpenAiChat {
    fn model(&self) -> &str {
        &self.model
    }

    fn profile_name(&self) -> &'static str {
        self.profile.name()
    }

    fn answer_format(&self, target: &Value) -> AnswerFormat {
        AnswerFormat::build(target, self.profile.format_options())
    }

    fn schema_in_prompt(&self) -> bool {
        self.profile.schema_in_prompt()
    }

    fn request(&self, conversation: &Conversation, format: &AnswerFormat) -> HttpRequest {
        let mut messages = vec![json!({ "role": "system", "content": conversation.system })];
        messages.extend(conversation.turns.iter().map(|(role, content)| {
            let role = match role {
                Role::User => "user",
                Role::Assistant => "assistant",
            };
            json!({ "role": role, "content": content })
        }));
        let mut body = Map::new();
        body.insert("model".into(), json!(self.model_name));
        body.insert("messages".into(), Value::Array(messages));
        body.insert(
            "response_format".into(),
            self.profile.response_format(format),
        );
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
        }
    }

    fn completion(&self, response: &HttpResponse) -> Result<Completion, StructureError> {
        if !(200..300).contains(&response.status) {
            return Err(self.provider_error(response));
        }
        let body: Value = serde_json::from_slice(&response.body).map_err(|error| {
            StructureError::invalid_response(format!(
                "{} answered with a body that is not JSON ({error}): {}",
                self.server(),
                preview(&response.body)
            ))
        })?;
        let usage = usage(&body);
        let with_usage = |error: StructureError| error.with_usage(usage);
        let Some(choice) = body.get("choices").and_then(|choices| choices.get(0)) else {
            let (message, _) = error_message(&response.body);
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
                format!("the model refused to answer: {}", cut(refusal)),
            )));
        }
        match choice.get("finish_reason").and_then(Value::as_str) {
            Some("length") => {
                return Err(with_usage(StructureError::new(
                    ErrorKind::Truncated,
                    format!(
                        "the answer was cut off at the output limit of {} tokens; raise \
                         STRUCTURE_MAX_OUTPUT_TOKENS (structure_max_output_tokens) or ask for less",
                        self.max_output_tokens
                    ),
                )));
            }
            Some("content_filter") => {
                return Err(with_usage(StructureError::new(
                    ErrorKind::Refusal,
                    "the provider's content filter blocked the answer",
                )));
            }
            _ => {}
        }
        match message.get("content").and_then(Value::as_str) {
            Some(text) => Ok(Completion {
                text: text.to_owned(),
                usage,
            }),
            None if message.get("tool_calls").is_some() => {
                Err(with_usage(StructureError::invalid_response(
                    "the model answered with a tool call instead of the JSON answer",
                )))
            }
            None => Err(with_usage(StructureError::invalid_response(format!(
                "{} answered without message content",
                self.server()
            )))),
        }
    }
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

/// The provider's own error message and code from an error body (`{"error": {"message", "code",
/// "type"}}`, or `{"error": "..."}` as Ollama writes it), else the body itself.
fn error_message(body: &[u8]) -> (String, Option<String>) {
    let Ok(value) = serde_json::from_slice::<Value>(body) else {
        return (preview(body), None);
    };
    match value.get("error") {
        Some(Value::Object(error)) => {
            let message = error
                .get("message")
                .and_then(Value::as_str)
                .map_or_else(|| preview(body), cut);
            let code = ["code", "type"]
                .iter()
                .find_map(|key| error.get(*key).and_then(Value::as_str))
                .map(str::to_owned);
            (message, code)
        }
        Some(Value::String(message)) => (cut(message), None),
        _ => (preview(body), None),
    }
}

fn preview(body: &[u8]) -> String {
    if body.is_empty() {
        return "(empty body)".to_owned();
    }
    cut(&String::from_utf8_lossy(body))
}

fn cut(text: &str) -> String {
    if text.chars().count() <= SHOWN_MESSAGE_CHARS {
        return text.to_owned();
    }
    let cut: String = text.chars().take(SHOWN_MESSAGE_CHARS).collect();
    format!("{cut}…")
}
