//! What the stages of one call share: the call itself (target, limits, provider, ports) and the
//! limits it runs within.

use std::borrow::Cow;

use serde_json::Value;

use crate::content::ask::{Budget, Caller};
use crate::content::grounding::{Grounded, ground};
use crate::media_type::Attachment;
use crate::outcome::{Trace, Usage};
use crate::ports::Ports;
use crate::provider::Provider;
use crate::provider::retry::RetryPolicy;
use crate::schema::TargetSchema;
use crate::settings::{Grounding, MinConfidence};

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
    pub min_confidence: MinConfidence,
    /// Whether the model is also given a document as pictures (an image, scanned pages):
    /// what it reads there is in no text, so nothing is grounded in the text before asking.
    pub pictured: bool,
}

impl Limits {
    /// `schema` grounded in `text` ([`ground`]): as it is when the model also reads pictures.
    pub fn ground<'s>(&self, schema: &'s Value, text: &str) -> Grounded<'s> {
        match self.pictured {
            true => Grounded::Narrowed {
                schema: Cow::Borrowed(schema),
                notes: Vec::new(),
            },
            false => ground(schema, text, self.extractive),
        }
    }
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
    /// A document the model is given as it is (an image, a scanned PDF), beside the text.
    pub attachment: Option<&'a Attachment>,
}

impl<'a> Call<'a> {
    /// What this call's LLM requests share: the provider, the ports, the retry policy, the budget.
    pub(crate) fn caller(&self) -> Caller<'a> {
        Caller {
            provider: self.provider,
            ports: self.ports,
            retry: self.limits.retry,
            budget: self.limits.budget,
        }
    }

    /// The trace every path starts from: the model, how it is called, the schema's warnings.
    pub(crate) fn trace(&self) -> Trace {
        Trace {
            model: self.provider.model().to_owned(),
            provider_profile: self.provider.profile_name().to_owned(),
            delivery: self.provider.delivery().to_string(),
            warnings: self.target.warnings.clone(),
            context_window: Some(self.provider.endpoint().window().traced()),
            ..Trace::default()
        }
    }

    /// A short request beside this call (a second look, a question about its answer): `target`
    /// read from the text alone, held to `min_confidence`, within what is left of the call's
    /// token budget after `spent`.
    pub(crate) fn aside<'t>(
        &self,
        target: &'t TargetSchema,
        min_confidence: MinConfidence,
        spent: Usage,
    ) -> Call<'t>
    where
        'a: 't,
    {
        let mut limits = Limits {
            min_confidence,
            ..self.limits
        };
        if let Some(budget) = &mut limits.budget {
            budget.spent_before += spent.prompt_tokens + spent.completion_tokens;
        }
        Call {
            target,
            limits,
            earlier_violations: &[],
            attachment: None,
            ..*self
        }
    }
}
