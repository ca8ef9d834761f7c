//! The embedded default model: which model a host runs in process ([`LocalModel`]: asked for
//! with `STRUCTURE_MODEL=local`, or the default when no provider is configured), its catalog
//! ([`CATALOG`]), the download that fetches it once ([`fetch`]), and the engine that runs it
//! ([`LocalEngine`]: llama.cpp, answering the component as a llama.cpp server would).
//!
//! The engine and the download come with the `embedded` feature (on by default); without it a
//! host still knows when a local model is asked for, and says that this build has none.

mod catalog;
mod choose;
#[cfg(feature = "embedded")]
mod engine;
#[cfg(feature = "embedded")]
mod fetch;

use crate::config::Settings;

pub use catalog::{CATALOG, DEFAULT, ModelCard, card};
pub use choose::{
    DEFAULT_CONTEXT_TOKENS, LOCAL_BASE_URL, LOCAL_ORIGIN, LocalModel, MODEL_FILE, ModelSource,
    OFFLINE, THREADS,
};
#[cfg(feature = "embedded")]
pub use engine::{EngineError, LocalEngine};
#[cfg(feature = "embedded")]
pub use fetch::{Cached, DEFAULT_HUB, FetchError, Hub, ModelCache, Show, fetch};

/// The embedded engine `settings` ask for (see [`LocalModel::chosen`]; one engine a process, [`LocalEngine::shared`]), and the settings the
/// component then reads.
#[cfg(feature = "embedded")]
pub(crate) fn engine_for(
    settings: Settings,
) -> anyhow::Result<(Settings, Option<std::sync::Arc<LocalEngine>>)> {
    match LocalModel::chosen(&settings).map_err(anyhow::Error::msg)? {
        Some(model) => Ok((
            model.component_settings(settings),
            Some(LocalEngine::shared(model)),
        )),
        None => Ok((settings, None)),
    }
}

/// A build without the engine: a local model asked for is an error; with nothing configured
/// the component's own default applies.
#[cfg(not(feature = "embedded"))]
pub(crate) fn engine_for(settings: Settings) -> anyhow::Result<(Settings, ())> {
    let asked = settings
        .get(structure::keys::MODEL)
        .is_some_and(|model| model.starts_with("local"))
        || settings.get(crate::local::MODEL_FILE).is_some();
    if asked
        && LocalModel::chosen(&settings)
            .map_err(anyhow::Error::msg)?
            .is_some()
    {
        anyhow::bail!(
            "this build of structure has no embedded engine (built without the `embedded` \
             feature): configure a provider (STRUCTURE_MODEL, OPENAI_API_KEY, OPENAI_BASE_URL, ...)"
        );
    }
    Ok((settings, ()))
}
