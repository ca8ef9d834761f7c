//! One object from a text read whole: one conversation, its answer judged and the violations
//! fed back until it is valid, the model says what the text lacks, or `maxLoops` is spent. A
//! text whose request would not leave the answer room, or whose answer the window cuts off, is
//! left to be read in parts ([`Read::InParts`]; the dispatcher in `mod.rs` does).

use crate::answer::format::Shape;
use crate::content::call::Call;
use crate::content::confidence;
use crate::content::dialogue::{Dialogue, Settled};
use crate::content::grounding::{Grounded, provenance};
use crate::content::judge::{Whole, finish};
use crate::content::prompt;
use crate::error::{ErrorKind, StructureError};
use crate::outcome::{Answer, Outcome, Usage};
use crate::provider::Token;
use crate::schema::violation::Violation;
use crate::settings::Grounding;

/// What reading a text whole came to.
pub(super) enum Read {
    /// The outcome.
    Whole(Box<Outcome>),
    /// The text is to be read in parts: its request would not leave the answer room, or the
    /// window cut the answer off (what that call spent).
    InParts(Usage),
}

/// The object `text` gives of `call`'s target, or what it lacks; or that it is to be read in
/// parts.
pub(super) fn run(call: Call<'_>, text: &str) -> Result<Read, StructureError> {
    let Call {
        target,
        limits,
        provider,
        ..
    } = call;
    let mut trace = call.trace();
    let sent = match limits.ground(&target.schema, text) {
        // An answer would have to make these values up: no call can do better than asking.
        Grounded::Missing(missing) => {
            let need = Grounded::need(&missing);
            let need = Answer::NeedMoreInput(need);
            return Ok(Read::Whole(Box::new(finish(
                need,
                target,
                0,
                Usage::default(),
                trace,
            ))));
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
        return Ok(Read::InParts(Usage::default()));
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
    let judge = Whole {
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
        // The error carries what the call spent so far.
        Err(error) if window_bound && error.kind == ErrorKind::Truncated => {
            return Ok(Read::InParts(error.usage));
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
    let iterations = dialogue.iterations;
    let outcome = finish(answer, target, iterations, usage, trace);
    Ok(Read::Whole(Box::new(located(
        call,
        text,
        outcome,
        dialogue.answered,
    ))))
}

/// `outcome` with the sources of its data and their confidence (`answered`: the accepted
/// answer's text and tokens), held to `structure_min_confidence`.
fn located(
    call: Call<'_>,
    text: &str,
    mut outcome: Outcome,
    answered: Option<(String, Vec<Token>)>,
) -> Outcome {
    let Call { target, limits, .. } = call;
    let form = confidence::of_answered(answered.as_ref());
    let confidences = answered
        .map(|(answer, tokens)| confidence::of_values(&answer, &tokens))
        .unwrap_or_default();
    outcome.trace.form_confidence = form;
    if let Answer::Ok(data) = &outcome.answer
        && limits.grounding != Grounding::Off
    {
        outcome.sources = provenance::sources(data, &target.schema, text);
        confidence::annotate(&mut outcome.sources, &confidences, "");
    }
    if let Some(min) = limits.min_confidence.threshold(form) {
        confidence::hold(&mut outcome, &confidences, min, &target.compiled);
    }
    outcome
}
