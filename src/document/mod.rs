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

pub mod pdf;

use crate::error::StructureError;
use crate::keys;
use crate::limits::CallLimits;
use crate::request::{Document, MediaType};

pub use pdf::is_pdf;

/// Between pages of the text read: a form feed on a line of its own, as `pdftotext` writes it.
pub const PAGE_BREAK: &str = "\n\u{c}\n";

/// The text a call reads, and where the document's pages start in it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Read {
    pub text: String,
    /// For a PDF: the code point each page starts at in `text` (page 1 first).
    pub pages: Vec<usize>,
}

impl Read {
    /// The page (from 1) the code point `at` of the text is on; `None` before the document's
    /// first page (in the prompt) or for a document without pages.
    pub fn page_at(&self, at: usize) -> Option<u32> {
        let after = self.pages.partition_point(|&start| start <= at);
        (after > 0).then_some(after as u32)
    }
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
            pages: Vec::new(),
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
    let pages = match document.media_type {
        MediaType::Pdf => pdf::pages(&document.bytes, limits.document_pages)?,
        MediaType::Text => vec![text(&document.bytes)?],
    };
    let mut text =
        String::with_capacity(prompt.len() + pages.iter().map(String::len).sum::<usize>());
    let mut chars = 0;
    if !prompt.trim().is_empty() {
        text.push_str(prompt);
        text.push_str("\n\n");
        chars = text.chars().count();
    }
    let mut starts = Vec::with_capacity(pages.len());
    for (index, page) in pages.iter().enumerate() {
        if index > 0 {
            text.push_str(PAGE_BREAK);
            chars += PAGE_BREAK.chars().count();
        }
        starts.push(chars);
        text.push_str(page);
        chars += page.chars().count();
    }
    let pages = match document.media_type {
        MediaType::Pdf => starts,
        MediaType::Text => Vec::new(),
    };
    Ok(Read { text, pages })
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
            text: String::new(),
            pages: vec![10, 40, 90],
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
