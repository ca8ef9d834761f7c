//! `structure-boxes`: where the reader says phrases of a PDF stand, for an independent reader to
//! check (`bench/boxes-check.py` reads each box back with pdfplumber). Reads JSON lines on stdin,
//! `{"pdf": PATH, "phrases": [[WORD, ...], ...]}`, and writes one per document, `{"pdf": PATH,
//! "boxes": [BOXES or null, ...]}`: each phrase found in the text read (its words in order, any
//! whitespace between them, a line break among it), with the boxes of its first occurrence.
//!
//! ```text
//! cargo run --release -p structure-bench --bin structure-boxes < phrases.jsonl > boxes.jsonl
//! ```

use std::io::{BufRead, Write};

use serde_json::{Value, json};
use structure::document::{Read, read};
use structure::limits::CallLimits;
use structure::request::Document;

fn main() -> anyhow::Result<()> {
    let limits = CallLimits {
        document_pages: 10_000,
        document_bytes: usize::MAX,
        ..CallLimits::default()
    };
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    for line in std::io::stdin().lock().lines() {
        let line = line?;
        if line.trim().is_empty() {
            continue;
        }
        let asked: Value = serde_json::from_str(&line)?;
        let path = asked["pdf"].as_str().unwrap_or_default();
        let document = Document::new(std::fs::read(path)?, "application/pdf")?;
        let boxes: Vec<Value> = match read("", Some(&document), &limits) {
            Ok(read) => (asked["phrases"].as_array().into_iter().flatten())
                .map(|phrase| boxes_of(&read, phrase))
                .collect(),
            Err(error) => {
                eprintln!("{path}: {error}");
                Vec::new()
            }
        };
        writeln!(out, "{}", json!({ "pdf": path, "boxes": boxes }))?;
    }
    Ok(())
}

/// The boxes of the first place the text read writes `phrase`'s words in order, with only
/// whitespace between them; `null` where it writes them nowhere.
fn boxes_of(read: &Read, phrase: &Value) -> Value {
    let wanted: Vec<&str> = (phrase.as_array().into_iter().flatten())
        .filter_map(Value::as_str)
        .collect();
    if wanted.is_empty() {
        return Value::Null;
    }
    let words = words(&read.text);
    let found = (words.windows(wanted.len()))
        .find(|window| (window.iter().zip(&wanted)).all(|(word, want)| word.0 == *want))
        .map(|window| (window[0].1, window[window.len() - 1].2));
    match found {
        Some((start, end)) => json!(read.boxes(start, end)),
        None => Value::Null,
    }
}

/// The text's words (runs without whitespace) with their code point ranges.
fn words(text: &str) -> Vec<(String, usize, usize)> {
    let mut words = Vec::new();
    let mut current: Option<(String, usize)> = None;
    for (at, c) in text.chars().enumerate() {
        match (&mut current, c.is_whitespace()) {
            (Some((word, _)), false) => word.push(c),
            (None, false) => current = Some((c.to_string(), at)),
            (Some(_), true) => {
                let (word, start) = current.take().unwrap_or_default();
                words.push((word, start, at));
            }
            (None, true) => {}
        }
    }
    if let Some((word, start)) = current {
        let end = start + word.chars().count();
        words.push((word, start, end));
    }
    words
}
