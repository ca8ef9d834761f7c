//! A PDF's text layer, page by page, read by a small reader of our own (the parts of PDF that
//! hold text, and nothing else — no images, no decryption, no rendering: BENCHMARKS.md
//! "Documents" measures it against the general parsers): text in reading order (by glyph
//! position, not by the order of the content stream), a line per line, a word split at a line's
//! end joined again. What cannot be read is a typed error saying what to do — an encrypted file,
//! a scan without a text layer, a malformed or truncated file, too many pages, streams that
//! inflate past a bound — never a panic, and in time and memory bounded by the input.
//!
//! ```
//! let pdf = mock_llm::pdf::with_pages(&["Party: Ada Lovelace.", "Term: two years."]);
//! let pages = structure::document::pdf::pages(&pdf, 10)?;
//! assert_eq!(pages, ["Party: Ada Lovelace.", "Term: two years."]);
//! # Ok::<(), structure::StructureError>(())
//! ```
//!
//! | file | what it reads |
//! |---|---|
//! | `syntax.rs` | objects and operators, from bytes |
//! | `file.rs` | where each object is; the pages in order |
//! | `filters.rs` | a stream's compression undone |
//! | `encoding.rs`, `cmap.rs`, `font.rs` | what a string's bytes say, and how wide each glyph is |
//! | `content.rs` | where a page draws each glyph |
//! | `layout.rs` | the glyphs as lines of text |
//! | `problem.rs` | why a file could not be read |

mod cmap;
mod content;
mod encoding;
mod file;
mod filters;
mod font;
mod layout;
mod problem;
mod syntax;

use std::collections::HashSet;

use crate::error::StructureError;
use crate::keys;
use problem::Problem;

pub use file::is_pdf;

/// The text of each page of the PDF `bytes` (page 1 first), at most `max_pages` of them.
pub fn pages(bytes: &[u8], max_pages: usize) -> Result<Vec<String>, StructureError> {
    let (file, pages) = file::File::open(bytes).map_err(error)?;
    let count = pages.len();
    if count == 0 {
        return Err(unreadable("it has no page that can be read"));
    }
    if count > max_pages {
        return Err(StructureError::invalid_document(
            "too-many-pages",
            format!(
                "the PDF has {count} pages, over the limit of {max_pages} ({}): send the pages \
                 that hold what you need",
                keys::MAX_DOCUMENT_PAGES
            ),
        ));
    }
    let mut runner = content::Runner::new(&file);
    let pages: Vec<String> = pages
        .iter()
        .map(|page| runner.page(page).map(layout::text))
        .collect::<Result<_, _>>()
        .map_err(error)?;
    if let Some(problem) = file.trouble() {
        return Err(error(problem));
    }
    if pages.iter().all(|page| page.trim().is_empty()) {
        return Err(StructureError::invalid_document(
            "no-text-layer",
            "this PDF has no text layer (a scan, or pages of images): run OCR on it first, or \
             send its text",
        ));
    }
    let words = vocabulary(&pages);
    Ok(pages.iter().map(|page| joined(page, &words)).collect())
}

fn error(problem: Problem) -> StructureError {
    match problem {
        Problem::Encrypted => encrypted(),
        Problem::TooLarge(why) => StructureError::invalid_document(
            "too-large",
            format!("this PDF is too large to read ({why}): send its text, or fewer pages"),
        ),
        Problem::Unreadable(why) => unreadable(&why),
    }
}

fn encrypted() -> StructureError {
    StructureError::invalid_document(
        "encrypted",
        "this PDF is encrypted with a password: send a copy saved without one",
    )
}

fn unreadable(why: &str) -> StructureError {
    StructureError::invalid_document(
        "unreadable",
        format!(
            "this file cannot be read as a PDF ({why}): it may be damaged or cut short; send it \
             again, or send its text"
        ),
    )
}

/// The words of the whole document, lower-cased, hyphenated ones included.
fn vocabulary(pages: &[String]) -> HashSet<String> {
    pages
        .iter()
        .flat_map(|page| page.split(|c: char| !(c.is_alphanumeric() || c == '-')))
        .filter(|word| !word.is_empty())
        .map(str::to_lowercase)
        .collect()
}

/// `page` with each word split at a line's end (`confiden-` / `tial`) on one line again: without
/// the hyphen when the document writes the joined word elsewhere and never the hyphenated one
/// (`confidential`), else with it (`non-appealable`, a compound).
fn joined(page: &str, words: &HashSet<String>) -> String {
    let lines: Vec<&str> = page.split('\n').collect();
    let mut out = String::with_capacity(page.len());
    // Whether the line before ended in a split word that this one goes on with.
    let mut continues = false;
    for (index, line) in lines.iter().enumerate() {
        let line = if continues { line.trim_start() } else { line };
        continues = false;
        let head = line.trim_end();
        let next = lines.get(index + 1).map_or("", |next| next.trim_start());
        if let Some(before) = head.strip_suffix('-') {
            let stem = before
                .rsplit(|c: char| !c.is_alphanumeric())
                .next()
                .unwrap_or_default();
            let tail = next
                .split(|c: char| !c.is_alphanumeric())
                .next()
                .unwrap_or_default();
            if stem.chars().last().is_some_and(char::is_alphabetic)
                && tail.chars().next().is_some_and(char::is_lowercase)
            {
                let whole = format!("{stem}{tail}").to_lowercase();
                let hyphenated = format!("{stem}-{tail}").to_lowercase();
                let soft = words.contains(&whole) && !words.contains(&hyphenated);
                out.push_str(if soft { before } else { head });
                continues = true;
                continue;
            }
        }
        out.push_str(line);
        if index + 1 < lines.len() {
            out.push('\n');
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_word_split_at_a_lines_end_is_joined_and_a_compound_keeps_its_hyphen() {
        let pages = vec![
            "The information is confiden-\ntial and confidential.\nA non-\nappealable order.\nEnd-\nOf"
                .to_owned(),
        ];
        let words = vocabulary(&pages);
        assert_eq!(
            joined(&pages[0], &words),
            "The information is confidential and confidential.\nA non-appealable order.\nEnd-\nOf"
        );
    }

    #[test]
    fn what_is_not_a_pdf_is_an_error_not_a_panic() {
        for bytes in [
            &b""[..],
            b"%PDF-1.7\n garbage",
            b"\x00\x01\x02",
            &[0xff; 1000],
        ] {
            let error = pages(bytes, 10).unwrap_err();
            assert!(
                matches!(&error.kind, crate::error::ErrorKind::InvalidDocument { reason } if reason == "unreadable"),
                "{error:?}"
            );
        }
    }
}
