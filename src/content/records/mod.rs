//! Records mode (`records: true`): every record a text holds, each valid against the schema of
//! one record. A long text is split into chunks a model's context holds, with a small overlap;
//! each chunk has its own conversation (reasons and `maxLoops` per chunk), their calls are sent
//! together, and the records found per chunk are merged back with the duplicates the overlaps
//! produce dropped.
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
//! // The same record seen by two overlapping chunks is one record.
//! let order = || Found { record: json!({ "order": 1 }), sources: Vec::new(), at: 0 };
//! let merged = merge(vec![vec![order()], vec![order()]]);
//! assert_eq!(merged.len(), 1);
//! ```

mod anchor;
mod columns;
mod extract;
mod judged;
mod merge;
mod reread;
pub mod rows;

pub use crate::content::chunked::split::{Chunk, chunks};
pub(crate) use extract::extract;
pub use merge::{Found, merge};
