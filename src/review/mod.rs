//! Review: a person confirms what the model was unsure of before the result is used. With
//! `structure_review` at `doubtful` (or a schema's `"x-structure-review": "doubtful"`), a call
//! whose result holds a value in doubt still answers at once, and the result waits in the
//! tenant's queue in the store, its `review` saying where:
//!
//! ```
//! use structure::outcome::{Answer, Match, Outcome, ReviewStatus, Source, Trace, Usage};
//! use structure::ports::{MemoryKeyValue, Ports, SystemClock};
//! use structure::review::{self, Queue};
//! use structure::settings::ReviewPolicy;
//! # use structure::ports::{Config, HttpRequest, HttpResponse, Transport, TransportError};
//! # struct NoModel;
//! # impl Transport for NoModel {
//! #     fn send(&self, _: &HttpRequest) -> Result<HttpResponse, TransportError> { unreachable!() }
//! # }
//! # struct NoConfig;
//! # impl Config for NoConfig { fn get(&self, _: &str) -> Result<Option<String>, String> { Ok(None) } }
//!
//! let schema = serde_json::json!({ "type": "object", "properties": { "total": { "type": "number" } } });
//! let derived = Source::spanned("/total".into(), None, Match::Derived);
//! let outcome = Outcome {
//!     answer: Answer::Ok(serde_json::json!({ "total": 12.5 })),
//!     sources: vec![Source { confidence: Some(0.41), ..derived }],
//!     partial: None, incomplete: None, schema_origin: "inline".into(), iterations: 1,
//!     usage: Usage::default(), trace: Trace::default(), text: None, review: None,
//! };
//!
//! let key_value = MemoryKeyValue::default();
//! let ports = Ports { transport: &NoModel, config: &NoConfig, key_value: &key_value, clock: &SystemClock };
//! let scope = structure::Scope::default();
//! let sent = review::Sent {
//!     schema: &schema, schema_name: "inline", records: false, text: "Total: twelve fifty", threshold: 0.8,
//!     document: None,
//! };
//! let ticket = review::send(ReviewPolicy::Doubtful, &outcome, &sent, &scope, &ports)?.unwrap();
//! assert_eq!(ticket.status, ReviewStatus::Pending);
//! assert_eq!(ticket.fields[0].pointer, "/total");
//!
//! let queue = Queue::new(&scope, &ports);
//! assert_eq!(queue.list(ReviewStatus::Pending)?.len(), 1);
//! # Ok::<(), structure::StructureError>(())
//! ```
//!
//! A reviewer claims an item ([`Queue::claim`]: one reviewer at a time), and confirms or
//! corrects its data ([`Queue::submit`]): an edit is checked against the schema and its rules
//! by the validator every answer goes through, so a reviewed result is never half valid. The
//! HTTP API serves the queue to the `reviewer` role ([`crate::http_api`], `/v1/review`); a
//! reviewed result goes to the operator's webhook, signed.

pub mod corrections;
mod doubt;
pub mod example;
mod queue;
mod webhook;

pub use doubt::doubts;
pub use queue::{Claim, Item, Queue, Refused, Reviewed, Sent, Summary, item_key};
pub use webhook::Delivery;

use serde_json::Value;

use crate::error::StructureError;
use crate::outcome::{Answer, Outcome, ReviewStatus, ReviewTicket};
use crate::ports::Ports;
use crate::scope::Scope;
use crate::settings::ReviewPolicy;

/// The schema keyword by which a schema asks for review whatever the settings say.
pub const KEYWORD: &str = "x-structure-review";

/// The policy a call is held to: the settings', or more where `schema` asks for more
/// ([`KEYWORD`]).
pub fn policy(settings: ReviewPolicy, schema: &Value) -> ReviewPolicy {
    let asked = (schema.get(KEYWORD).and_then(Value::as_str)).and_then(ReviewPolicy::named);
    asked.map_or(settings, |asked| asked.max(settings))
}

/// Sends `outcome` to review when `policy` says so: `doubtful` when a value is in doubt
/// ([`doubts`]) or the answer is not `ok`, `all` always. The ticket the result carries, or
/// `None` when it goes straight out.
pub fn send(
    policy: ReviewPolicy,
    outcome: &Outcome,
    sent: &Sent<'_>,
    scope: &Scope,
    ports: &Ports<'_>,
) -> Result<Option<ReviewTicket>, StructureError> {
    let fields = doubts(outcome, sent.threshold);
    let doubtful = !fields.is_empty() || !matches!(outcome.answer, Answer::Ok(_));
    let goes = match policy {
        ReviewPolicy::Off => false,
        ReviewPolicy::Doubtful => doubtful,
        ReviewPolicy::All => true,
    };
    if !goes {
        return Ok(None);
    }
    let item = Queue::new(scope, ports).open(outcome, sent, fields)?;
    Ok(Some(ReviewTicket {
        id: item.id,
        status: ReviewStatus::Pending,
        fields: item.fields,
    }))
}
