//! The content stage (spec §4): ask the model, read its answer, validate it against the full
//! target schema, and feed the violations back, up to `maxLoops` times.

pub mod prompt;
pub mod reason;

use crate::answer::{Decoded, decode};
use crate::error::StructureError;
use crate::outcome::{Answer, Outcome, Trace, Usage};
use crate::ports::Ports;
use crate::provider::{Conversation, Provider, Role};
use crate::schema::TargetSchema;
use crate::schema::violation::Violation;

/// Runs the loop for `prompt` against `target`.
pub fn run(
    prompt: &str,
    target: &TargetSchema,
    max_loops: u8,
    provider: &dyn Provider,
    ports: &Ports<'_>,
) -> Result<Outcome, StructureError> {
    let format = provider.answer_format(&target.schema);
    let shown_schema = provider.schema_in_prompt().then_some(&target.schema);
    let mut conversation = Conversation {
        system: prompt::system_prompt(
            ports.clock.now_unix_millis(),
            shown_schema,
            target.manual.as_deref(),
        ),
        turns: vec![(Role::User, prompt.to_owned())],
    };
    let mut usage = Usage::default();
    let mut trace = Trace {
        model: provider.model().to_owned(),
        provider_profile: provider.profile_name().to_owned(),
        schema_transforms: format.transforms.clone(),
        ..Trace::default()
    };
    let mut iteration = 0u32;
    loop {
        iteration += 1;
        let request = provider.request(&conversation, &format);
        usage.llm_calls += 1;
        let spent = usage;
        let response = ports.transport.send(&request).map_err(|error| {
            StructureError::transport(format!(
                "could not reach {}: {}",
                request.url, error.message
            ))
            .with_usage(spent)
        })?;
        let completion = provider.completion(&response).map_err(|error| {
            let mut total = spent;
            total.add(error.usage);
            error.with_usage(total)
        })?;
        usage.add(completion.usage);

        let violations: Vec<Violation> = match decode(
            &completion.text,
            &format,
            &target.schema,
            &mut trace.repairs,
        ) {
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
        if iteration >= u32::from(max_loops) {
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
        conversation.turns.push((Role::Assistant, completion.text));
        conversation.turns.push((Role::User, reason));
    }
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
