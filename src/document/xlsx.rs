//! A spreadsheet's text (`.xlsx`, Office Open XML): every sheet in the workbook's order, a line
//! `Sheet: <name>` and then a line per row that holds anything, its cells parted by tabs (an
//! empty cell an empty field, so the columns stay), as records mode reads a table
//! (`content::records::rows`). A cell is written as it reads: a date as a date (`2026-03-14`,
//! with its time when it has one), a number as written without Excel's float noise, `TRUE` /
//! `FALSE`, an error as Excel shows it (`#DIV/0!`); a formula's value as the file last saved it
//! (no formula is evaluated, no external link followed). The package is read as every Office
//! package is ([`super::package`]) and each sheet's XML streamed by quick-xml: a sheet that
//! claims a million rows costs only the cells it holds. (calamine, the field's reader, was
//! measured at +0.51 MB in the component, its own zip reader and two inflaters beside ours:
//! BENCHMARKS.md "Documents".)
//!
//! ```
//! let xlsx = mock_llm::xlsx::workbook(&[("Lines", &[&["item", "qty"], &["Tea", "2"]])]);
//! let text = structure::document::xlsx::text(&xlsx, 1 << 20)?;
//! assert_eq!(text, "Sheet: Lines\nitem\tqty\nTea\t2");
//! # Ok::<(), structure::StructureError>(())
//! ```

use quick_xml::events::{BytesStart, Event};

use super::package::{Package, referenced};
use crate::error::StructureError;

/// The most columns a row may reach (`XFD` is 16,384): a cell beyond is a sheet built to make
/// its reader write tabs, not a table.
const MAX_COLUMNS: u32 = 1_024;
/// The most cells read, over every sheet.
const MAX_CELLS: usize = 4_000_000;
/// The most sheets read.
const MAX_SHEETS: usize = 256;
/// What the errors call a spreadsheet, and what they tell its sender to do.
const KIND: &str = "spreadsheet";
const REMEDY: &str = "save it again as .xlsx, or send the sheet you need as CSV";

/// The text of the spreadsheet `bytes`, at most `max_bytes` of it.
pub fn text(bytes: &[u8], max_bytes: usize) -> Result<String, StructureError> {
    Ok(read(bytes, max_bytes)?.text)
}

/// A spreadsheet read: its text, and where each of its rows is in it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sheets {
    pub text: String,
    /// Each row's line, in text order.
    pub rows: Vec<RowLine>,
}

/// A row's line in a spreadsheet's text: the byte it starts at, its sheet's name, its number
/// (from 1, as the sheet numbers it). Its cells are its tab-parted fields, from column A.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RowLine {
    pub byte: usize,
    pub sheet: String,
    pub row: u32,
}

/// The spreadsheet `bytes` read ([`Sheets`]), at most `max_bytes` of text.
pub fn read(bytes: &[u8], max_bytes: usize) -> Result<Sheets, StructureError> {
    let package = Package::open(bytes, KIND, REMEDY)?;
    let book = Book::read(&package)?;
    let mut text = Text {
        written: String::new(),
        max_bytes,
        cells: 0,
        rows: Vec::new(),
        sheet: String::new(),
    };
    for (name, part) in &book.sheets {
        let xml = package.text_part(part)?;
        text.push(&format!("Sheet: {}\n", one_line(name)))?;
        text.sheet = name.clone();
        text.sheet(&package, &xml, &book)?;
    }
    let kept = text.written.trim_end().len();
    text.written.truncate(kept);
    Ok(Sheets {
        text: text.written,
        rows: text.rows,
    })
}

/// A cell's reference as Excel writes it: `Lines!B14`, the sheet's name quoted when it is not
/// one word (`'Q1 totals'!A2`); `column` from 0, `row` from 1.
pub fn reference(sheet: &str, row: u32, column: u32) -> String {
    let mut letters = Vec::new();
    let mut rest = column;
    loop {
        letters.push(b'A' + (rest % 26) as u8);
        if rest < 26 {
            break;
        }
        rest = rest / 26 - 1;
    }
    letters.reverse();
    let column = String::from_utf8(letters).unwrap_or_default();
    let plain = sheet.chars().all(|c| c.is_alphanumeric() || c == '_');
    match plain {
        true => format!("{sheet}!{column}{row}"),
        false => format!("'{}'!{column}{row}", sheet.replace('\'', "''")),
    }
}

/// What every sheet's cells are read with: the sheets (name, part), the shared strings, which
/// cell formats are dates, and the date system.
struct Book {
    sheets: Vec<(String, String)>,
    strings: Vec<String>,
    dated: Vec<bool>,
    from_1904: bool,
}

impl Book {
    fn read(package: &Package<'_>) -> Result<Self, StructureError> {
        let workbook = package.text_part("xl/workbook.xml")?;
        let mut listed: Vec<(String, String)> = Vec::new();
        let mut from_1904 = false;
        each_element(package, &workbook, |element, _| {
            match element.local_name().as_ref() {
                "sheet" if listed.len() < MAX_SHEETS => {
                    listed.push((attribute(element, "name"), attribute(element, "id")));
                }
                "sheet" => return Err(too_large(&format!("it has over {MAX_SHEETS} sheets"))),
                "workbookPr" => {
                    from_1904 = matches!(attribute(element, "date1904").as_str(), "1" | "true");
                }
                _ => {}
            }
            Ok(())
        })?;
        let targets = relationships(package)?;
        let sheets = (listed.into_iter())
            .map(|(name, id)| {
                let target = (targets.iter()).find(|(known, _)| *known == id);
                match target {
                    Some((_, part)) => Ok((name, part.clone())),
                    None => Err(package.unreadable(&format!("its sheet {name:?} has no part"))),
                }
            })
            .collect::<Result<_, _>>()?;
        Ok(Book {
            sheets,
            strings: shared_strings(package)?,
            dated: dated_formats(package)?,
            from_1904,
        })
    }
}

/// The workbook's relationships: each id, and the part it names (from the package's root).
fn relationships(package: &Package<'_>) -> Result<Vec<(String, String)>, StructureError> {
    let xml = package.text_part("xl/_rels/workbook.xml.rels")?;
    let mut found = Vec::new();
    each_element(package, &xml, |element, _| {
        if element.local_name().as_ref() == "Relationship" {
            let target = attribute(element, "Target");
            let part = match target.strip_prefix('/') {
                Some(absolute) => absolute.to_owned(),
                None => format!("xl/{target}"),
            };
            found.push((attribute(element, "Id"), part));
        }
        Ok(())
    })?;
    Ok(found)
}

/// The shared strings (`xl/sharedStrings.xml`, none without it): each item's runs of text, its
/// phonetic guide (`rPh`) left out.
fn shared_strings(package: &Package<'_>) -> Result<Vec<String>, StructureError> {
    let Some(xml) = package.optional_text_part("xl/sharedStrings.xml")? else {
        return Ok(Vec::new());
    };
    let mut strings = Vec::new();
    let (mut in_text, mut phonetic) = (false, 0usize);
    each_event(package, &xml, |event| {
        match event {
            Event::Start(element) => match element.local_name().as_ref() {
                "si" => strings.push(String::new()),
                "t" => in_text = true,
                "rPh" => phonetic += 1,
                _ => {}
            },
            Event::End(element) => match element.local_name().as_ref() {
                "t" => in_text = false,
                "rPh" => phonetic = phonetic.saturating_sub(1),
                _ => {}
            },
            Event::Text(words) if in_text && phonetic == 0 => {
                if let Some(last) = strings.last_mut() {
                    last.push_str(&words.xml10_content());
                }
            }
            Event::GeneralRef(reference) if in_text && phonetic == 0 => {
                let words = referenced(reference).map_err(|why| package.unreadable(&why))?;
                if let Some(last) = strings.last_mut() {
                    last.push_str(&words);
                }
            }
            _ => {}
        }
        Ok(())
    })?;
    Ok(strings)
}

/// For each cell format (`cellXfs`), whether it shows a date or a time: Excel's built-in date
/// formats, or a custom one whose code writes a day, a year, an hour or a second.
fn dated_formats(package: &Package<'_>) -> Result<Vec<bool>, StructureError> {
    let Some(xml) = package.optional_text_part("xl/styles.xml")? else {
        return Ok(Vec::new());
    };
    let mut custom: Vec<(String, bool)> = Vec::new();
    let mut dated = Vec::new();
    let mut in_cell_formats = false;
    each_event(package, &xml, |event| {
        let (Event::Start(element) | Event::Empty(element)) = event else {
            if let Event::End(element) = event
                && element.local_name().as_ref() == "cellXfs"
            {
                in_cell_formats = false;
            }
            return Ok(());
        };
        match element.local_name().as_ref() {
            "numFmt" => custom.push((
                attribute(element, "numFmtId"),
                is_date_code(&attribute(element, "formatCode")),
            )),
            "cellXfs" => in_cell_formats = matches!(event, Event::Start(_)),
            "xf" if in_cell_formats => {
                let id = attribute(element, "numFmtId");
                let built_in = id
                    .parse::<u32>()
                    .is_ok_and(|id| matches!(id, 14..=22 | 45..=47));
                let own = (custom.iter()).any(|(known, date)| *known == id && *date);
                dated.push(built_in || own);
            }
            _ => {}
        }
        Ok(())
    })?;
    Ok(dated)
}

/// Whether a number format's code writes a date or a time (outside its quoted text and its
/// `[…]` colours and conditions).
fn is_date_code(code: &str) -> bool {
    let (mut quoted, mut bracketed) = (false, false);
    for c in code.chars() {
        match c {
            '"' => quoted = !quoted,
            '[' if !quoted => bracketed = true,
            ']' if !quoted => bracketed = false,
            'y' | 'Y' | 'd' | 'D' | 'h' | 'H' | 's' | 'S' if !quoted && !bracketed => return true,
            _ => {}
        }
    }
    false
}

/// The text written so far, the bounds it is held to, each row's line, and the sheet being
/// written.
struct Text {
    written: String,
    max_bytes: usize,
    cells: usize,
    rows: Vec<RowLine>,
    sheet: String,
}

/// The cell being read: where it is, its type (`t`), its format (`s`), and its value so far.
#[derive(Default)]
struct Cell {
    row: u32,
    column: u32,
    kind: String,
    format: usize,
    value: String,
    /// Whether the reader is in the element that holds its value (`<v>`, or `<t>` of `<is>`).
    in_value: bool,
}

impl Text {
    /// Writes the rows of the sheet part `xml`, each cell at its column.
    fn sheet(
        &mut self,
        package: &Package<'_>,
        xml: &str,
        book: &Book,
    ) -> Result<(), StructureError> {
        let mut cell = Cell::default();
        // The row being written, and the column its next cell would be in.
        let mut at: Option<(u32, u32)> = None;
        let (mut row, mut next_column) = (0u32, 0u32);
        each_event(package, xml, |event| {
            match event {
                Event::Start(element) | Event::Empty(element) => {
                    match element.local_name().as_ref() {
                        "row" => {
                            row = attribute(element, "r").parse().unwrap_or(row + 1);
                            next_column = 0;
                        }
                        "c" => {
                            let (found_row, column) =
                                position(&attribute(element, "r")).unwrap_or((row, next_column));
                            cell = Cell {
                                row: found_row,
                                column,
                                kind: attribute(element, "t"),
                                format: attribute(element, "s").parse().unwrap_or(0),
                                ..Cell::default()
                            };
                            next_column = column + 1;
                            if matches!(event, Event::Empty(_)) {
                                cell = Cell::default();
                            }
                        }
                        "v" | "t" => cell.in_value = matches!(event, Event::Start(_)),
                        _ => {}
                    }
                }
                Event::End(element) => match element.local_name().as_ref() {
                    "v" | "t" => cell.in_value = false,
                    "c" => {
                        let done = std::mem::take(&mut cell);
                        if let Some(value) = written(&done, book) {
                            self.cell(&mut at, &done, &value)?;
                        }
                    }
                    _ => {}
                },
                Event::Text(words) if cell.in_value => cell.value.push_str(&words.xml10_content()),
                Event::GeneralRef(reference) if cell.in_value => {
                    let words = referenced(reference).map_err(|why| package.unreadable(&why))?;
                    cell.value.push_str(&words);
                }
                _ => {}
            }
            Ok(())
        })?;
        self.push(if at.is_some() { "\n\n" } else { "\n" })
    }

    /// Writes the value of `cell` at its column: on the line of the row `at` is in, else on a
    /// new line.
    fn cell(
        &mut self,
        at: &mut Option<(u32, u32)>,
        cell: &Cell,
        value: &str,
    ) -> Result<(), StructureError> {
        if cell.column >= MAX_COLUMNS {
            return Err(too_large(&format!(
                "a sheet has a cell in column {}, past the {MAX_COLUMNS} read",
                cell.column + 1
            )));
        }
        self.cells += 1;
        if self.cells > MAX_CELLS {
            return Err(too_large(&format!("it has over {MAX_CELLS} cells")));
        }
        let next = match *at {
            Some((open, next)) if open == cell.row && cell.column >= next => next,
            Some(_) => {
                self.push("\n")?;
                self.row_starts(cell.row);
                0
            }
            None => {
                self.row_starts(cell.row);
                0
            }
        };
        let tabs = cell.column - next + u32::from(next > 0);
        self.push(&"\t".repeat(tabs as usize))?;
        self.push(value)?;
        *at = Some((cell.row, cell.column + 1));
        Ok(())
    }

    /// Notes that row `row` of the sheet being written starts here.
    fn row_starts(&mut self, row: u32) {
        self.rows.push(RowLine {
            byte: self.written.len(),
            sheet: self.sheet.clone(),
            row,
        });
    }

    fn push(&mut self, words: &str) -> Result<(), StructureError> {
        if self.written.len() + words.len() > self.max_bytes {
            return Err(StructureError::invalid_document(
                "too-large",
                format!(
                    "the spreadsheet's text is over {} bytes: send fewer sheets, or the rows \
                     you need as CSV in parts",
                    self.max_bytes
                ),
            ));
        }
        self.written.push_str(words);
        Ok(())
    }
}

/// A cell's value as the text writes it; `None` for an empty one.
fn written(cell: &Cell, book: &Book) -> Option<String> {
    let raw = cell.value.trim();
    let text = match cell.kind.as_str() {
        "s" => one_line(book.strings.get(raw.parse::<usize>().ok()?)?),
        "b" => (if raw == "1" { "TRUE" } else { "FALSE" }).to_owned(),
        "inlineStr" | "str" | "e" | "d" => one_line(&cell.value),
        _ => {
            let number: f64 = raw.parse().ok()?;
            match book.dated.get(cell.format).copied().unwrap_or(false) {
                true => date_written(number, book.from_1904),
                false => number_written(number),
            }
        }
    };
    (!text.is_empty()).then_some(text)
}

/// Excel's day number (days since 1899-12-30, or 1904-01-01) as a date, with its time of day
/// when it has one, or a time alone before the first day.
fn date_written(serial: f64, from_1904: bool) -> String {
    let days = serial.floor();
    let seconds = ((serial - days) * 86_400.0).round() as i64;
    let (hour, minute, second) = (seconds / 3600 % 24, seconds / 60 % 60, seconds % 60);
    let time = format!("{hour:02}:{minute:02}:{second:02}");
    if days < 1.0 && !from_1904 {
        return time;
    }
    let unix_days = days as i64 - 25_569 + if from_1904 { 1_462 } else { 0 };
    let (year, month, day) = civil(unix_days);
    match seconds {
        0 => format!("{year:04}-{month:02}-{day:02}"),
        _ => format!("{year:04}-{month:02}-{day:02}T{time}"),
    }
}

/// The civil date of a day counted from 1970-01-01 (Howard Hinnant's algorithm).
fn civil(days: i64) -> (i64, i64, i64) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let day_of_era = z - era * 146_097;
    let year_of_era =
        (day_of_era - day_of_era / 1460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let month_index = (5 * day_of_year + 2) / 153;
    let day = day_of_year - (153 * month_index + 2) / 5 + 1;
    let month = if month_index < 10 {
        month_index + 3
    } else {
        month_index - 9
    };
    (year_of_era + era * 400 + i64::from(month <= 2), month, day)
}

/// The row and column (from 0) a cell reference (`B14`) names.
fn position(reference: &str) -> Option<(u32, u32)> {
    let letters = reference
        .bytes()
        .take_while(u8::is_ascii_alphabetic)
        .count();
    let (column, row) = reference.split_at(letters);
    if column.is_empty() || column.len() > 3 {
        return None;
    }
    let column = (column.bytes()).fold(0u32, |sum, letter| {
        sum * 26 + u32::from(letter.to_ascii_uppercase() - b'A' + 1)
    });
    Some((row.parse().ok()?, column - 1))
}

/// Each XML event of `xml` (a part of `package`), to `visit`.
fn each_event(
    package: &Package<'_>,
    xml: &str,
    mut visit: impl FnMut(&Event<'_>) -> Result<(), StructureError>,
) -> Result<(), StructureError> {
    let mut reader = quick_xml::Reader::from_str(xml);
    loop {
        let event = (reader.read_event())
            .map_err(|error| package.unreadable(&format!("its XML is malformed ({error})")))?;
        if matches!(event, Event::Eof) {
            return Ok(());
        }
        visit(&event)?;
    }
}

/// Each element (start or empty) of `xml`, to `visit`.
fn each_element(
    package: &Package<'_>,
    xml: &str,
    mut visit: impl FnMut(&BytesStart<'_>, bool) -> Result<(), StructureError>,
) -> Result<(), StructureError> {
    each_event(package, xml, |event| match event {
        Event::Start(element) => visit(element, false),
        Event::Empty(element) => visit(element, true),
        _ => Ok(()),
    })
}

/// The value of the attribute whose local name is `name` (`r:id` is `id`), unescaped; empty
/// when there is none.
fn attribute(element: &BytesStart<'_>, name: &str) -> String {
    (element.attributes().flatten())
        .find(|attribute| attribute.key.local_name().as_ref() == name)
        .and_then(|attribute| {
            attribute
                .normalized_value(quick_xml::XmlVersion::Implicit1_0)
                .ok()
                .map(|value| value.into_owned())
        })
        .unwrap_or_default()
}

/// A number as a person writes it: `3` for 3.0, and Excel's binary noise rounded away
/// (`0.1 + 0.2` is saved as 0.30000000000000004 and shown as 0.3).
fn number_written(number: f64) -> String {
    if number.fract() == 0.0 && number.abs() < 1e15 {
        return format!("{number:.0}");
    }
    // Fifteen significant digits, as Excel shows them.
    let shown: f64 = format!("{number:.14e}").parse().unwrap_or(number);
    shown.to_string()
}

/// `words` on one line: a line break or a tab in a cell is a space, so a row stays a line.
fn one_line(words: &str) -> String {
    words
        .split(['\n', '\r', '\t'])
        .filter(|part| !part.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}

fn too_large(why: &str) -> StructureError {
    StructureError::invalid_document(
        "too-large",
        format!("this spreadsheet is too large to read: {why}; {REMEDY}"),
    )
}

#[cfg(test)]
mod tests {
    use mock_llm::xlsx::{with_rows, with_sheets, workbook};

    use super::*;

    fn read(xlsx: &[u8]) -> Result<String, StructureError> {
        text(xlsx, 1 << 20)
    }

    fn reason(error: StructureError) -> String {
        match error.kind {
            crate::error::ErrorKind::InvalidDocument { reason } => reason,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn every_sheet_its_rows_as_lines_dates_as_dates_and_empty_cells_keeping_the_columns() {
        let lines: &[&[&str]] = &[
            &["line", "item", "due", "qty"],
            &["L0001", "Green\ntea", "2026-03-14", "2"],
            &["L0002", "", "2026-12-31", "4.25"],
        ];
        let notes: &[&[&str]] = &[&["Paid & sent"]];
        let xlsx = workbook(&[("Lines", lines), ("Notes <1>", notes)]);
        assert_eq!(
            read(&xlsx).unwrap(),
            "Sheet: Lines\nline\titem\tdue\tqty\nL0001\tGreen tea\t2026-03-14\t2\n\
             L0002\t\t2026-12-31\t4.25\n\nSheet: Notes <1>\nPaid & sent"
        );
    }

    #[test]
    fn shared_strings_booleans_errors_times_and_cached_formula_values() {
        let sheet = with_rows(
            r#"<row r="1"><c r="A1" t="s"><v>1</v></c><c r="C1" t="b"><v>1</v></c></row>
               <row r="2"><c r="A2" t="e"><v>#DIV/0!</v></c><c r="B2" s="1"><v>45730.75</v></c>
               <c r="C2"><f>[1]Prices!A1*2</f><v>0.30000000000000004</v></c></row>"#,
        );
        let xlsx_parts = vec![("Data".to_owned(), sheet)];
        let xlsx = with_sheets(&xlsx_parts);
        // The same package with a shared strings part beside it.
        let strings = r#"<sst xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><si><t>first</t></si><si><r><t>Zo</t></r><r><t>&#235;</t></r><rPh><t>ゾエ</t></rPh></si></sst>"#;
        let with_strings =
            mock_llm::xlsx::with_parts(&xlsx_parts, &[("xl/sharedStrings.xml", strings)]);
        assert_eq!(
            read(&with_strings).unwrap(),
            "Sheet: Data\nZoë\t\tTRUE\n#DIV/0!\t2025-03-14T18:00:00\t0.3"
        );
        // Without the part, a shared string is not there to write: the cell is empty.
        assert!(read(&xlsx).unwrap().starts_with("Sheet: Data\n\t\tTRUE"));
    }

    #[test]
    fn a_hostile_sheet_is_a_typed_error_or_costs_only_its_cells() {
        // A cell at the last column: too wide to be a table.
        let wide = with_rows(r#"<row r="1"><c r="XFD1"><v>1</v></c></row>"#);
        let error = read(&with_sheets(&[("Wide".into(), wide)])).unwrap_err();
        assert_eq!(reason(error), "too-large");
        // A million empty rows and a claimed grid of every cell: only the cells it holds.
        let empty: String = (1..=1_000_000)
            .map(|row| format!(r#"<row r="{row}"/>"#))
            .collect();
        let claimed = format!(r#"<dimension ref="A1:XFD1048576"/>{empty}"#);
        let sheet = with_rows(&format!(
            r#"{claimed}<row r="1000001"><c r="A1000001" t="inlineStr"><is><t>end</t></is></c></row>"#
        ));
        assert_eq!(
            read(&with_sheets(&[("Big".into(), sheet)])).unwrap(),
            "Sheet: Big\nend"
        );
        // Its text held to the bound.
        let rows: Vec<Vec<String>> = (0..2_000).map(|n| vec![format!("row {n}")]).collect();
        let rows: Vec<Vec<&str>> = rows
            .iter()
            .map(|row| row.iter().map(String::as_str).collect())
            .collect();
        let rows: Vec<&[&str]> = rows.iter().map(Vec::as_slice).collect();
        let error = text(&workbook(&[("Rows", &rows)]), 1_000).unwrap_err();
        assert_eq!(reason(error), "too-large");
    }

    #[test]
    fn what_is_not_a_workbook_says_so() {
        let docx = mock_llm::docx::with_paragraphs(&["Invoice"]);
        let error = read(&docx).unwrap_err();
        assert_eq!(reason(error.clone()), "unreadable");
        assert!(
            error.message.contains("it has no xl/workbook.xml"),
            "{}",
            error.message
        );
        assert_eq!(
            reason(read(b"PK\x03\x04 not a zip").unwrap_err()),
            "unreadable"
        );
        let broken = with_sheets(&[("Bad".into(), "<worksheet><sheetData><row>".into())]);
        assert!(read(&broken).is_ok(), "an unclosed element ends the sheet");
    }

    #[test]
    fn numbers_and_dates_read_as_written() {
        assert_eq!(number_written(3.0), "3");
        assert_eq!(number_written(0.1 + 0.2), "0.3");
        assert_eq!(number_written(-1234567.25), "-1234567.25");
        assert_eq!(date_written(45730.0, false), "2025-03-14");
        assert_eq!(date_written(0.5, false), "12:00:00");
        assert_eq!(date_written(44268.0, true), "2025-03-14");
        assert_eq!(position("AB12"), Some((12, 27)));
        assert_eq!(position("12"), None);
        assert!(is_date_code("yyyy-mm-dd") && is_date_code("[h]:mm:ss"));
        assert!(!is_date_code("0.00") && !is_date_code("\"days\" 0") && !is_date_code("[Red]0"));
    }

    #[test]
    fn each_row_is_found_where_its_line_starts_and_a_cell_named_as_excel_names_it() {
        let rows: &[&[&str]] = &[&["item", "qty"], &["Tea", "2"]];
        let sheets = super::read(&workbook(&[("Q1 totals", rows)]), 1 << 20).unwrap();
        let starts: Vec<(&str, u32)> = (sheets.rows.iter())
            .map(|line| (&sheets.text[line.byte..line.byte + 3], line.row))
            .collect();
        assert_eq!(starts, [("ite", 1), ("Tea", 2)]);
        assert_eq!(reference("Q1 totals", 14, 1), "'Q1 totals'!B14");
        assert_eq!(reference("Lines", 2, 27), "Lines!AB2");
        assert_eq!(reference("Bob's", 1, 0), "'Bob''s'!A1");
    }

    #[test]
    fn a_cell_is_one_line() {
        assert_eq!(
            one_line("Green\ntea\twith\r\nlemon"),
            "Green tea with lemon"
        );
    }
}
