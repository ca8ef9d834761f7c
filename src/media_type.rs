//! What a document beside the prompt is: the media types the component reads, and the one rule
//! for telling a file's from its name or its bytes (the CLI's `--file`, batches, and a document
//! sent without a `mediaType`, as the npm package and the console send one), and the documents
//! a model is given as they are.

use std::sync::Arc;

use base64::Engine as _;

/// What a document is: the media types a document beside the prompt may have.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MediaType {
    /// `application/pdf`: read into text by page, inside the component.
    Pdf,
    /// `text/plain`: UTF-8 text.
    Text,
    /// `text/html`: a web page, read into its visible text inside the component.
    Html,
    /// A Word document (`.docx`), read into text inside the component.
    Docx,
    /// A spreadsheet (`.xlsx`), every sheet read into rows of cells inside the component.
    Xlsx,
    /// `image/png`: a picture (a photo, a scan), given to a model that reads images.
    Png,
    /// `image/jpeg`.
    Jpeg,
    /// `image/webp`.
    Webp,
}

impl MediaType {
    /// Every media type a document may have, by name.
    pub const ALL: [MediaType; 8] = [
        MediaType::Pdf,
        MediaType::Text,
        MediaType::Html,
        MediaType::Docx,
        MediaType::Xlsx,
        MediaType::Png,
        MediaType::Jpeg,
        MediaType::Webp,
    ];

    /// The media type `name` names (`application/pdf`, `text/plain`, with any parameters);
    /// `None` for any other.
    pub fn parse(name: &str) -> Option<Self> {
        let essence = name.split(';').next().unwrap_or_default().trim();
        let essence = essence.to_ascii_lowercase();
        Self::ALL.into_iter().find(|kind| kind.name() == essence)
    }

    pub fn name(self) -> &'static str {
        match self {
            MediaType::Pdf => "application/pdf",
            MediaType::Text => "text/plain",
            MediaType::Html => "text/html",
            MediaType::Docx => {
                "application/vnd.openxmlformats-officedocument.wordprocessingml.document"
            }
            MediaType::Xlsx => "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
            MediaType::Png => "image/png",
            MediaType::Jpeg => "image/jpeg",
            MediaType::Webp => "image/webp",
        }
    }

    /// Whether the document is a picture: no text is read from it, the model sees it.
    pub fn is_image(self) -> bool {
        matches!(self, MediaType::Png | MediaType::Jpeg | MediaType::Webp)
    }

    /// The names of every media type, for messages.
    pub fn names() -> String {
        let names: Vec<&str> = Self::ALL.iter().map(|kind| kind.name()).collect();
        names.join(", ")
    }
}

/// A document the model is given as it is, beside the text read: an image, or a PDF with pages
/// that have no text layer. Only a model that reads images and PDFs can take it
/// ([`crate::provider::vision`]).
#[derive(Clone, PartialEq, Eq)]
pub struct Attachment {
    pub media_type: MediaType,
    pub bytes: Arc<[u8]>,
    /// A PDF's pages (providers limit them); `None` for an image.
    pub pages: Option<usize>,
}

impl Attachment {
    /// The bytes in base64, as every provider takes them inline.
    pub fn base64(&self) -> String {
        base64::engine::general_purpose::STANDARD.encode(&self.bytes)
    }

    /// A `data:` URL of the bytes (OpenAI's image and file parts).
    pub fn data_url(&self) -> String {
        format!("data:{};base64,{}", self.media_type.name(), self.base64())
    }

    /// A file name for providers that want one with a file (OpenAI's `file` part).
    pub fn file_name(&self) -> &'static str {
        match self.media_type {
            MediaType::Pdf => "document.pdf",
            MediaType::Png => "image.png",
            MediaType::Jpeg => "image.jpg",
            MediaType::Webp => "image.webp",
            MediaType::Text | MediaType::Html | MediaType::Docx | MediaType::Xlsx => "document",
        }
    }
}

impl std::fmt::Debug for Attachment {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "Attachment({}, {} bytes)",
            self.media_type.name(),
            self.bytes.len()
        )
    }
}

/// The media type of a document: the one rule every surface that takes a file uses (the CLI's
/// `--file`, batches, a document whose `mediaType` is not given). A file's name says it by its
/// extension (`.pdf`, `.docx`, `.xlsx`, `.html`, `.htm`, `.txt`, `.csv`, `.tsv`, `.png`, `.jpg`,
/// `.jpeg`, `.webp`); otherwise its bytes do: a PDF by a `%PDF-` header in its first KiB, an
/// image by its signature, a spreadsheet by its zip header and a workbook part, a Word document
/// by its zip header, a web page by how it starts (a doctype, `<html>`, `<head>`
/// or `<body>`), anything else text (the readers then say what is wrong).
///
/// ```
/// use structure::media_type::{MediaType, of};
///
/// assert_eq!(of(b"%PDF-1.7 ...", None), MediaType::Pdf);
/// assert_eq!(of(b"<!doctype html><p>Hi", None), MediaType::Html);
/// assert_eq!(of(b"<p>Hi</p>", Some("part.html")), MediaType::Html);
/// assert_eq!(of(b"\x89PNG\r\n\x1a\n...", None), MediaType::Png);
/// assert_eq!(of(b"...", Some("receipt.JPG")), MediaType::Jpeg);
/// assert_eq!(of(b"Dear Ada,", None), MediaType::Text);
/// ```
pub fn of(bytes: &[u8], file_name: Option<&str>) -> MediaType {
    let extension = file_name
        .and_then(|name| name.rsplit_once('.'))
        .map(|(_, extension)| extension.to_ascii_lowercase());
    match extension.as_deref() {
        Some("pdf") => return MediaType::Pdf,
        Some("docx") => return MediaType::Docx,
        Some("xlsx") => return MediaType::Xlsx,
        Some("html" | "htm" | "xhtml") => return MediaType::Html,
        Some("txt" | "text" | "md" | "csv" | "tsv") => return MediaType::Text,
        Some("png") => return MediaType::Png,
        Some("jpg" | "jpeg") => return MediaType::Jpeg,
        Some("webp") => return MediaType::Webp,
        _ => {}
    }
    if is_pdf(bytes) {
        MediaType::Pdf
    } else if bytes.starts_with(PNG) {
        MediaType::Png
    } else if bytes.starts_with(JPEG) {
        MediaType::Jpeg
    } else if bytes.starts_with(b"RIFF") && bytes.get(8..12) == Some(b"WEBP") {
        MediaType::Webp
    } else if bytes.starts_with(ZIP) && holds(bytes, WORKBOOK_PART) {
        MediaType::Xlsx
    } else if bytes.starts_with(ZIP) {
        MediaType::Docx
    } else if is_html(bytes) {
        MediaType::Html
    } else {
        MediaType::Text
    }
}

/// A zip package's first bytes (a Word document and a spreadsheet are ones).
const ZIP: &[u8] = b"PK\x03\x04";
/// The part a spreadsheet's package names (in its entries' headers), and a Word document's not.
const WORKBOOK_PART: &[u8] = b"xl/workbook.xml";

/// Whether `bytes` hold `part` anywhere.
fn holds(bytes: &[u8], part: &[u8]) -> bool {
    bytes.windows(part.len()).any(|window| window == part)
}
/// A PNG's signature.
const PNG: &[u8] = b"\x89PNG\r\n\x1a\n";
/// A JPEG's start-of-image marker and the marker after it.
const JPEG: &[u8] = b"\xff\xd8\xff";

/// Whether `bytes` are a PDF: its `%PDF-` header within the first KiB, where readers look for it
/// (a file may start with a few bytes of something else, such as a mail header). The one rule
/// for telling a PDF by its bytes: the reader's, and the media type a file without one is given.
pub fn is_pdf(bytes: &[u8]) -> bool {
    bytes[..bytes.len().min(1024)]
        .windows(5)
        .any(|window| window == b"%PDF-")
}

/// Whether `bytes` start as an HTML page does: a doctype, `<html>`, `<head>` or `<body>` first
/// (after any byte-order mark, whitespace and comments).
pub fn is_html(bytes: &[u8]) -> bool {
    let mut rest = bytes.strip_prefix(b"\xef\xbb\xbf").unwrap_or(bytes);
    // A page may open with a few comments; each is skipped whole, at most this many.
    const MAX_LEADING_COMMENTS: usize = 8;
    for _ in 0..MAX_LEADING_COMMENTS {
        rest = rest.trim_ascii_start();
        match rest.strip_prefix(b"<!--") {
            Some(comment) => match comment.windows(3).position(|w| w == b"-->") {
                Some(end) => rest = &comment[end + 3..],
                None => return false,
            },
            None => break,
        }
    }
    let head: Vec<u8> = rest.iter().take(16).map(u8::to_ascii_lowercase).collect();
    [b"<!doctype html".as_slice(), b"<html", b"<head", b"<body"]
        .iter()
        .any(|start| head.starts_with(start))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pages_are_told_by_their_start() {
        assert!(is_html(b"\xef\xbb\xbf  <!DOCTYPE html><p>x"));
        assert!(is_html(b"<!-- saved --><HTML lang=en>"));
        assert!(!is_html(b"Dear <b>Ada</b>"));
        assert!(!is_html(b"<!-- unterminated"));
    }
}
