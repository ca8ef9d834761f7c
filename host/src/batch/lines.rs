//! Files of JSON lines that survive `kill -9`: each line is appended with one write and flushed
//! before the next. Should the process die inside that write, the file ends with a line without
//! its newline; opening the file again cuts it off, so a torn line is never read or kept.

use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

/// The whole lines a file held: each numbered from 1, as an editor does.
pub type Numbered = Vec<(usize, Vec<u8>)>;

/// A file of whole lines, open for appending.
pub struct Lines {
    path: PathBuf,
    file: File,
}

impl Lines {
    /// Opens (or creates) `path`, cutting off a torn last line; returns the whole lines it
    /// holds (empty ones left out), numbered from 1.
    pub fn open(path: &Path) -> Result<(Self, Numbered), String> {
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
        text.truncate(whole);
        let lines = (text.split(|byte| *byte == b'\n').enumerate())
            .filter(|(_, line)| !line.is_empty())
            .map(|(index, line)| (index + 1, line.to_vec()))
            .collect();
        let path = path.to_owned();
        Ok((Self { path, file }, lines))
    }

    /// Appends `value` as one line, whole, and flushes it.
    pub fn append(&mut self, value: &impl serde::Serialize) -> Result<(), String> {
        let mut bytes = serde_json::to_vec(value).expect("JSON values serialise");
        bytes.push(b'\n');
        (self.file.write_all(&bytes))
            .and_then(|()| self.file.flush())
            .map_err(|error| format!("cannot write {}: {error}", self.path.display()))
    }

    /// Where the lines are.
    pub fn path(&self) -> &Path {
        &self.path
    }
}
