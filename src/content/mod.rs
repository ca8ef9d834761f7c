//! The content stage (spec §4): ask the model, read its answer, validate it against the full
//! target schema, and feed the violations back, up to `maxLoops` times.

pub mod builder;
pub mod grounding;
pub mod prompt;
pub mod reason;

use crate::answer::{Decoded, decode};
use crate::content::grounding::{Grounded, ground};
use crate::error::{ErrorKind, StructureError};
use crate::outcome::{Answer, Outcome, Trace, Usage};
use crate::ports::Ports;
use crate::provider::retry::{self, RetryPolicy};
use crate::provider::{ANSWER_TOOL, Conversation, Delivered, Delivery, Provider, Turn};
use crate::schema::TargetSchema;
use crate::schema::violation::Violation;

/// Plain-text answers tolerated in tool mode before giving up (spec 001).
pub const MAX_TOOL_REMINDERS: u32 = 2;

/// How far one call may go besides `maxLoops`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    pub max_loops: u8,
    pub retry: RetryPolicy,
    /// Tokens (prompt + completion) the whole call may spend.
    pub token_budget: Option<u64>,
    /// Ground plain strings and numbers in the text too (see [`grounding`]).
    pub extractive: bool,
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
    let delivery = provider.delivery();
    let mut trace = Trace {
        model: provider.model().to_owned(),
        provider_profile: provider.profile_name().to_owned(),
        delivery: delivery.to_string(),
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
    let mut conversation = Conversation {
        system: prompt::system_prompt(
            limits
                .reference_time
                .unwrap_or_else(|| ports.clock.now_unix_millis()),
            delivery,
            shown_schema,
            target.manual.as_deref(),
        ),
        turns: vec![Turn::User(prompt.to_owned())],
    };
    let mut usage = Usage::default();
    let mut last_answer: Option<String> = None;
    let mut iteration = 0u32;
    let mut reminders = 0u32;
    let mut last_call_tokens = 0u64;
    loop {
        if let Some(budget) = limits.token_budget {
            check_budget(budget, usage, last_call_tokens)?;
        }
        let request = provider.request(&conversation, &format);
        let response = retry::send(
            &request,
            provider,
            ports,
            limits.retry,
            &mut usage,
            &mut trace.retries,
        )?;
        let completion = provider.completion(&response).map_err(|error| {
            let mut total = usage;
            total.add(error.usage);
            error.with_usage(total)
        })?;
        usage.add(completion.usage);
        last_call_tokens = completion.usage.prompt_tokens + completion.usage.completion_tokens;

        if delivery == Delivery::Tool && matches!(completion.delivered, Delivered::Text(_)) {
            reminders += 1;
            if reminders > MAX_TOOL_REMINDERS {
                return Err(StructureError::new(
                    ErrorKind::StructuredOutputFailed,
                    format!(
                        "the model answered in plain text instead of calling {ANSWER_TOOL}, \
                         {MAX_TOOL_REMINDERS} reminders notwithstanding"
                    ),
                )
                .with_usage(usage));
            }
            let reminder = reason::tool_reminder();
            trace.feedback.push(reminder.clone());
            conversation.turns.push(Turn::Model(completion.delivered));
            conversation.turns.push(Turn::Feedback(reminder));
            continue;
        }

        iteration += 1;
        let decoded = decode(
            completion.delivered.text(),
            &format,
            &target.schema,
            &mut trace.repairs,
        );
        let violations: Vec<Violation> = match decoded {
            Decoded::Need(need) => {
                return Ok(finish(
                    Answer::NeedMoreInput(need),
                    target,
                    iteration,
                    usage,
                    trace,
                ));
            }
            Decoded::Unreadable(reason) => vec![reason::unreadable(&reason)],
            Decoded::Candidate(candidate) => {
                let violations = target.compiled.violations(&candidate);
                if violations.is_empty() {
                    return Ok(finish(
                        Answer::Ok(candidate),
                        target,
                        iteration,
                        usage,
                        trace,
                    ));
                }
                violations
            }
        };
        // At temperature 0 a model that repeats an invalid answer after the reason message
        // repeats it again: another call would only cost.
        let answer = completion.delivered.text().trim().to_owned();
        let repeated = last_answer.as_ref() == Some(&answer);
        last_answer = Some(answer);
        if repeated || iteration >= u32::from(limits.max_loops) {
            let errors = violations.iter().map(Violation::to_string).collect();
            return Ok(finish(
                Answer::Stale(errors),
                target,
                iteration,
                usage,
                trace,
            ));
        }
        let reason = reason::reason_message(&violations);
        trace.feedback.push(reason.clone());
        conversation.turns.push(Turn::Model(completion.delivered));
        conversation.turns.push(Turn::Feedback(reason));
    }
}

/// Stops before a call that would likely take the request over its token budget: the next call
/// costs at least what the last one did (the conversation only grows).
fn check_budget(budget: u64, usage: Usage, last_call_tokens: u64) -> Result<(), StructureError> {
    let spent = usage.prompt_tokens + usage.completion_tokens;
    if spent > 0 && spent + last_call_tokens > budget {
        return Err(StructureError::new(
            ErrorKind::BudgetExhausted,
            format!(
                "stopped before the next LLM call: {spent} of the {budget}-token budget are spent and the \
                 next call needs about {last_call_tokens} more (structure_token_budget)"
            ),
        )
        .with_usage(usage));
    }
    Ok(())
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
        schema_origin: target.origin.clone(),
        iterations,
        usage,
        trace,
    }
}
