//! MaskBench entries (`{"schema", "tests": [{"data", "valid"}]}`) and JSONSchemaBench's plain
//! schema files, read from a folder at run time (never copied into the repository).

use std::path::{Path, PathBuf};

use serde_json::Value;

/// The `*.json` files of `folder` (those `sample` lists, when given), by id.
pub fn files(folder: &Path, sample: Option<&Path>) -> anyhow::Result<Vec<(String, PathBuf)>> {
    let wanted: Option<Vec<String>> = match sample {
        Some(path) => Some(
            std::fs::read_to_string(path)?
                .lines()
                .map(str::trim)
                .filter(|line| !line.is_empty())
                .map(str::to_owned)
                .collect(),
        ),
        None => None,
    };
    let mut found = Vec::new();
    for entry in std::fs::read_dir(folder)? {
        let path = entry?.path();
        let Some(id) = path
            .file_name()
            .and_then(|name| name.to_str())
            .and_then(|name| name.strip_suffix(".json"))
        else {
            continue;
        };
        if wanted
            .as_ref()
            .is_none_or(|wanted| wanted.iter().any(|one| one == id))
        {
            found.push((id.to_owned(), path.clone()));
        }
    }
    found.sort();
    Ok(found)
}

/// An entry's schema and its labelled instances (`Null` for a plain schema file).
pub fn read(path: &Path) -> anyhow::Result<(Value, Value)> {
    let entry: Value = serde_json::from_str(&std::fs::read_to_string(path)?)?;
    Ok(match entry.get("schema") {
        Some(schema) if entry.get("tests").is_some() => (schema.clone(), entry["tests"].clone()),
        _ => (entry, Value::Null),
    })
}

/// The labelled instances of `tests`: each instance and whether it is valid.
pub fn labelled(tests: &Value) -> impl Iterator<Item = (&Value, bool)> {
    (tests.as_array().into_iter().flatten())
        .filter_map(|test| Some((test.get("data")?, test.get("valid")?.as_bool()?)))
}
