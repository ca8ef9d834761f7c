//! Never a silently short list: the rows of a table that no record came from, read again. A
//! model that stops after forty records, or skips a row now and then, leaves rows of a table
//! without a record, and the answer looks whole. The text's tables are known
//! ([`super::rows`]); a row is covered when a source of a record (valid or incomplete) starts in
//! it. Each round puts the uncovered rows under their table's header, in runs of fewer rows than
//! the round before ([`RUN_ROWS`]), and asks for their records; the rows still uncovered after
//! the last round are listed in `incomplete` (the row's text, what it lacks: a record) and
//! named in `trace.leftOut`.
//!
//! Only a table some record came from is counted: a table beside the records (a price list
//! under a letter) is not what was asked for.

use serde_json::{Value, json};

use super::judged::{Answers, Placement, Records, located};
use super::merge::Found;
use super::rows::{Row, Spliced, Table};
use crate::answer::format::Shape;
use crate::content::call::Call;
use crate::content::chunked::pump::{OnCut, OnStale, converse};
use crate::content::chunked::required::without_required;
use crate::content::chunked::split::Chunk;
use crate::content::chunked::{Chunking, runs};
use crate::error::StructureError;
use crate::outcome::{Incomplete, Match, Source, Span, Trace, Usage};

/// The most rows each round puts in one request: fewer each time, as a model that stopped
/// early or skipped a row in a long run reads a short one whole.
const RUN_ROWS: [usize; 3] = [32, 8, 2];

/// What reading rows again came to: the rows still without a record, and the iterations it
/// took.
#[derive(Debug, Default)]
pub(super) struct Reread {
    pub missing: Vec<Incomplete>,
    pub iterations: u32,
}

/// A row of one of the text's tables: the table's index and the row's.
type At = (usize, usize);

/// Reads again, round by round, the rows of `text`'s `tables` no record of `found` (valid,
/// incomplete; each a list per text read) came from, adding what the model finds to them.
pub(super) fn complete(
    call: Call<'_>,
    (text, tables): (&str, &[Table]),
    chunking: &Chunking,
    found: (&mut Vec<Vec<Found>>, &mut Vec<Vec<Found>>),
    usage: &mut Usage,
    trace: &mut Trace,
) -> Result<Reread, StructureError> {
    let (valid, incomplete) = found;
    let mut reread = Reread::default();
    if tables.is_empty() {
        return Ok(reread);
    }
    let lines = Lines::of(text, tables);
    lines.snap(valid.iter_mut().chain(incomplete.iter_mut()).flatten());
    lines.drop_misread(valid, incomplete);
    let counted = counted(tables, valid, incomplete);
    if counted.is_empty() {
        return Ok(reread);
    }
    let loose = without_required(&call.target.schema);
    for run_rows in RUN_ROWS {
        let uncovered = uncovered(tables, &counted, valid, incomplete);
        if uncovered.is_empty() {
            return Ok(reread);
        }
        let groups = groups(tables, &uncovered, run_rows, chunking.chunk_bytes);
        let spliced: Vec<Spliced<'_>> = (groups.iter())
            .map(|(table, rows)| Spliced::of(text, &tables[*table], rows))
            .collect();
        let parts: Vec<Chunk<'_>> = (spliced.iter())
            .map(|spliced| Chunk {
                text: &spliced.text,
                start: 0,
            })
            .collect();
        let mut runs = runs(call, &loose, &parts, Shape::Records, trace, |read| {
            Records {
                target: call.target,
                text: read,
                grounding: call.limits.grounding,
            }
        });
        trace.chunks += parts.len() as u32;
        let (caller, concurrent) = (call.caller(), chunking.max_concurrent);
        // A run whose answer was cut off is left out: its rows stay uncovered for the next
        // round's shorter runs.
        let on = (OnStale::GoOn, OnCut::Keep);
        converse(&mut runs, caller, concurrent, on, usage, trace)?;
        reread.iterations += runs.iter().map(|run| run.dialogue.iterations).sum::<u32>();
        let answers = Answers::of(runs, spliced.iter().map(Placement::Rows), trace);
        let schema = &call.target.schema;
        let (mut more, mut lacking) = located(answers.found, schema, call.limits.grounding);
        lines.snap(more.iter_mut().chain(lacking.iter_mut()).flatten());
        valid.extend(more);
        incomplete.extend(lacking);
        lines.drop_misread(valid, incomplete);
    }
    let uncovered = uncovered(tables, &counted, valid, incomplete);
    reread.missing = missing(text, tables, &uncovered, trace);
    Ok(reread)
}

/// The tables (by index) a record of `valid` or `incomplete` came from.
fn counted(tables: &[Table], valid: &[Vec<Found>], incomplete: &[Vec<Found>]) -> Vec<usize> {
    let starts = starts(valid, incomplete);
    (0..tables.len())
        .filter(|&table| {
            let rows = &tables[table].rows;
            let (first, last) = (&rows[0], &rows[rows.len() - 1]);
            let from = starts.partition_point(|&start| start < first.chars);
            starts
                .get(from)
                .is_some_and(|&start| start < last.end_chars)
        })
        .collect()
}

/// Where every source of the records starts (code points), in order.
fn starts(valid: &[Vec<Found>], incomplete: &[Vec<Found>]) -> Vec<usize> {
    let mut starts: Vec<usize> = (valid.iter().chain(incomplete))
        .flatten()
        .flat_map(|found| &found.sources)
        .filter_map(|source| Some(source.span.as_ref()?.start))
        .collect();
    starts.sort_unstable();
    starts
}

/// The rows of the `counted` tables no source of the records starts in.
fn uncovered(
    tables: &[Table],
    counted: &[usize],
    valid: &[Vec<Found>],
    incomplete: &[Vec<Found>],
) -> Vec<At> {
    let starts = starts(valid, incomplete);
    let mut found = Vec::new();
    for &table in counted {
        for (index, row) in tables[table].rows.iter().enumerate() {
            let from = starts.partition_point(|&start| start < row.chars);
            if !starts.get(from).is_some_and(|&start| start < row.end_chars) {
                found.push((table, index));
            }
        }
    }
    found
}

/// `uncovered` rows in runs of at most `run_rows` rows of one table, and at most `max_bytes`
/// bytes with their header.
fn groups<'t>(
    tables: &'t [Table],
    uncovered: &[At],
    run_rows: usize,
    max_bytes: usize,
) -> Vec<(usize, Vec<&'t Row>)> {
    let mut groups: Vec<(usize, Vec<&Row>)> = Vec::new();
    let mut bytes = 0;
    for &(table, index) in uncovered {
        let row = &tables[table].rows[index];
        let header = tables[table]
            .header
            .as_ref()
            .map_or(0, |header| header.len() + 1);
        let size = row.bytes.len() + 1;
        let fits = |group: &(usize, Vec<&Row>)| {
            group.0 == table && group.1.len() < run_rows && bytes + size <= max_bytes
        };
        match groups.last_mut() {
            Some(group) if fits(group) => {
                group.1.push(row);
                bytes += size;
            }
            _ => {
                groups.push((table, vec![row]));
                bytes = header + size;
            }
        }
    }
    groups
}

/// The rows still uncovered, as incomplete records (each with its row as its source) and as
/// lines of `trace.leftOut`, one per run of rows in a row.
fn missing(text: &str, tables: &[Table], uncovered: &[At], trace: &mut Trace) -> Vec<Incomplete> {
    let asked = RUN_ROWS.map(|rows| rows.to_string()).join(", ");
    let mut runs: Vec<(usize, usize, usize)> = Vec::new();
    for &(table, index) in uncovered {
        match runs.last_mut() {
            Some((at, _, last)) if *at == table && *last + 1 == index => *last = index,
            _ => runs.push((table, index, index)),
        }
    }
    for (table, first, last) in runs {
        let line = 1 + text[..tables[table].rows[first].bytes.start]
            .matches('\n')
            .count();
        let rows = match first == last {
            true => format!("row {} (line {line})", first + 1),
            false => format!("rows {}–{} (from line {line})", first + 1, last + 1),
        };
        trace.left_out.push(format!(
            "{rows} of table {}: the model gave no record for them, asked again in runs of \
             {asked} rows",
            table + 1
        ));
    }
    (uncovered.iter())
        .map(|&(table, index)| {
            let row = &tables[table].rows[index];
            let line = &text[row.bytes.clone()];
            let span = Span {
                start: row.chars,
                end: row.end_chars,
                text: line.to_owned(),
                utf16_start: row.utf16,
                utf16_end: row.utf16 + line.encode_utf16().count(),
            };
            Incomplete {
                record: Value::Object(serde_json::Map::new()),
                need: format!(
                    "no record was read from row {} of table {}: {}",
                    index + 1,
                    table + 1,
                    json!(span.text)
                ),
                sources: vec![Source::spanned(String::new(), Some(span), Match::Exact)],
            }
        })
        .collect()
}

/// The rows of every table of a text, in text order, to place a record's values at its row.
struct Lines<'t> {
    text: &'t str,
    /// Every table's rows, in text order.
    rows: Vec<&'t Row>,
}

impl<'t> Lines<'t> {
    fn of(text: &'t str, tables: &'t [Table]) -> Self {
        let mut rows: Vec<&Row> = tables.iter().flat_map(|table| &table.rows).collect();
        rows.sort_by_key(|row| row.chars);
        Lines { text, rows }
    }

    /// The row (by index) the code point `at` is in.
    fn row_at(&self, at: usize) -> Option<usize> {
        let after = self.rows.partition_point(|row| row.chars <= at);
        let row = after.checked_sub(1)?;
        (at < self.rows[row].end_chars).then_some(row)
    }

    /// Drops the records read amiss from a table, so that their rows count as uncovered and are
    /// read again: a record given twice (the same values at the same cells of one row), and a
    /// record that took its values from two rows, one of its cells another record's — a model
    /// that slips a row gives row 7's number with row 8's item, and row 8 again whole — or
    /// whose values are all single values (a row's record: one that lists rows in an array may
    /// span them), as a model that slipped for good gives each row's number with the next
    /// row's cells. Nothing a dropped record held is lost: each of its cells is another
    /// record's, or its row is read again (and named if it stays without a record).
    fn drop_misread(&self, valid: &mut [Vec<Found>], incomplete: &mut [Vec<Found>]) {
        type Cell = (usize, usize);
        let cells = |found: &Found| -> Vec<Cell> {
            (found.sources.iter())
                .filter_map(|source| source.span.as_ref())
                .filter(|span| self.row_at(span.start).is_some())
                .map(|span| (span.start, span.end))
                .collect()
        };
        let mut claims: std::collections::HashMap<Cell, usize> = Default::default();
        for found in valid.iter().chain(incomplete.iter()).flatten() {
            for cell in cells(found) {
                *claims.entry(cell).or_default() += 1;
            }
        }
        let mut seen: Vec<(&Value, Vec<Cell>)> = Vec::new();
        let mut keep: Vec<bool> = Vec::new();
        for found in valid.iter().chain(incomplete.iter()).flatten() {
            let mine = cells(found);
            let mut rows: Vec<usize> = mine.iter().filter_map(|c| self.row_at(c.0)).collect();
            rows.sort_unstable();
            rows.dedup();
            let shared = mine.iter().any(|cell| claims[cell] > 1);
            let twice = rows.len() == 1
                && (seen.iter()).any(|(record, at)| *record == &found.record && *at == mine);
            keep.push(!(twice || rows.len() > 1 && (shared || flat(&found.record))));
            if rows.len() == 1 {
                seen.push((&found.record, mine));
            }
        }
        let mut keep = keep.into_iter();
        for list in valid.iter_mut().chain(incomplete.iter_mut()) {
            list.retain(|_| keep.next().unwrap_or(true));
        }
    }

    /// Each record's values placed in the one row most of them are in: provenance knows one
    /// value at a time, and finds a `1` or a repeated name in another row; a value is placed at
    /// the cell of its row that is it, else where the row writes it, else stays.
    fn snap<'f>(&self, records: impl Iterator<Item = &'f mut Found>) {
        for found in records {
            let mut votes: Vec<(usize, usize)> = Vec::new();
            for row in
                (found.sources.iter()).filter_map(|source| self.row_at(source.span.as_ref()?.start))
            {
                match votes.iter_mut().find(|(seen, _)| *seen == row) {
                    Some((_, count)) => *count += 1,
                    None => votes.push((row, 1)),
                }
            }
            let Some(&(row, _)) = votes.iter().rev().max_by_key(|(_, count)| *count) else {
                continue;
            };
            let row = self.rows[row];
            let (start, end) = (row.chars, row.end_chars);
            let line = &self.text[row.bytes.clone()];
            for source in &mut found.sources {
                let value = match found.record.pointer(&source.pointer) {
                    Some(Value::String(value)) => value.clone(),
                    Some(value @ Value::Number(_)) => value.to_string(),
                    _ => String::new(),
                };
                let Some(span) = source.span.as_mut() else {
                    continue;
                };
                let inside = (start..end).contains(&span.start);
                let Some((at, written)) = cell_of(line, &value)
                    .map(|at| (at, value.as_str()))
                    .or_else(|| Some((place_in(line, &span.text, inside)?, span.text.as_str())))
                else {
                    continue;
                };
                let written = written.to_owned();
                span.start = row.chars + line[..at].chars().count();
                span.end = span.start + written.chars().count();
                span.utf16_start = row.utf16 + line[..at].encode_utf16().count();
                span.utf16_end = span.utf16_start + written.encode_utf16().count();
                if written == value {
                    source.matched = Match::Exact;
                }
                span.text = written;
            }
        }
    }
}

/// Whether `record` is an object of single values (no array, no object in it): a table row's.
fn flat(record: &Value) -> bool {
    (record.as_object()).is_some_and(|fields| {
        (fields.values()).all(|value| !value.is_array() && !value.is_object())
    })
}

/// Where in `line` (a byte) the cell that is `written` starts.
fn cell_of(line: &str, written: &str) -> Option<usize> {
    let parts = |c: Option<char>| c.is_none_or(|c| matches!(c, ',' | '\t' | ';' | '|' | '"' | ' '));
    (!written.is_empty()).then_some(())?;
    line.match_indices(written).map(|(at, _)| at).find(|&at| {
        parts(line[..at].chars().next_back()) && parts(line[at + written.len()..].chars().next())
    })
}

/// Where in `line` (a byte) the value written `written` is: the cell that is it, else (for a
/// value not already in the line) where the line writes it on its own.
fn place_in(line: &str, written: &str, inside: bool) -> Option<usize> {
    let alone = |c: Option<char>| c.is_none_or(|c| !c.is_alphanumeric());
    cell_of(line, written).or_else(|| {
        (!inside && !written.is_empty()).then(|| {
            line.match_indices(written).map(|(at, _)| at).find(|&at| {
                alone(line[..at].chars().next_back())
                    && alone(line[at + written.len()..].chars().next())
            })
        })?
    })
}
