//! A batch's output file: one JSON line an item, each written whole, so that the same command
//! run again after a crash or `kill -9` skips what is done and never writes an item twice.
//!
//! Its lines are [`Lines`]: a line torn by a crash is cut off when the file is opened again,
//! and its item is done again.

use std::collections::HashSet;
use std::path::Path;

use serde_json::Value;

use super::lines::Lines;

/// The output file, open for appending.
pub struct Output {
    lines: Lines,
}

impl Output {
    /// Opens (or creates) `path`, cutting off a torn last line; returns the ids already written.
    pub fn open(path: &Path) -> Result<(Self, HashSet<String>), String> {
        let (lines, written) = Lines::open(path)?;
        let mut done = HashSet::new();
        for (number, line) in written {
            let id = serde_json::from_slice::<Value>(&line)
                .ok()
                .and_then(|value| value.get("id")?.as_str().map(str::to_owned))
                .ok_or_else(|| {
                    format!(
                        "{} line {number} is not a line this command wrote (a JSON object with an \
                         \"id\"): give another output file",
                        path.display(),
                    )
                })?;
            done.insert(id);
        }
        Ok((Self { lines }, done))
    }

    /// Appends `result` (an outcome or an error, as JSON) with `id` first, whole.
    pub fn write(&mut self, id: &str, result: Value) -> Result<(), String> {
        let mut line = serde_json::Map::new();
        line.insert("id".into(), Value::String(id.to_owned()));
        if let Value::Object(fields) = result {
            line.extend(fields.into_iter().filter(|(key, _)| key != "id"));
        }
        self.lines.append(&line)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_torn_last_line_is_cut_off_and_written_ids_are_skipped() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("out.jsonl");
        std::fs::write(
            &path,
            "{\"id\":\"1\",\"status\":\"ok\"}\n{\"id\":\"2\",\"sta",
        )
        .unwrap();
        let (mut output, done) = Output::open(&path).unwrap();
        assert_eq!(done, HashSet::from(["1".to_owned()]));
        output
            .write("2", json!({ "status": "stale", "id": "ignored" }))
            .unwrap();
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            "{\"id\":\"1\",\"status\":\"ok\"}\n{\"id\":\"2\",\"status\":\"stale\"}\n"
        );
        std::fs::write(&path, "not json\n").unwrap();
        let error = Output::open(&path).err().unwrap();
        assert!(
            error.contains("line 1 is not a line this command wrote"),
            "{error}"
        );
    }
}
