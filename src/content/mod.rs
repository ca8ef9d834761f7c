//! The content stage (spec §4): ask the model, read its answer, validate it against the full
//! target schema, and feed the violations back, up to `maxLoops` times.

mod ask;
pub mod builder;
pub mod grounding;
pub mod prompt;
pub mod reason;
pub mod records;

use serde_json::Value;

use crate::answer::format::{AnswerFormat, NEED_KEY};
use crate::answer::{Decoded, decode};
use crate::content::grounding::{Grounded, ground};
use crate::error::{ErrorKind, StructureError};
use crate::outcome::{Answer, Outcome, Reason, Trace, Usage};
use crate::ports::Ports;
use crate::provider::retry::RetryPolicy;
use crate::provider::{ANSWER_TOOL, Conversation, Delivered, Delivery, Provider, Turn};
use crate::schema::TargetSchema;
use crate::schema::violation::{Category, Violation, show};
use crate::settings::Grounding;
pub use ask::{Budget, Caller};
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
}

/// Runs the loop for `prompt` against `target`.
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
    let format = provider.answer_format(sent.as_ref());
    trace
        .schema_transforms
        .extend(format.transforms.iter().cloned());
    let shown_schema = provider.schema_in_prompt().then_some(&target.schema);
    let conversation = Conversation {
        system: prompt::system_prompt(
            limits
                .reference_time
                .unwrap_or_else(|| ports.clock.now_unix_millis()),
            provider.delivery(),
            shown_schema,
            target.manual.as_deref(),
        ),
        turns: vec![Turn::User(prompt.to_owned())],
    };
    Loop {
        prompt,
        target,
        limits,
        provider,
        ports,
        format,
        conversation,
        trace,
        usage: Usage::default(),
    }
    .run()
}

/// One call's conversation with the model, and what it has cost.
struct Loop<'a> {
    prompt: &'a str,
    target: &'a TargetSchema,
    limits: Limits,
    provider: &'a dyn Provider,
    ports: &'a Ports<'a>,
    format: AnswerFormat,
    conversation: Conversation,
    trace: Trace,
    usage: Usage,
}

impl Loop<'_> {
    fn run(mut self) -> Result<Outcome, StructureError> {
        let mut last_answer: Option<String> = None;
        let mut iteration = 0u32;
        let mut reminders = 0u32;
        let caller = Caller {
            provider: self.provider,
            ports: self.ports,
            retry: self.limits.retry,
            budget: self.limits.budget,
        };
        loop {
            let completion = caller.ask(
                &self.conversation,
                &self.format,
                &mut self.usage,
                &mut self.trace.retries,
            )?;
            if self.provider.delivery() == Delivery::Tool
                && matches!(completion.delivered, Delivered::Text(_))
            {
                reminders += 1;
                self.remind(completion.delivered, reminders)?;
                continue;
            }
            iteration += 1;
            let violations = match self.judge(completion.delivered.text()) {
                Ok(answer) => return Ok(self.finish(answer, iteration)),
                Err(violations) => violations,
            };
            // At temperature 0 a model that repeats an invalid answer after the reason message
            // repeats it again: another call would only cost.
            let answer = completion.delivered.text().trim().to_owned();
            let repeated = last_answer.as_ref() == Some(&answer);
            last_answer = Some(answer);
            if repeated || iteration >= u32::from(self.limits.max_loops) {
                let errors = violations.iter().map(Violation::to_string).collect();
                return Ok(self.finish(Answer::Stale(errors), iteration));
            }
            self.trace
                .reasons
                .extend(violations.iter().map(|violation| Reason {
                    iteration,
                    pointer: violation.pointer.clone(),
                    category: violation.category,
                }));
            let reason = reason::reason_message(&violations);
            self.feed_back(completion.delivered, reason);
        }
    }

    /// A plain-text answer in tool mode: remind the model to call the tool, up to
    /// [`MAX_TOOL_REMINDERS`] times.
    fn remind(&mut self, delivered: Delivered, reminders: u32) -> Result<(), StructureError> {
        if reminders > MAX_TOOL_REMINDERS {
            return Err(StructureError::new(
                ErrorKind::StructuredOutputFailed,
                format!(
                    "the model answered in plain text instead of calling {ANSWER_TOOL}, \
                     {MAX_TOOL_REMINDERS} reminders notwithstanding"
                ),
            )
            .with_usage(self.usage));
        }
        self.feed_back(delivered, reason::tool_reminder());
        Ok(())
    }

    /// The answer `text` stands for (a valid object or the need), or its violations.
    fn judge(&mut self, text: &str) -> Result<Answer, Vec<Violation>> {
        match decode(
            text,
            &self.format,
            &self.target.schema,
            &mut self.trace.repairs,
        ) {
            Decoded::Need(need) => Ok(Answer::NeedMoreInput(need)),
            Decoded::Unreadable(reason) => Err(vec![reason::unreadable(&reason)]),
            Decoded::Candidate(candidate) => {
                let mut violations = self.target.compiled.violations(&candidate);
                if violations.is_empty() && self.limits.grounding == Grounding::Require {
                    violations = ungrounded(&candidate, &self.target.schema, self.prompt);
                }
                if violations.is_empty() {
                    Ok(Answer::Ok(candidate))
                } else {
                    Err(violations)
                }
            }
        }
    }

    /// Keeps the model's answer in the conversation, followed by `feedback`.
    fn feed_back(&mut self, delivered: Delivered, feedback: String) {
        self.trace.feedback.push(feedback.clone());
        self.conversation.turns.push(Turn::Model(delivered));
        self.conversation.turns.push(Turn::Feedback(feedback));
    }

    fn finish(self, answer: Answer, iterations: u32) -> Outcome {
        let mut outcome = finish(answer, self.target, iterations, self.usage, self.trace);
        if let Answer::Ok(data) = &outcome.answer
            && self.limits.grounding != Grounding::Off
        {
            outcome.sources = provenance::sources(data, &self.target.schema, self.prompt);
        }
        outcome
    }
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
        schema_origin: target.origin.clone(),
        iterations,
        usage,
        trace,
    }
}
