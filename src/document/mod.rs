//! Documents beside the prompt: the text a call structures, read from a PDF's text layer (by
//! page, [`pdf`]) or from UTF-8 text, inside the component, so Spin, the browser and the command
//! line read a document the same way. The text read is the prompt (when there is one), a blank
//! line, then the document's pages; [`Read::page_at`] says which page a span of it is on.
//!
//! ```
//! use structure::document::{read, Read};
//! use structure::limits::CallLimits;
//! use structure::request::Document;
//!
//! let document = Document::new(b"Ada Lovelace, 1815.".to_vec(), "text/plain")?;
//! let Read { text, .. } = read("Who is this?", Some(&document), &CallLimits::default())?;
//! assert_eq!(text, "Who is this?\n\nAda Lovelace, 1815.");
//! # Ok::<(), structure::StructureError>(())
//! ```

pub mod docx;
pub mod html;
mod lines;
mod package;
pub mod pdf;
pub mod xlsx;

use crate::error::StructureError;
use crate::keys;
use crate::limits::CallLimits;
use crate::media_type::{Attachment, MediaType};
use crate::outcome::{PageBox, PageSize};
use crate::request::Document;

use pdf::{Page, Place};

/// Between pages of the text read: a form feed on a line of its own, as `pdftotext` writes it.
pub const PAGE_BREAK: &str = "\n\u{c}\n";

/// The text a call reads, and where the document's pages start in it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Read {
    pub text: String,
    /// For a PDF: the code point each page starts at in `text` (page 1 first).
    pub pages: Vec<usize>,
    /// For a PDF: where each code point of `text` stands on its page (the prompt's and the
    /// page breaks' nowhere).
    places: Vec<Place>,
    /// For a PDF: each page's size as shown.
    pub sizes: Vec<PageSize>,
    /// The document as it is, for a model that reads it as pictures: an image, or a PDF with
    /// pages that have no text layer (`scanned`).
    pub attachment: Option<Attachment>,
    /// For a PDF: the pages (from 1) that show something but have no text layer.
    pub scanned: Vec<u32>,
    /// For a spreadsheet: each row's line in `text`, in text order, with the code point it
    /// starts at there.
    rows: Vec<(usize, xlsx::RowLine)>,
}

impl Read {
    /// The page (from 1) the code point `at` of the text is on; `None` before the document's
    /// first page (in the prompt) or for a document without pages.
    pub fn page_at(&self, at: usize) -> Option<u32> {
        let after = self.pages.partition_point(|&start| start <= at);
        (after > 0).then_some(after as u32)
    }

    /// Whether the text was read from a spreadsheet with rows.
    pub fn is_spreadsheet(&self) -> bool {
        !self.rows.is_empty()
    }

    /// The spreadsheet cell the code point `at` of the text is in (`Lines!B14`); `None` outside
    /// a row's line, or for a document that is not a spreadsheet.
    pub fn cell_at(&self, at: usize) -> Option<String> {
        let after = self.rows.partition_point(|(start, _)| *start <= at);
        let (start, line) = &self.rows[after.checked_sub(1)?];
        let mut column = 0;
        for c in self.text[line.byte..].chars().take(at - start) {
            match c {
                '\n' => return None,
                '\t' => column += 1,
                _ => {}
            }
        }
        Some(xlsx::reference(&line.sheet, line.row, column))
    }

    /// Where the code points `start..end` of the text stand: a box per line of the page they
    /// run over; none for a text without pages or a span in the prompt.
    pub fn boxes(&self, start: usize, end: usize) -> Vec<PageBox> {
        let mut boxes: Vec<PageBox> = Vec::new();
        let end = end.min(self.places.len());
        // The line of the box being grown: its page and its line on the page.
        let mut growing = None;
        for (at, place) in (start..end).zip(&self.places[start.min(end)..end]) {
            let Some(page) = self.page_at(at).filter(|_| place.is_somewhere()) else {
                continue;
            };
            let [x0, top, x1, bottom] =
                [place.x0, place.top, place.x1, place.bottom].map(f64::from);
            match boxes.last_mut() {
                Some(line) if growing == Some((page, place.line)) => {
                    line.x0 = line.x0.min(x0);
                    line.top = line.top.min(top);
                    line.x1 = line.x1.max(x1);
                    line.bottom = line.bottom.max(bottom);
                }
                _ => boxes.push(PageBox {
                    page,
                    x0,
                    top,
                    x1,
                    bottom,
                }),
            }
            growing = Some((page, place.line));
        }
        for line in &mut boxes {
            for side in [&mut line.x0, &mut line.top, &mut line.x1, &mut line.bottom] {
                *side = hundredths(*side);
            }
        }
        boxes
    }
}

/// `points` to a hundredth, as readers give positions.
fn hundredths(points: f64) -> f64 {
    (points * 100.0).round() / 100.0
}

/// The text a call with `prompt` and `document` reads, within `limits`.
pub fn read(
    prompt: &str,
    document: Option<&Document>,
    limits: &CallLimits,
) -> Result<Read, StructureError> {
    let Some(document) = document else {
        return Ok(Read {
            text: prompt.to_owned(),
            ..Read::default()
        });
    };
    if document.bytes.len() > limits.document_bytes {
        return Err(StructureError::invalid_document(
            "too-large",
            format!(
                "the document is {} bytes, over the limit of {} ({}): send a smaller one, or \
                 split it",
                document.bytes.len(),
                limits.document_bytes,
                keys::MAX_DOCUMENT_BYTES
            ),
        ));
    }
    let text = match document.media_type {
        MediaType::Pdf => {
            let pages = pdf::read(&document.bytes, limits.document_pages)?;
            let mut read = laid_out(prompt, &pages);
            read.scanned = (pages.iter().zip(1..))
                .filter(|(page, _)| page.scanned)
                .map(|(_, number)| number)
                .collect();
            if !read.scanned.is_empty() {
                read.attachment = Some(attached(document, Some(pages.len())));
            }
            return Ok(read);
        }
        MediaType::Png | MediaType::Jpeg | MediaType::Webp => {
            let mut read = after_prompt(prompt, "");
            read.attachment = Some(attached(document, None));
            return Ok(read);
        }
        MediaType::Text => text(&document.bytes)?,
        MediaType::Html => html::text(&document.bytes, limits.document_bytes)?,
        MediaType::Docx => docx::text(&document.bytes, limits.document_bytes)?,
        MediaType::Xlsx => {
            let sheets = xlsx::read(&document.bytes, limits.document_bytes)?;
            let mut read = after_prompt(prompt, &sheets.text);
            read.rows = in_read(&read.text, sheets);
            return Ok(read);
        }
    };
    Ok(after_prompt(prompt, &text))
}

/// `document` as the model is given it.
fn attached(document: &Document, pages: Option<usize>) -> Attachment {
    Attachment {
        media_type: document.media_type,
        bytes: document.bytes.as_slice().into(),
        pages,
    }
}

/// The rows of `sheets`, whose text ends `text`: each placed there, by byte and code point.
fn in_read(text: &str, sheets: xlsx::Sheets) -> Vec<(usize, xlsx::RowLine)> {
    let shift = text.len() - sheets.text.len();
    let (mut byte, mut chars) = (0, 0);
    (sheets.rows.into_iter())
        .map(|mut line| {
            line.byte += shift;
            chars += text[byte..line.byte].chars().count();
            byte = line.byte;
            (chars, line)
        })
        .collect()
}

/// The text of a prompt and a text document: the prompt, a blank line, the document.
fn after_prompt(prompt: &str, document: &str) -> Read {
    let mut text = String::with_capacity(prompt.len() + document.len() + 2);
    if !prompt.trim().is_empty() {
        text.push_str(prompt);
        text.push_str("\n\n");
    }
    text.push_str(document);
    Read {
        text,
        ..Read::default()
    }
}

/// The text of a prompt and a PDF's `pages`, with where each page starts and each code point
/// stands.
fn laid_out(prompt: &str, pages: &[Page]) -> Read {
    let mut read = after_prompt(prompt, "");
    read.places = vec![Place::NOWHERE; read.text.chars().count()];
    for (index, page) in pages.iter().enumerate() {
        if index > 0 {
            read.text.push_str(PAGE_BREAK);
            (read.places).extend(PAGE_BREAK.chars().map(|_| Place::NOWHERE));
        }
        read.pages.push(read.places.len());
        read.text.push_str(&page.text);
        read.places.extend_from_slice(&page.places);
        read.sizes.push(PageSize {
            page: index as u32 + 1,
            width: hundredths(f64::from(page.width)),
            height: hundredths(f64::from(page.height)),
        });
    }
    read
}

/// A text document's text: its bytes as UTF-8 (a byte-order mark dropped).
fn text(bytes: &[u8]) -> Result<String, StructureError> {
    let bytes = bytes.strip_prefix(b"\xef\xbb\xbf").unwrap_or(bytes);
    String::from_utf8(bytes.to_vec()).map_err(|error| {
        StructureError::invalid_document(
            "not-utf8",
            format!(
                "the text document is not UTF-8 (byte {} is not): convert it to UTF-8, or send a \
                 PDF as application/pdf",
                error.utf8_error().valid_up_to()
            ),
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pages_are_found_by_code_point() {
        let read = Read {
            pages: vec![10, 40, 90],
            ..Read::default()
        };
        assert_eq!(read.page_at(0), None);
        assert_eq!(read.page_at(10), Some(1));
        assert_eq!(read.page_at(39), Some(1));
        assert_eq!(read.page_at(40), Some(2));
        assert_eq!(read.page_at(1000), Some(3));
    }

    #[test]
    fn a_text_document_follows_the_prompt_and_must_be_utf8() {
        let limits = CallLimits::default();
        let document = Document::new(
            "\u{feff}Zoë".as_bytes().to_vec(),
            "text/plain; charset=utf-8",
        )
        .unwrap();
        let read = read("", Some(&document), &limits).unwrap();
        assert_eq!((read.text.as_str(), read.pages.len()), ("Zoë", 0));
        let latin1 = Document::new(vec![b'Z', 0xeb], "text/plain").unwrap();
        let error = super::read("x", Some(&latin1), &limits).unwrap_err();
        assert_eq!(
            error.kind,
            crate::error::ErrorKind::InvalidDocument {
                reason: "not-utf8".into()
            }
        );
        let tight = CallLimits {
            document_bytes: 2,
            ..limits
        };
        let error = super::read("x", Some(&document), &tight).unwrap_err();
        assert!(
            error.message.contains("structure_max_document_bytes"),
            "{}",
            error.message
        );
    }
}
