//! When the embedded engine answers. `STRUCTURE_MODEL=local` (or `local/<name>`) asks for it, a
//! GGUF file named by `STRUCTURE_MODEL_FILE` too; with no model, no provider key and no base URL
//! configured it is the default. The component then calls the model as `llamacpp/<name>` at
//! [`LOCAL_BASE_URL`], an origin that exists nowhere (`.invalid` is reserved) and that its host
//! answers itself: the component does not change, and Spin, Node and browsers keep their
//! providers.

use std::path::PathBuf;

use structure::keys;

use crate::config::Settings;
use crate::local::catalog::{self, ModelCard};

/// The origin the host's engine answers at.
pub const LOCAL_ORIGIN: &str = "http://local-model.structure.invalid";
/// The base URL the component is given for the embedded model.
pub const LOCAL_BASE_URL: &str = "http://local-model.structure.invalid/v1";

/// A GGUF file to run instead of a catalog model (`--model-file`).
pub const MODEL_FILE: &str = "structure_model_file";
/// Never download: a model that is not on this machine is an error (`--offline`).
pub const OFFLINE: &str = "structure_offline";
/// The engine's threads (default: the machine's physical cores).
pub const THREADS: &str = "structure_local_threads";
/// The engine's context window when `structure_context_tokens` does not give one.
pub const DEFAULT_CONTEXT_TOKENS: u32 = 8_192;

/// Where the model's bytes come from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ModelSource {
    /// A catalog model, from the machine's cache (fetched into it once).
    Catalog(&'static ModelCard),
    /// A file the user has.
    File(PathBuf),
}

/// The embedded model a host runs, as its settings ask for it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LocalModel {
    /// What the trace calls it: `llamacpp/<name>`.
    pub name: String,
    /// Where its bytes come from.
    pub source: ModelSource,
    /// The context window the engine is made with (prompt and answer).
    pub context_tokens: u32,
    /// The threads it decodes with; `None`: the machine's physical cores.
    pub threads: Option<u32>,
    /// A model that is not on this machine is an error, not a download.
    pub offline: bool,
}

impl LocalModel {
    /// The embedded model `settings` ask for, if any (see the module's doc); an error names a
    /// setting that cannot be read.
    ///
    /// ```
    /// use structure_host::Settings;
    /// use structure_host::local::LocalModel;
    ///
    /// // Nothing configured: the default.
    /// let model = LocalModel::chosen(&Settings::new()).unwrap().unwrap();
    /// assert_eq!(model.name, "qwen2.5-coder-0.5b-instruct");
    /// // A provider configured: not the local model.
    /// let hosted = Settings::new().set("openai_api_key", "sk-...");
    /// assert_eq!(LocalModel::chosen(&hosted).unwrap(), None);
    /// ```
    pub fn chosen(settings: &Settings) -> Result<Option<Self>, String> {
        let file = (settings.get(MODEL_FILE))
            .map(str::trim)
            .filter(|file| !file.is_empty())
            .map(PathBuf::from);
        let asked = match settings.get(keys::MODEL).map(str::trim) {
            Some("local") => Some(None),
            Some(model) if model.starts_with("local/") => Some(Some(&model["local/".len()..])),
            Some(model) if !model.is_empty() => None,
            // No model named: the local one when nothing else is configured either.
            _ => (file.is_some() || !provider_configured(settings)).then_some(None),
        };
        let Some(name) = asked else {
            return Ok(None);
        };
        let (name, source) = match (name, file) {
            (name, Some(file)) => (
                name.map_or_else(|| file_name(&file), str::to_owned),
                ModelSource::File(file),
            ),
            (None, None) => (
                catalog::DEFAULT.name.to_owned(),
                ModelSource::Catalog(catalog::DEFAULT),
            ),
            (Some(name), None) => match catalog::card(name) {
                Some(card) => (name.to_owned(), ModelSource::Catalog(card)),
                None => {
                    return Err(format!(
                        "structure_model local/{name}: no such local model; the catalog has {} \
                         (or give a GGUF file with --model-file / STRUCTURE_MODEL_FILE)",
                        catalog::names()
                    ));
                }
            },
        };
        Ok(Some(Self {
            name,
            source,
            context_tokens: number(settings, keys::CONTEXT_TOKENS)?
                .unwrap_or(DEFAULT_CONTEXT_TOKENS),
            threads: number(settings, THREADS)?,
            offline: settings.get(OFFLINE).is_some_and(is_on),
        }))
    }

    /// `settings` as the component is to read them: the model called `llamacpp/<name>` at
    /// [`LOCAL_BASE_URL`].
    pub fn component_settings(&self, settings: Settings) -> Settings {
        settings
            .set(keys::MODEL, format!("llamacpp/{}", self.name))
            .set(keys::OPENAI_BASE_URL, LOCAL_BASE_URL)
    }
}

/// Whether a provider's key or a base URL is configured.
fn provider_configured(settings: &Settings) -> bool {
    keys::provider_keys().any(|key| {
        settings
            .get(key)
            .is_some_and(|value| !value.trim().is_empty())
    })
}

/// A file's model name: its stem, lower-cased (`SmolLM2-135M-Instruct.Q4_1.gguf` →
/// `smollm2-135m-instruct.q4_1`).
fn file_name(file: &std::path::Path) -> String {
    let stem = file
        .file_stem()
        .and_then(|stem| stem.to_str())
        .unwrap_or("model");
    stem.to_ascii_lowercase()
}

/// A whole number setting, if set; one that is not a number from 1 is an error naming it.
fn number(settings: &Settings, key: &str) -> Result<Option<u32>, String> {
    match settings.get(key).map(str::trim) {
        None | Some("") => Ok(None),
        // `structure_context_tokens` may be an object by model: the engine's is the default.
        Some(value) if value.starts_with('{') => Ok(None),
        Some(value) => match value.parse::<u32>() {
            Ok(number) if number > 0 => Ok(Some(number)),
            _ => Err(format!(
                "{key} must be a whole number from 1, not {value:?}"
            )),
        },
    }
}

fn is_on(value: &str) -> bool {
    matches!(
        value.trim().to_ascii_lowercase().as_str(),
        "1" | "true" | "on" | "yes"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chosen(pairs: &[(&str, &str)]) -> Result<Option<LocalModel>, String> {
        let settings = (pairs.iter()).fold(Settings::new(), |settings, (key, value)| {
            settings.set(*key, *value)
        });
        LocalModel::chosen(&settings)
    }

    #[test]
    fn the_local_model_is_asked_for_or_the_default_when_nothing_else_is_configured() {
        let default = chosen(&[]).unwrap().unwrap();
        assert_eq!(default.source, ModelSource::Catalog(catalog::DEFAULT));
        assert_eq!(
            (default.context_tokens, default.threads, default.offline),
            (8_192, None, false)
        );
        assert_eq!(
            chosen(&[("structure_model", "local")]).unwrap(),
            Some(default.clone())
        );
        let named = chosen(&[("structure_model", "local/qwen2.5-coder-0.5b-instruct")]).unwrap();
        assert_eq!(named, Some(default));
        for configured in [
            ("structure_model", "openai/gpt-4.1-mini"),
            ("openai_api_key", "sk-test"),
            ("anthropic_api_key", "sk-ant"),
            ("gemini_api_key", "g"),
            ("openai_base_url", "http://localhost:11434/v1"),
        ] {
            assert_eq!(chosen(&[configured]).unwrap(), None, "{configured:?}");
        }
        // Asked for by name, a key configured beside it changes nothing.
        assert!(
            chosen(&[("structure_model", "local"), ("openai_api_key", "sk")])
                .unwrap()
                .is_some()
        );
    }

    #[test]
    fn a_file_the_user_has_is_run_under_its_own_name_and_settings_are_checked() {
        let model = chosen(&[("structure_model_file", "/m/SmolLM2-135M-Instruct.Q4_1.gguf")])
            .unwrap()
            .unwrap();
        assert_eq!(model.name, "smollm2-135m-instruct.q4_1");
        assert_eq!(
            model.source,
            ModelSource::File("/m/SmolLM2-135M-Instruct.Q4_1.gguf".into())
        );
        let named = chosen(&[
            ("structure_model", "local/tiny"),
            ("structure_model_file", "/m/a.gguf"),
        ])
        .unwrap();
        assert_eq!(named.unwrap().name, "tiny");
        let set = chosen(&[
            ("structure_context_tokens", "4096"),
            ("structure_local_threads", "3"),
            ("structure_offline", "1"),
        ])
        .unwrap()
        .unwrap();
        assert_eq!(
            (set.context_tokens, set.threads, set.offline),
            (4_096, Some(3), true)
        );
        let error = chosen(&[("structure_model", "local/gpt-9")]).unwrap_err();
        assert!(
            error.contains("qwen2.5-coder-0.5b-instruct") && error.contains("STRUCTURE_MODEL_FILE"),
            "{error}"
        );
        let error = chosen(&[("structure_local_threads", "many")]).unwrap_err();
        assert!(error.contains("structure_local_threads"), "{error}");
    }

    #[test]
    fn the_component_calls_it_as_a_llama_cpp_server_at_the_reserved_origin() {
        let model = chosen(&[]).unwrap().unwrap();
        let settings = model.component_settings(Settings::new());
        assert_eq!(
            settings.get("structure_model"),
            Some("llamacpp/qwen2.5-coder-0.5b-instruct")
        );
        assert_eq!(settings.get("openai_base_url"), Some(LOCAL_BASE_URL));
        assert!(LOCAL_BASE_URL.starts_with(LOCAL_ORIGIN));
    }
}
