//! Word documents (`.docx`) for tests, written here rather than kept as files: a package as
//! Word writes one (content types, relationships, the body part deflated), holding paragraphs,
//! tables, or any body XML, and the ways a package can fail.
//!
//! ```
//! let docx = mock_llm::docx::with_paragraphs(&["Invoice INV-7", "Total: 12.50 EUR"]);
//! assert!(docx.starts_with(b"PK\x03\x04"));
//! ```

use rawzip::{CompressionMethod, DataDescriptorOutput, ZipArchiveWriter};

const W: &str = "http://schemas.openxmlformats.org/wordprocessingml/2006/main";

/// A Word document with a paragraph for each of `paragraphs` (a `\t` written as Word's tab).
pub fn with_paragraphs(paragraphs: &[&str]) -> Vec<u8> {
    let body: String = paragraphs.iter().map(|text| paragraph(text)).collect();
    with_body(&body)
}

/// A Word document whose body holds `blocks`, paragraphs and tables written with [`paragraph`]
/// and [`table`].
pub fn with_body(blocks: &str) -> Vec<u8> {
    let xml = format!(
        r#"<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<w:document xmlns:w="{W}"><w:body>{blocks}<w:sectPr/></w:body></w:document>"#
    );
    package(&[
        ("[Content_Types].xml", CONTENT_TYPES.as_bytes()),
        ("_rels/.rels", RELATIONSHIPS.as_bytes()),
        ("word/document.xml", xml.as_bytes()),
    ])
}

/// One paragraph of `text` in a run (escaped; `\t` as `<w:tab/>`, `\n` as `<w:br/>`).
pub fn paragraph(text: &str) -> String {
    let runs: Vec<String> = text
        .split('\t')
        .map(|part| {
            let lines: Vec<String> = part
                .split('\n')
                .map(|line| format!(r#"<w:t xml:space="preserve">{}</w:t>"#, escape(line)))
                .collect();
            lines.join("<w:br/>")
        })
        .collect();
    format!("<w:p><w:r>{}</w:r></w:p>", runs.join("<w:tab/>"))
}

/// A table of `rows`, each cell one paragraph.
pub fn table(rows: &[&[&str]]) -> String {
    let rows: String = rows
        .iter()
        .map(|cells| {
            let cells: String = cells
                .iter()
                .map(|cell| format!("<w:tc>{}</w:tc>", paragraph(cell)))
                .collect();
            format!("<w:tr>{cells}</w:tr>")
        })
        .collect();
    format!("<w:tbl>{rows}</w:tbl>")
}

/// A zip package of `entries` (name, bytes), each deflated.
pub fn package(entries: &[(&str, &[u8])]) -> Vec<u8> {
    let mut output = Vec::new();
    let mut archive = ZipArchiveWriter::new(&mut output);
    for (name, bytes) in entries {
        let (mut entry, _config) = archive
            .new_file(name)
            .compression_method(CompressionMethod::DEFLATE)
            .start()
            .expect("a zip entry");
        let deflated = miniz_oxide::deflate::compress_to_vec(bytes, 6);
        std::io::Write::write_all(&mut entry, &deflated).expect("entry written");
        let descriptor = DataDescriptorOutput::new(rawzip::crc32(bytes), bytes.len() as u64);
        entry.finish(descriptor).expect("entry finished");
    }
    archive.finish().expect("archive finished");
    output
}

/// A Word document whose body part's bytes were damaged after it was written (its CRC no longer
/// matches).
pub fn corrupt(paragraphs: &[&str]) -> Vec<u8> {
    let mut docx = with_paragraphs(paragraphs);
    let body = find(&docx, b"word/document.xml").expect("the body entry") + 40;
    // Past the local header (30 bytes + the 17-byte name): inside the deflated data.
    docx[body] ^= 0x55;
    docx
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack
        .windows(needle.len())
        .position(|window| window == needle)
}

fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

const CONTENT_TYPES: &str = r#"<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/><Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/></Types>"#;

const RELATIONSHIPS: &str = r#"<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="word/document.xml"/></Relationships>"#;
