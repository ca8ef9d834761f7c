//! A batch's output file: one JSON line an item, each written whole, so that the same command
//! run again after a crash or `kill -9` skips what is done and never writes an item twice.
//!
//! A line is appended with one write and flushed before the next item is written. Should the
//! process die inside that write, the file ends with a line without its newline: opening the
//! file again cuts it off (its item is done again), so no torn line is ever kept.

use std::collections::HashSet;
use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use serde_json::Value;

/// The output file, open for appending.
pub struct Output {
    path: PathBuf,
    file: File,
}

impl Output {
    /// Opens (or creates) `path`, cutting off a torn last line; returns the ids already written.
    pub fn open(path: &Path) -> Result<(Self, HashSet<String>), String> {
        let failed = |error: std::io::Error| format!("cannot use {}: {error}", path.display());
        let mut file = OpenOptions::new()
            .create(true)
            .truncate(false)
            .read(true)
            .append(true)
            .open(path)
            .map_err(failed)?;
        let mut text = Vec::new();
        file.read_to_end(&mut text).map_err(failed)?;
        let whole = text
            .iter()
            .rposition(|byte| *byte == b'\n')
            .map_or(0, |at| at + 1);
        if whole < text.len() {
            file.set_len(whole as u64).map_err(failed)?;
            file.seek(SeekFrom::End(0)).map_err(failed)?;
        }
        let mut done = HashSet::new();
        for (number, line) in text[..whole].split(|byte| *byte == b'\n').enumerate() {
            if line.is_empty() {
                continue;
            }
            let id = serde_json::from_slice::<Value>(line)
                .ok()
                .and_then(|value| value.get("id")?.as_str().map(str::to_owned))
                .ok_or_else(|| {
                    format!(
                        "{} line {} is not a line this command wrote (a JSON object with an \
                         \"id\"): give another output file",
                        path.display(),
                        number + 1
                    )
                })?;
            done.insert(id);
        }
        let path = path.to_owned();
        Ok((Self { path, file }, done))
    }

    /// Appends `result` (an outcome or an error, as JSON) with `id` first, whole.
    pub fn write(&mut self, id: &str, result: Value) -> Result<(), String> {
        let mut line = serde_json::Map::new();
        line.insert("id".into(), Value::String(id.to_owned()));
        if let Value::Object(fields) = result {
            line.extend(fields.into_iter().filter(|(key, _)| key != "id"));
        }
        let mut bytes = serde_json::to_vec(&line).expect("JSON values serialise");
        bytes.push(b'\n');
        (self.file.write_all(&bytes))
            .and_then(|()| self.file.flush())
            .map_err(|error| format!("cannot write {}: {error}", self.path.display()))
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
