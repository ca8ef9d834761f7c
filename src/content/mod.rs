//! The content stage (spec §4): ask the model, read its answer, validate it against the full
//! target schema, and feed the violations back, up to `maxLoops` times. In records mode
//! ([`records`]) a long text is read in chunks, one such conversation each.

mod ask;
pub mod builder;
mod dialogue;
pub mod grounding;
pub mod prompt;
pub mod reason;
pub mod records;

use serde_json::Value;

use crate::answer::format::{AnswerFormat, NEED_KEY, Shape};
use crate::answer::{Decoded, decode};
use crate::content::grounding::{Grounded, ground};
use crate::error::StructureError;
use crate::outcome::{Answer, Outcome, Trace, Usage};
use crate::ports::Ports;
use crate::provider::retry::RetryPolicy;
use crate::provider::{Conversation, Provider, Turn};
use crate::schema::TargetSchema;
use crate::schema::violation::{Category, Violation, show};
use crate::settings::Grounding;
pub use ask::{Answered, BYTES_PER_TOKEN, Budget, Caller};
use dialogue::{Dialogue, Judge, Settled};
use grounding::provenance;

/// Plain-text answers tolerated in tool mode before giving up (spec 001).
pub const MAX_TOOL_REMINDERS: u32 = 2;

/// How far one call may go besides `maxLoops`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
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
    pub records: Option<records::Chunking>,
}

impl Limits {
    /// What this call's LLM requests share: `provider`, `ports`, the retry policy, the budget.
    fn caller<'a>(&self, provider: &'a dyn Provider, ports: &'a Ports<'a>) -> Caller<'a> {
        Caller {
            provider,
            ports,
            retry: self.retry,
            budget: self.budget,
        }
    }
}

/// Runs the loop for `prompt` against `target` (in records mode, a loop per chunk).
pub fn run(
    prompt: &str,
    target: &TargetSchema,
    limits: Limits,
    provider: &dyn Provider,
    ports: &Ports<'_>,
) -> Result<Outcome, StructureError> {
    let mut trace = Trace {
        model: provider.model().to_owned(),
        provider_profile: provider.profile_name().to_owned(),
        delivery: provider.delivery().to_string(),
        warnings: target.warnings.clone(),
        ..Trace::default()
    };
    if let Some(chunking) = limits.records {
        return records::extract(prompt, target, limits, chunking, provider, ports, trace);
    }
    let sent = match ground(&target.schema, prompt, limits.extractive) {
        // An answer would have to make these values up: no call can do better than asking.
        Grounded::Missing(missing) => {
            let need = Grounded::need(&missing);
            return Ok(finish(
                Answer::NeedMoreInput(need),
                target,
                0,
                Usage::default(),
                trace,
            ));
        }
        Grounded::Narrowed { schema, notes } => {
            trace.schema_transforms = notes;
            schema
        }
    };
    let format = provider.answer_format(sent.as_ref(), Shape::One);
    trace
        .schema_transforms
        .extend(format.transforms.iter().cloned());
    let conversation = conversation(prompt, target, limits, Shape::One, provider, ports);
    let mut dialogue = Dialogue::new(provider, format, conversation, limits.max_loops);
    let judge = One {
        target,
        text: prompt,
        grounding: limits.grounding,
    };
    let caller = limits.caller(provider, ports);
    let mut usage = Usage::default();
    let settled = loop {
        let completion = caller.send(&dialogue.request(), &mut usage, &mut trace.retries)?;
        if let Some(settled) = dialogue.take(completion.delivered, &judge, usage)? {
            break settled;
        }
    };
    let answer = match settled {
        Settled::Accepted(answer) => answer,
        Settled::Stale(violations) => {
            Answer::Stale(violations.iter().map(Violation::to_string).collect())
        }
    };
    trace.absorb(dialogue.trace);
    let mut outcome = finish(answer, target, dialogue.iterations, usage, trace);
    if let Answer::Ok(data) = &outcome.answer
        && limits.grounding != Grounding::Off
    {
        outcome.sources = provenance::sources(data, &target.schema, prompt);
    }
    Ok(outcome)
}

/// The conversation's start: the system prompt for `shape`, and the text.
fn conversation(
    text: &str,
    target: &TargetSchema,
    limits: Limits,
    shape: Shape,
    provider: &dyn Provider,
    ports: &Ports<'_>,
) -> Conversation {
    let shown_schema = provider.schema_in_prompt().then_some(&target.schema);
    Conversation {
        system: prompt::system_prompt(
            limits
                .reference_time
                .unwrap_or_else(|| ports.clock.now_unix_millis()),
            provider.delivery(),
            shape,
            shown_schema,
            target.manual.as_deref(),
        ),
        turns: vec![Turn::User(text.to_owned())],
    }
}

/// Judges the answer of a one-object call: the valid object or the need.
struct One<'a> {
    target: &'a TargetSchema,
    text: &'a str,
    grounding: Grounding,
}

impl Judge for One<'_> {
    type Accepted = Answer;

    fn judge(
        &self,
        text: &str,
        format: &AnswerFormat,
        repairs: &mut Vec<String>,
    ) -> Result<Answer, Vec<Violation>> {
        match decode(text, format, &self.target.schema, repairs) {
            Decoded::Need(need) => Ok(Answer::NeedMoreInput(need)),
            Decoded::Unreadable(reason) => Err(vec![reason::unreadable(&reason)]),
            Decoded::Candidate(candidate) => {
                let violations =
                    violations(self.target, &candidate, self.text, self.grounding, |_| {
                        false
                    });
                if violations.is_empty() {
                    Ok(Answer::Ok(candidate))
                } else {
                    Err(violations)
                }
            }
        }
    }
}

/// What `candidate` breaks: `target`'s schema (but for the violations `excused` lets pass),
/// then — only when that holds and grounding is required — the support of `text`.
fn violations(
    target: &TargetSchema,
    candidate: &Value,
    text: &str,
    grounding: Grounding,
    excused: impl Fn(&Violation) -> bool,
) -> Vec<Violation> {
    let mut violations: Vec<Violation> = target
        .compiled
        .violations(candidate)
        .into_iter()
        .filter(|violation| !excused(violation))
        .collect();
    if violations.is_empty() && grounding == Grounding::Require {
        violations = ungrounded(candidate, &target.schema, text);
    }
    violations
}

/// The violations of the values of a valid `candidate` that no span of `text` supports.
fn ungrounded(candidate: &Value, schema: &Value, text: &str) -> Vec<Violation> {
    provenance::ungrounded(candidate, schema, text)
        .into_iter()
        .map(|(pointer, value)| Violation {
            category: Category::Ungrounded,
            pointer,
            constraint: format!(
                "{} does not appear in the text; copy the value as the text writes it, or answer \
                 with {NEED_KEY} if the text does not give it",
                show(value)
            ),
            actual: None,
        })
        .collect()
}

fn finish(
    answer: Answer,
    target: &TargetSchema,
    iterations: u32,
    usage: Usage,
    trace: Trace,
) -> Outcome {
    Outcome {
        answer,
        sources: Vec::new(),
        incomplete: None,
        schema_origin: target.origin.clone(),
        iterations,
        usage,
        trace,
    }
}
