//! Settings and secrets for the component (`wasi:config/store@0.2.0-draft-2024-09-27`), from
//! the environment and from explicit values. Keys are the component's config keys
//! (`structure_model`, `openai_api_key`, ...): lower-case, like Spin variables.

use std::collections::BTreeMap;

use crate::bindings::wasi::config::store as wit;
use crate::state::HostState;

/// Environment variables read besides every `STRUCTURE_*` one: the provider SDKs' own names.
const PROVIDER_VARIABLES: &[&str] = &[
    "OPENAI_API_KEY",
    "OPENAI_BASE_URL",
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_BASE_URL",
    "GEMINI_API_KEY",
    "GEMINI_BASE_URL",
];

/// Config values by key.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct Settings {
    values: BTreeMap<String, String>,
}

impl std::fmt::Debug for Settings {
    // Secrets must never reach a log line: only the keys are shown.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_set().entries(self.values.keys()).finish()
    }
}

impl Settings {
    pub fn new() -> Self {
        Self::default()
    }

    /// Every `STRUCTURE_*` variable and the provider SDKs' variables (`OPENAI_API_KEY`,
    /// `OPENAI_BASE_URL`, `ANTHROPIC_API_KEY`, `ANTHROPIC_BASE_URL`, `GEMINI_API_KEY`,
    /// `GEMINI_BASE_URL`), each under its lower-cased name.
    pub fn from_env() -> Self {
        Self::from_vars(std::env::vars())
    }

    pub fn from_vars(vars: impl IntoIterator<Item = (String, String)>) -> Self {
        let values = vars
            .into_iter()
            .filter(|(name, _)| {
                name.starts_with("STRUCTURE_") || PROVIDER_VARIABLES.contains(&name.as_str())
            })
            .map(|(name, value)| (name.to_ascii_lowercase(), value))
            .collect();
        Self { values }
    }

    /// Sets `key` (a config key such as `structure_model`), replacing any value.
    pub fn set(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        self.values.insert(key.into(), value.into());
        self
    }

    pub fn get(&self, key: &str) -> Option<&str> {
        self.values.get(key).map(String::as_str)
    }

    /// Every secret value, for callers that must make sure none leaks into output.
    pub fn values(&self) -> impl Iterator<Item = (&str, &str)> {
        self.values
            .iter()
            .map(|(key, value)| (key.as_str(), value.as_str()))
    }
}

impl wit::Host for HostState {
    fn get(&mut self, key: String) -> wasmtime::Result<Result<Option<String>, wit::Error>> {
        Ok(Ok(self.settings.get(&key).map(str::to_owned)))
    }

    fn get_all(&mut self) -> wasmtime::Result<Result<Vec<(String, String)>, wit::Error>> {
        Ok(Ok(self
            .settings
            .values()
            .map(|(key, value)| (key.to_owned(), value.to_owned()))
            .collect()))
    }
}
