//! A Word document's text (`.docx`, Office Open XML): the body of `word/document.xml`, a line
//! for each paragraph and for each table row (its cells parted by tabs, a merged cell keeping
//! the columns), tabs and breaks as written. Not read: headers, footers, footnotes and comments (other parts of the package),
//! deleted text and field instructions (tracked changes show the document as it now reads), the
//! fallback copy of content Word stores twice (`mc:Fallback`). The package is read as every
//! Office package is ([`super::package`]), its XML by quick-xml (which expands no entity a
//! document declares).
//!
//! ```
//! let docx = mock_llm::docx::with_paragraphs(&["Invoice INV-7", "Due: 1 May"]);
//! let text = structure::document::docx::text(&docx, 1 << 20)?;
//! assert_eq!(text, "Invoice INV-7\nDue: 1 May");
//! # Ok::<(), structure::StructureError>(())
//! ```

use quick_xml::events::{BytesStart, Event};

use super::lines::Lines;
use super::package::{Package, referenced};
use crate::error::StructureError;

/// The part that holds the document's body.
const BODY_PART: &str = "word/document.xml";
/// What the errors call a Word document, and what they tell its sender to do.
const KIND: &str = "Word document";
const REMEDY: &str = "save it again from Word, or send its text";
/// Elements whose content is not shown: deleted text, field instructions, the fallback copy.
const HIDDEN: [&str; 3] = ["delText", "instrText", "Fallback"];

/// The text of the Word document `bytes`, at most `max_bytes` of it.
pub fn text(bytes: &[u8], max_bytes: usize) -> Result<String, StructureError> {
    let package = Package::open(bytes, KIND, REMEDY)?;
    let xml = package.text_part(BODY_PART)?;
    let mut reader = quick_xml::Reader::from_str(&xml);
    let mut body = Body::new(max_bytes);
    loop {
        let event = reader
            .read_event()
            .map_err(|error| unreadable(&format!("its XML is malformed ({error})")))?;
        match event {
            Event::Eof => break,
            Event::Start(element) => body.start(&element),
            Event::Empty(element) => {
                body.start(&element);
                body.end(element.local_name().as_ref());
            }
            Event::End(element) => body.end(element.local_name().as_ref()),
            Event::Text(words) if body.in_text() => body.lines.push(&words.xml10_content()),
            Event::CData(words) if body.in_text() => body.lines.push(&words),
            Event::GeneralRef(reference) if body.in_text() => {
                body.lines
                    .push(&referenced(&reference).map_err(|why| unreadable(&why))?);
            }
            _ => {}
        }
        if body.lines.is_full() {
            return Err(StructureError::invalid_document(
                "too-large",
                format!(
                    "the Word document's text is over {max_bytes} bytes: send a smaller \
                     document, or its text in parts"
                ),
            ));
        }
    }
    Ok(body.lines.finish())
}

/// Where in the body's elements the reader is, and the text so far.
struct Body {
    lines: Lines,
    /// Open `<w:t>` elements (text shown).
    text: usize,
    /// Open runs (`<w:r>`): a tab or break counts only inside one (a paragraph's properties
    /// list its tab stops as `<w:tab>` too).
    runs: usize,
    /// Open elements whose content is not shown: deleted text, field instructions, fallbacks.
    hidden: usize,
    /// The columns the open table cell spans beyond its own (`<w:gridSpan w:val="2"/>`).
    spanned: usize,
}

impl Body {
    fn new(max_bytes: usize) -> Self {
        Self {
            lines: Lines::new(max_bytes),
            text: 0,
            runs: 0,
            hidden: 0,
            spanned: 0,
        }
    }

    fn in_text(&self) -> bool {
        self.text > 0 && self.hidden == 0
    }

    fn start(&mut self, element: &BytesStart) {
        match element.local_name().as_ref() {
            "t" => self.text += 1,
            "r" => self.runs += 1,
            name if HIDDEN.contains(&name) => self.hidden += 1,
            "tab" if self.shown_run() => self.lines.push("\t"),
            "br" | "cr" if self.shown_run() => self.lines.line_break(),
            "noBreakHyphen" if self.shown_run() => self.lines.push("-"),
            "tc" if self.hidden == 0 => self.lines.open_cell(),
            "gridSpan" => {
                let span = (element.attributes().flatten())
                    .find(|attribute| attribute.key.local_name().as_ref() == "val")
                    .and_then(|attribute| attribute.value.trim().parse().ok());
                self.spanned = span.unwrap_or(1usize).saturating_sub(1);
            }
            _ => {}
        }
    }

    fn end(&mut self, name: &str) {
        match name {
            "t" => self.text = self.text.saturating_sub(1),
            "r" => self.runs = self.runs.saturating_sub(1),
            name if HIDDEN.contains(&name) => self.hidden = self.hidden.saturating_sub(1),
            "p" if self.hidden == 0 => self.lines.end_line(),
            "tc" if self.hidden == 0 => {
                self.lines.close_spanning(std::mem::take(&mut self.spanned))
            }
            "tr" if self.hidden == 0 => self.lines.end_row(),
            _ => {}
        }
    }

    fn shown_run(&self) -> bool {
        self.runs > 0 && self.hidden == 0
    }
}

fn unreadable(why: &str) -> StructureError {
    StructureError::invalid_document(
        "unreadable",
        format!("this {KIND} cannot be read: {why}; {REMEDY}"),
    )
}

#[cfg(test)]
mod tests {
    use mock_llm::docx::{corrupt, package, paragraph, table, with_body, with_paragraphs};
    use rawzip::CompressionMethod;
    use rawzip::DataDescriptorOutput;

    use super::*;

    fn read(docx: &[u8]) -> Result<String, StructureError> {
        text(docx, 1 << 20)
    }

    fn reason(error: StructureError) -> String {
        match error.kind {
            crate::error::ErrorKind::InvalidDocument { reason } => reason,
            other => panic!("not a document error: {other:?}"),
        }
    }

    #[test]
    fn paragraphs_rows_tabs_and_breaks_are_read_as_written() {
        let body = paragraph("Invoice INV-7 & co")
            + &table(&[&["Item", "Price"], &["Tea", "€4.50"]])
            + &paragraph("Total:\t9.00\nPaid")
            + r#"<w:p><w:pPr><w:tabs><w:tab w:val="left" w:pos="720"/></w:tabs></w:pPr>
                <w:r><w:t>Sig</w:t></w:r><w:r><w:delText>old</w:delText></w:r>
                <w:r><w:instrText> PAGE </w:instrText></w:r><w:r><w:t>ned &#8211; </w:t>
                <w:t>Ada</w:t></w:r></w:p>"#;
        assert_eq!(
            read(&with_body(&body)).unwrap(),
            "Invoice INV-7 & co\nItem\tPrice\nTea\t€4.50\nTotal:\t9.00\nPaid\nSigned – Ada"
        );
        assert_eq!(read(&with_paragraphs(&["a", "", "b"])).unwrap(), "a\nb");
    }

    #[test]
    fn what_is_not_a_readable_word_document_is_a_typed_error() {
        let cases: [(&str, Vec<u8>, &str); 5] = [
            (
                "not a zip",
                b"PK\x03\x04 nothing more".to_vec(),
                "unreadable",
            ),
            ("no body part", package(&[("a.txt", b"hi")]), "unreadable"),
            (
                "damaged body",
                corrupt(&["Invoice INV-7 total 9.00 EUR"]),
                "unreadable",
            ),
            (
                "malformed XML",
                package(&[("word/document.xml", b"<w:document><w:body><w:p></w:body>")]),
                "unreadable",
            ),
            (
                "a declared entity",
                package(&[(
                    "word/document.xml",
                    b"<!DOCTYPE d [<!ENTITY x \"boom\">]><d><t>&x;</t></d>",
                )]),
                "unreadable",
            ),
        ];
        for (case, docx, expected) in cases {
            let error = read(&docx).expect_err(case);
            let message = error.to_string();
            assert_eq!(reason(error), expected, "{case}: {message}");
            assert!(message.contains("Word document"), "{case}: {message}");
        }
    }

    /// A package whose body entry holds `data` (compressed with `method`) and whose directory
    /// claims `claimed_bytes` of it, CRC `crc`.
    fn claiming(data: &[u8], method: CompressionMethod, crc: u32, claimed_bytes: u64) -> Vec<u8> {
        let mut output = Vec::new();
        let mut archive = rawzip::ZipArchiveWriter::new(&mut output);
        let (mut entry, _) = (archive.new_file("word/document.xml"))
            .compression_method(method)
            .start()
            .unwrap();
        std::io::Write::write_all(&mut entry, data).unwrap();
        (entry.finish(DataDescriptorOutput::new(crc, claimed_bytes))).unwrap();
        archive.finish().unwrap();
        output
    }

    #[test]
    fn a_body_that_claims_or_inflates_past_the_bound_is_too_large() {
        // The directory claims a gigabyte for a few bytes.
        let claims = claiming(
            b"<d/>",
            CompressionMethod::STORE,
            rawzip::crc32(b"<d/>"),
            1 << 30,
        );
        assert_eq!(reason(read(&claims).unwrap_err()), "too-large");
        // The directory is honest, the text is not small: the text's bound.
        let long = with_paragraphs(&[&"word ".repeat(1000)]);
        assert_eq!(reason(text(&long, 100).unwrap_err()), "too-large");
    }

    #[test]
    fn a_deflated_bomb_that_claims_little_stops_at_the_bound() {
        let spaces = vec![b' '; super::super::package::MAX_PART_BYTES + 1];
        let deflated = miniz_oxide::deflate::compress_to_vec(&spaces, 1);
        assert!(deflated.len() < 1 << 20);
        let bomb = claiming(&deflated, CompressionMethod::DEFLATE, 0, 100);
        assert_eq!(reason(read(&bomb).unwrap_err()), "too-large");
    }
}
