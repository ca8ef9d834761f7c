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
//! | `layout.rs` | the glyphs as lines of text, each code point with its glyph's place |
//! | `columns.rs` | where a table's columns start, from words lined up down its rows |
//! | `frame.rs` | the page's visible area and turn: places as the page is shown |
//! | `problem.rs` | why a file could not be read |

mod cmap;
mod columns;
mod content;
mod encoding;
mod file;
mod filters;
mod font;
mod frame;
mod layout;
mod problem;
mod syntax;

use std::collections::HashSet;

use crate::error::StructureError;
use crate::keys;
use frame::Frame;
use layout::PageText;
use problem::Problem;

pub use layout::Place;

/// A page read: its text, where each of its code points stands (`places[i]` for the `i`th, in
/// points from the top-left corner of the page as it is shown: its crop box, turned), and its
/// size as shown.
#[derive(Debug, Clone, PartialEq)]
pub struct Page {
    pub text: String,
    pub places: Vec<Place>,
    pub width: f32,
    pub height: f32,
    /// Whether the page shows something but has no text layer: a scan, a photo, text drawn as
    /// outlines. Only a model that reads the page as a picture can read it.
    pub scanned: bool,
}

/// The text of each page of the PDF `bytes` (page 1 first), at most `max_pages` of them.
pub fn pages(bytes: &[u8], max_pages: usize) -> Result<Vec<String>, StructureError> {
    Ok(read(bytes, max_pages)?
        .into_iter()
        .map(|page| page.text)
        .collect())
}

/// Each page of the PDF `bytes` (page 1 first), at most `max_pages` of them: its text and
/// where that text stands.
pub fn read(bytes: &[u8], max_pages: usize) -> Result<Vec<Page>, StructureError> {
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
    let drawn: Vec<(PageText, bool)> = pages
        .iter()
        .map(|page| runner.page(page))
        .map(|drawn| drawn.map(|drawn| (layout::text(drawn.chars), drawn.painted)))
        .collect::<Result<_, _>>()
        .map_err(error)?;
    if let Some(problem) = file.trouble() {
        return Err(error(problem));
    }
    let blank = |(text, painted): &(PageText, bool)| text.text.trim().is_empty() && !painted;
    if drawn.iter().all(blank) {
        return Err(StructureError::invalid_document(
            "no-text-layer",
            "this PDF shows nothing to read: its pages have neither text nor pictures",
        ));
    }
    let (texts, painted): (Vec<PageText>, Vec<bool>) = drawn.into_iter().unzip();
    let words = vocabulary(&texts);
    Ok(pages
        .iter()
        .zip(texts.iter().zip(painted))
        .map(|(page, (text, painted))| {
            let frame = Frame::of(&file, page);
            let PageText { text, places } = joined(text, &words);
            let (width, height) = frame.size();
            Page {
                scanned: painted && text.trim().is_empty(),
                text,
                places: places.into_iter().map(|place| frame.shown(place)).collect(),
                width,
                height,
            }
        })
        .collect())
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
fn vocabulary(pages: &[PageText]) -> HashSet<String> {
    pages
        .iter()
        .flat_map(|page| {
            page.text
                .split(|c: char| !(c.is_alphanumeric() || c == '-'))
        })
        .filter(|word| !word.is_empty())
        .map(str::to_lowercase)
        .collect()
}

type Placed = (char, layout::Place);

/// `page` with each word split at a line's end (`confiden-` / `tial`) on one line again: without
/// the hyphen when the document writes the joined word elsewhere and never the hyphenated one
/// (`confidential`), else with it (`non-appealable`, a compound). Each code point keeps its
/// place (a joined word stands on two lines).
fn joined(page: &PageText, words: &HashSet<String>) -> PageText {
    let placed: Vec<Placed> = page.placed().collect();
    let lines: Vec<&[Placed]> = placed.split(|(c, _)| *c == '\n').collect();
    let mut out = PageText::default();
    // Whether the line before ended in a split word that this one goes on with.
    let mut continues = false;
    for (index, line) in lines.iter().enumerate() {
        let line = if continues { trim_start(line) } else { line };
        continues = false;
        let head = trim_end(line);
        let next = lines
            .get(index + 1)
            .map_or(&[][..], |next| trim_start(next));
        if let Some(((_, before), continued)) = head
            .split_last()
            .filter(|(last, _)| last.0 == '-')
            .zip(next.split(|(c, _)| !c.is_alphanumeric()).next())
        {
            let stem = before
                .rsplit(|(c, _)| !c.is_alphanumeric())
                .next()
                .unwrap_or_default();
            if stem.last().is_some_and(|(c, _)| c.is_alphabetic())
                && continued.first().is_some_and(|(c, _)| c.is_lowercase())
            {
                let (stem, tail) = (letters(stem), letters(continued));
                let whole = format!("{stem}{tail}").to_lowercase();
                let hyphenated = format!("{stem}-{tail}").to_lowercase();
                let soft = words.contains(&whole) && !words.contains(&hyphenated);
                extend(&mut out, if soft { before } else { head });
                continues = true;
                continue;
            }
        }
        extend(&mut out, line);
        if index + 1 < lines.len() {
            out.push('\n', layout::Place::NOWHERE);
        }
    }
    out
}

fn trim_start(line: &[Placed]) -> &[Placed] {
    let blank = line.iter().take_while(|(c, _)| c.is_whitespace()).count();
    &line[blank..]
}

fn trim_end(line: &[Placed]) -> &[Placed] {
    let blank = line
        .iter()
        .rev()
        .take_while(|(c, _)| c.is_whitespace())
        .count();
    &line[..line.len() - blank]
}

fn letters(placed: &[Placed]) -> String {
    placed.iter().map(|(c, _)| c).collect()
}

fn extend(out: &mut PageText, placed: &[Placed]) {
    for &(c, place) in placed {
        out.push(c, place);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_word_split_at_a_lines_end_is_joined_and_a_compound_keeps_its_hyphen() {
        let text = "The information is confiden-\ntial and confidential.\nA non-\nappealable order.\nEnd-\nOf";
        // Each code point placed at its index, so where each went can be told.
        let at = |index: usize| layout::Place {
            x0: index as f32,
            x1: index as f32 + 1.0,
            bottom: 0.0,
            top: 1.0,
            line: 0,
        };
        let pages = vec![PageText {
            text: text.to_owned(),
            places: (0..text.chars().count()).map(at).collect(),
        }];
        let words = vocabulary(&pages);
        let page = joined(&pages[0], &words);
        assert_eq!(
            page.text,
            "The information is confidential and confidential.\nA non-appealable order.\nEnd-\nOf"
        );
        assert_eq!(page.places.len(), page.text.chars().count());
        // "confidential": "confiden" where the first line has it, "tial" where the second does.
        let start = page.text.find("confidential").unwrap();
        let xs: Vec<f32> = page.places[start..start + 12]
            .iter()
            .map(|place| place.x0)
            .collect();
        assert_eq!(xs[..8], [19.0, 20.0, 21.0, 22.0, 23.0, 24.0, 25.0, 26.0]);
        assert_eq!(xs[8..], [29.0, 30.0, 31.0, 32.0]);
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
