//! Where a PDF's values stand: boxes from the reader's own glyph positions, on PDFs written here
//! with known positions (a font whose every glyph is 5 points wide at size 10), measured from the
//! top-left corner of the page as shown — a value on one line, over a line break, on a turned
//! page, on a cropped page, in the second of two columns.

use structure::document::{Read, read};
use structure::limits::CallLimits;
use structure::outcome::{PageBox, PageSize};
use structure::request::Document;

/// A PDF of `pages` (each its dictionary's extra entries and its content stream) under a page
/// tree that states the media box they inherit.
fn pdf(pages: &[(&str, &str)]) -> Vec<u8> {
    let kids: Vec<String> = (0..pages.len())
        .map(|index| format!("{} 0 R", 4 + 2 * index))
        .collect();
    let mut objects = vec![
        "<< /Type /Catalog /Pages 2 0 R >>".to_owned(),
        format!(
            "<< /Type /Pages /Kids [{}] /Count {} /MediaBox [0 0 612 792] >>",
            kids.join(" "),
            pages.len()
        ),
        format!(
            "<< /Type /Font /Subtype /Type1 /BaseFont /Courier /FirstChar 32 /LastChar 126 \
             /Widths [{}] >>",
            vec!["500"; 95].join(" ")
        ),
    ];
    for (index, (entries, content)) in pages.iter().enumerate() {
        objects.push(format!(
            "<< /Type /Page /Parent 2 0 R {entries} /Resources << /Font << /F1 3 0 R >> >> \
             /Contents {} 0 R >>",
            5 + 2 * index
        ));
        objects.push(format!(
            "<< /Length {} >>\nstream\n{content}\nendstream",
            content.len()
        ));
    }
    let objects: Vec<&[u8]> = objects.iter().map(|object| object.as_bytes()).collect();
    mock_llm::pdf::file(&objects, "")
}

/// Lines of text at size 10, each `(x, baseline, text)`.
fn lines(lines: &[(f32, f32, &str)]) -> String {
    lines
        .iter()
        .map(|(x, y, text)| format!("BT /F1 10 Tf {x} {y} Td ({text}) Tj ET"))
        .collect::<Vec<_>>()
        .join("\n")
}

fn read_pdf(pages: &[(&str, &str)]) -> Read {
    let document = Document::new(pdf(pages), "application/pdf").unwrap();
    read("", Some(&document), &CallLimits::default()).unwrap()
}

/// The boxes of the `nth` (from 0) place `phrase` is written in the text read.
fn boxes_of(read: &Read, phrase: &str) -> Vec<PageBox> {
    let at = read
        .text
        .find(phrase)
        .unwrap_or_else(|| panic!("{phrase:?} in {:?}", read.text));
    let start = read.text[..at].chars().count();
    read.boxes(start, start + phrase.chars().count())
}

fn at(page: u32, [x0, top, x1, bottom]: [f64; 4]) -> PageBox {
    PageBox {
        page,
        x0,
        top,
        x1,
        bottom,
    }
}

#[test]
fn a_value_has_a_box_per_line_it_runs_over_where_the_page_shows_it() {
    let upright = lines(&[
        (72.0, 700.0, "Party: Ada Lovelace."),
        (72.0, 686.0, "Signed by Grace"),
        (72.0, 672.0, "Hopper today."),
    ]);
    let turned = lines(&[(72.0, 700.0, "Turned page")]);
    let cropped = lines(&[(72.0, 700.0, "Cropped page")]);
    let columns = lines(&[(72.0, 700.0, "Left one"), (320.0, 700.0, "Right two")]);
    let read = read_pdf(&[
        ("", &upright),
        ("/Rotate 90", &turned),
        ("/CropBox [50 100 550 750]", &cropped),
        ("", &columns),
    ]);
    assert_eq!(
        read.text,
        "Party: Ada Lovelace.\nSigned by Grace\nHopper today.\n\u{c}\nTurned page\n\u{c}\nCropped page\n\u{c}\nLeft one\tRight two"
    );
    // A glyph box: 5 points a glyph, from 2.1 below the baseline to 7.9 above it; the page is
    // 792 tall, so a baseline at 700 is 84.1 to 94.1 from the top.
    assert_eq!(
        boxes_of(&read, "Ada Lovelace"),
        [at(1, [107.0, 84.1, 167.0, 94.1])]
    );
    // Over a line break: one box on each line.
    assert_eq!(
        boxes_of(&read, "Grace\nHopper"),
        [
            at(1, [122.0, 98.1, 147.0, 108.1]),
            at(1, [72.0, 112.1, 102.0, 122.1])
        ]
    );
    // A quarter turn clockwise: the page is 792 wide and 612 tall, and the line runs down it.
    assert_eq!(
        boxes_of(&read, "Turned"),
        [at(2, [697.9, 72.0, 707.9, 102.0])]
    );
    // Cropped to [50 100 550 750]: measured from the crop box's top-left corner.
    assert_eq!(
        boxes_of(&read, "Cropped"),
        [at(3, [22.0, 42.1, 57.0, 52.1])]
    );
    assert_eq!(
        boxes_of(&read, "Right two"),
        [at(4, [320.0, 84.1, 365.0, 94.1])]
    );
    let size = |page, width, height| PageSize {
        page,
        width,
        height,
    };
    assert_eq!(
        read.sizes,
        [
            size(1, 612.0, 792.0),
            size(2, 792.0, 612.0),
            size(3, 500.0, 650.0),
            size(4, 612.0, 792.0)
        ]
    );
}

#[test]
fn a_word_joined_across_a_line_break_keeps_both_halves_places() {
    let read = read_pdf(&[(
        "",
        &lines(&[
            (72.0, 700.0, "This is confiden-"),
            (72.0, 686.0, "tial and confidential."),
        ]),
    )]);
    assert!(
        read.text.starts_with("This is confidential and"),
        "{:?}",
        read.text
    );
    assert_eq!(
        boxes_of(&read, "confidential and"),
        [
            at(1, [112.0, 84.1, 152.0, 94.1]),
            at(1, [72.0, 98.1, 112.0, 108.1])
        ]
    );
}

#[test]
fn a_prompt_and_a_text_document_have_no_boxes() {
    let document = Document::new(
        pdf(&[("", &lines(&[(72.0, 700.0, "Ada")]))]),
        "application/pdf",
    )
    .unwrap();
    let asked = read("Who is Ada?", Some(&document), &CallLimits::default()).unwrap();
    assert_eq!(asked.boxes(7, 10), []);
    assert_eq!(asked.boxes(13, 16).len(), 1);
    // Past the end of the text: nothing, no panic.
    assert_eq!(asked.boxes(13, 1_000), asked.boxes(13, 16));
    assert_eq!(asked.boxes(1_000, 2_000), []);
    let text = Document::new(b"Ada".to_vec(), "text/plain").unwrap();
    let read = read("", Some(&text), &CallLimits::default()).unwrap();
    assert_eq!((read.boxes(0, 3), read.sizes), (vec![], vec![]));
}
