//! Insights per schema (`GET /v1/insights`, the console's Insights view): for the last 24
//! hours and the last 7 days, each schema's calls, status mix, iterations, the reasons fed back
//! most often and where, tokens and latency — which schema makes the model loop, at a glance.
//!
//! ```
//! use structure::insights::{Call, Window, read, record};
//! use structure::ports::MemoryKeyValue;
//! use structure::scope::Scope;
//!
//! let store = MemoryKeyValue::default();
//! let scope = Scope::new("acme", None).unwrap();
//! let call = Call { status: "ok".into(), iterations: 2, reasons: vec![("type".into(), "/email".into())],
//!                   prompt_tokens: 120, completion_tokens: 30, latency_ms: 800 };
//! let shard = 7; // any number: a call counts in one of a few documents, picked at random
//! record(&store, &scope, "contact", &call, 1_800_000_000_000, shard).unwrap();
//! let day = read(&store, &scope, Window::Day, 1_800_000_000_000).unwrap();
//! assert_eq!(day[0].1.pointers["/email"], 1);
//! ```
//!
//! | file | what it is |
//! |---|---|
//! | `tally` | the counts of one schema over one period |
//! | `kept` | the counts in the key-value store: 24 hours and 7 days a schema, in shards, bounded per level |
//! | `label` | what a call's schema is called: a name only once it resolved, else how it was given |
//! | `report` | the counts as JSON and as CSV |

mod kept;
mod label;
mod report;
mod tally;

pub use kept::{MAX_SCHEMAS, OTHER, SHARDS, Window, read, record};
pub use label::{Asked, schema_label};
pub use report::{csv, json};
pub use tally::{Call, LATENCY_BOUNDS_MS, MAX_POINTERS, Tally};
