//! A PDF's text layer, page by page, read with `pdfplumber` (pure Rust; chosen by measurement:
//! BENCHMARKS.md, "Documents"): text in reading order (by glyph position, not by the order of the
//! content stream), a line per line, a word split at a line's end joined again. What cannot be
//! read is a typed error saying what to do — an encrypted file, a scan without a text layer, a
//! malformed or truncated file, too many pages — never a panic, and within pdfplumber's bounds on
//! the input, the nesting of forms and the objects of a page.

use std::collections::HashSet;

use pdfplumber::{ExtractOptions, Pdf, PdfErrorKind, TextOptions, UnicodeNorm};

use crate::error::StructureError;
use crate::keys;

/// The text of each page of the PDF `bytes` (page 1 first), at most `max_pages` of them.
pub fn pages(bytes: &[u8], max_pages: usize) -> Result<Vec<String>, StructureError> {
    let options = ExtractOptions {
        max_input_bytes: Some(bytes.len().max(1)),
        unicode_norm: UnicodeNorm::Nfc,
        ..ExtractOptions::default()
    };
    if page_tree_loops(bytes) {
        return Err(unreadable(
            "a chain of /Parent references in it loops back on itself",
        ));
    }
    let pdf = Pdf::open(bytes, Some(options)).map_err(|error| match error.kind() {
        PdfErrorKind::PasswordRequired | PdfErrorKind::InvalidPassword => encrypted(),
        _ => unreadable(&error.to_string()),
    })?;
    let count = pdf.page_count();
    if count == 0 {
        // A broken catalog or a cyclic page tree reads as no page at all.
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
    let text_options = TextOptions::default();
    let pages: Vec<String> = (0..count)
        // A page that cannot be read keeps its place, so the pages after it keep their numbers.
        .map(|index| {
            pdf.page(index)
                .map(|page| page.extract_text(&text_options))
                .unwrap_or_default()
        })
        .collect();
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

/// Whether an object's `/Parent` chain comes back to where it was: pdfplumber 0.4.1 looks
/// inherited attributes (`/CropBox`, `/Resources`, ...) up that chain without end. Read from the
/// file's bytes, every definition of every object counted (a damaged file pdfplumber repairs
/// may use any of them), and, where lopdf parses the file, its objects too (those inside object
/// streams). Bounded by the file's size.
fn page_tree_loops(bytes: &[u8]) -> bool {
    let mut parents: Vec<(u32, u32)> = written_parents(bytes);
    if let Ok(document) = lopdf::Document::load_mem(bytes) {
        for (&(id, _), object) in &document.objects {
            let parent = (object.as_dict())
                .and_then(|dictionary| dictionary.get(b"Parent"))
                .and_then(lopdf::Object::as_reference);
            if let Ok((parent, _)) = parent {
                parents.push((id, parent));
            }
        }
    }
    has_cycle(&parents)
}

/// Each `N G obj … /Parent M G R …` the bytes write: (N, M).
fn written_parents(bytes: &[u8]) -> Vec<(u32, u32)> {
    static PARENT: std::sync::LazyLock<regex::bytes::Regex> = std::sync::LazyLock::new(|| {
        regex::bytes::Regex::new(r"(\d+)\s+\d+\s+obj\b|/Parent\s*(\d+)\s+\d+\s+R")
            .expect("the pattern is valid")
    });
    let mut parents = Vec::new();
    let mut object = None;
    for found in PARENT.captures_iter(bytes) {
        let number = |index: usize| {
            found
                .get(index)
                .and_then(|digits| std::str::from_utf8(digits.as_bytes()).ok()?.parse().ok())
        };
        match (number(1), number(2)) {
            (Some(defined), _) => object = Some(defined),
            (None, Some(parent)) => {
                if let Some(child) = object {
                    parents.push((child, parent));
                }
            }
            _ => {}
        }
    }
    parents
}

/// Whether following `edges` (child → parent, any number each) from some object comes back to
/// it.
fn has_cycle(edges: &[(u32, u32)]) -> bool {
    let mut next: std::collections::HashMap<u32, Vec<u32>> = std::collections::HashMap::new();
    for &(child, parent) in edges {
        next.entry(child).or_default().push(parent);
    }
    // Depth-first, each object finished once: 0 unseen, 1 on the path, 2 done.
    let mut state: std::collections::HashMap<u32, u8> = std::collections::HashMap::new();
    for &start in next.keys() {
        if state.get(&start).copied().unwrap_or(0) != 0 {
            continue;
        }
        let mut stack = vec![(start, 0usize)];
        state.insert(start, 1);
        while let Some((node, edge)) = stack.pop() {
            let parents = next.get(&node).map(Vec::as_slice).unwrap_or_default();
            match parents.get(edge) {
                Some(&parent) => {
                    stack.push((node, edge + 1));
                    match state.get(&parent).copied().unwrap_or(0) {
                        1 => return true,
                        0 => {
                            state.insert(parent, 1);
                            stack.push((parent, 0));
                        }
                        _ => {}
                    }
                }
                None => {
                    state.insert(node, 2);
                }
            }
        }
    }
    false
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
            "The information is confiden-\ntial and confidential.\nA non-\nappealable order.\nEnd-\nOf".to_owned(),
        ];
        let words = vocabulary(&pages);
        assert_eq!(
            joined(&pages[0], &words),
            "The information is confidential and confidential.\nA non-appealable order.\nEnd-\nOf"
        );
    }

    #[test]
    fn parent_chains_that_loop_are_found_through_any_definition() {
        assert!(has_cycle(&[(4, 4)]));
        assert!(has_cycle(&[(4, 2), (2, 6), (6, 4)]));
        assert!(!has_cycle(&[(4, 2), (6, 2), (8, 2)]));
        let written =
            b"4 0 obj << /Type /Page /Parent 4 0 R >> endobj 4 0 obj << /Parent 2 0 R >> endobj";
        assert_eq!(written_parents(written), [(4, 4), (4, 2)]);
        assert!(page_tree_loops(written));
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
