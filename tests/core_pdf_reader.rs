//! The PDF reader (`structure::document::pdf`) on PDFs written here, each built the way a kind of writer builds them: packed
//! objects behind a cross-reference stream, composite fonts, glyph names, forms, and the damage
//! readers meet (a wrong offset, a length that refers to itself, a page tree that loops).

use structure::document::pdf::pages;
use structure::error::ErrorKind;

/// A PDF of `objects` (object 1 first) with a classic cross-reference table.
fn pdf(objects: &[&[u8]]) -> Vec<u8> {
    mock_llm::pdf::file(objects, "")
}

fn stream(dict: &str, data: &[u8]) -> Vec<u8> {
    let mut out = format!("<< {dict} /Length {} >>\nstream\n", data.len()).into_bytes();
    out.extend_from_slice(data);
    out.extend_from_slice(b"\nendstream");
    out
}

const CATALOG: &[u8] = b"<< /Type /Catalog /Pages 2 0 R >>";
const PAGES: &[u8] = b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>";
const PAGE: &[u8] = b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] \
    /Resources << /Font << /F1 5 0 R >> >> /Contents 4 0 R >>";
const HELVETICA: &[u8] = b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>";

fn one_page(content: &[u8], font: &[u8]) -> Vec<u8> {
    pdf(&[CATALOG, PAGES, PAGE, &stream("", content), font])
}

#[test]
fn text_is_read_in_reading_order_with_gaps_as_spaces_and_a_columns_gap_as_a_tab() {
    // Drawn bottom line first, and the second word of the top line before its first, 39 points
    // after it: as far apart as a table's columns.
    let content = b"BT /F1 12 Tf 72 680 Td (second line) Tj ET \
        BT /F1 12 Tf 140 700 Td (world) Tj -68 0 Td (Hello) Tj ET \
        BT /F1 12 Tf 14 TL 72 660 Td [(spa) -1000 (ced)] TJ T* (x) ' ET";
    let text = pages(&one_page(content, HELVETICA), 10).unwrap();
    assert_eq!(text, ["Hello\tworld\nsecond line\nspa ced\nx"]);
}

#[test]
fn packed_objects_behind_a_compressed_cross_reference_stream_are_found() {
    let content = stream("", b"BT /F1 12 Tf 72 700 Td (Packed away) Tj ET");
    // Objects 1, 2, 3 and 5 packed in object 6; object 4 (the content) written plainly.
    let packed_objects = [CATALOG, PAGES, PAGE, HELVETICA];
    let mut body = Vec::new();
    let mut header = String::new();
    for (id, object) in [1, 2, 3, 5].iter().zip(packed_objects) {
        header.push_str(&format!("{id} {} ", body.len()));
        body.extend_from_slice(object);
        body.push(b' ');
    }
    let data = [header.as_bytes(), &body].concat();
    let object_stream = stream(
        &format!(
            "/Type /ObjStm /N 4 /First {} /Filter /FlateDecode",
            header.len()
        ),
        &miniz_oxide::deflate::compress_to_vec_zlib(&data, 6),
    );
    let mut out = b"%PDF-1.7\n".to_vec();
    let content_at = out.len();
    out.extend_from_slice(b"4 0 obj\n");
    out.extend_from_slice(&content);
    out.extend_from_slice(b"\nendobj\n");
    let packed_at = out.len();
    out.extend_from_slice(b"6 0 obj\n");
    out.extend_from_slice(&object_stream);
    out.extend_from_slice(b"\nendobj\n");
    let xref_at = out.len();
    // Rows of (type, offset or stream, index), 1 + 2 + 1 bytes, PNG "up" predicted.
    let rows: Vec<[u8; 4]> = vec![
        [0, 0, 0, 0],
        [2, 0, 6, 0],
        [2, 0, 6, 1],
        [2, 0, 6, 2],
        [1, (content_at >> 8) as u8, content_at as u8, 0],
        [2, 0, 6, 3],
        [1, (packed_at >> 8) as u8, packed_at as u8, 0],
        [1, (xref_at >> 8) as u8, xref_at as u8, 0],
    ];
    let mut predicted = Vec::new();
    let mut previous = [0u8; 4];
    for row in &rows {
        predicted.push(2);
        predicted.extend(row.iter().zip(previous).map(|(a, b)| a.wrapping_sub(b)));
        previous = *row;
    }
    let xref = stream(
        "/Type /XRef /Size 8 /W [1 2 1] /Root 1 0 R /Filter /FlateDecode \
         /DecodeParms << /Predictor 12 /Columns 4 >>",
        &miniz_oxide::deflate::compress_to_vec_zlib(&predicted, 6),
    );
    out.extend_from_slice(b"7 0 obj\n");
    out.extend_from_slice(&xref);
    out.extend_from_slice(format!("\nendobj\nstartxref\n{xref_at}\n%%EOF\n").as_bytes());
    assert_eq!(pages(&out, 10).unwrap(), ["Packed away"]);
}

#[test]
fn a_composite_font_reads_through_its_to_unicode_cmap_and_widths() {
    let to_unicode = stream(
        "",
        b"begincmap 1 begincodespacerange <0000> <FFFF> endcodespacerange \
          1 beginbfchar <0001> <0048> endbfchar \
          1 beginbfrange <0002> <0004> [<0069> <0020> <00E9>] endbfrange endcmap",
    );
    let font = b"<< /Type /Font /Subtype /Type0 /BaseFont /ABCDEF+Arial /Encoding /Identity-H \
        /DescendantFonts [6 0 R] /ToUnicode 7 0 R >>";
    let descendant = b"<< /Type /Font /Subtype /CIDFontType2 /DW 1000 /W [1 [600 300] 3 4 250] >>";
    // The widths place "H" at 72–78 and "i" at 78–81, so "é" at 85 is a word apart; with the
    // default width (1000) "i" would end at 92, past it.
    let content = b"BT /F1 10 Tf 72 700 Td <00010002> Tj ET BT /F1 10 Tf 85 700 Td <0004> Tj ET";
    let spaced = pdf(&[
        CATALOG,
        PAGES,
        PAGE,
        &stream("", content),
        font,
        descendant,
        &to_unicode,
    ]);
    assert_eq!(pages(&spaced, 10).unwrap(), ["Hi é"]);
}

#[test]
fn a_composite_font_in_a_unicode_cmap_reads_without_a_to_unicode_map() {
    let font = b"<< /Type /Font /Subtype /Type0 /BaseFont /STSong-Light /Encoding /UniGB-UCS2-H \
        /DescendantFonts [6 0 R] >>";
    let descendant = b"<< /Type /Font /Subtype /CIDFontType0 /DW 1000 >>";
    let content = b"BT /F1 10 Tf 72 700 Td <4E2D6587> Tj ET";
    let out = pdf(&[CATALOG, PAGES, PAGE, &stream("", content), font, descendant]);
    assert_eq!(pages(&out, 10).unwrap(), ["中文"]);
}

#[test]
fn glyph_names_of_an_encodings_differences_read_as_their_characters() {
    let font = b"<< /Type /Font /Subtype /Type1 /BaseFont /Times-Roman \
        /Encoding << /BaseEncoding /WinAnsiEncoding /Differences [1 /quotedblleft /fi /uni00E9 /quotedblright] >> >>";
    let content = b"BT /F1 12 Tf 72 700 Td (\\001\\002ne caf\\003\\004) Tj ET";
    assert_eq!(
        pages(&one_page(content, font), 10).unwrap(),
        ["“fine café”"]
    );
}

#[test]
fn a_form_is_drawn_where_the_page_places_it_and_a_form_drawing_itself_ends() {
    let page = b"<< /Type /Page /Parent 2 0 R /Resources << /Font << /F1 5 0 R >> \
        /XObject << /Fm 6 0 R >> >> /Contents 4 0 R >>";
    let content = b"BT /F1 12 Tf 72 700 Td (Above) Tj ET q 1 0 0 1 0 -40 cm /Fm Do Q";
    let form = stream(
        "/Type /XObject /Subtype /Form /BBox [0 0 612 792] \
         /Resources << /Font << /F1 5 0 R >> /XObject << /Fm 6 0 R >> >>",
        b"BT /F1 12 Tf 72 700 Td (Below) Tj ET /Fm Do",
    );
    let out = pdf(&[CATALOG, PAGES, page, &stream("", content), HELVETICA, &form]);
    let text = pages(&out, 10).unwrap();
    // The form draws itself again, 8 deep at most, each time at the same place: the glyphs drawn
    // over each other are read once.
    assert_eq!(text, ["Above\nBelow"]);
}

#[test]
fn damaged_cross_references_are_rebuilt_from_the_objects() {
    let mut out = one_page(b"BT /F1 12 Tf 72 700 Td (Still here) Tj ET", HELVETICA);
    let at = out
        .windows(9)
        .rposition(|window| window == b"startxref")
        .unwrap();
    out.truncate(at);
    out.extend_from_slice(b"startxref\n12345\n%%EOF\n");
    assert_eq!(pages(&out, 10).unwrap(), ["Still here"]);
    // Cut short inside the cross-reference table: the objects are still all there.
    let cut = one_page(b"BT /F1 12 Tf 72 700 Td (Cut short) Tj ET", HELVETICA);
    let xref = cut
        .windows(4)
        .rposition(|window| window == b"xref")
        .unwrap();
    assert_eq!(pages(&cut[..xref + 10], 10).unwrap(), ["Cut short"]);
    // A table whose entry for the page points elsewhere: the page is found among the objects.
    let whole = one_page(b"BT /F1 12 Tf 72 700 Td (Misplaced) Tj ET", HELVETICA);
    let text = String::from_utf8_lossy(&whole);
    let page_at = text.find("3 0 obj").unwrap();
    let wrong = text.replacen(&format!("{page_at:010} 00000 n"), "0000000009 00000 n", 1);
    assert_ne!(wrong, text);
    assert_eq!(pages(wrong.as_bytes(), 10).unwrap(), ["Misplaced"]);
}

#[test]
fn a_stream_whose_length_refers_to_itself_and_a_looping_page_tree_end() {
    let content =
        b"4 0 obj\n<< /Length 4 0 R >>\nstream\nBT /F1 12 Tf 72 700 Td (Looped) Tj ET\nendstream";
    let looping_pages = b"<< /Type /Pages /Kids [3 0 R 2 0 R 3 0 R] /Count 1 >>";
    let mut out = pdf(&[CATALOG, looping_pages, PAGE, b"0", HELVETICA]);
    // Replace object 4 with a stream that names itself as its length.
    let text = String::from_utf8_lossy(&out).into_owned();
    let rebuilt = text.replacen(
        "4 0 obj\n0\nendobj",
        std::str::from_utf8(content).unwrap(),
        1,
    );
    out = rebuilt.into_bytes();
    // The offsets no longer hold, so the file is rebuilt, and the page is read once.
    assert_eq!(pages(&out, 10).unwrap(), ["Looped"]);
}

#[test]
fn an_encrypted_file_and_an_oversized_stream_are_typed_errors() {
    let mut encrypted = one_page(b"BT /F1 12 Tf 72 700 Td (x) Tj ET", HELVETICA);
    let text =
        String::from_utf8_lossy(&encrypted).replace("/Root 1 0 R", "/Root 1 0 R /Encrypt 9 0 R");
    encrypted = text.into_bytes();
    let reason = |bytes: &[u8]| match pages(bytes, 10).unwrap_err().kind {
        ErrorKind::InvalidDocument { reason } => reason,
        other => panic!("{other:?}"),
    };
    assert_eq!(reason(&encrypted), "encrypted");
    let zeros = vec![b' '; 64 << 20 | 1];
    let bomb = miniz_oxide::deflate::compress_to_vec_zlib(&zeros, 1);
    let out = pdf(&[
        CATALOG,
        PAGES,
        PAGE,
        &stream("/Filter /FlateDecode", &bomb),
        HELVETICA,
    ]);
    assert_eq!(reason(&out), "too-large");
}

#[test]
fn a_file_cut_inside_a_page_s_content_is_an_error_not_half_a_page() {
    let whole = one_page(
        b"BT /F1 12 Tf 72 700 Td (The first half) Tj 0 -14 Td (and the second) Tj ET",
        HELVETICA,
    );
    let text = String::from_utf8_lossy(&whole);
    let cut = text.find("and the").unwrap();
    let error = pages(&whole[..cut], 10).unwrap_err();
    assert!(error.message.contains("cut short"), "{}", error.message);
}

#[test]
fn a_file_whose_objects_all_run_to_its_end_is_read_in_bounded_time() {
    // Each object opens a string it never closes, and no cross-reference holds: rebuilt, every
    // object would be lexed to the end of the file — time square in its size — without the
    // reader's budget of work.
    let mut out = b"%PDF-1.7\n".to_vec();
    for id in 1..=20_000 {
        out.extend_from_slice(format!("{id} 0 obj\n<< /Type /Catalog /Pages ( \n").as_bytes());
    }
    let (sent, answer) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = sent.send(pages(&out, 10));
    });
    let read = answer
        .recv_timeout(std::time::Duration::from_secs(60))
        .expect("the reader came back");
    assert!(read.is_err());
}

#[test]
fn two_fonts_on_one_line_read_as_one_line() {
    // "Party: " in Helvetica (a simple font, WinAnsi), then "Zoë" in a composite font whose
    // codes map through its ToUnicode CMap.
    let page = b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] \
        /Resources << /Font << /F1 5 0 R /F2 6 0 R >> >> /Contents 4 0 R >>";
    let composite =
        b"<< /Type /Font /Subtype /Type0 /BaseFont /ABCDEF+Arial /Encoding /Identity-H \
        /DescendantFonts [7 0 R] /ToUnicode 8 0 R >>";
    let descendant = b"<< /Type /Font /Subtype /CIDFontType2 /DW 500 >>";
    let to_unicode = stream(
        "",
        b"1 begincodespacerange <0000> <FFFF> endcodespacerange \
          3 beginbfchar <0001> <005A> <0002> <006F> <0003> <00EB> endbfchar",
    );
    let content = b"BT /F1 12 Tf 72 700 Td (Party: ) Tj /F2 12 Tf <000100020003> Tj ET";
    let out = pdf(&[
        CATALOG,
        PAGES,
        page,
        &stream("", content),
        HELVETICA,
        composite,
        descendant,
        &to_unicode,
    ]);
    assert_eq!(pages(&out, 10).unwrap(), ["Party: Zoë"]);
}

#[test]
fn words_placed_far_beyond_the_page_read_without_overflow() {
    // A damaged file (found by the fuzzer) moves text to x = 7e16 on four lines in a row: the
    // columns found there are no arithmetic past i32::MAX, and the words still read.
    let line =
        |y: u32| format!("BT /F1 11 Tf 72 {y} Td (Party) Tj 72888888888888888 0 Td (far) Tj ET ");
    let content: String = (0..4).map(|row| line(700 - 14 * row)).collect();
    let text = pages(&one_page(content.as_bytes(), HELVETICA), 10).unwrap();
    assert_eq!(text[0].matches("Party").count(), 4, "{text:?}");
    assert_eq!(text[0].matches("far").count(), 4, "{text:?}");
}
