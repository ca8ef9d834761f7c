//! Settings and secrets, read from the config port under the keys below. The keys are valid
//! Spin variable names, and the host maps environment variables onto them
//! (`STRUCTURE_MODEL` → `structure_model`, `OPENAI_API_KEY` → `openai_api_key`, ...).

use std::collections::BTreeMap;
use std::fmt;
use std::time::Duration;

use serde_json::{Map, Value};

use crate::error::StructureError;
use crate::limits::{self, CallLimits};
use crate::ports::{Config, KeyValue, Ports};
use crate::scope::Scope;

/// The config keys this crate reads.
pub mod keys {
    /// `provider/model` (`openai/gpt-4.1-mini`, `anthropic/claude-sonnet-4-5`,
    /// `google/gemini-2.5-flash`, `ollama/llama3.2`, ...) or an alias such as `default:fast`.
    pub const MODEL: &str = "structure_model";
    /// Aliases: `default:<name>` resolves to the model in `structure_model_<name>`.
    pub const ALIAS_PREFIX: &str = "structure_model_";
    /// Forces a provider profile instead of deriving it from the model and the base URL.
    pub const PROVIDER_PROFILE: &str = "structure_provider_profile";
    /// How the answer is delivered: `auto` (default), `native`, `tool` or `prompt`.
    pub const DELIVERY: &str = "structure_delivery";
    /// `true` (default): only provider-enforced output (native or strict tool), never `prompt`.
    pub const REQUIRE_PROVIDER_STRICT_OUTPUT: &str = "structure_require_provider_strict_output";
    /// `true`: plain strings and numbers are offered as the spans and numbers the text writes
    /// (for small local models; see [`crate::content::grounding`]). Default `false`.
    pub const EXTRACTIVE: &str = "structure_extractive";
    /// The instant relative dates in the text are resolved against, RFC 3339 (default: now),
    /// e.g. the date an email was sent; also makes runs reproducible.
    pub const REFERENCE_TIME: &str = "structure_reference_time";
    /// The most tokens one answer may take.
    pub const MAX_OUTPUT_TOKENS: &str = "structure_max_output_tokens";
    /// The longest one LLM request may take, in milliseconds.
    pub const REQUEST_TIMEOUT_MS: &str = "structure_request_timeout_ms";
    /// Retries of one LLM request after a rate limit, an overload or a connection failure.
    pub const MAX_RETRIES: &str = "structure_max_retries";
    /// The longest wait before a retry, in milliseconds; a provider asking for more is not retried.
    pub const MAX_RETRY_WAIT_MS: &str = "structure_max_retry_wait_ms";
    /// Tokens (prompt + completion) one request may spend; unset means no limit.
    pub const TOKEN_BUDGET: &str = "structure_token_budget";
    /// The model of the schema builder (`text` mode); an alias or `provider/model`.
    pub const SCHEMA_BUILDER_MODEL: &str = "structure_schema_builder_model";
    /// The schema builder's confidence below which the call asks for more input (default 0.8).
    pub const CONFIDENCE_THRESHOLD: &str = "structure_confidence_threshold";
    /// Content-stage iterations when a call does not say (default 3).
    pub const MAX_LOOPS: &str = "structure_max_loops";
    /// Limits of one call (see [`crate::limits`]): prompt bytes (default 256 KiB).
    pub const MAX_PROMPT_BYTES: &str = "structure_max_prompt_bytes";
    /// Bytes of a schema as compact JSON (default 256 KiB).
    pub const MAX_SCHEMA_BYTES: &str = "structure_max_schema_bytes";
    /// Nesting of a schema's objects and arrays (default 32).
    pub const MAX_SCHEMA_DEPTH: &str = "structure_max_schema_depth";
    /// Properties declared across a schema (default 1000).
    pub const MAX_SCHEMA_PROPERTIES: &str = "structure_max_schema_properties";
    /// Values of one `enum` (default 1000).
    pub const MAX_ENUM_VALUES: &str = "structure_max_enum_values";
    /// Bytes read from one provider response (default 8 MiB).
    pub const MAX_RESPONSE_BYTES: &str = "structure_max_response_bytes";
    /// The whole call, every LLM request, retry and wait included, in milliseconds (default 300 000).
    pub const CALL_TIMEOUT_MS: &str = "structure_call_timeout_ms";
    /// OpenAI's API: `chat` (Chat Completions, default) or `responses` (the Responses API).
    pub const OPENAI_API: &str = "structure_openai_api";
    /// Gemini's schema field: `json-schema` (`responseJsonSchema`, default) or `openapi`
    /// (`responseSchema`, the OpenAPI subset).
    pub const GEMINI_SCHEMA: &str = "structure_gemini_schema";
    /// The API key for OpenAI and OpenAI-compatible servers.
    pub const OPENAI_API_KEY: &str = "openai_api_key";
    /// The base URL of an OpenAI-compatible API, e.g. `http://localhost:11434/v1`.
    pub const OPENAI_BASE_URL: &str = "openai_base_url";
    pub const ANTHROPIC_API_KEY: &str = "anthropic_api_key";
    /// Anthropic's base URL, without `/v1` (as the Anthropic SDKs write it).
    pub const ANTHROPIC_BASE_URL: &str = "anthropic_base_url";
    pub const GEMINI_API_KEY: &str = "gemini_api_key";
    /// Gemini's base URL, without the API version (as the Google Gen AI SDKs write it).
    pub const GEMINI_BASE_URL: &str = "gemini_base_url";

    /// Every key above (aliases aside), for hosts that declare them (Spin variables).
    pub const ALL: &[&str] = &[
        MODEL,
        PROVIDER_PROFILE,
        DELIVERY,
        REQUIRE_PROVIDER_STRICT_OUTPUT,
        EXTRACTIVE,
        REFERENCE_TIME,
        MAX_OUTPUT_TOKENS,
        REQUEST_TIMEOUT_MS,
        MAX_RETRIES,
        MAX_RETRY_WAIT_MS,
        TOKEN_BUDGET,
        SCHEMA_BUILDER_MODEL,
        CONFIDENCE_THRESHOLD,
        MAX_LOOPS,
        MAX_PROMPT_BYTES,
        MAX_SCHEMA_BYTES,
        MAX_SCHEMA_DEPTH,
        MAX_SCHEMA_PROPERTIES,
        MAX_ENUM_VALUES,
        MAX_RESPONSE_BYTES,
        CALL_TIMEOUT_MS,
        OPENAI_API,
        GEMINI_SCHEMA,
        OPENAI_API_KEY,
        OPENAI_BASE_URL,
        ANTHROPIC_API_KEY,
        ANTHROPIC_BASE_URL,
        GEMINI_API_KEY,
        GEMINI_BASE_URL,
    ];
    /// The keys that hold secrets.
    pub const SECRETS: &[&str] = &[OPENAI_API_KEY, ANTHROPIC_API_KEY, GEMINI_API_KEY];
}

/// The model when none is set: the `fast` alias.
pub const DEFAULT_MODEL: &str = "default:fast";
/// What the built-in aliases stand for unless configured.
pub const DEFAULT_ALIASES: &[(&str, &str)] = &[
    ("fast", "openai/gpt-4.1-mini"),
    ("analyze", "openai/gpt-4.1"),
];
pub const DEFAULT_MAX_OUTPUT_TOKENS: u32 = 4096;
pub const DEFAULT_REQUEST_TIMEOUT: Duration = Duration::from_secs(120);
pub const DEFAULT_MAX_RETRIES: u32 = 2;
pub const DEFAULT_MAX_RETRY_WAIT: Duration = Duration::from_secs(30);
pub const DEFAULT_CONFIDENCE_THRESHOLD: f64 = 0.8;

/// The settings a tenant, a project or a single call may set (spec §7.2), by their names in
/// the cascade and their config keys. API keys, base URLs and provider profiles are not among
/// them: they come only from the host's configuration, so no caller can redirect a key.
pub const OVERRIDABLE: &[(&str, &str)] = &[
    ("model", keys::MODEL),
    ("schemaBuilderModel", keys::SCHEMA_BUILDER_MODEL),
    ("confidenceThreshold", keys::CONFIDENCE_THRESHOLD),
    (
        "requireProviderStrictOutput",
        keys::REQUIRE_PROVIDER_STRICT_OUTPUT,
    ),
    ("maxLoops", keys::MAX_LOOPS),
    ("extractive", keys::EXTRACTIVE),
    ("referenceTime", keys::REFERENCE_TIME),
    ("delivery", keys::DELIVERY),
    ("maxOutputTokens", keys::MAX_OUTPUT_TOKENS),
    ("tokenBudget", keys::TOKEN_BUDGET),
];

/// A secret whose `Debug` never shows it.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(String);

impl Secret {
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Secret(..)")
    }
}

/// How the answer is delivered (spec 001).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DeliveryChoice {
    /// The strongest mode the provider has: native, else tool, else (if allowed) prompt.
    Auto,
    /// The provider's structured-output mode.
    Native,
    /// A forced call of the internal `__structured_output__` tool.
    Tool,
    /// The schema in the prompt, the answer read leniently.
    Prompt,
}

/// The settings of one call.
#[derive(Debug, Clone, PartialEq)]
pub struct Settings {
    /// `provider/model`, aliases resolved.
    pub model: String,
    /// The schema builder's `provider/model`, aliases resolved.
    pub schema_builder_model: String,
    pub confidence_threshold: f64,
    /// Content-stage iterations when the call does not say.
    pub max_loops: u8,
    pub provider_profile: Option<String>,
    pub delivery: DeliveryChoice,
    pub require_provider_strict_output: bool,
    pub extractive: bool,
    /// Milliseconds since the Unix epoch; `None`: the clock's now.
    pub reference_time: Option<u64>,
    pub max_output_tokens: u32,
    pub request_timeout: Duration,
    pub max_retries: u32,
    pub max_retry_wait: Duration,
    pub token_budget: Option<u64>,
    pub limits: CallLimits,
    pub openai_api: String,
    pub gemini_schema: String,
    pub openai_api_key: Option<Secret>,
    pub openai_base_url: Option<String>,
    pub anthropic_api_key: Option<Secret>,
    pub anthropic_base_url: Option<String>,
    pub gemini_api_key: Option<Secret>,
    pub gemini_base_url: Option<String>,
}

impl Settings {
    pub fn load(config: &dyn Config) -> Result<Self, StructureError> {
        let number = |key: &str, default: u64| -> Result<u64, StructureError> {
            read(config, key)?.map_or(Ok(default), |text| parse_number(key, &text, 0))
        };
        let positive = |key: &str, default: u64| -> Result<u64, StructureError> {
            read(config, key)?.map_or(Ok(default), |text| parse_number(key, &text, 1))
        };
        let delivery = match read(config, keys::DELIVERY)?.as_deref() {
            None | Some("auto") => DeliveryChoice::Auto,
            Some("native") => DeliveryChoice::Native,
            Some("tool") => DeliveryChoice::Tool,
            Some("prompt") => DeliveryChoice::Prompt,
            Some(other) => {
                return Err(StructureError::configuration(
                    keys::DELIVERY,
                    format!(
                        "setting {} must be auto, native, tool or prompt, not {other:?}",
                        keys::DELIVERY
                    ),
                ));
            }
        };
        let boolean = |key: &str, default: bool| -> Result<bool, StructureError> {
            match read(config, key)?.as_deref() {
                None => Ok(default),
                Some("true" | "1" | "yes") => Ok(true),
                Some("false" | "0" | "no") => Ok(false),
                Some(other) => Err(StructureError::configuration(
                    key,
                    format!("setting {key} must be true or false, not {other:?}"),
                )),
            }
        };
        let require_provider_strict_output = boolean(keys::REQUIRE_PROVIDER_STRICT_OUTPUT, true)?;
        let choice = |key: &str, allowed: &[&str]| -> Result<String, StructureError> {
            match read(config, key)? {
                None => Ok(allowed[0].to_owned()),
                Some(value) if allowed.contains(&value.as_str()) => Ok(value),
                Some(value) => Err(StructureError::configuration(
                    key,
                    format!(
                        "setting {key} must be one of {}, not {value:?}",
                        allowed.join(", ")
                    ),
                )),
            }
        };
        let confidence_threshold = match read(config, keys::CONFIDENCE_THRESHOLD)? {
            None => DEFAULT_CONFIDENCE_THRESHOLD,
            Some(text) => match text.parse::<f64>() {
                Ok(value) if (0.0..=1.0).contains(&value) => value,
                _ => {
                    return Err(StructureError::configuration(
                        keys::CONFIDENCE_THRESHOLD,
                        format!(
                            "setting {} must be a number from 0 to 1, not {text:?}",
                            keys::CONFIDENCE_THRESHOLD
                        ),
                    ));
                }
            },
        };
        let max_loops = number(
            keys::MAX_LOOPS,
            u64::from(crate::request::DEFAULT_MAX_LOOPS),
        )?;
        if !(1..=u64::from(crate::request::MAX_MAX_LOOPS)).contains(&max_loops) {
            return Err(StructureError::configuration(
                keys::MAX_LOOPS,
                format!(
                    "setting {} must be from 1 to {}, not {max_loops}",
                    keys::MAX_LOOPS,
                    crate::request::MAX_MAX_LOOPS
                ),
            ));
        }
        Ok(Self {
            model: resolve_model(config, keys::MODEL)?,
            schema_builder_model: resolve_model(config, keys::SCHEMA_BUILDER_MODEL)?,
            confidence_threshold,
            max_loops: max_loops as u8,
            provider_profile: read(config, keys::PROVIDER_PROFILE)?,
            delivery,
            require_provider_strict_output,
            extractive: boolean(keys::EXTRACTIVE, false)?,
            reference_time: match read(config, keys::REFERENCE_TIME)? {
                None => None,
                Some(text) => Some(crate::content::prompt::parse_rfc3339(&text).ok_or_else(|| {
                    StructureError::configuration(
                        keys::REFERENCE_TIME,
                        format!(
                            "setting {} must be an RFC 3339 instant such as 2025-06-01T12:00:00Z, not {text:?}",
                            keys::REFERENCE_TIME
                        ),
                    )
                })?),
            },
            max_output_tokens: u32::try_from(positive(
                keys::MAX_OUTPUT_TOKENS,
                DEFAULT_MAX_OUTPUT_TOKENS.into(),
            )?)
            .map_err(|_| too_large(keys::MAX_OUTPUT_TOKENS))?,
            request_timeout: Duration::from_millis(positive(
                keys::REQUEST_TIMEOUT_MS,
                DEFAULT_REQUEST_TIMEOUT.as_millis() as u64,
            )?),
            max_retries: u32::try_from(number(keys::MAX_RETRIES, DEFAULT_MAX_RETRIES.into())?)
                .map_err(|_| too_large(keys::MAX_RETRIES))?,
            max_retry_wait: Duration::from_millis(number(
                keys::MAX_RETRY_WAIT_MS,
                DEFAULT_MAX_RETRY_WAIT.as_millis() as u64,
            )?),
            token_budget: read(config, keys::TOKEN_BUDGET)?
                .map(|text| parse_number(keys::TOKEN_BUDGET, &text, 1))
                .transpose()?,
            limits: {
                let size = |key: &str, default: usize| -> Result<usize, StructureError> {
                    usize::try_from(positive(key, default as u64)?).map_err(|_| too_large(key))
                };
                CallLimits {
                    prompt_bytes: size(keys::MAX_PROMPT_BYTES, limits::DEFAULT_MAX_PROMPT_BYTES)?,
                    schema_bytes: size(keys::MAX_SCHEMA_BYTES, limits::DEFAULT_MAX_SCHEMA_BYTES)?,
                    schema_depth: size(keys::MAX_SCHEMA_DEPTH, limits::DEFAULT_MAX_SCHEMA_DEPTH)?,
                    schema_properties: size(
                        keys::MAX_SCHEMA_PROPERTIES,
                        limits::DEFAULT_MAX_SCHEMA_PROPERTIES,
                    )?,
                    enum_values: size(keys::MAX_ENUM_VALUES, limits::DEFAULT_MAX_ENUM_VALUES)?,
                    response_bytes: size(
                        keys::MAX_RESPONSE_BYTES,
                        limits::DEFAULT_MAX_RESPONSE_BYTES,
                    )?,
                    call_timeout: Duration::from_millis(positive(
                        keys::CALL_TIMEOUT_MS,
                        limits::DEFAULT_CALL_TIMEOUT.as_millis() as u64,
                    )?),
                }
            },
            openai_api: choice(keys::OPENAI_API, &["chat", "responses"])?,
            gemini_schema: choice(keys::GEMINI_SCHEMA, &["json-schema", "openapi"])?,
            openai_api_key: read(config, keys::OPENAI_API_KEY)?.map(Secret),
            openai_base_url: read(config, keys::OPENAI_BASE_URL)?,
            anthropic_api_key: read(config, keys::ANTHROPIC_API_KEY)?.map(Secret),
            anthropic_base_url: read(config, keys::ANTHROPIC_BASE_URL)?,
            gemini_api_key: read(config, keys::GEMINI_API_KEY)?.map(Secret),
            gemini_base_url: read(config, keys::GEMINI_BASE_URL)?,
        })
    }
}

impl Settings {
    /// `text` with each configured secret replaced by `[redacted]`.
    pub fn redact(&self, text: &str) -> String {
        [
            &self.openai_api_key,
            &self.anthropic_api_key,
            &self.gemini_api_key,
        ]
        .into_iter()
        .flatten()
        // A one-character "key" would blank out half a message and protect nothing.
        .filter(|secret| secret.expose().len() >= 8)
        .fold(text.to_owned(), |text, secret| {
            text.replace(secret.expose(), "[redacted]")
        })
    }
}

/// The model setting `key`, with a `default:<name>` alias replaced by `structure_model_<name>`
/// (or the built-in default for `fast` and `analyze`).
fn resolve_model(config: &dyn Config, key: &str) -> Result<String, StructureError> {
    let model = read(config, key)?.unwrap_or_else(|| DEFAULT_MODEL.to_owned());
    let Some(alias) = model.strip_prefix("default:") else {
        return Ok(model);
    };
    let key = format!("{}{alias}", keys::ALIAS_PREFIX);
    if let Some(target) = read(config, &key)? {
        if target.starts_with("default:") {
            return Err(StructureError::configuration(
                &key,
                format!("alias {model} points at another alias ({target}); write provider/model"),
            ));
        }
        return Ok(target);
    }
    DEFAULT_ALIASES
        .iter()
        .find(|(name, _)| *name == alias)
        .map(|(_, target)| (*target).to_owned())
        .ok_or_else(|| {
            StructureError::configuration(
                &key,
                format!("model alias {model} is not defined: set {key} to a provider/model"),
            )
        })
}

fn too_large(key: &str) -> StructureError {
    StructureError::configuration(key, format!("setting {key} is too large"))
}

/// A setting's value; unset and empty are the same.
fn read(config: &dyn Config, key: &str) -> Result<Option<String>, StructureError> {
    match config.get(key) {
        Ok(value) => Ok(value
            .map(|value| value.trim().to_owned())
            .filter(|value| !value.is_empty())),
        Err(message) => Err(StructureError::configuration(
            key,
            format!("could not read setting {key}: {message}"),
        )),
    }
}

fn parse_number(key: &str, text: &str, minimum: u64) -> Result<u64, StructureError> {
    match text.parse::<u64>() {
        Ok(value) if value >= minimum => Ok(value),
        _ => Err(StructureError::configuration(
            key,
            format!(
                "setting {key} must be {} integer, not {text:?}",
                if minimum == 0 {
                    "a non-negative"
                } else {
                    "a positive"
                }
            ),
        )),
    }
}

/// The settings cascade (spec §7.2): per-call overrides, then the project's, then the
/// tenant's, then the host's configuration. Only [`OVERRIDABLE`] settings come from the upper
/// layers; everything else (secrets first of all) only from the host.
pub struct Cascade<'a> {
    host: &'a dyn Config,
    /// Most specific first; each maps config keys to values.
    layers: Vec<BTreeMap<String, String>>,
}

impl<'a> Cascade<'a> {
    pub fn new(host: &'a dyn Config) -> Self {
        Self {
            host,
            layers: Vec::new(),
        }
    }

    /// Adds a layer below the ones already added (add the most specific first).
    pub fn with_layer(
        mut self,
        overrides: &Map<String, Value>,
        field: &str,
    ) -> Result<Self, StructureError> {
        self.layers.push(layer(overrides, field)?);
        Ok(self)
    }
}

impl Config for Cascade<'_> {
    fn get(&self, key: &str) -> Result<Option<String>, String> {
        for layer in &self.layers {
            if let Some(value) = layer.get(key) {
                return Ok(Some(value.clone()));
            }
        }
        self.host.get(key)
    }
}

/// Overrides by cascade name (`{"model": "anthropic/claude-haiku-4-5", "maxLoops": 5}`) as
/// config keys and text values; any other name is an invalid request naming it.
fn layer(
    overrides: &Map<String, Value>,
    field: &str,
) -> Result<BTreeMap<String, String>, StructureError> {
    let mut layer = BTreeMap::new();
    for (name, value) in overrides {
        let Some((_, key)) = OVERRIDABLE.iter().find(|(known, _)| known == name) else {
            let names: Vec<&str> = OVERRIDABLE.iter().map(|(name, _)| *name).collect();
            return Err(StructureError::invalid_request(
                field,
                format!(
                    "setting {name:?} cannot be set here: the settings are {}; API keys and endpoints come only \
                     from the host's configuration",
                    names.join(", ")
                ),
            ));
        };
        let text = match value {
            Value::String(text) => text.clone(),
            Value::Number(number) => number.to_string(),
            Value::Bool(flag) => flag.to_string(),
            other => {
                return Err(StructureError::invalid_request(
                    field,
                    format!("setting {name:?} must be a string, number or boolean, not {other}"),
                ));
            }
        };
        layer.insert((*key).to_owned(), text);
    }
    Ok(layer)
}

/// The key of `scope`'s own settings overrides.
fn layer_key(prefix: &str) -> String {
    format!("{prefix}settings")
}

/// The stored overrides that apply to `scope`, most specific first: the project's, the tenant's.
pub fn stored_layers(
    scope: &Scope,
    store: &dyn KeyValue,
) -> Result<Vec<Map<String, Value>>, StructureError> {
    let mut layers = Vec::new();
    if let Some(prefix) = scope.project_prefix() {
        layers.push(crate::store::read(store, &layer_key(&prefix))?.unwrap_or_default());
    }
    layers.push(crate::store::read(store, &layer_key(&scope.tenant_prefix()))?.unwrap_or_default());
    Ok(layers)
}

/// Replaces the overrides of `scope`'s own level after checking them: every name must be
/// overridable and the settings they make must load.
pub fn store_layer(
    scope: &Scope,
    overrides: &Map<String, Value>,
    ports: &Ports<'_>,
) -> Result<(), StructureError> {
    let check = Cascade::new(ports.config).with_layer(overrides, "settings")?;
    Settings::load(&check)
        .map_err(|error| StructureError::invalid_request("settings", error.message))?;
    crate::store::write(ports.key_value, &layer_key(&scope.own_prefix()), overrides)
}

/// The settings `scope` gets, by cascade name, and its own level's overrides.
pub fn describe(scope: &Scope, ports: &Ports<'_>) -> Result<Value, StructureError> {
    let layers = stored_layers(scope, ports.key_value)?;
    let own = layers.first().cloned().unwrap_or_default();
    let cascade = layers
        .into_iter()
        .try_fold(Cascade::new(ports.config), |cascade, layer| {
            cascade.with_layer(&layer, "settings")
        })?;
    let settings = Settings::load(&cascade)?;
    Ok(serde_json::json!({
        "effective": {
            "model": settings.model,
            "schemaBuilderModel": settings.schema_builder_model,
            "confidenceThreshold": settings.confidence_threshold,
            "requireProviderStrictOutput": settings.require_provider_strict_output,
            "maxLoops": settings.max_loops,
            "extractive": settings.extractive,
            "referenceTime": settings.reference_time.map(crate::content::prompt::rfc3339),
            "delivery": format!("{:?}", settings.delivery).to_lowercase(),
            "maxOutputTokens": settings.max_output_tokens,
            "tokenBudget": settings.token_budget,
        },
        "overrides": own,
    }))
}
