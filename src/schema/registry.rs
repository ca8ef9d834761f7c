//! The schema registry (spec §6): project → tenant → bundled, first match wins. Bundled schemas
//! are compiled into the component from `schemas/`; tenant and project schemas live in the
//! key-value store under their scope's keys, each with its manual and version.

use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::error::{ErrorKind, StructureError};
use crate::limits::CallLimits;
use crate::ports::KeyValue;
use crate::schema::versioning::{self, Version};
use crate::scope::Scope;
use crate::store;

/// A bundled schema file pair: `schemas/<name>.json` and the optional `<name>.manual.md`.
struct Bundled {
    name: &'static str,
    schema: &'static str,
    manual: Option<&'static str>,
}

macro_rules! bundled {
    ($name:literal) => {
        Bundled {
            name: $name,
            schema: include_str!(concat!("../../schemas/", $name, ".json")),
            manual: None,
        }
    };
    ($name:literal, with_manual) => {
        Bundled {
            name: $name,
            schema: include_str!(concat!("../../schemas/", $name, ".json")),
            manual: Some(include_str!(concat!("../../schemas/", $name, ".manual.md"))),
        }
    };
}

/// Every file in `schemas/` is listed here (a test checks it), sorted by name.
const BUNDLED: &[Bundled] = &[
    bundled!("contact", with_manual),
    bundled!("insight-record", with_manual),
    bundled!("knowledge-triple", with_manual),
    bundled!("support-ticket", with_manual),
    bundled!("user-action-record", with_manual),
];

/// The simplified JSON Schema subset (spec §9) the schema builder's answers are checked against.
pub const META_SCHEMA: &str = include_str!("../../schemas/_meta-schema.json");

/// The names of the bundled schemas.
pub fn bundled_names() -> Vec<&'static str> {
    BUNDLED.iter().map(|entry| entry.name).collect()
}

/// The bundled schemas.
pub fn bundled_schemas() -> Vec<RegisteredSchema> {
    parsed().to_vec()
}

/// The bundled schemas parsed, once (at pre-initialisation in the component, whose fresh
/// instances then start with them).
fn parsed() -> &'static [RegisteredSchema] {
    static PARSED: std::sync::OnceLock<Vec<RegisteredSchema>> = std::sync::OnceLock::new();
    PARSED.get_or_init(|| BUNDLED.iter().map(load).collect())
}

/// The names of the bundled files, for the test that keeps `BUNDLED` and `schemas/` in step.
pub fn bundled_file_names() -> Vec<String> {
    BUNDLED
        .iter()
        .flat_map(|entry| {
            let mut names = vec![format!("{}.json", entry.name)];
            if entry.manual.is_some() {
                names.push(format!("{}.manual.md", entry.name));
            }
            names
        })
        .collect()
}

/// A schema found in the registry, with its manual and where it came from.
#[derive(Debug, Clone, PartialEq)]
pub struct RegisteredSchema {
    pub name: String,
    pub schema: Arc<Value>,
    pub manual: Option<String>,
    pub version: String,
    /// `bundled`, `tenant:<id>` or `project:<id>`.
    pub origin: String,
}

/// What `list-schemas` tells about a schema.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SchemaInfo {
    pub name: String,
    pub title: Option<String>,
    pub description: Option<String>,
    pub version: String,
    pub origin: String,
    pub has_manual: bool,
}

impl RegisteredSchema {
    pub fn info(&self) -> SchemaInfo {
        let text = |key: &str| {
            self.schema
                .get(key)
                .and_then(Value::as_str)
                .map(str::to_owned)
        };
        SchemaInfo {
            name: self.name.clone(),
            title: text("title"),
            description: text("description"),
            version: self.version.clone(),
            origin: self.origin.clone(),
            has_manual: self.manual.is_some(),
        }
    }
}

fn load(entry: &Bundled) -> RegisteredSchema {
    // The bundled files are checked by the test suite, so a parse failure here is a build defect.
    let schema: Value = serde_json::from_str(entry.schema).expect("bundled schemas are valid JSON");
    let version = schema
        .get("x-version")
        .and_then(Value::as_str)
        .unwrap_or("1.0")
        .to_owned();
    RegisteredSchema {
        name: entry.name.to_owned(),
        schema: Arc::new(schema),
        manual: entry.manual.map(str::to_owned),
        version,
        origin: "bundled".to_owned(),
    }
}

/// A schema registered at a tenant or project, as stored.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct Stored {
    name: String,
    version: String,
    schema: Value,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    manual: Option<String>,
}

/// What a caller registers.
#[derive(Debug, Clone, PartialEq)]
pub struct Registration {
    pub name: String,
    pub schema: Value,
    pub manual: Option<String>,
    /// `MAJOR.MINOR`; `1.0` when not given.
    pub version: Option<String>,
}

/// The registry as one scope sees it: its project's schemas, then its tenant's, then the
/// bundled ones; first match wins.
pub struct Registry<'a> {
    store: &'a dyn KeyValue,
    scope: &'a Scope,
}

impl<'a> Registry<'a> {
    pub fn new(store: &'a dyn KeyValue, scope: &'a Scope) -> Self {
        Self { store, scope }
    }

    /// Levels to look in, most specific first: key prefix and origin.
    fn levels(&self) -> Vec<(String, String)> {
        let mut levels = Vec::new();
        if let (Some(prefix), Some(project)) = (self.scope.project_prefix(), &self.scope.project) {
            levels.push((format!("{prefix}schemas/"), format!("project:{project}")));
        }
        levels.push((
            format!("{}schemas/", self.scope.tenant_prefix()),
            format!("tenant:{}", self.scope.tenant),
        ));
        levels
    }

    /// The schema registered under `name`, or a not-found error listing close matches.
    pub fn find(&self, name: &str) -> Result<RegisteredSchema, StructureError> {
        check_name(name)?;
        for (prefix, origin) in self.levels() {
            if let Some(stored) = store::read::<Stored>(self.store, &format!("{prefix}{name}"))? {
                return Ok(RegisteredSchema {
                    name: stored.name,
                    schema: Arc::new(stored.schema),
                    manual: stored.manual,
                    version: stored.version,
                    origin,
                });
            }
        }
        if let Some(bundled) = parsed().iter().find(|bundled| bundled.name == name) {
            return Ok(bundled.clone());
        }
        let known = self.names()?;
        let suggestions = close_matches(name, known.iter().map(String::as_str));
        let hint = if suggestions.is_empty() {
            format!("; available: {}", known.join(", "))
        } else {
            format!("; did you mean {}?", suggestions.join(" or "))
        };
        Err(StructureError::new(
            ErrorKind::SchemaNotFound {
                name: name.to_owned(),
                suggestions,
            },
            format!("no schema named {name:?} in the registry{hint}"),
        ))
    }

    /// Every name this scope can use (its project's, its tenant's, the bundled ones), sorted.
    pub fn names(&self) -> Result<Vec<String>, StructureError> {
        let mut names: Vec<String> = BUNDLED.iter().map(|entry| entry.name.to_owned()).collect();
        for (prefix, _) in self.levels() {
            names.extend(self.index(&prefix)?);
        }
        names.sort();
        names.dedup();
        Ok(names)
    }

    /// The names registered under `prefix`, from the keys themselves: no index document that
    /// two registrations at once could each rewrite without the other's name.
    fn index(&self, prefix: &str) -> Result<Vec<String>, StructureError> {
        Ok(store::keys(self.store, prefix)?
            .into_iter()
            .filter_map(|key| key.strip_prefix(prefix).map(str::to_owned))
            .filter(|name| check_name(name).is_ok())
            .collect())
    }

    /// Every schema this scope can use, as the cascade resolves it, sorted by name.
    pub fn list(&self) -> Result<Vec<SchemaInfo>, StructureError> {
        self.names()?
            .iter()
            .map(|name| self.find(name).map(|found| found.info()))
            .collect()
    }

    /// Registers a schema at this scope's own level (its project's, else its tenant's). The
    /// schema must be usable as a target (it compiles, some value satisfies its root, it has no
    /// external or dangling reference; it is stored as it is read), and an update of an existing name must follow the versioning rules.
    pub fn register(
        &self,
        registration: Registration,
        limits: &CallLimits,
    ) -> Result<SchemaInfo, StructureError> {
        let (key, stored, unchanged) = self.prepare(registration, limits)?;
        if unchanged {
            return self.find(&stored.name).map(|found| found.info());
        }
        store::write(self.store, &key, &stored)?;
        Ok(RegisteredSchema {
            name: stored.name,
            schema: Arc::new(stored.schema),
            manual: stored.manual,
            version: stored.version,
            origin: self.scope.own_origin(),
        }
        .info())
    }

    /// Checks `registration` as [`Registry::register`] would, and writes nothing.
    pub fn check(
        &self,
        registration: Registration,
        limits: &CallLimits,
    ) -> Result<(), StructureError> {
        self.prepare(registration, limits).map(|_| ())
    }

    /// What registering `registration` would store, where, and whether that is what is stored
    /// already.
    fn prepare(
        &self,
        registration: Registration,
        limits: &CallLimits,
    ) -> Result<(String, Stored, bool), StructureError> {
        check_name(&registration.name)?;
        let version = Version::parse(registration.version.as_deref().unwrap_or("1.0"))?;
        if !registration.schema.is_object() {
            return Err(StructureError::invalid_request(
                "schema",
                "the schema to register must be a JSON object",
            ));
        }
        let (schema, _, _) = crate::schema::checks::check(registration.schema, limits)?;
        if let Some(manual) = &registration.manual {
            limits.check_manual(manual)?;
        }
        let prefix = format!("{}schemas/", self.scope.own_prefix());
        let key = format!("{prefix}{}", registration.name);
        let manual = registration
            .manual
            .filter(|manual| !manual.trim().is_empty());
        let mut unchanged = false;
        if let Some(existing) = store::read::<Stored>(self.store, &key)? {
            let changed = versioning::check_update(
                &registration.name,
                &existing.schema,
                Version::parse(&existing.version)?,
                &schema,
                version,
            )?;
            unchanged = !changed && existing.manual == manual;
        }
        let stored = Stored {
            name: registration.name,
            version: version.to_string(),
            schema,
            manual,
        };
        Ok((key, stored, unchanged))
    }

    /// Removes `name` from this scope's own level; `false` when it was not registered there.
    /// Bundled schemas cannot be removed; removing an override uncovers the level below.
    pub fn deregister(&self, name: &str) -> Result<bool, StructureError> {
        check_name(name)?;
        let prefix = format!("{}schemas/", self.scope.own_prefix());
        let key = format!("{prefix}{name}");
        if store::read::<Stored>(self.store, &key)?.is_none() {
            return Ok(false);
        }
        store::delete(self.store, &key)?;
        Ok(true)
    }
}

/// Names are safe identifiers: lower-case letters, digits, `-`, `_` and `.`, starting with a
/// letter or digit, at most 64 characters. Nothing that could climb a path or a key space.
pub fn check_name(name: &str) -> Result<(), StructureError> {
    let valid = !name.is_empty()
        && name.len() <= 64
        && name.starts_with(|c: char| c.is_ascii_lowercase() || c.is_ascii_digit())
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || matches!(c, '-' | '_' | '.'))
        && !name.contains("..");
    if valid {
        Ok(())
    } else {
        Err(StructureError::invalid_request(
            "schema",
            format!(
                "{name:?} is not a valid schema name: use lower-case letters, digits, '-', '_' \
                 and single '.', starting with a letter or digit, at most 64 characters"
            ),
        ))
    }
}

/// Up to three names similar to `name`, best first.
fn close_matches<'a>(name: &str, candidates: impl Iterator<Item = &'a str>) -> Vec<String> {
    let mut scored: Vec<(f64, &str)> = candidates
        .map(|candidate| {
            let score = if candidate.contains(name) || name.contains(candidate) {
                1.0
            } else {
                strsim::jaro_winkler(name, candidate)
            };
            (score, candidate)
        })
        .filter(|(score, _)| *score >= 0.8)
        .collect();
    scored.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(b.1)));
    scored
        .into_iter()
        .take(3)
        .map(|(_, name)| name.to_owned())
        .collect()
}
