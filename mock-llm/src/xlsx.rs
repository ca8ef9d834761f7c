//! Spreadsheets (`.xlsx`) for tests, written here rather than kept as files: a workbook as Excel
//! writes one (content types, relationships, the workbook, a date style, a part per sheet), its
//! cells numbers where they read as numbers, dates (`2026-03-14`) as Excel's day numbers with a
//! date format, anything else inline text; or a sheet's XML as given, for the ways a sheet can
//! be hostile.
//!
//! ```
//! let xlsx = mock_llm::xlsx::workbook(&[("Lines", &[&["item", "qty"], &["Tea", "2"]])]);
//! assert!(xlsx.starts_with(b"PK\x03\x04"));
//! ```

use crate::docx::package;

/// A workbook with a sheet per `(name, rows)`, each row's cells from column A.
pub fn workbook(sheets: &[(&str, &[&[&str]])]) -> Vec<u8> {
    let parts: Vec<(String, String)> = sheets
        .iter()
        .map(|(name, rows)| ((*name).to_owned(), sheet_xml(rows)))
        .collect();
    with_sheets(&parts)
}

/// A workbook whose sheets are `(name, the sheet part's XML)` as given.
pub fn with_sheets(sheets: &[(String, String)]) -> Vec<u8> {
    with_parts(sheets, &[])
}

/// [`with_sheets`], with `extra` parts (name, XML) beside them (`xl/sharedStrings.xml`).
pub fn with_parts(sheets: &[(String, String)], extra: &[(&str, &str)]) -> Vec<u8> {
    let mut listed = String::new();
    let mut relationships = String::new();
    let mut overrides = String::new();
    for (index, (name, _)) in sheets.iter().enumerate() {
        let n = index + 1;
        listed.push_str(&format!(
            r#"<sheet name="{}" sheetId="{n}" r:id="rId{n}"/>"#,
            escape(name)
        ));
        relationships.push_str(&format!(
            r#"<Relationship Id="rId{n}" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/worksheet" Target="worksheets/sheet{n}.xml"/>"#
        ));
        overrides.push_str(&format!(
            r#"<Override PartName="/xl/worksheets/sheet{n}.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.worksheet+xml"/>"#
        ));
    }
    let styles = format!("rId{}", sheets.len() + 1);
    relationships.push_str(&format!(
        r#"<Relationship Id="{styles}" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/styles" Target="styles.xml"/>"#
    ));
    let content_types = format!(
        r#"<?xml version="1.0" encoding="UTF-8" standalone="yes"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/><Override PartName="/xl/workbook.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml"/><Override PartName="/xl/styles.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.styles+xml"/>{overrides}</Types>"#
    );
    let workbook = format!(
        r#"<?xml version="1.0" encoding="UTF-8" standalone="yes"?><workbook xmlns="{MAIN}" xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships"><sheets>{listed}</sheets></workbook>"#
    );
    let workbook_relationships = format!(
        r#"<?xml version="1.0" encoding="UTF-8" standalone="yes"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">{relationships}</Relationships>"#
    );
    let mut entries: Vec<(String, Vec<u8>)> = vec![
        ("[Content_Types].xml".into(), content_types.into_bytes()),
        ("_rels/.rels".into(), ROOT_RELATIONSHIPS.as_bytes().to_vec()),
        ("xl/workbook.xml".into(), workbook.into_bytes()),
        (
            "xl/_rels/workbook.xml.rels".into(),
            workbook_relationships.into_bytes(),
        ),
        ("xl/styles.xml".into(), STYLES.as_bytes().to_vec()),
    ];
    for (name, xml) in extra {
        entries.push(((*name).to_owned(), xml.as_bytes().to_vec()));
    }
    for (index, (_, xml)) in sheets.iter().enumerate() {
        entries.push((
            format!("xl/worksheets/sheet{}.xml", index + 1),
            xml.clone().into_bytes(),
        ));
    }
    let borrowed: Vec<(&str, &[u8])> = (entries.iter())
        .map(|(name, bytes)| (name.as_str(), bytes.as_slice()))
        .collect();
    package(&borrowed)
}

/// A sheet part holding `rows`, each from column A.
pub fn sheet_xml(rows: &[&[&str]]) -> String {
    let mut data = String::new();
    for (index, row) in rows.iter().enumerate() {
        let cells: String = (row.iter().enumerate())
            .map(|(column, value)| cell(&format!("{}{}", column_name(column), index + 1), value))
            .collect();
        data.push_str(&format!(r#"<row r="{}">{cells}</row>"#, index + 1));
    }
    with_rows(&data)
}

/// A sheet part whose `<sheetData>` holds `rows` as written.
pub fn with_rows(rows: &str) -> String {
    format!(
        r#"<?xml version="1.0" encoding="UTF-8" standalone="yes"?><worksheet xmlns="{MAIN}"><sheetData>{rows}</sheetData></worksheet>"#
    )
}

/// One cell at `reference`: a number, a date, or inline text.
fn cell(reference: &str, value: &str) -> String {
    if value.is_empty() {
        return String::new();
    }
    if let Some(serial) = day_number(value) {
        return format!(r#"<c r="{reference}" s="1"><v>{serial}</v></c>"#);
    }
    if value.parse::<f64>().is_ok() {
        return format!(r#"<c r="{reference}"><v>{value}</v></c>"#);
    }
    format!(
        r#"<c r="{reference}" t="inlineStr"><is><t xml:space="preserve">{}</t></is></c>"#,
        escape(value)
    )
}

/// Excel's day number of `YYYY-MM-DD` (days since 1899-12-30).
fn day_number(date: &str) -> Option<i64> {
    let mut parts = date.splitn(3, '-');
    let (year, month, day) = (parts.next()?, parts.next()?, parts.next()?);
    if year.len() != 4 || month.len() != 2 || day.len() != 2 {
        return None;
    }
    let (year, month, day): (i64, i64, i64) =
        (year.parse().ok()?, month.parse().ok()?, day.parse().ok()?);
    // Days from the civil date (Howard Hinnant's algorithm), then from Excel's epoch.
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let year_of_era = y - era * 400;
    let day_of_year = (153 * ((month + 9) % 12) + 2) / 5 + day - 1;
    let day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
    let unix_days = era * 146_097 + day_of_era - 719_468;
    Some(unix_days + 25_569)
}

/// `A`, `B`, … `Z`, `AA` for the column from 0.
pub fn column_name(mut column: usize) -> String {
    let mut name = Vec::new();
    loop {
        name.push(b'A' + (column % 26) as u8);
        if column < 26 {
            break;
        }
        column = column / 26 - 1;
    }
    name.reverse();
    String::from_utf8(name).unwrap_or_default()
}

fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

const MAIN: &str = "http://schemas.openxmlformats.org/spreadsheetml/2006/main";

const ROOT_RELATIONSHIPS: &str = r#"<?xml version="1.0" encoding="UTF-8" standalone="yes"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="xl/workbook.xml"/></Relationships>"#;

/// Two cell formats: general, and Excel's built-in date (number format 14).
const STYLES: &str = r#"<?xml version="1.0" encoding="UTF-8" standalone="yes"?><styleSheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><cellXfs count="2"><xf numFmtId="0" fontId="0" fillId="0" borderId="0"/><xf numFmtId="14" fontId="0" fillId="0" borderId="0" applyNumberFormat="1"/></cellXfs></styleSheet>"#;
