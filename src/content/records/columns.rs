//! Cheap where the table says it all: a table whose header names the record schema's
//! properties (`Unit price` for `unit_price` or for a property titled so) is read without a
//! model, a record per row, each value from its cell as the schema types it (a number, an
//! integer, a boolean, text), its source the cell. A row whose cells do not make a valid record
//! (a word where a number goes, a value its pattern refuses, one it requires left empty) is left
//! to the model, as every row of a table whose header does not name what the schema requires.
//! A text that is only such tables (a spreadsheet, a CSV; the prompt and a sheet's title beside
//! them) is not read whole: only its rows the columns did not give are, under their header
//! (`super::reread`); with none, no call is made.

use serde_json::{Map, Value};

use super::merge::Found;
use super::rows::{Table, cells};
use crate::outcome::{Match, Source, Span};
use crate::schema::TargetSchema;
use crate::schema::walk::{self, escape};

/// The most text outside the tables (the prompt, a sheet's title) a text read without a model
/// may hold: more may hold records of its own.
const MAX_PROSE_BYTES: usize = 512;

/// What the tables of a text gave without a model.
#[derive(Debug, Default)]
pub(super) struct Direct {
    /// A record per row read, in text order.
    pub found: Vec<Found>,
    /// Whether the text is only tables whose headers name the properties: no part of it needs
    /// reading whole, only the rows they did not give (`super::reread`).
    pub whole: bool,
}

/// A column of a table that names a property: its index, the property, its schema.
type Column<'s> = (usize, &'s str, &'s Value);

/// The records the tables of `text` (`tables`) give of `target`'s properties by their headers.
pub(super) fn read(text: &str, tables: &[Table], target: &TargetSchema) -> Direct {
    let root = target.schema.as_ref();
    let node = walk::follow(root, root);
    let (Some(Value::Object(properties)), required) =
        (node.get("properties"), node.get("required"))
    else {
        return Direct::default();
    };
    let required: Vec<&str> = (required.and_then(Value::as_array).into_iter().flatten())
        .filter_map(Value::as_str)
        .collect();
    let mut direct = Direct::default();
    let mut every_table = !tables.is_empty();
    for table in tables {
        let Some(columns) = columns(text, table, root, properties, &required) else {
            every_table = false;
            continue;
        };
        let rows = table.rows.iter();
        (direct.found)
            .extend(rows.filter_map(|row| record(text, table.delimiter, row, &columns, target)));
    }
    direct.whole =
        every_table && !direct.found.is_empty() && prose(text, tables) <= MAX_PROSE_BYTES;
    direct
}

/// The columns of `table` its header names properties by, when they name every property
/// `required` lists (and two, when none is required).
fn columns<'s>(
    text: &str,
    table: &Table,
    root: &'s Value,
    properties: &'s Map<String, Value>,
    required: &[&str],
) -> Option<Vec<Column<'s>>> {
    let header = &text[table.header.clone()?];
    let named: Vec<Column<'s>> = (cells(header, table.delimiter).into_iter().enumerate())
        .filter_map(|(index, cell)| {
            let name = folded(&header[cell]);
            let (property, schema) = properties.iter().find(|(property, schema)| {
                let schema = walk::follow(root, schema);
                let title = schema.get("title").and_then(Value::as_str);
                folded(property) == name || title.is_some_and(|title| folded(title) == name)
            })?;
            Some((index, property.as_str(), walk::follow(root, schema)))
        })
        .collect();
    let names_required = (required.iter()).all(|needed| named.iter().any(|(_, p, _)| p == needed));
    let enough = if required.is_empty() {
        named.len() >= 2.min(properties.len())
    } else {
        true
    };
    (names_required && enough && !named.is_empty()).then_some(named)
}

/// The record `row` makes of `columns`, when it is valid against `target`.
fn record(
    text: &str,
    delimiter: char,
    row: &super::rows::Row,
    columns: &[Column<'_>],
    target: &TargetSchema,
) -> Option<Found> {
    let line = &text[row.bytes.clone()];
    let cells = cells(line, delimiter);
    let mut record = Map::new();
    let mut sources = Vec::new();
    for &(index, property, schema) in columns {
        let Some(cell) = cells.get(index) else {
            continue;
        };
        let written = &line[cell.clone()];
        if written.is_empty() {
            continue;
        }
        let value = typed(written, schema)?;
        // A number written as JSON writes it (`4.5`, not `4.50`) is exact.
        let exact = match &value {
            Value::String(text) => text == written,
            other => {
                let shown = other.to_string();
                shown.as_str() == written
            }
        };
        let before = &line[..cell.start];
        let start = row.chars + before.chars().count();
        let utf16_start = row.utf16 + before.encode_utf16().count();
        let span = Span {
            start,
            end: start + written.chars().count(),
            text: written.to_owned(),
            utf16_start,
            utf16_end: utf16_start + written.encode_utf16().count(),
        };
        let matched = if exact {
            Match::Exact
        } else {
            Match::Normalized
        };
        sources.push(Source::spanned(
            format!("/{}", escape(property)),
            Some(span),
            matched,
        ));
        record.insert(property.to_owned(), value);
    }
    let record = Value::Object(record);
    target.compiled.is_valid(&record).then_some(Found {
        record,
        sources,
        at: row.chars,
    })
}

/// A cell's text as the value `schema` types it; `None` when it cannot be one.
fn typed(written: &str, schema: &Value) -> Option<Value> {
    let types: Vec<&str> = match schema.get("type") {
        Some(Value::String(one)) => vec![one.as_str()],
        Some(Value::Array(many)) => many.iter().filter_map(Value::as_str).collect(),
        _ => vec!["string"],
    };
    types.into_iter().find_map(|kind| match kind {
        "integer" => written.parse::<i64>().ok().map(Value::from),
        "number" => {
            let number: f64 = written.parse().ok()?;
            let whole = number.fract() == 0.0 && number.abs() < 9e15 && !written.contains('.');
            match whole {
                true => Some(Value::from(number as i64)),
                false => serde_json::Number::from_f64(number).map(Value::Number),
            }
        }
        "boolean" => match written.to_ascii_lowercase().as_str() {
            "true" | "yes" => Some(Value::Bool(true)),
            "false" | "no" => Some(Value::Bool(false)),
            _ => None,
        },
        "string" => Some(Value::String(written.to_owned())),
        _ => None,
    })
}

/// A header's or a property's name folded for matching: letters and digits, lower case.
fn folded(name: &str) -> String {
    (name.chars())
        .filter(|c| c.is_alphanumeric())
        .flat_map(char::to_lowercase)
        .collect()
}

/// How many bytes of `text`'s lines are neither a row of its tables nor a header of one
/// (written again on each page or not).
fn prose(text: &str, tables: &[Table]) -> usize {
    let rows: std::collections::HashSet<usize> = (tables.iter())
        .flat_map(|table| table.rows.iter().map(|row| row.bytes.start))
        .collect();
    let headers: Vec<&str> = (tables.iter())
        .filter_map(|table| Some(text[table.header.clone()?].trim()))
        .collect();
    let mut start = 0;
    let mut prose = 0;
    for line in text.split('\n') {
        let at = start;
        start += line.len() + 1;
        if !rows.contains(&at) && !headers.contains(&line.trim()) {
            prose += line.trim().len();
        }
    }
    prose
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cell_is_typed_as_its_property() {
        let number = serde_json::json!({ "type": "number" });
        assert_eq!(typed("4.50", &number), Some(serde_json::json!(4.5)));
        assert_eq!(typed("3", &number), Some(serde_json::json!(3)));
        assert_eq!(typed("three", &number), None);
        let flag = serde_json::json!({ "type": ["boolean", "null"] });
        assert_eq!(typed("Yes", &flag), Some(Value::Bool(true)));
        assert_eq!(
            typed("Unit price", &serde_json::json!({})),
            Some(serde_json::json!("Unit price"))
        );
        assert_eq!(folded("Unit price"), folded("unit_price"));
    }
}
