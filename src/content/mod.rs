//! The content stage (spec §4): ask the model, read its answer, validate it against the full
//! target schema, and feed the violations back, up to `maxLoops` times. This file dispatches:
//!
//! - [`one`]: one object from a text read whole, in one conversation;
//! - [`long_text`]: one object from a text the window does not hold (or whose answer it cut
//!   off), read in parts and merged;
//! - [`records`]: every record a text holds (`records: true`), read in chunks;
//! - [`second_look`]: the fields of a long text's object that the confidence threshold left
//!   out, read again from the passages about them ([`passages`]).
//!
//! What `one` and `long_text` share (the whole object's judge, the outcome an answer makes)
//! lives in `judge`, below both; so does `evidence`, what the text says of a value beside the
//! model's confidence.
//!
//! A server that refuses a request for not fitting its window teaches the window: the call is
//! planned again with it (see [`crate::provider::window`]).

mod ask;
pub mod builder;
mod call;
mod check;
pub mod chunked;
pub mod confidence;
mod dialogue;
mod evidence;
pub mod grounding;
mod judge;
pub mod leave_out;
pub mod long_text;
mod one;
pub mod passages;
pub mod prompt;
pub mod reason;
pub mod records;
mod second_look;
mod stated;

use crate::error::{ErrorKind, StructureError};
use crate::media_type::Attachment;
use crate::outcome::{Outcome, Usage};
use crate::ports::Ports;
use crate::provider::Provider;
use crate::provider::wire::CONTEXT_LENGTH_EXCEEDED;
use crate::schema::TargetSchema;
pub use ask::{Answered, BYTES_PER_TOKEN, Budget, Caller};
pub use call::{Call, Limits};
pub use chunked::Chunking;
pub use dialogue::MAX_TOOL_REMINDERS;

/// How often one call is planned again after a refusal taught the model's window.
const MAX_REPLANS: u32 = 2;

/// Runs the content stage for `prompt` (and `attachment`, a document the model is given as it
/// is) against `target`; `earlier_violations` are what an earlier model's last answer broke
/// (escalation), told to this one from the start.
pub fn run(
    prompt: &str,
    attachment: Option<&Attachment>,
    target: &TargetSchema,
    limits: Limits,
    provider: &dyn Provider,
    earlier_violations: &[String],
    ports: &Ports<'_>,
) -> Result<Outcome, StructureError> {
    let call = Call {
        target,
        limits,
        provider,
        ports,
        earlier_violations,
        attachment,
    };
    let mut spent = Usage::default();
    let mut replans = 0;
    loop {
        let window = provider.endpoint().window();
        let read = if limits.records {
            records::extract(call, prompt)
        } else {
            object(call, prompt)
        };
        match read {
            Err(error)
                if replans < MAX_REPLANS
                    && ((refused_for_length(&error) && provider.endpoint().window() != window)
                        || provider.endpoint().refused_logprobs(&error)) =>
            {
                // The refusal taught the window, or that the model gives no log-probabilities:
                // what was spent stays spent, and the call is planned again.
                spent.add(error.usage);
                replans += 1;
            }
            Err(error) => {
                let mut usage = spent;
                usage.add(error.usage);
                return Err(error.with_usage(usage));
            }
            Ok(mut outcome) => {
                outcome.usage.add(spent);
                return Ok(outcome);
            }
        }
    }
}

/// One object from `text`: read whole when its request leaves the answer room, else (or when
/// the window cut the answer off) in parts; then a second look at the fields the threshold
/// left out.
fn object(call: Call<'_>, text: &str) -> Result<Outcome, StructureError> {
    let outcome = match one::run(call, text)? {
        one::Read::Whole(outcome) => *outcome,
        one::Read::InParts(spent) => {
            let mut outcome = long_text::extract(call, text).map_err(|error| {
                let mut usage = spent;
                usage.add(error.usage);
                error.with_usage(usage)
            })?;
            outcome.usage.add(spent);
            outcome
        }
    };
    Ok(second_look::run(call, text, outcome))
}

/// Whether `error` is a server's refusal of a request that did not fit the model's window.
fn refused_for_length(error: &StructureError) -> bool {
    matches!(&error.kind, ErrorKind::Provider { code: Some(code), .. } if code == CONTEXT_LENGTH_EXCEEDED)
}
