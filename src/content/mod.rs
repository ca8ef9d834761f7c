//! The content stage (spec §4): ask the model, read its answer, validate it against the full
//! target schema, and feed the violations back, up to `maxLoops` times. This file dispatches:
//!
//! - [`one`]: one object from a text the model's window holds, in one conversation;
//! - [`long_text`]: one object from a text it does not hold, read in parts and merged;
//! - [`records`]: every record a text holds (`records: true`), read in chunks.
//!
//! A server that refuses a request for not fitting its window teaches the window: the call is
//! planned again with it (see [`crate::provider::window`]).

mod ask;
pub mod builder;
mod check;
pub mod chunked;
pub mod confidence;
mod dialogue;
pub mod grounding;
pub mod long_text;
mod one;
pub mod prompt;
pub mod reason;
pub mod records;

use crate::error::{ErrorKind, StructureError};
use crate::outcome::{Outcome, Trace, Usage};
use crate::ports::Ports;
use crate::provider::Provider;
use crate::provider::retry::RetryPolicy;
use crate::provider::wire::CONTEXT_LENGTH_EXCEEDED;
use crate::schema::TargetSchema;
use crate::settings::Grounding;
pub use ask::{Answered, BYTES_PER_TOKEN, Budget, Caller};
pub use chunked::Chunking;

/// Plain-text answers tolerated in tool mode before giving up (spec 001).
pub const MAX_TOOL_REMINDERS: u32 = 2;

/// How often one call is planned again after a refusal taught the model's window.
const MAX_REPLANS: u32 = 2;

/// How far one call may go besides `maxLoops`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Limits {
    pub max_loops: u8,
    pub retry: RetryPolicy,
    /// Tokens (prompt + completion) the whole request may spend.
    pub budget: Option<Budget>,
    /// Ground plain strings and numbers in the text too (see [`grounding`]).
    pub extractive: bool,
    /// Whether values are located in the text, and whether they must be.
    pub grounding: Grounding,
    /// The instant relative dates are resolved against (milliseconds since the epoch); `None`:
    /// the clock's now.
    pub reference_time: Option<u64>,
    /// Records mode: every record the text holds, the text read in chunks.
    pub records: bool,
    /// The most bytes of text one call of a text read in chunks is sent
    /// (`structure_chunk_tokens`; less when the model's window holds less).
    pub chunk_bytes: usize,
    /// Calls in flight at once when a text is read in chunks (`structure_max_concurrent_calls`).
    pub max_concurrent: usize,
    /// The most chunks a text may be read in (`structure_max_chunks`).
    pub max_chunks: usize,
    /// The least confidence a value may have (`structure_min_confidence`; see [`confidence`]).
    pub min_confidence: Option<f64>,
}

/// What the stages of one call share.
#[derive(Clone, Copy)]
pub struct Call<'a> {
    pub target: &'a TargetSchema,
    pub limits: Limits,
    pub provider: &'a dyn Provider,
    pub ports: &'a Ports<'a>,
    /// What an earlier model's last answer broke (escalation): told to this one from the start.
    pub earlier_violations: &'a [String],
}

impl<'a> Call<'a> {
    /// What this call's LLM requests share: the provider, the ports, the retry policy, the budget.
    fn caller(&self) -> Caller<'a> {
        Caller {
            provider: self.provider,
            ports: self.ports,
            retry: self.limits.retry,
            budget: self.limits.budget,
        }
    }

    /// The trace every path starts from: the model, how it is called, the schema's warnings.
    fn trace(&self) -> Trace {
        Trace {
            model: self.provider.model().to_owned(),
            provider_profile: self.provider.profile_name().to_owned(),
            delivery: self.provider.delivery().to_string(),
            warnings: self.target.warnings.clone(),
            context_window: Some(self.provider.endpoint().window().traced()),
            ..Trace::default()
        }
    }
}

/// Runs the content stage for `prompt` against `target`; `earlier_violations` are what an
/// earlier model's last answer broke (escalation), told to this one from the start.
pub fn run(
    prompt: &str,
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
    };
    let mut spent = Usage::default();
    let mut replans = 0;
    loop {
        let window = provider.endpoint().window();
        let read = if limits.records {
            records::extract(call, prompt)
        } else {
            one::run(call, prompt)
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

/// Whether `error` is a server's refusal of a request that did not fit the model's window.
fn refused_for_length(error: &StructureError) -> bool {
    matches!(&error.kind, ErrorKind::Provider { code: Some(code), .. } if code == CONTEXT_LENGTH_EXCEEDED)
}
