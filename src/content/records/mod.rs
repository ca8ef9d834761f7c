//! Groundwork for records mode (issue 18; not wired to any surface yet): a long text split into
//! chunks a model's context holds, with a small overlap, and the records found per chunk merged
//! back with the duplicates the overlaps produce dropped.
//!
//! ```
//! use structure::content::records::{chunks, merge, Found};
//! use serde_json::json;
//!
//! let text = "Order 1 by Ada.\n\nOrder 2 by Grace.\n\nOrder 3 by Alan.";
//! let parts = chunks(text, 36, 18);
//! assert!(parts.len() > 1 && parts.iter().all(|chunk| chunk.text.len() <= 36));
//! assert!(parts.iter().all(|chunk| &text[chunk.start..chunk.start + chunk.text.len()] == chunk.text));
//!
//! // The same record seen at the same place by two overlapping chunks is one record.
//! let ada = |start| Found { record: json!({ "order": 1 }), spans: vec![start..start + 7] };
//! let merged = merge(vec![vec![ada(0)], vec![ada(0)]]);
//! assert_eq!(merged.len(), 1);
//! ```

mod chunk;
mod merge;

pub use chunk::{Chunk, chunks};
pub use merge::{Found, merge};
