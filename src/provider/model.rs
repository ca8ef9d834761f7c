//! A model as the settings name it: `provider/model`.

use crate::error::StructureError;
use crate::keys;

/// A model written as `provider/model`: `openai/gpt-4.1-mini`, `vllm/meta-llama/Llama-3.1-8B`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModelRef {
    pub provider: String,
    pub name: String,
}

impl ModelRef {
    pub fn parse(text: &str) -> Result<Self, StructureError> {
        match text.split_once('/') {
            Some((provider, name)) if !provider.is_empty() && !name.is_empty() => Ok(Self {
                provider: provider.to_ascii_lowercase(),
                name: name.to_owned(),
            }),
            _ => Err(StructureError::configuration(
                keys::MODEL,
                format!(
                    "model {text:?} must be written provider/model, e.g. openai/gpt-4.1-mini, \
                     anthropic/claude-sonnet-4-5, google/gemini-2.5-flash or ollama/llama3.2 \
                     (set STRUCTURE_MODEL / structure_model)"
                ),
            )),
        }
    }
}
