//! What the one-object conversations share — the object of a text read whole ([`super::one`])
//! and the calls after a long text's parts are merged ([`super::long_text`]): the judge of an
//! answer that must be the whole object, and the outcome an answer makes.

use crate::answer::format::AnswerFormat;
use crate::answer::{Decoded, decode};
use crate::content::check::violations;
use crate::content::dialogue::Judge;
use crate::content::{leave_out, reason};
use crate::outcome::{Answer, Outcome, Trace, Usage};
use crate::schema::TargetSchema;
use crate::schema::violation::Violation;
use crate::settings::Grounding;

/// Judges the answer of a one-object conversation: the valid object or the need.
pub(super) struct Whole<'a> {
    pub target: &'a TargetSchema,
    /// What the values must be found in, when grounding is required.
    pub text: &'a str,
    pub grounding: Grounding,
}

impl Judge for Whole<'_> {
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
        partial: None,
        incomplete: None,
        schema_origin: target.origin.clone(),
        iterations,
        usage,
        trace,
        text: None,
        review: None,
    }
}
