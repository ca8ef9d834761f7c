//! The lines of a batch's input file, as the tool arguments of one call each.
//!
//! A line is a JSON object — `{"id", "prompt" | "file", "schema"?, "schemaMode"?, "settings"?,
//! ...}`, the tool's arguments plus an `id` and a `file` (a path relative to the input file's
//! folder, read as the call's document) — or plain text, a prompt whose id is its line number.
//! What a line leaves out comes from the command's defaults (`--schema`, `--records`, `--with`).
//! A line that cannot become arguments is still an item: its error is its result.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use base64::Engine;
use serde_json::{Map, Value, json};

/// What every line gets unless it says otherwise.
#[derive(Debug, Clone, Default)]
pub struct Defaults {
    /// `schema` and `schemaMode`, as the tool arguments write them.
    pub schema: Option<(Value, &'static str)>,
    /// Records mode.
    pub records: bool,
    /// Setting overrides, under each line's own.
    pub settings: Map<String, Value>,
}

/// One item of the batch: its id, and its tool arguments or why the line has none.
#[derive(Debug, Clone, PartialEq)]
pub struct Item {
    /// The line's `id`, else its line number.
    pub id: String,
    /// The tool arguments, or why the line gives none.
    pub arguments: Result<Value, String>,
}

/// The id of every line of `text` (in order), or the ids given more than once.
pub fn ids(text: &str) -> Result<Vec<String>, Vec<String>> {
    let mut seen = HashSet::new();
    let mut twice = Vec::new();
    let mut ids = Vec::new();
    for (number, line) in numbered(text) {
        let id = id_of(number, &read(line));
        if !seen.insert(id.clone()) && !twice.contains(&id) {
            twice.push(id.clone());
        }
        ids.push(id);
    }
    if twice.is_empty() {
        Ok(ids)
    } else {
        Err(twice)
    }
}

/// The items of `text`, read from `folder` (where `file` paths start).
pub fn items<'a>(
    text: &'a str,
    folder: &'a Path,
    defaults: &'a Defaults,
) -> impl Iterator<Item = Item> + 'a {
    numbered(text).map(move |(number, line)| {
        let line = read(line);
        Item {
            id: id_of(number, &line),
            arguments: arguments(line, folder, defaults),
        }
    })
}

/// The non-blank lines, numbered from 1 as an editor does.
fn numbered(text: &str) -> impl Iterator<Item = (usize, &str)> {
    (text.lines().enumerate())
        .map(|(index, line)| (index + 1, line.trim()))
        .filter(|(_, line)| !line.is_empty())
}

/// A line as read, once: a JSON object, plain text, or a line that opens an object and is none.
enum Line<'a> {
    Object(Map<String, Value>),
    Text(&'a str),
    Malformed,
}

fn read(line: &str) -> Line<'_> {
    if !line.starts_with('{') {
        return Line::Text(line);
    }
    match serde_json::from_str::<Value>(line) {
        Ok(Value::Object(object)) => Line::Object(object),
        _ => Line::Malformed,
    }
}

/// A line's id: its `id` (a string, or a number written as one), else its line number.
fn id_of(number: usize, line: &Line<'_>) -> String {
    let given = match line {
        Line::Object(object) => match object.get("id") {
            Some(Value::String(id)) => Some(id.clone()),
            Some(Value::Number(id)) => Some(id.to_string()),
            _ => None,
        },
        _ => None,
    };
    given.unwrap_or_else(|| number.to_string())
}

fn arguments(line: Line<'_>, folder: &Path, defaults: &Defaults) -> Result<Value, String> {
    let mut arguments = match line {
        Line::Object(object) => object,
        Line::Malformed => {
            return Err("the line is not a JSON object (nor plain text)".to_owned());
        }
        Line::Text(text) => {
            let mut object = Map::new();
            object.insert("prompt".into(), Value::String(text.to_owned()));
            object
        }
    };
    arguments.remove("id");
    if let Some(file) = arguments.remove("file") {
        let Value::String(path) = file else {
            return Err("\"file\" must be a path, as a string".to_owned());
        };
        arguments.insert("document".into(), document(&folder.join(path))?);
        arguments.entry("prompt").or_insert(json!(""));
    }
    if !arguments.contains_key("schema")
        && let Some((schema, mode)) = &defaults.schema
    {
        arguments.insert("schema".into(), schema.clone());
        arguments.insert("schemaMode".into(), json!(mode));
    }
    if defaults.records {
        arguments.entry("records").or_insert(json!(true));
    }
    if !defaults.settings.is_empty() {
        let mut settings = defaults.settings.clone();
        match arguments.remove("settings") {
            None => {}
            Some(Value::Object(own)) => settings.extend(own),
            Some(_) => return Err("\"settings\" must be an object".to_owned()),
        }
        arguments.insert("settings".into(), Value::Object(settings));
    }
    Ok(Value::Object(arguments))
}

/// The file at `path` as a tool argument's document (its media type told by its name or bytes).
fn document(path: &PathBuf) -> Result<Value, String> {
    let bytes =
        std::fs::read(path).map_err(|error| format!("cannot read {}: {error}", path.display()))?;
    let name = path.file_name().and_then(|name| name.to_str());
    let media_type = structure::media_type::of(&bytes, name).name();
    let data = base64::engine::general_purpose::STANDARD.encode(bytes);
    Ok(json!({ "mediaType": media_type, "data": data }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_become_arguments_with_the_defaults_under_their_own() {
        let folder = tempfile::tempdir().unwrap();
        std::fs::write(folder.path().join("a.txt"), "Ada, ada@example.org").unwrap();
        let mut settings = Map::new();
        settings.insert("maxLoops".into(), json!(2));
        settings.insert("grounding".into(), json!("report"));
        let defaults = Defaults {
            schema: Some((json!("contact"), "named")),
            records: false,
            settings,
        };
        let text = "Ada Lovelace\n\n{\"id\": \"x\", \"file\": \"a.txt\", \"settings\": {\"maxLoops\": 1}}\n\
                    {\"id\": 7, \"prompt\": \"p\", \"schema\": {\"type\": \"object\"}}\n{broken\n";
        let read: Vec<Item> = items(text, folder.path(), &defaults).collect();
        let ids: Vec<&str> = read.iter().map(|item| item.id.as_str()).collect();
        assert_eq!(
            ids,
            ["1", "x", "7", "5"],
            "a plain line's id is its line number"
        );
        let first = read[0].arguments.as_ref().unwrap();
        assert_eq!(first["prompt"], "Ada Lovelace");
        assert_eq!(
            (&first["schema"], &first["schemaMode"]),
            (&json!("contact"), &json!("named"))
        );
        let file = read[1].arguments.as_ref().unwrap();
        assert_eq!(file["document"]["mediaType"], "text/plain");
        assert_eq!(
            file["settings"],
            json!({"maxLoops": 1, "grounding": "report"})
        );
        assert!(file.get("id").is_none() && file.get("file").is_none());
        let own = read[2].arguments.as_ref().unwrap();
        assert_eq!(own["schema"], json!({"type": "object"}));
        assert!(
            own.get("schemaMode").is_none(),
            "a line's own schema keeps its own mode"
        );
        assert!(
            read[3]
                .arguments
                .as_ref()
                .unwrap_err()
                .contains("not a JSON object")
        );
        let missing: Vec<Item> =
            items("{\"file\": \"gone.pdf\"}", folder.path(), &defaults).collect();
        assert!(
            missing[0]
                .arguments
                .as_ref()
                .unwrap_err()
                .contains("cannot read")
        );
    }

    #[test]
    fn ids_given_twice_are_named() {
        assert_eq!(ids("a\nb\n").unwrap(), ["1", "2"]);
        assert_eq!(
            ids("{\"id\": \"2\"}\nsecond line\n{\"id\": 2}\n").unwrap_err(),
            ["2"]
        );
    }
}
