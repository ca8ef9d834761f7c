//! Gemini `generateContent` (`POST {base}/v1beta/models/{model}:generateContent`).
//!
//! Native mode sends `responseMimeType: application/json` with `responseJsonSchema` (JSON
//! Schema), or with `responseSchema` (the OpenAPI subset, see [`openapi`]) when
//! `structure_gemini_schema=openapi`; tool mode declares the answer tool and forces it with
//! `functionCallingConfig.mode: ANY`. Earlier answers go back as model text, not as replayed
//! function calls (those would need Gemini's thought signatures).

pub mod openapi;

use std::time::Duration;

use serde_json::{Map, Value, json};

use crate::answer::format::{AnswerFormat, SchemaDialect, Shape};
use crate::error::{ErrorKind, StructureError};
use crate::keys;
use crate::media_type::Attachment;
use crate::outcome::Usage;
use crate::ports::{HttpRequest, HttpResponse};
use crate::provider::contract::Provider;
use crate::provider::conversation::{Conversation, Delivered, Token, Turn};
use crate::provider::delivery::{ANSWER_TOOL, ANSWER_TOOL_DESCRIPTION, Capabilities, Delivery};
use crate::provider::endpoint::{self, Endpoint, LlmBody};
use crate::provider::model::ModelRef;
use crate::provider::server::Server;
use crate::provider::window::Window;
use crate::provider::{retry, wire};
use crate::schema::subset::GEMINI;
use crate::settings::Settings;

const API_VERSION: &str = "v1beta";

/// Finish reasons that mean a safety or policy filter stopped the answer.
const BLOCKING_FINISH_REASONS: &[&str] = &[
    "SAFETY",
    "RECITATION",
    "BLOCKLIST",
    "PROHIBITED_CONTENT",
    "SPII",
    "LANGUAGE",
    "IMAGE_SAFETY",
    "IMAGE_PROHIBITED_CONTENT",
    "IMAGE_RECITATION",
];

pub struct Gemini {
    /// At `{base}/{version}`.
    endpoint: Endpoint,
    /// `responseSchema` (OpenAPI subset) instead of `responseJsonSchema`.
    openapi: bool,
}

impl Gemini {
    pub fn new(
        settings: &Settings,
        model: ModelRef,
        server: Server,
    ) -> Result<Self, StructureError> {
        let base_url =
            endpoint::base_url(settings, keys::GEMINI_BASE_URL, keys::GEMINI_DEFAULT_URL)?;
        // The SDKs' base URL has no version; accept one written with it.
        let has_version = ["/v1beta", "/v1", "/v1alpha"]
            .iter()
            .any(|version| base_url.ends_with(version));
        let base_url = if has_version {
            base_url
        } else {
            format!("{base_url}/{API_VERSION}")
        };
        let Some(api_key) = &settings.gemini_api_key else {
            return Err(StructureError::configuration(
                keys::GEMINI_API_KEY,
                "no Gemini API key: set GEMINI_API_KEY (gemini_api_key)",
            ));
        };
        let mut endpoint = Endpoint::new(
            &model,
            "Gemini".to_owned(),
            base_url,
            keys::GEMINI_API_KEY,
            keys::GEMINI_BASE_URL,
            settings,
            (server.window).unwrap_or_else(|| Window::default_for(&model.provider, None)),
        )
        .with_header("x-goog-api-key", api_key.expose());
        if let Some(name) = endpoint.model_name.strip_prefix("models/") {
            endpoint.model_name = name.to_owned();
        }
        let endpoint =
            endpoint.delivering_chosen(settings, Capabilities::BOTH, ("gemini", |_| &GEMINI))?;
        Ok(Self {
            // Gemini's API refuses log-probabilities for many models: asked only when set `on`.
            endpoint: endpoint.asking_logprobs(settings.logprobs.ask(false)),
            openapi: settings.gemini_schema == "openapi",
        })
    }

    fn contents(&self, conversation: &Conversation) -> Vec<Value> {
        conversation
            .turns
            .iter()
            .enumerate()
            .map(|(index, turn)| {
                let (role, text) = match turn {
                    Turn::User(text) | Turn::Feedback(text) => ("user", text.as_str()),
                    Turn::Model(delivered) => ("model", delivered.text()),
                };
                let mut parts = vec![json!({ "text": text })];
                if let (Turn::User(_), Some(attachment)) = (turn, conversation.attached_to(index)) {
                    parts.insert(0, inline(attachment));
                }
                json!({ "role": role, "parts": parts })
            })
            .collect()
    }

    /// The error a finish reason other than `STOP` stands for.
    fn check_finish(&self, candidate: &Value) -> Result<(), StructureError> {
        let finish = candidate
            .get("finishReason")
            .and_then(Value::as_str)
            .unwrap_or("STOP");
        match finish {
            "STOP" => Ok(()),
            "MAX_TOKENS" => Err(wire::truncated(self.endpoint.max_output_tokens)),
            reason if BLOCKING_FINISH_REASONS.contains(&reason) => Err(StructureError::new(
                ErrorKind::Blocked {
                    reason: reason.to_owned(),
                },
                format!("Gemini stopped the answer ({reason})"),
            )),
            reason => {
                let message = candidate
                    .get("finishMessage")
                    .and_then(Value::as_str)
                    .unwrap_or_default();
                Err(StructureError::invalid_response(format!(
                    "Gemini ended the answer with {reason}{}",
                    if message.is_empty() {
                        String::new()
                    } else {
                        format!(": {}", wire::cut(message))
                    }
                )))
            }
        }
    }
}

/// A document given as it is, as a part with its bytes inline.
fn inline(attachment: &Attachment) -> Value {
    json!({ "inlineData": { "mimeType": attachment.media_type.name(), "data": attachment.base64() } })
}

impl Provider for Gemini {
    fn endpoint(&self) -> &Endpoint {
        &self.endpoint
    }

    fn answer_format(&self, target: &Value, shape: Shape) -> AnswerFormat {
        let format = AnswerFormat::build(target, self.subset(), shape);
        if self.openapi && self.endpoint.delivery == Delivery::Native {
            return openapi::convert(format);
        }
        format
    }

    fn request(&self, conversation: &Conversation, format: &AnswerFormat) -> HttpRequest {
        let mut generation = Map::new();
        let mut body = Map::new();
        body.insert(
            "systemInstruction".into(),
            json!({ "parts": [{ "text": conversation.system.text() }] }),
        );
        body.insert("contents".into(), Value::Array(self.contents(conversation)));
        let schema_at: Option<&'static [&'static str]> = match self.endpoint.delivery {
            Delivery::Native => {
                generation.insert("responseMimeType".into(), json!("application/json"));
                let at: &'static [&'static str] = match format.dialect {
                    SchemaDialect::OpenApi => &["generationConfig", "responseSchema"],
                    SchemaDialect::JsonSchema => &["generationConfig", "responseJsonSchema"],
                };
                generation.insert(at[1].into(), Value::Null);
                Some(at)
            }
            Delivery::Tool => {
                let declaration = json!({
                    "name": ANSWER_TOOL,
                    "description": ANSWER_TOOL_DESCRIPTION,
                    "parametersJsonSchema": null,
                });
                let mut tools = json!([{ "functionDeclarations": [] }]);
                tools[0]["functionDeclarations"] = Value::Array(vec![declaration]);
                body.insert("tools".into(), tools);
                body.insert(
                    "toolConfig".into(),
                    json!({ "functionCallingConfig": { "mode": "ANY", "allowedFunctionNames": [ANSWER_TOOL] } }),
                );
                Some(&[
                    "tools",
                    "0",
                    "functionDeclarations",
                    "0",
                    "parametersJsonSchema",
                ])
            }
            Delivery::Prompt => None,
        };
        if self.endpoint.asks_logprobs() {
            generation.insert("responseLogprobs".into(), json!(true));
        }
        body.insert("generationConfig".into(), Value::Object(generation));
        let body = LlmBody::new(body, schema_at, &format.schema);
        let path = format!("/models/{}:generateContent", self.endpoint.model_name);
        self.endpoint
            .post_llm(&path, body, &["generationConfig", "maxOutputTokens"], 0)
    }

    /// Gemini states the wait in a `google.rpc.RetryInfo` detail: `"retryDelay": "1.5s"`.
    fn retry_hint(&self, response: &HttpResponse) -> Option<Duration> {
        let body: Value = serde_json::from_slice(&response.body).ok()?;
        body.pointer("/error/details")?
            .as_array()?
            .iter()
            .filter(|detail| {
                detail
                    .get("@type")
                    .and_then(Value::as_str)
                    .is_some_and(|ty| ty.ends_with("RetryInfo"))
            })
            .find_map(|detail| detail.get("retryDelay").and_then(Value::as_str))
            .and_then(retry::parse_duration_text)
    }

    /// What the first candidate of a 2xx `body` delivers: the answer tool's call, or the text
    /// that is not a thought.
    fn read(&self, body: &Value) -> Result<Delivered, StructureError> {
        let Some(candidate) = body
            .get("candidates")
            .and_then(|candidates| candidates.get(0))
        else {
            let reason = body
                .pointer("/promptFeedback/blockReason")
                .and_then(Value::as_str);
            return Err(match reason {
                Some(reason) => StructureError::new(
                    ErrorKind::Blocked {
                        reason: reason.to_owned(),
                    },
                    format!("Gemini blocked the prompt ({reason})"),
                ),
                None => StructureError::invalid_response("Gemini answered without a candidate"),
            });
        };
        self.check_finish(candidate)?;
        let parts = candidate
            .pointer("/content/parts")
            .and_then(Value::as_array)
            .map(Vec::as_slice)
            .unwrap_or_default();
        if let Some(call) = parts.iter().find_map(|part| part.get("functionCall")) {
            let name = call.get("name").and_then(Value::as_str).unwrap_or_default();
            let arguments = call.get("args").cloned().unwrap_or_else(|| json!({}));
            let id = call.get("id").and_then(Value::as_str);
            return wire::tool_call(name, id, "call_0", Some(arguments.to_string()));
        }
        Ok(Delivered::Text(
            parts
                .iter()
                .filter(|part| part.get("thought").and_then(Value::as_bool) != Some(true))
                .filter_map(|part| part.get("text").and_then(Value::as_str))
                .collect(),
        ))
    }

    fn tokens(&self, body: &Value) -> Vec<Token> {
        let chosen = body.pointer("/candidates/0/logprobsResult/chosenCandidates");
        wire::tokens(chosen, "token", "logProbability")
    }

    /// Thoughts are billed as output; cached tokens are already inside the prompt count.
    fn usage(&self, body: &Value) -> Usage {
        wire::usage(
            body,
            &[
                "/usageMetadata/promptTokenCount",
                "/usageMetadata/toolUsePromptTokenCount",
            ],
            &[
                "/usageMetadata/candidatesTokenCount",
                "/usageMetadata/thoughtsTokenCount",
            ],
            "/usageMetadata/cachedContentTokenCount",
        )
    }
}
