//! PDFs for tests, written here rather than kept as files: pages of text in Helvetica, and the
//! ways a PDF can fail — encrypted with a password, pages without a text layer, cut short.
//!
//! ```
//! let pdf = mock_llm::pdf::with_pages(&["Party: Ada Lovelace.", "Effective as of 2021-03-04."]);
//! assert!(pdf.starts_with(b"%PDF-1.4"));
//! ```

/// A PDF whose pages hold `pages`, a line of text per `\n`, a line's cells (parted by `\t`)
/// in columns 130 points apart.
pub fn with_pages(pages: &[&str]) -> Vec<u8> {
    write(&contents(pages), pages.len(), None)
}

/// A PDF of text pages and scanned ones (`None`: a page that is one image, no text layer).
pub fn with_scans(pages: &[Option<&str>]) -> Vec<u8> {
    let contents: Vec<String> = (pages.iter())
        .map(|page| page.map_or_else(|| SCANNED.to_owned(), content_of))
        .collect();
    write(&contents, pages.len(), None)
}

/// A scanned page: one image over the page (a grey pixel, drawn inline), no text.
const SCANNED: &str = "q 450 0 0 650 72 72 cm BI /W 1 /H 1 /BPC 8 /CS /G ID x EI Q";

/// A PDF encrypted with a user password (the standard security handler): no reader opens it
/// without the password.
pub fn encrypted(pages: &[&str]) -> Vec<u8> {
    write(&contents(pages), pages.len(), Some(ENCRYPT))
}

/// A PDF of `count` pages with no text on them, as a scan has none (a grey box on each).
pub fn without_text(count: usize) -> Vec<u8> {
    let boxes = vec!["0.5 g 72 72 450 650 re f".to_owned(); count];
    write(&boxes, count, None)
}

/// Blank pages: nothing drawn on them at all.
pub fn blank(count: usize) -> Vec<u8> {
    write(&vec![String::new(); count], count, None)
}

fn contents(pages: &[&str]) -> Vec<String> {
    pages.iter().map(|text| content_of(text)).collect()
}

/// A PDF whose one page names itself as its parent and has no crop box: a reader that looks
/// the crop box up the parent chain without a guard never stops.
pub fn parent_loop(text: &str) -> Vec<u8> {
    let pdf = String::from_utf8_lossy(&with_pages(&[text])).into_owned();
    // Object 4 is the page; the reference keeps its length, so the offsets stay right.
    pdf.replacen("/Parent 2 0 R", "/Parent 4 0 R", 1)
        .into_bytes()
}

/// The standard security handler's dictionary (RC4, 40 bits) with a user password that is not
/// the empty one.
const ENCRYPT: &str = "<< /Filter /Standard /V 1 /R 2 /Length 40 /P -44 \
     /O <2F3A5B7C9D1E2F3A5B7C9D1E2F3A5B7C9D1E2F3A5B7C9D1E2F3A5B7C9D1E2F3A> \
     /U <1A2B3C4D5E6F708192A3B4C5D6E7F8091A2B3C4D5E6F708192A3B4C5D6E7F809> >>";

/// A PDF of `count` pages, each drawn by its content stream in `contents`.
fn write(contents: &[String], count: usize, encrypt: Option<&str>) -> Vec<u8> {
    // Objects: 1 catalog, 2 page tree, 3 font, then a page and its content per page, then the
    // encryption dictionary.
    let mut objects: Vec<String> = vec![
        "<< /Type /Catalog /Pages 2 0 R >>".to_owned(),
        format!(
            "<< /Type /Pages /Kids [{}] /Count {count} >>",
            (0..count)
                .map(|page| format!("{} 0 R", 4 + 2 * page))
                .collect::<Vec<_>>()
                .join(" ")
        ),
        "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>"
            .to_owned(),
    ];
    for (index, content) in contents.iter().enumerate() {
        objects.push(format!(
            "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 3 0 R >> >> /Contents {} 0 R >>",
            5 + 2 * index
        ));
        objects.push(format!(
            "<< /Length {} >>\nstream\n{content}\nendstream",
            content.len()
        ));
    }
    if let Some(encrypt) = encrypt {
        objects.push(encrypt.to_owned());
    }
    let encrypt = match encrypt {
        Some(_) => format!(
            "/Encrypt {} 0 R /ID [<0123456789ABCDEF0123456789ABCDEF> <0123456789ABCDEF0123456789ABCDEF>]",
            objects.len()
        ),
        None => String::new(),
    };
    let objects: Vec<&[u8]> = objects.iter().map(|object| object.as_bytes()).collect();
    file(&objects, &encrypt)
}

/// A PDF file of `objects` (object 1 first, the catalog) with a classic cross-reference table;
/// `trailer` adds entries to the trailer after `/Size` and `/Root`. All of it ASCII where the
/// objects are, so a test can edit it as text.
pub fn file(objects: &[&[u8]], trailer: &str) -> Vec<u8> {
    let mut out = b"%PDF-1.4\n".to_vec();
    let mut offsets = Vec::with_capacity(objects.len());
    for (index, object) in objects.iter().enumerate() {
        offsets.push(out.len());
        out.extend_from_slice(format!("{} 0 obj\n", index + 1).as_bytes());
        out.extend_from_slice(object);
        out.extend_from_slice(b"\nendobj\n");
    }
    let xref = out.len();
    out.extend_from_slice(
        format!("xref\n0 {}\n0000000000 65535 f \n", objects.len() + 1).as_bytes(),
    );
    for offset in offsets {
        out.extend_from_slice(format!("{offset:010} 00000 n \n").as_bytes());
    }
    out.extend_from_slice(
        format!(
            "trailer\n<< /Size {} /Root 1 0 R {trailer} >>\nstartxref\n{xref}\n%%EOF\n",
            objects.len() + 1
        )
        .as_bytes(),
    );
    out
}

/// The content stream that shows `text`, a line per `\n` 14 points apart from the top of a
/// letter page, a line's cells (parted by `\t`) each in its column.
fn content_of(text: &str) -> String {
    let mut content = String::from("BT /F1 11 Tf");
    for (index, line) in text.split('\n').enumerate() {
        let y = 720 - 14 * index as i64;
        for (column, cell) in line.split('\t').enumerate() {
            let x = 72 + 130 * column;
            content.push_str(&format!(" 1 0 0 1 {x} {y} Tm ({}) Tj", escape(cell)));
        }
    }
    content.push_str(" ET");
    content
}

/// `text` as a PDF string's body: `\`, `(`, `)` escaped; characters outside Latin-1 as `?`
/// (Helvetica's WinAnsi encoding has no others).
fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '\\' | '(' | ')' => {
                out.push('\\');
                out.push(c);
            }
            c if (c as u32) < 0x80 => out.push(c),
            c if (c as u32) < 0x100 => out.push_str(&format!("\\{:03o}", c as u32)),
            _ => out.push('?'),
        }
    }
    out
}
