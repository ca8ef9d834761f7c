//! The settings cascade (spec §7.2): per-call overrides, then the project's, then the tenant's
//! (both kept in the key-value store), then the host's configuration.

use std::collections::BTreeMap;

use serde_json::{Map, Value};

use crate::error::StructureError;
use crate::keys;
use crate::ports::{Config, KeyValue, Ports};
use crate::scope::Scope;
use crate::settings::choices::ContextTokens;
use crate::settings::read::Settings;

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
    ("escalate", keys::ESCALATE),
    ("minConfidence", keys::MIN_CONFIDENCE),
    ("extractive", keys::EXTRACTIVE),
    ("grounding", keys::GROUNDING),
    ("review", keys::REVIEW),
    ("referenceTime", keys::REFERENCE_TIME),
    ("delivery", keys::DELIVERY),
    ("maxOutputTokens", keys::MAX_OUTPUT_TOKENS),
    ("tokenBudget", keys::TOKEN_BUDGET),
    ("chunkTokens", keys::CHUNK_TOKENS),
    ("contextTokens", keys::CONTEXT_TOKENS),
];

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
        let host_only = host_only(self.host)?;
        if let Some(name) = overrides.keys().find(|name| host_only.contains(name)) {
            return Err(StructureError::invalid_request(
                field,
                format!(
                    "setting {name:?} is set by this deployment's operator only ({}): leave \
                     it out",
                    keys::HOST_ONLY_SETTINGS
                ),
            ));
        }
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

/// The cascade names the host's `structure_host_only_settings` keeps to itself; a name that is
/// not a setting is a configuration error (a typo would otherwise let callers set it).
fn host_only(host: &dyn Config) -> Result<Vec<String>, StructureError> {
    let key = keys::HOST_ONLY_SETTINGS;
    let text = host
        .get(key)
        .map_err(|message| {
            StructureError::configuration(key, format!("could not read setting {key}: {message}"))
        })?
        .unwrap_or_default();
    let names: Vec<String> = (text.split(','))
        .map(str::trim)
        .filter(|name| !name.is_empty())
        .map(str::to_owned)
        .collect();
    if let Some(unknown) = names
        .iter()
        .find(|name| !OVERRIDABLE.iter().any(|(known, _)| known == name))
    {
        let known: Vec<&str> = OVERRIDABLE.iter().map(|(name, _)| *name).collect();
        return Err(StructureError::configuration(
            key,
            format!(
                "setting {key} names {unknown:?}, which is not a setting a caller may set; \
                 name some of {}",
                known.join(", ")
            ),
        ));
    }
    Ok(names)
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
            // `contextTokens` by model; any other setting refuses an object when it loads.
            Value::Object(_) => value.to_string(),
            other => {
                return Err(StructureError::invalid_request(
                    field,
                    format!(
                        "setting {name:?} must be a string, number, boolean or object, not {other}"
                    ),
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
            "escalate": settings.escalate,
            "minConfidence": settings.min_confidence.to_json(),
            "extractive": settings.extractive.name(),
            "grounding": settings.grounding.name(),
            "review": settings.review.name(),
            "referenceTime": settings.reference_time.map(crate::time::rfc3339),
            "delivery": format!("{:?}", settings.delivery).to_lowercase(),
            "maxOutputTokens": settings.max_output_tokens,
            "tokenBudget": settings.token_budget,
            "contextTokens": settings.context_tokens.as_ref().map(ContextTokens::to_json),
        },
        "overrides": own,
    }))
}
