//! Settings and secrets, read from the config port under the keys below. The keys are valid
//! Spin variable names, and the host maps environment variables onto them
//! (`STRUCTURE_MODEL` → `structure_model`, `OPENAI_API_KEY` → `openai_api_key`, ...).

use std::fmt;
use std::time::Duration;

use crate::error::StructureError;
use crate::ports::Config;

/// The config keys this crate reads.
pub mod keys {
    /// `provider/model`, e.g. `openai/gpt-4.1-mini` or `ollama/llama3.2`.
    pub const MODEL: &str = "structure_model";
    /// Forces a provider profile (`openai`, `openai-compatible`, `ollama`, `llamacpp`, `vllm`)
    /// instead of deriving it from the model and the base URL.
    pub const PROVIDER_PROFILE: &str = "structure_provider_profile";
    /// The most tokens one answer may take.
    pub const MAX_OUTPUT_TOKENS: &str = "structure_max_output_tokens";
    /// The longest one LLM request may take, in milliseconds.
    pub const REQUEST_TIMEOUT_MS: &str = "structure_request_timeout_ms";
    /// The API key for OpenAI and OpenAI-compatible servers.
    pub const OPENAI_API_KEY: &str = "openai_api_key";
    /// The base URL of an OpenAI-compatible API, e.g. `http://localhost:11434/v1`.
    pub const OPENAI_BASE_URL: &str = "openai_base_url";
}

pub const DEFAULT_MODEL: &str = "openai/gpt-4.1-mini";
pub const DEFAULT_MAX_OUTPUT_TOKENS: u32 = 4096;
pub const DEFAULT_REQUEST_TIMEOUT: Duration = Duration::from_secs(120);

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

/// The settings of one call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Settings {
    pub model: String,
    pub provider_profile: Option<String>,
    pub max_output_tokens: u32,
    pub request_timeout: Duration,
    pub openai_api_key: Option<Secret>,
    pub openai_base_url: Option<String>,
}

impl Settings {
    pub fn load(config: &dyn Config) -> Result<Self, StructureError> {
        let max_output_tokens = match read(config, keys::MAX_OUTPUT_TOKENS)? {
            Some(text) => parse_positive(keys::MAX_OUTPUT_TOKENS, &text)?,
            None => DEFAULT_MAX_OUTPUT_TOKENS,
        };
        let request_timeout = match read(config, keys::REQUEST_TIMEOUT_MS)? {
            Some(text) => {
                Duration::from_millis(parse_positive(keys::REQUEST_TIMEOUT_MS, &text)?.into())
            }
            None => DEFAULT_REQUEST_TIMEOUT,
        };
        Ok(Self {
            model: read(config, keys::MODEL)?.unwrap_or_else(|| DEFAULT_MODEL.to_owned()),
            provider_profile: read(config, keys::PROVIDER_PROFILE)?,
            max_output_tokens,
            request_timeout,
            openai_api_key: read(config, keys::OPENAI_API_KEY)?.map(Secret),
            openai_base_url: read(config, keys::OPENAI_BASE_URL)?,
        })
    }
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

fn parse_positive(key: &str, text: &str) -> Result<u32, StructureError> {
    match text.parse::<u32>() {
        Ok(value) if value > 0 => Ok(value),
        _ => Err(StructureError::configuration(
            key,
            format!("setting {key} must be a positive integer, not {text:?}"),
        )),
    }
}
