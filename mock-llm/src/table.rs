//! A task the mock model can do for tables: line items written as a table (CSV, or cells parted
//! by tabs, as the readers write a web page's, a Word document's or a spreadsheet's rows), and
//! a reader that answers their records as a model that tires does — at most `limit` records an
//! answer, skipping every `skip_every`-th row it is sent — the way users see lists cut short.
//!
//! ```
//! use mock_llm::table::{line_items, TableReader};
//!
//! let (csv, items) = line_items(100, ',');
//! assert_eq!(items.len(), 100);
//! let reader = TableReader { limit: 40, skip_every: 7, fields: None };
//! let records = reader.answer(&csv)["records"].as_array().unwrap().clone();
//! assert_eq!(records.len(), 40);
//! assert_eq!(records[0], items[0]);
//! assert_eq!(records[6], items[7], "the seventh row is skipped");
//! ```

use serde_json::{Value, json};

/// The JSON Schema of one line item: the table's columns by their headers' names.
pub fn line_item_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "line": { "type": "string", "pattern": "^L[0-9]{4}$" },
            "item": { "type": "string" },
            "quantity": { "type": "integer", "minimum": 1 },
            "price": { "type": "number" }
        },
        "required": ["line", "item", "quantity", "price"],
        "additionalProperties": false
    })
}

/// The header a person writes over line items, naming none of the schema's properties as the
/// schema does.
pub const PERSONS_HEADER: [&str; 4] = ["Line no", "Description", "Qty", "Each"];

/// A table of `count` line items, its cells parted by `delimiter`, under a header naming the
/// schema's properties; and each item as a record.
pub fn line_items(count: usize, delimiter: char) -> (String, Vec<Value>) {
    headed_line_items(count, delimiter, ["line", "item", "quantity", "price"])
}

/// [`line_items`] under `header`.
pub fn headed_line_items(count: usize, delimiter: char, header: [&str; 4]) -> (String, Vec<Value>) {
    let mut text = header.join(&delimiter.to_string());
    text.push('\n');
    let items: Vec<Value> = (1..=count)
        .map(|n| {
            json!({
                "line": format!("L{n:04}"),
                "item": format!("Widget {} {}", ["Zoë", "Łódź", "Kim", "Ng"][n % 4], n * 7 % 1000),
                "quantity": 1 + n % 9,
                "price": (n % 50) as f64 + 0.5,
            })
        })
        .collect();
    for item in &items {
        let cells = [
            item["line"].as_str().unwrap_or_default().to_owned(),
            item["item"].as_str().unwrap_or_default().to_owned(),
            item["quantity"].to_string(),
            item["price"].to_string(),
        ];
        text.push_str(&cells.join(&delimiter.to_string()));
        text.push('\n');
    }
    (text, items)
}

/// A model that reads the rows of the table it is sent under the table's header, tiring.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TableReader {
    /// The most records an answer holds.
    pub limit: usize,
    /// Every row at this place of those it is sent is skipped (0: none).
    pub skip_every: usize,
    /// The fields it gives the columns, in order (`None`: the header's names), as a model
    /// reads `Qty` as `quantity`.
    pub fields: Option<[&'static str; 4]>,
}

impl TableReader {
    /// Its answer to `text`: `{"records": [...]}`, the rows under the first header it finds
    /// (none without one: rows without their header say nothing).
    pub fn answer(&self, text: &str) -> Value {
        let lines: Vec<&str> = text.lines().collect();
        let Some((at, delimiter)) = header(&lines) else {
            return json!({ "records": [] });
        };
        let names: Vec<&str> = match self.fields {
            Some(fields) => fields.to_vec(),
            None => lines[at].split(delimiter).map(str::trim).collect(),
        };
        let records: Vec<Value> = lines[at + 1..]
            .iter()
            .filter(|line| line.contains(delimiter) && **line != lines[at])
            .enumerate()
            .filter(|(place, _)| self.skip_every == 0 || (place + 1) % self.skip_every != 0)
            .map(|(_, line)| record(&names, line, delimiter))
            .take(self.limit)
            .collect();
        json!({ "records": records })
    }
}

/// The first line that names columns (a delimiter, no digits), and its delimiter.
fn header(lines: &[&str]) -> Option<(usize, char)> {
    lines.iter().enumerate().find_map(|(at, line)| {
        let delimiter = ['\t', ',', ';'].into_iter().find(|&d| line.contains(d))?;
        (!line.chars().any(|c| c.is_ascii_digit())).then_some((at, delimiter))
    })
}

/// A row's cells as a record, by its header's `names`: numbers as numbers.
fn record(names: &[&str], line: &str, delimiter: char) -> Value {
    let cells = line.split(delimiter).map(str::trim);
    let fields = names.iter().zip(cells).map(|(name, cell)| {
        let value = match cell.parse::<i64>() {
            Ok(whole) => json!(whole),
            Err(_) => cell
                .parse::<f64>()
                .map_or_else(|_| json!(cell), |n| json!(n)),
        };
        ((*name).to_owned(), value)
    });
    Value::Object(fields.collect())
}
