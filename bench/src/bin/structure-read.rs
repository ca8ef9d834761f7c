//! `structure-read`: the text the component's readers read from each file given (a PDF, a Word
//! document, a web page or text, told as `--file` tells them), one JSON line per file:
//! `{"file": PATH, "text": TEXT}` or `{"file": PATH, "error": MESSAGE}`, for an independent
//! reader to be compared with (`bench/formats-check.py`).
//!
//! ```text
//! cargo run --release -p structure-bench --bin structure-read -- a.docx b.html > texts.jsonl
//! ```

use std::io::Write;

use serde_json::json;
use structure::document::read;
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
    for path in std::env::args().skip(1) {
        let bytes = std::fs::read(&path)?;
        let name = std::path::Path::new(&path)
            .file_name()
            .and_then(|name| name.to_str());
        let media_type = structure::media_type::of(&bytes, name);
        let document = Document::new(bytes, media_type.name())?;
        let line = match read("", Some(&document), &limits) {
            Ok(read) => json!({ "file": path, "text": read.text }),
            Err(error) => json!({ "file": path, "error": error.to_string() }),
        };
        writeln!(out, "{line}")?;
    }
    Ok(())
}
