//! The schema registry. Bundled schemas are compiled into the component from `schemas/`;
//! tenant and project overrides in the key-value store extend the cascade later.

use serde::Serialize;
use serde_json::Value;

use crate::error::{ErrorKind, StructureError};

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
    pub schema: Value,
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
        schema,
        manual: entry.manual.map(str::to_owned),
        version,
        origin: "bundled".to_owned(),
    }
}

/// Every schema available by name.
pub fn list() -> Vec<SchemaInfo> {
    BUNDLED.iter().map(|entry| load(entry).info()).collect()
}

/// The schema registered under `name`, or a not-found error listing close matches.
pub fn find(name: &str) -> Result<RegisteredSchema, StructureError> {
    check_name(name)?;
    if let Some(entry) = BUNDLED.iter().find(|entry| entry.name == name) {
        return Ok(load(entry));
    }
    let suggestions = close_matches(name, BUNDLED.iter().map(|entry| entry.name));
    let hint = if suggestions.is_empty() {
        format!(
            "; available: {}",
            BUNDLED
                .iter()
                .map(|entry| entry.name)
                .collect::<Vec<_>>()
                .join(", ")
        )
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
