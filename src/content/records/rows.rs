//! The rows of the tables a text holds, so that records mode can tell a list the model cut short
//! from a text with few records: a table is a run of lines whose cells one delimiter parts — a
//! tab (how the readers write a web page's, a Word document's and a spreadsheet's rows), `|`
//! (Markdown), `,` or `;` (CSV) — its first line the header, unless that line reads as its rows
//! do (a number where they have numbers: a table without a header, whose first line is a row).
//! The header written again (a table printed over pages) and a Markdown rule are no rows, and a
//! table broken by a page's furniture goes on where its header comes back. Each row is a line
//! of the text, found in one pass. (A CSV field that holds a line break parts its row in two.)
//!
//! ```
//! use structure::content::records::rows::tables;
//!
//! let text = "Orders:\nid,item,qty\n1,tea,2\n2,cake,1\n\nid,item,qty\n3,jam,4\nThanks.";
//! let found = tables(text);
//! assert_eq!(found.len(), 1);
//! let rows: Vec<&str> = found[0].rows.iter().map(|row| &text[row.bytes.clone()]).collect();
//! assert_eq!(rows, ["1,tea,2", "2,cake,1", "3,jam,4"]);
//! assert_eq!(found[0].header.clone().map(|header| &text[header]), Some("id,item,qty"));
//! ```

use std::ops::Range;

use crate::outcome::Source;

/// The delimiters a row's cells may be parted by, the most structural first.
const DELIMITERS: [char; 4] = ['\t', '|', ',', ';'];
/// The fewest rows under a header that make a table (fewer are prose as likely as a table).
const MIN_ROWS: usize = 2;
/// The most lines a table may be broken by (a page's footer and header, blank lines) and go
/// on when its header comes back.
const MAX_BREAK_LINES: usize = 8;

/// A table of the text: its header line (none when its first line is a row), and its rows, in
/// byte offsets of the text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Table {
    pub header: Option<Range<usize>>,
    pub rows: Vec<Row>,
    /// What parts its cells: a tab, `|`, `,` or `;`.
    pub delimiter: char,
}

/// One row: the bytes of its line (without the line break), where it starts in code points and
/// UTF-16 code units (the units a source counts in), and the code point after it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Row {
    pub bytes: Range<usize>,
    pub chars: usize,
    pub utf16: usize,
    pub end_chars: usize,
}

/// Every table `text` holds, in text order.
pub fn tables(text: &str) -> Vec<Table> {
    let lines = lines(text);
    let mut found: Vec<Table> = Vec::new();
    let mut at = 0;
    while at < lines.len() {
        let header = &text[lines[at].bytes.clone()];
        let Some((delimiter, cells)) = shape(header) else {
            at += 1;
            continue;
        };
        let (mut rows, next) = rows_under(text, &lines, at, delimiter, cells);
        if rows.len() < MIN_ROWS {
            at += 1;
            continue;
        }
        let first = lines[at].clone();
        let header = if reads_as_row(header, &text[rows[0].bytes.clone()], delimiter) {
            rows.insert(0, first);
            None
        } else {
            Some(first.bytes)
        };
        found.push(Table {
            header,
            rows,
            delimiter,
        });
        at = next;
    }
    found
}

/// The rows of the table whose header is line `header` (parted by `delimiter` into `cells`),
/// and the line after the table.
fn rows_under(
    text: &str,
    lines: &[Row],
    header: usize,
    delimiter: char,
    cells: usize,
) -> (Vec<Row>, usize) {
    let header_text = text[lines[header].bytes.clone()].trim();
    let mut rows = Vec::new();
    let mut at = header + 1;
    while at < lines.len() {
        let line = &text[lines[at].bytes.clone()];
        if line.trim() == header_text || is_rule(line) {
            at += 1;
            continue;
        }
        if count(line, delimiter) >= 1 && !line.trim().is_empty() {
            rows.push(lines[at].clone());
            at += 1;
            continue;
        }
        // A break: the table goes on only where its header comes back soon.
        let back = (at + 1..lines.len().min(at + 1 + MAX_BREAK_LINES))
            .find(|&next| text[lines[next].bytes.clone()].trim() == header_text);
        match back {
            Some(next) => at = next + 1,
            None => break,
        }
    }
    if !reads_as_table(text, &rows, delimiter, cells) {
        rows.clear();
    }
    (rows, at)
}

/// Whether `rows` parted by `delimiter` read as a table's, not as prose: a tab or a pipe parts
/// cells whatever their count (ragged rows stay rows); a comma or a semicolon, which prose
/// writes too, only where nine rows in ten have the header's `cells` and most do not end as a
/// sentence does.
fn reads_as_table(text: &str, rows: &[Row], delimiter: char, cells: usize) -> bool {
    if matches!(delimiter, '\t' | '|') {
        return true;
    }
    let lines = || rows.iter().map(|row| text[row.bytes.clone()].trim());
    let even = lines()
        .filter(|line| count(line, delimiter) + 1 == cells)
        .count();
    let sentences = lines()
        .filter(|line| line.ends_with(['.', '!', '?']))
        .count();
    even * 10 >= rows.len() * 9 && sentences * 2 < rows.len()
}

/// The delimiter `line` parts into cells, and how many cells: the first of [`DELIMITERS`]
/// it holds outside quotes.
fn shape(line: &str) -> Option<(char, usize)> {
    if line.trim().is_empty() || is_rule(line) {
        return None;
    }
    DELIMITERS
        .iter()
        .map(|&delimiter| (delimiter, count(line, delimiter)))
        .find(|&(_, found)| found >= 1)
        .map(|(delimiter, found)| (delimiter, found + 1))
}

/// The cells of `line` parted by `delimiter` outside double quotes, each as the byte range of
/// its text (its quotes and the spaces around it left out; a Markdown row's outer pipes part
/// nothing).
pub fn cells(line: &str, delimiter: char) -> Vec<Range<usize>> {
    let mut found = Vec::new();
    let (mut quoted, mut start) = (false, 0);
    for (at, character) in line.char_indices() {
        match character {
            '"' => quoted = !quoted,
            _ if character == delimiter && !quoted => {
                found.push(start..at);
                start = at + character.len_utf8();
            }
            _ => {}
        }
    }
    found.push(start..line.len());
    if delimiter == '|' {
        if line[found[0].clone()].trim().is_empty() && found.len() > 1 {
            found.remove(0);
        }
        if found
            .last()
            .is_some_and(|last| line[last.clone()].trim().is_empty())
            && found.len() > 1
        {
            found.pop();
        }
    }
    (found.into_iter())
        .map(|cell| {
            let text = &line[cell.clone()];
            let trimmed = text.trim();
            let from = cell.start + (text.len() - text.trim_start().len());
            let quoted = trimmed.len() >= 2 && trimmed.starts_with('"') && trimmed.ends_with('"');
            match quoted {
                true => from + 1..from + trimmed.len() - 1,
                false => from..from + trimmed.len(),
            }
        })
        .collect()
}

/// How many times `delimiter` parts `line` outside double quotes (a CSV field may hold one).
fn count(line: &str, delimiter: char) -> usize {
    let mut quoted = false;
    let mut found = 0;
    for character in line.chars() {
        match character {
            '"' => quoted = !quoted,
            _ if character == delimiter && !quoted => found += 1,
            _ => {}
        }
    }
    // A Markdown row's outer pipes part nothing.
    if delimiter == '|' {
        let trimmed = line.trim();
        found -= usize::from(trimmed.starts_with('|') && found > 0);
        found -= usize::from(trimmed.ends_with('|') && trimmed.len() > 1 && found > 0);
    }
    found
}

/// Whether the first line of a table reads as `row` does: a number in each cell where the row
/// has one, and at least one.
fn reads_as_row(first: &str, row: &str, delimiter: char) -> bool {
    let numeric = |line: &str| -> Vec<bool> {
        (line.split(delimiter))
            .map(|cell| {
                let cell = cell.trim().trim_matches('"');
                !cell.is_empty() && cell.chars().any(|c| c.is_ascii_digit())
            })
            .collect()
    };
    let (first, row) = (numeric(first), numeric(row));
    first == row && first.contains(&true)
}

/// A Markdown table's rule: `|---|:--:|`.
fn is_rule(line: &str) -> bool {
    let trimmed = line.trim();
    trimmed.contains('-') && trimmed.chars().all(|c| matches!(c, '|' | '-' | ':' | ' '))
}

/// The lines of `text`, each as a row would be, with where it starts and ends in every unit,
/// counted in one pass.
fn lines(text: &str) -> Vec<Row> {
    let (mut chars, mut utf16) = (0, 0);
    let mut found = Vec::new();
    let mut start = 0;
    for piece in text.split_inclusive('\n') {
        let content = piece.trim_end_matches('\n').trim_end_matches('\r');
        found.push(Row {
            bytes: start..start + content.len(),
            chars,
            utf16,
            end_chars: chars + content.chars().count(),
        });
        chars += piece.chars().count();
        utf16 += piece.encode_utf16().count();
        start += piece.len();
    }
    found
}

/// Rows of a table put together, under its header, as one text a model reads again; and where
/// each piece of it stands in the whole text, so that what the model finds is placed there.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Spliced<'t> {
    /// The text sent: the header, then each row, a line each.
    pub text: String,
    pieces: Vec<Piece<'t>>,
    /// The first of `pieces` that is a row (1 under a header).
    rows_from: usize,
}

/// A line of a spliced text: where it starts there (code points), and its place in the whole.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Piece<'t> {
    from: usize,
    line: &'t str,
    chars: usize,
    utf16: usize,
}

impl<'t> Spliced<'t> {
    /// `rows` of `table` (of `whole`), under the table's header.
    pub fn of(whole: &'t str, table: &Table, rows: &[&Row]) -> Self {
        let mut spliced = Spliced {
            text: String::new(),
            pieces: Vec::with_capacity(rows.len() + 1),
            rows_from: usize::from(table.header.is_some()),
        };
        let mut from = 0;
        let header = (table.header.clone()).map(|bytes| {
            let before = &whole[..bytes.start];
            (bytes, before.chars().count(), before.encode_utf16().count())
        });
        let lines = header
            .into_iter()
            .chain((rows.iter()).map(|row| (row.bytes.clone(), row.chars, row.utf16)));
        for (bytes, chars, utf16) in lines {
            let line = &whole[bytes];
            spliced.text.push_str(line);
            spliced.text.push('\n');
            spliced.pieces.push(Piece {
                from,
                line,
                chars,
                utf16,
            });
            from += line.chars().count() + 1;
        }
        spliced
    }

    /// Where its first row starts in the whole text (code points).
    pub fn first(&self) -> usize {
        self.pieces
            .get(self.rows_from)
            .map_or(0, |piece| piece.chars)
    }

    /// `sources` found in the spliced text, placed in the whole; a span that runs over a line's
    /// end is cut there (no value runs from one row into the next).
    pub fn place(&self, mut sources: Vec<Source>) -> Vec<Source> {
        for span in sources.iter_mut().filter_map(|source| source.span.as_mut()) {
            let after = self
                .pieces
                .partition_point(|piece| piece.from <= span.start);
            let Some(piece) = after.checked_sub(1).map(|at| &self.pieces[at]) else {
                continue;
            };
            let length = piece.line.chars().count();
            let start = (span.start - piece.from).min(length);
            let end = (span.end - piece.from).clamp(start, length);
            let utf16 = |to: usize| -> usize {
                piece.utf16
                    + piece
                        .line
                        .chars()
                        .take(to)
                        .map(char::len_utf16)
                        .sum::<usize>()
            };
            span.utf16_start = utf16(start);
            span.utf16_end = utf16(end);
            span.start = piece.chars + start;
            span.end = piece.chars + end;
        }
        sources
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rows_of(text: &str) -> Vec<Vec<&str>> {
        tables(text)
            .iter()
            .map(|table| {
                table
                    .rows
                    .iter()
                    .map(|row| &text[row.bytes.clone()])
                    .collect()
            })
            .collect()
    }

    #[test]
    fn a_tab_separated_table_and_a_markdown_one() {
        let text = "Item\tPrice\nTea\t4.50\nCake\t3.00\n\nprose, with a comma\n\n\
                    | a | b |\n|---|---|\n| 1 | 2 |\n| 3 | 4 |\n";
        assert_eq!(
            rows_of(text),
            [
                vec!["Tea\t4.50", "Cake\t3.00"],
                vec!["| 1 | 2 |", "| 3 | 4 |"]
            ]
        );
    }

    #[test]
    fn a_table_printed_over_pages_is_one_its_headers_no_rows() {
        let text = "id;name\n1;Ada\n2;Grace\nPage 1 of 2\n\u{c}\nid;name\n3;Alan\n4;Zoë\n";
        assert_eq!(rows_of(text), [vec!["1;Ada", "2;Grace", "3;Alan", "4;Zoë"]]);
        let table = &tables(text)[0];
        let zoe = &table.rows[3];
        assert_eq!(zoe.chars, text[..zoe.bytes.start].chars().count());
    }

    #[test]
    fn prose_is_no_table_and_quoted_commas_are_no_cells() {
        assert!(tables("Hello, world.\nI came, I saw, I won.\nYes, and no.").is_empty());
        assert!(tables("Dear Ada,\nOrder 1 by Kim, 3 units.\nOrder 2 by Ng, 1 unit.\n").is_empty());
        let text = "name,city\n\"Kim, Zoë\",Kraków\nAda,London\n";
        assert_eq!(rows_of(text), [vec!["\"Kim, Zoë\",Kraków", "Ada,London"]]);
    }

    #[test]
    fn ragged_rows_stay_rows_and_a_table_without_rows_is_none() {
        let text = "a\tb\tc\n1\t2\t3\n4\t5\n6\t7\t8\n";
        assert_eq!(rows_of(text), [vec!["1\t2\t3", "4\t5", "6\t7\t8"]]);
        // Commas part prose too: a CSV's rows are even.
        assert!(tables("a,b,c\n1,2,3\n4,5\n6,7,8\n").is_empty());
        assert!(tables("a,b\n").is_empty());
        assert!(tables("").is_empty());
    }

    #[test]
    fn what_is_found_in_rows_read_again_is_placed_where_the_rows_are() {
        use crate::content::grounding::provenance::span_at;
        use crate::outcome::Match;
        let whole = "Zoë's orders\nid,name\n1,Ada\n2,Łukasz 🚜\n3,Grace\n";
        let table = &tables(whole)[0];
        let spliced = Spliced::of(whole, table, &[&table.rows[1], &table.rows[2]]);
        assert_eq!(spliced.text, "id,name\n2,Łukasz 🚜\n3,Grace\n");
        let at = spliced.text.find("Grace").unwrap();
        let source = Source {
            pointer: "/name".to_owned(),
            span: Some(span_at(&spliced.text, at..at + 5)),
            matched: Match::Exact,
            page: None,
            boxes: Vec::new(),
            cell: None,
            confidence: None,
        };
        let placed = spliced.place(vec![source]);
        let at = whole.find("Grace").unwrap();
        assert_eq!(placed[0].span, Some(span_at(whole, at..at + 5)));
        assert_eq!(
            spliced.first(),
            whole[..whole.find("2,").unwrap()].chars().count()
        );
    }

    #[test]
    fn a_rows_cells_without_their_quotes_and_spaces() {
        let texts = |line: &'static str, delimiter| -> Vec<&'static str> {
            (cells(line, delimiter).into_iter())
                .map(|cell| &line[cell])
                .collect()
        };
        assert_eq!(
            texts("ORD-1, \"Kim, Zoë\" ,3", ','),
            ["ORD-1", "Kim, Zoë", "3"]
        );
        assert_eq!(texts("| a | b |", '|'), ["a", "b"]);
        assert_eq!(texts("x\t\ty", '\t'), ["x", "", "y"]);
    }

    #[test]
    fn a_first_line_that_reads_as_a_row_is_one() {
        let text = "ORD-1,tea,2\nORD-2,cake,1\nORD-3,jam,4\n";
        let found = tables(text);
        assert_eq!(found[0].header, None);
        assert_eq!(
            rows_of(text),
            [vec!["ORD-1,tea,2", "ORD-2,cake,1", "ORD-3,jam,4"]]
        );
    }
}
