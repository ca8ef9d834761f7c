//! The settings of one call, read from the config port and checked once: a missing or
//! malformed setting is a `configuration` error naming its key.

use std::collections::BTreeMap;
use std::time::Duration;

use crate::error::StructureError;
use crate::keys;
use crate::limits::{self, CallLimits};
use crate::ports::Config;
use crate::request::{DEFAULT_MAX_LOOPS, MAX_MAX_LOOPS};
use crate::secret::Secret;
use crate::settings::choices::{
    ContextTokens, DEFAULT_ALIASES, DEFAULT_CALL_TIMEOUT, DEFAULT_CALL_TIMEOUT_LOCAL,
    DEFAULT_CHUNK_TOKENS_HOSTED, DEFAULT_CHUNK_TOKENS_LOCAL, DEFAULT_CONFIDENCE_THRESHOLD,
    DEFAULT_MAX_CONCURRENT_CALLS, DEFAULT_MAX_OUTPUT_TOKENS, DEFAULT_MAX_RETRIES,
    DEFAULT_MAX_RETRY_WAIT, DEFAULT_MODEL, DEFAULT_REQUEST_TIMEOUT, DEFAULT_REQUEST_TIMEOUT_LOCAL,
    DeliveryChoice, Extractive, Grounding, LOCAL_PROFILES, Logprobs, MAX_MAX_CONCURRENT_CALLS,
    MIN_CONTEXT_TOKENS, MinConfidence, ONE_AT_A_TIME_PROFILES, ReviewPolicy, Vision,
};

/// The settings of one call.
#[derive(Debug, Clone, PartialEq)]
pub struct Settings {
    /// `provider/model`, aliases resolved.
    pub model: String,
    /// The schema builder's `provider/model`, aliases resolved.
    pub schema_builder_model: String,
    pub confidence_threshold: f64,
    /// The models tried next when the call's model does not get there, aliases resolved.
    pub escalate: Vec<String>,
    /// The least confidence a value of an `ok` answer may have.
    pub min_confidence: MinConfidence,
    /// When to ask for token log-probabilities (`structure_logprobs`).
    pub logprobs: Logprobs,
    /// Whether the model reads images and PDFs given as they are (`structure_vision`).
    pub vision: Vision,
    /// Content-stage iterations when the call does not say.
    pub max_loops: u8,
    pub provider_profile: Option<String>,
    pub delivery: DeliveryChoice,
    pub require_provider_strict_output: bool,
    pub extractive: Extractive,
    pub grounding: Grounding,
    /// Which results a person reviews (`structure_review`).
    pub review: ReviewPolicy,
    /// Milliseconds since the Unix epoch; `None`: the clock's now.
    pub reference_time: Option<u64>,
    pub max_output_tokens: u32,
    /// One request's time limit as set; `None`: by the server's kind ([`Settings::request_timeout`]).
    pub request_timeout: Option<Duration>,
    pub max_retries: u32,
    pub max_retry_wait: Duration,
    pub token_budget: Option<u64>,
    /// Records mode's chunk, in tokens; `None`: the provider profile's default
    /// ([`Settings::chunk_tokens`]).
    pub chunk_tokens: Option<u32>,
    /// The model's context window as configured; `None`: discovered ([`crate::provider::window`]).
    pub context_tokens: Option<ContextTokens>,
    /// Calls in flight at once as set; `None`: what the server serves ([`Settings::max_concurrent_calls`]).
    pub max_concurrent_calls: Option<u32>,
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
        let read = Reader(config);
        // Read in this order, so the first broken setting reported stays the same.
        let delivery = read.delivery()?;
        let require_provider_strict_output =
            read.boolean(keys::REQUIRE_PROVIDER_STRICT_OUTPUT, true)?;
        let confidence_threshold = read.confidence_threshold()?;
        let max_loops = read.max_loops()?;
        let model = read.model(keys::MODEL)?;
        Self {
            escalate: read.escalate(&model)?,
            model,
            schema_builder_model: read.model(keys::SCHEMA_BUILDER_MODEL)?,
            confidence_threshold,
            min_confidence: read.min_confidence()?,
            logprobs: match read
                .choice(keys::LOGPROBS, &["auto", "on", "off"])?
                .as_str()
            {
                "on" => Logprobs::On,
                "off" => Logprobs::Off,
                _ => Logprobs::Auto,
            },
            vision: match read.choice(keys::VISION, &["auto", "on", "off"])?.as_str() {
                "on" => Vision::On,
                "off" => Vision::Off,
                _ => Vision::Auto,
            },
            max_loops,
            provider_profile: read.text(keys::PROVIDER_PROFILE)?,
            delivery,
            require_provider_strict_output,
            extractive: read.extractive()?,
            grounding: read.grounding()?,
            review: read.review()?,
            reference_time: read.reference_time()?,
            max_output_tokens: read.small(
                keys::MAX_OUTPUT_TOKENS,
                read.positive(keys::MAX_OUTPUT_TOKENS, DEFAULT_MAX_OUTPUT_TOKENS.into())?,
            )?,
            request_timeout: read.optional_millis(keys::REQUEST_TIMEOUT_MS)?,
            max_retries: read.small(
                keys::MAX_RETRIES,
                read.number(keys::MAX_RETRIES, DEFAULT_MAX_RETRIES.into())?,
            )?,
            max_retry_wait: read.millis(keys::MAX_RETRY_WAIT_MS, DEFAULT_MAX_RETRY_WAIT, 0)?,
            token_budget: read
                .text(keys::TOKEN_BUDGET)?
                .map(|text| parse_number(keys::TOKEN_BUDGET, &text, 1))
                .transpose()?,
            chunk_tokens: read
                .text(keys::CHUNK_TOKENS)?
                .map(|text| parse_number(keys::CHUNK_TOKENS, &text, 1))
                .transpose()?
                .map(|tokens| read.small(keys::CHUNK_TOKENS, tokens))
                .transpose()?,
            context_tokens: read.context_tokens()?,
            max_concurrent_calls: read.max_concurrent_calls()?,
            limits: read.limits()?,
            openai_api: read.choice(keys::OPENAI_API, &["chat", "responses"])?,
            gemini_schema: read.choice(keys::GEMINI_SCHEMA, &["json-schema", "openapi"])?,
            openai_api_key: read.secret(keys::OPENAI_API_KEY)?,
            openai_base_url: read.text(keys::OPENAI_BASE_URL)?,
            anthropic_api_key: read.secret(keys::ANTHROPIC_API_KEY)?,
            anthropic_base_url: read.text(keys::ANTHROPIC_BASE_URL)?,
            gemini_api_key: read.secret(keys::GEMINI_API_KEY)?,
            gemini_base_url: read.text(keys::GEMINI_BASE_URL)?,
        }
        .within_ceilings()
    }

    /// The operator's ceilings over what a tenant, a project or a call set: the token budget
    /// held to `structure_max_token_budget`, a chunk no smaller than
    /// `structure_min_chunk_tokens` (one token a chunk would make a call per word).
    fn within_ceilings(mut self) -> Result<Self, StructureError> {
        if let Some(ceiling) = self.limits.max_token_budget {
            self.token_budget = Some(self.token_budget.map_or(ceiling, |own| own.min(ceiling)));
        }
        let least = self.limits.min_chunk_tokens;
        if let Some(tokens) = self.chunk_tokens
            && tokens < least
        {
            return Err(StructureError::invalid_request(
                "chunkTokens",
                format!(
                    "chunkTokens is {tokens}, below the {least} tokens this deployment allows a \
                     chunk ({}): ask for {least} or more, or leave it to the provider's default",
                    keys::MIN_CHUNK_TOKENS
                ),
            ));
        }
        Ok(self)
    }

    /// The base URL configured under `key` (a `*_base_url` key), if any.
    pub fn base_url(&self, key: &str) -> Option<&str> {
        match key {
            keys::OPENAI_BASE_URL => self.openai_base_url.as_deref(),
            keys::ANTHROPIC_BASE_URL => self.anthropic_base_url.as_deref(),
            keys::GEMINI_BASE_URL => self.gemini_base_url.as_deref(),
            _ => None,
        }
    }

    /// One request's time limit for a provider of `profile`: the setting, else a local server's
    /// longer default.
    pub fn request_timeout(&self, profile: &str) -> Duration {
        self.request_timeout
            .unwrap_or(if LOCAL_PROFILES.contains(&profile) {
                DEFAULT_REQUEST_TIMEOUT_LOCAL
            } else {
                DEFAULT_REQUEST_TIMEOUT
            })
    }

    /// The whole call's time limit with a provider of `profile`: the setting, else a local
    /// server's longer default.
    pub fn call_timeout(&self, profile: &str) -> Duration {
        self.limits
            .call_timeout
            .unwrap_or(if LOCAL_PROFILES.contains(&profile) {
                DEFAULT_CALL_TIMEOUT_LOCAL
            } else {
                DEFAULT_CALL_TIMEOUT
            })
    }

    /// Calls in flight at once to a provider of `profile` whose server said it serves `slots`
    /// requests at a time (llama.cpp's `/props`): the setting, else the server's slots, else
    /// one for the servers that take one at a time, else [`DEFAULT_MAX_CONCURRENT_CALLS`].
    pub fn max_concurrent_calls(&self, profile: &str, slots: Option<u32>) -> u32 {
        self.max_concurrent_calls
            .or(slots.map(|slots| slots.clamp(1, MAX_MAX_CONCURRENT_CALLS as u32)))
            .unwrap_or(if ONE_AT_A_TIME_PROFILES.contains(&profile) {
                1
            } else {
                DEFAULT_MAX_CONCURRENT_CALLS
            })
    }

    /// Records mode's chunk for a provider of `profile`, in tokens.
    pub fn chunk_tokens(&self, profile: &str) -> u32 {
        self.chunk_tokens
            .unwrap_or(if LOCAL_PROFILES.contains(&profile) {
                DEFAULT_CHUNK_TOKENS_LOCAL
            } else {
                DEFAULT_CHUNK_TOKENS_HOSTED
            })
    }

    /// Every configured secret, for cutting them out of messages ([`crate::secret::redact`]).
    pub fn secrets(&self) -> impl Iterator<Item = &Secret> {
        [
            &self.openai_api_key,
            &self.anthropic_api_key,
            &self.gemini_api_key,
        ]
        .into_iter()
        .flatten()
    }
}

/// Reads and checks settings by key.
struct Reader<'a>(&'a dyn Config);

impl Reader<'_> {
    /// A setting's value; unset and empty are the same.
    fn text(&self, key: &str) -> Result<Option<String>, StructureError> {
        match self.0.get(key) {
            Ok(value) => Ok(value
                .map(|value| value.trim().to_owned())
                .filter(|value| !value.is_empty())),
            Err(message) => Err(StructureError::configuration(
                key,
                format!("could not read setting {key}: {message}"),
            )),
        }
    }

    fn secret(&self, key: &str) -> Result<Option<Secret>, StructureError> {
        Ok(self.text(key)?.map(Secret::new))
    }

    fn number(&self, key: &str, default: u64) -> Result<u64, StructureError> {
        self.text(key)?
            .map_or(Ok(default), |text| parse_number(key, &text, 0))
    }

    fn positive(&self, key: &str, default: u64) -> Result<u64, StructureError> {
        self.text(key)?
            .map_or(Ok(default), |text| parse_number(key, &text, 1))
    }

    /// `value` in a narrower integer type.
    fn small<T: TryFrom<u64>>(&self, key: &str, value: u64) -> Result<T, StructureError> {
        T::try_from(value).map_err(|_| too_large(key))
    }

    /// Milliseconds, at least `minimum`.
    fn millis(
        &self,
        key: &str,
        default: Duration,
        minimum: u64,
    ) -> Result<Duration, StructureError> {
        let default = default.as_millis() as u64;
        let millis = match self.text(key)? {
            None => default,
            Some(text) => parse_number(key, &text, minimum)?,
        };
        Ok(Duration::from_millis(millis))
    }

    /// Milliseconds of at least one, or `None` when unset (the default then depends on the
    /// server's kind).
    fn optional_millis(&self, key: &str) -> Result<Option<Duration>, StructureError> {
        self.text(key)?
            .map(|text| parse_number(key, &text, 1).map(Duration::from_millis))
            .transpose()
    }

    fn boolean(&self, key: &str, default: bool) -> Result<bool, StructureError> {
        match self.text(key)?.as_deref() {
            None => Ok(default),
            Some("true" | "1" | "yes") => Ok(true),
            Some("false" | "0" | "no") => Ok(false),
            Some(other) => Err(StructureError::configuration(
                key,
                format!("setting {key} must be true or false, not {other:?}"),
            )),
        }
    }

    /// One of `allowed`; the first when unset.
    fn choice(&self, key: &str, allowed: &[&str]) -> Result<String, StructureError> {
        match self.text(key)? {
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
    }

    fn max_concurrent_calls(&self) -> Result<Option<u32>, StructureError> {
        let key = keys::MAX_CONCURRENT_CALLS;
        if self.text(key)?.is_none() {
            return Ok(None);
        }
        let calls = self.positive(key, DEFAULT_MAX_CONCURRENT_CALLS.into())?;
        if calls > MAX_MAX_CONCURRENT_CALLS {
            return Err(StructureError::configuration(
                key,
                format!("setting {key} must be from 1 to {MAX_MAX_CONCURRENT_CALLS}, not {calls}"),
            ));
        }
        self.small(key, calls).map(Some)
    }

    /// A window of at least [`MIN_CONTEXT_TOKENS`], or an object of them by `provider/model`.
    fn context_tokens(&self) -> Result<Option<ContextTokens>, StructureError> {
        let key = keys::CONTEXT_TOKENS;
        let Some(text) = self.text(key)? else {
            return Ok(None);
        };
        let window = |value: &str| -> Result<u32, StructureError> {
            let tokens = parse_number(key, value, MIN_CONTEXT_TOKENS).map_err(|_| {
                StructureError::configuration(
                    key,
                    format!(
                        "setting {key} must be a number of tokens of at least \
                         {MIN_CONTEXT_TOKENS}, or an object of them by provider/model \
                         ({{\"llamacpp/smollm2\": 2048}}), not {value:?}"
                    ),
                )
            })?;
            self.small(key, tokens)
        };
        if !text.starts_with('{') {
            return window(&text).map(|tokens| Some(ContextTokens::All(tokens)));
        }
        let parsed: BTreeMap<String, serde_json::Value> =
            serde_json::from_str(&text).map_err(|error| {
                StructureError::configuration(
                    key,
                    format!(
                        "setting {key} is not a JSON object of windows by provider/model: {error}"
                    ),
                )
            })?;
        let mut windows = BTreeMap::new();
        for (model, tokens) in parsed {
            let tokens = match &tokens {
                serde_json::Value::Number(number) => window(&number.to_string())?,
                other => window(&other.to_string())?,
            };
            windows.insert(model, tokens);
        }
        Ok(Some(ContextTokens::ByModel(windows)))
    }

    fn extractive(&self) -> Result<Extractive, StructureError> {
        match self.text(keys::EXTRACTIVE)?.as_deref() {
            None | Some("auto") => Ok(Extractive::Auto),
            Some("true" | "1" | "yes") => Ok(Extractive::On),
            Some("false" | "0" | "no") => Ok(Extractive::Off),
            Some(other) => Err(StructureError::configuration(
                keys::EXTRACTIVE,
                format!(
                    "setting {} must be auto, true or false, not {other:?}",
                    keys::EXTRACTIVE
                ),
            )),
        }
    }

    fn review(&self) -> Result<ReviewPolicy, StructureError> {
        let name = self.choice(keys::REVIEW, &["off", "doubtful", "all"])?;
        Ok(ReviewPolicy::named(&name).unwrap_or_default())
    }

    fn grounding(&self) -> Result<Grounding, StructureError> {
        match self
            .choice(keys::GROUNDING, &["report", "off", "require"])?
            .as_str()
        {
            "off" => Ok(Grounding::Off),
            "require" => Ok(Grounding::Require),
            _ => Ok(Grounding::Report),
        }
    }

    fn delivery(&self) -> Result<DeliveryChoice, StructureError> {
        match self.text(keys::DELIVERY)?.as_deref() {
            None | Some("auto") => Ok(DeliveryChoice::Auto),
            Some("native") => Ok(DeliveryChoice::Native),
            Some("tool") => Ok(DeliveryChoice::Tool),
            Some("prompt") => Ok(DeliveryChoice::Prompt),
            Some(other) => Err(StructureError::configuration(
                keys::DELIVERY,
                format!(
                    "setting {} must be auto, native, tool or prompt, not {other:?}",
                    keys::DELIVERY
                ),
            )),
        }
    }

    fn confidence_threshold(&self) -> Result<f64, StructureError> {
        Ok(self
            .fraction(keys::CONFIDENCE_THRESHOLD)?
            .unwrap_or(DEFAULT_CONFIDENCE_THRESHOLD))
    }

    /// A number from 0 to 1 under `key`, if set.
    /// `auto` (unset), `off`, or a number from 0 to 1.
    fn min_confidence(&self) -> Result<MinConfidence, StructureError> {
        let key = keys::MIN_CONFIDENCE;
        Ok(match self.text(key)?.as_deref() {
            None | Some("auto") => MinConfidence::Auto,
            Some("off") => MinConfidence::Off,
            Some(_) => match self.fraction(key) {
                Ok(Some(min)) => MinConfidence::At(min),
                _ => {
                    return Err(StructureError::configuration(
                        key,
                        format!("setting {key} must be auto, off or a number from 0 to 1"),
                    ));
                }
            },
        })
    }

    fn fraction(&self, key: &str) -> Result<Option<f64>, StructureError> {
        let Some(text) = self.text(key)? else {
            return Ok(None);
        };
        match text.parse::<f64>() {
            Ok(value) if (0.0..=1.0).contains(&value) => Ok(Some(value)),
            _ => Err(StructureError::configuration(
                key,
                format!("setting {key} must be a number from 0 to 1, not {text:?}"),
            )),
        }
    }

    /// The models to escalate to, in order, each alias resolved; a model named twice or the
    /// call's own model is tried once.
    fn escalate(&self, model: &str) -> Result<Vec<String>, StructureError> {
        let Some(text) = self.text(keys::ESCALATE)? else {
            return Ok(Vec::new());
        };
        let mut models: Vec<String> = Vec::new();
        for entry in text.split(',').map(str::trim) {
            if entry.is_empty() {
                return Err(StructureError::configuration(
                    keys::ESCALATE,
                    format!(
                        "setting {} has an empty entry in {text:?}: write models or aliases \
                         separated by commas, e.g. default:analyze,anthropic/claude-sonnet-4-5",
                        keys::ESCALATE
                    ),
                ));
            }
            let resolved = self.resolve_model(entry.to_owned())?;
            if resolved != model && !models.contains(&resolved) {
                models.push(resolved);
            }
        }
        Ok(models)
    }

    fn max_loops(&self) -> Result<u8, StructureError> {
        let max_loops = self.number(keys::MAX_LOOPS, u64::from(DEFAULT_MAX_LOOPS))?;
        if !(1..=u64::from(MAX_MAX_LOOPS)).contains(&max_loops) {
            return Err(StructureError::configuration(
                keys::MAX_LOOPS,
                format!(
                    "setting {} must be from 1 to {MAX_MAX_LOOPS}, not {max_loops}",
                    keys::MAX_LOOPS,
                ),
            ));
        }
        Ok(max_loops as u8)
    }

    fn reference_time(&self) -> Result<Option<u64>, StructureError> {
        let Some(text) = self.text(keys::REFERENCE_TIME)? else {
            return Ok(None);
        };
        crate::time::parse_rfc3339(&text).map(Some).ok_or_else(|| {
            StructureError::configuration(
                keys::REFERENCE_TIME,
                format!(
                    "setting {} must be an RFC 3339 instant such as 2025-06-01T12:00:00Z, not {text:?}",
                    keys::REFERENCE_TIME
                ),
            )
        })
    }

    fn limits(&self) -> Result<CallLimits, StructureError> {
        let size = |key: &str, default: usize| -> Result<usize, StructureError> {
            self.small(key, self.positive(key, default as u64)?)
        };
        Ok(CallLimits {
            prompt_bytes: size(keys::MAX_PROMPT_BYTES, limits::DEFAULT_MAX_PROMPT_BYTES)?,
            schema_bytes: size(keys::MAX_SCHEMA_BYTES, limits::DEFAULT_MAX_SCHEMA_BYTES)?,
            schema_depth: size(keys::MAX_SCHEMA_DEPTH, limits::DEFAULT_MAX_SCHEMA_DEPTH)?,
            schema_properties: size(
                keys::MAX_SCHEMA_PROPERTIES,
                limits::DEFAULT_MAX_SCHEMA_PROPERTIES,
            )?,
            enum_values: size(keys::MAX_ENUM_VALUES, limits::DEFAULT_MAX_ENUM_VALUES)?,
            response_bytes: size(keys::MAX_RESPONSE_BYTES, limits::DEFAULT_MAX_RESPONSE_BYTES)?,
            call_timeout: self.optional_millis(keys::CALL_TIMEOUT_MS)?,
            manual_bytes: size(keys::MAX_MANUAL_BYTES, limits::DEFAULT_MAX_MANUAL_BYTES)?,
            document_bytes: size(keys::MAX_DOCUMENT_BYTES, limits::DEFAULT_MAX_DOCUMENT_BYTES)?,
            document_pages: size(keys::MAX_DOCUMENT_PAGES, limits::DEFAULT_MAX_DOCUMENT_PAGES)?,
            max_token_budget: self
                .text(keys::MAX_TOKEN_BUDGET)?
                .map(|text| parse_number(keys::MAX_TOKEN_BUDGET, &text, 1))
                .transpose()?,
            min_chunk_tokens: self.small(
                keys::MIN_CHUNK_TOKENS,
                self.positive(
                    keys::MIN_CHUNK_TOKENS,
                    limits::DEFAULT_MIN_CHUNK_TOKENS.into(),
                )?,
            )?,
            max_chunks: size(keys::MAX_CHUNKS, limits::DEFAULT_MAX_CHUNKS)?,
            refuse_unknown_formats: self.choice(keys::UNKNOWN_FORMATS, &["annotate", "refuse"])?
                == "refuse",
        })
    }

    /// The model setting `key`, with a `default:<name>` alias replaced by
    /// `structure_model_<name>` (or the built-in default for `fast` and `analyze`).
    fn model(&self, key: &str) -> Result<String, StructureError> {
        let model = self.text(key)?.unwrap_or_else(|| DEFAULT_MODEL.to_owned());
        self.resolve_model(model)
    }

    /// `model` with a `default:<name>` alias replaced (see [`Reader::model`]).
    fn resolve_model(&self, model: String) -> Result<String, StructureError> {
        let Some(alias) = model.strip_prefix("default:") else {
            return Ok(model);
        };
        let key = format!("{}{alias}", keys::ALIAS_PREFIX);
        if let Some(target) = self.text(&key)? {
            if target.starts_with("default:") {
                return Err(StructureError::configuration(
                    &key,
                    format!(
                        "alias {model} points at another alias ({target}); write provider/model"
                    ),
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
}

fn too_large(key: &str) -> StructureError {
    StructureError::configuration(key, format!("setting {key} is too large"))
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
