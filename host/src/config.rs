//! Settings and secrets for the component (`wasi:config/store@0.2.0-draft-2024-09-27`), from
//! the environment and from explicit values. Keys are the component's config keys
//! (`structure_model`, `openai_api_key`, ...): lower-case, like Spin variables.

use std::collections::BTreeMap;

use structure::keys;

use wasmtime::component::HasData;

use crate::bindings::wasi::config::store as wit;

/// Config values by key.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct Settings {
    values: BTreeMap<String, String>,
    /// `get-all` fails, as Spin's does when any one variable's provider does (for the test that
    /// the component then asks for each key alone).
    #[cfg(test)]
    unlisted: bool,
}

impl std::fmt::Debug for Settings {
    // Secrets must never reach a log line: only the keys are shown.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_set().entries(self.values.keys()).finish()
    }
}

impl Settings {
    /// No settings: the component's defaults apply.
    ///
    /// ```
    /// assert_eq!(structure_host::Settings::new().get("structure_model"), None);
    /// ```
    pub fn new() -> Self {
        Self::default()
    }

    /// Every `STRUCTURE_*` variable and the provider SDKs' variables (`OPENAI_API_KEY`,
    /// `OPENAI_BASE_URL`, `ANTHROPIC_API_KEY`, `ANTHROPIC_BASE_URL`, `GEMINI_API_KEY`,
    /// `GEMINI_BASE_URL`), each under its lower-cased name.
    ///
    /// ```
    /// let settings = structure_host::Settings::from_env();
    /// ```
    pub fn from_env() -> Self {
        Self::from_vars(std::env::vars())
    }

    /// [`Settings::from_env`] over `vars` instead of the process's environment: `STRUCTURE_*`
    /// and the provider SDKs' variables, others left out.
    ///
    /// ```
    /// use structure_host::Settings;
    ///
    /// let settings = Settings::from_vars([
    ///     ("STRUCTURE_MODEL".to_owned(), "ollama/llama3.2".to_owned()),
    ///     ("OPENAI_BASE_URL".to_owned(), "http://localhost:11434/v1".to_owned()),
    ///     ("HOME".to_owned(), "/root".to_owned()),
    /// ]);
    /// assert_eq!(settings.get("structure_model"), Some("ollama/llama3.2"));
    /// assert_eq!(settings.get("openai_base_url"), Some("http://localhost:11434/v1"));
    /// assert_eq!(settings.get("home"), None);
    /// ```
    pub fn from_vars(vars: impl IntoIterator<Item = (String, String)>) -> Self {
        let values = vars
            .into_iter()
            .filter(|(name, _)| {
                // The provider SDKs' own variables too: the provider keys, upper-cased.
                name.starts_with("STRUCTURE_")
                    || keys::provider_keys().any(|key| key.to_ascii_uppercase() == *name)
            })
            .map(|(name, value)| (name.to_ascii_lowercase(), value))
            .collect();
        Self {
            values,
            #[cfg(test)]
            unlisted: false,
        }
    }

    /// Sets `key` (a config key such as `structure_model`), replacing any value.
    ///
    /// ```
    /// let settings = structure_host::Settings::new().set("structure_max_loops", "5");
    /// assert_eq!(settings.get("structure_max_loops"), Some("5"));
    /// ```
    pub fn set(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        self.values.insert(key.into(), value.into());
        self
    }

    /// The value of `key`, if set.
    ///
    /// ```
    /// let settings = structure_host::Settings::new().set("openai_api_key", "sk-test");
    /// assert_eq!(settings.get("openai_api_key"), Some("sk-test"));
    /// ```
    pub fn get(&self, key: &str) -> Option<&str> {
        self.values.get(key).map(String::as_str)
    }

    /// Every key and value (secrets too), for callers that must make sure none leaks into output.
    ///
    /// ```
    /// let settings = structure_host::Settings::new().set("openai_api_key", "sk-test");
    /// assert!(settings.values().any(|(_, value)| value == "sk-test"));
    /// ```
    pub fn values(&self) -> impl Iterator<Item = (&str, &str)> {
        self.values
            .iter()
            .map(|(key, value)| (key.as_str(), value.as_str()))
    }
}

/// What `wasi:config/store` acts on: the settings, read only.
pub(crate) struct ConfigView<'a>(pub(crate) &'a Settings);

/// The interface's [`HasData`]: its host functions see a [`ConfigView`].
pub(crate) struct WasiConfig;

impl HasData for WasiConfig {
    type Data<'a> = ConfigView<'a>;
}

impl wit::Host for ConfigView<'_> {
    fn get(&mut self, key: String) -> wasmtime::Result<Result<Option<String>, wit::Error>> {
        Ok(Ok(self.0.get(&key).map(str::to_owned)))
    }

    fn get_all(&mut self) -> wasmtime::Result<Result<Vec<(String, String)>, wit::Error>> {
        #[cfg(test)]
        if self.0.unlisted {
            return Ok(Err(wit::Error::Upstream("a provider is down".to_owned())));
        }
        Ok(Ok(self
            .0
            .values()
            .map(|(key, value)| (key.to_owned(), value.to_owned()))
            .collect()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Request, SchemaInput, Scope, Status, Structure};
    use mock_llm::{MockLlm, Reply};
    use serde_json::json;

    /// The component reads its settings with one `get-all`; where the host cannot list them, it
    /// asks for each key alone, and the call is the same.
    #[tokio::test]
    async fn the_settings_reach_the_component_where_they_cannot_be_listed() {
        let mock = MockLlm::start();
        for unlisted in [false, true] {
            let mut settings = Settings::new()
                .set("structure_model", "openai/gpt-4.1-nano")
                .set("openai_base_url", mock.base_url())
                .set("openai_api_key", "sk-each-key")
                .set("structure_provider_profile", "openai");
            settings.unlisted = unlisted;
            let client = Structure::builder().settings(settings).build().unwrap();
            mock.push(Reply::answer(json!({ "name": "Ada" })));
            let schema = json!({
                "type": "object",
                "properties": { "name": { "type": "string" } },
                "required": ["name"]
            });
            let request = Request::new("Ada wrote it.", SchemaInput::Inline(schema.to_string()));
            let outcome = client.structure(&Scope::default(), &request).await.unwrap();
            assert_eq!(outcome.status, Status::Ok, "unlisted: {unlisted}");
            let sent = mock.requests().pop().expect("a request");
            assert_eq!(sent.json()["model"], "gpt-4.1-nano", "unlisted: {unlisted}");
            assert_eq!(sent.header("authorization"), Some("Bearer sk-each-key"));
        }
    }
}
