//! One object from a text the model's window holds: one conversation, its answer judged and
//! the violations fed back until it is valid, the model says what the text lacks, or `maxLoops`
//! is spent. A text whose request would not leave the answer room is read in parts instead
//! ([`super::long_text`]).

use crate::answer::format::{AnswerFormat, Shape};
use crate::answer::{Decoded, decode};
use crate::content::call::Call;
use crate::content::check::violations;
use crate::content::confidence;
use crate::content::dialogue::{Dialogue, Judge, Settled};
use crate::content::grounding::{Grounded, ground, provenance};
use crate::content::leave_out;
use crate::content::{long_text, prompt, reason};
use crate::error::{ErrorKind, StructureError};
use crate::outcome::{Answer, Outcome, Trace, Usage};
use crate::schema::TargetSchema;
use crate::schema::violation::Violation;
use crate::settings::Grounding;

/// The object `text` gives of `call`'s target, or what it lacks.
pub(super) fn run(call: Call<'_>, text: &str) -> Result<Outcome, StructureError> {
    let Call {
        target,
        limits,
        provider,
        ..
    } = call;
    let mut trace = call.trace();
    let sent = match ground(&target.schema, text, limits.extractive) {
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
    let conversation = prompt::conversation(call, text, Shape::One);
    let mut dialogue = Dialogue::new(provider, format, conversation, limits.max_loops);
    let first = dialogue.request();
    let endpoint = provider.endpoint();
    let room = endpoint
        .window()
        .whole_text_room(endpoint.max_output_tokens);
    if first.tokens.is_some_and(|tokens| tokens.output < room) {
        return long_text::extract(call, text);
    }
    // The answer the window leaves, when it is less than the answer limit: an answer cut off
    // there needed more room than the text left it, and the text is read in parts instead.
    let window_bound = first
        .tokens
        .filter(|tokens| tokens.output < endpoint.max_output_tokens)
        .is_some();
    trace
        .schema_transforms
        .extend(dialogue.format.transforms.iter().cloned());
    let judge = One {
        target,
        text,
        grounding: limits.grounding,
    };
    let mut usage = Usage::default();
    let settled = match call.caller().converse(
        &mut dialogue,
        &judge,
        Some(first),
        &mut usage,
        &mut trace.retries,
    ) {
        Err(error) if window_bound && error.kind == ErrorKind::Truncated => {
            // The error carries what the call spent so far.
            let mut outcome = long_text::extract(call, text).map_err(|later| {
                let mut spent = error.usage;
                spent.add(later.usage);
                later.with_usage(spent)
            })?;
            outcome.usage.add(error.usage);
            return Ok(outcome);
        }
        settled => settled?,
    };
    let answer = match settled {
        Settled::Accepted(answer) => answer,
        Settled::Stale(violations) => {
            Answer::Stale(violations.iter().map(Violation::to_string).collect())
        }
    };
    trace.absorb(dialogue.trace);
    let form = confidence::of_answered(dialogue.answered.as_ref());
    let confidences = (dialogue.answered)
        .map(|(answer, tokens)| confidence::of_values(&answer, &tokens))
        .unwrap_or_default();
    let mut outcome = finish(answer, target, dialogue.iterations, usage, trace);
    if let Answer::Ok(data) = &outcome.answer
        && limits.grounding != Grounding::Off
    {
        outcome.sources = provenance::sources(data, &target.schema, text);
        confidence::annotate(&mut outcome.sources, &confidences, "");
    }
    if let Some(min) = limits.min_confidence.threshold(form) {
        confidence::hold(&mut outcome, &confidences, min, &target.compiled);
    }
    Ok(outcome)
}

/// Judges the answer of a one-object conversation: the valid object or the need.
pub(super) struct One<'a> {
    pub target: &'a TargetSchema,
    /// What the values must be found in, when grounding is required.
    pub text: &'a str,
    pub grounding: Grounding,
}

impl Judge for One<'_> {
    type Accepted = Answer;

    fn judge(
        &self,
        text: &str,
        format: &AnswerFormat,
        repairs: &mut Vec<String>,
    ) -> Result<Answer, Vec<Violation>> {
        match decode(text, format, self.target, repairs) {
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

    fn without_invalid(
        &self,
        text: &str,
        format: &AnswerFormat,
        broken: &[Violation],
    ) -> Option<(Answer, Vec<String>)> {
        let Decoded::Candidate(candidate) = decode(text, format, self.target, &mut Vec::new())
        else {
            return None;
        };
        let (kept, dropped) = leave_out::without_invalid(&candidate, broken, |value| {
            violations(self.target, value, self.text, self.grounding, |_| false)
        })?;
        Some((Answer::Ok(kept), leave_out::reasons(&dropped, broken)))
    }
}

/// The outcome of `answer`, with no sources yet.
pub(super) fn finish(
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
        text: None,
    }
}
