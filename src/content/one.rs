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
use crate::ports::HttpRequest;
use crate::provider::endpoint::Endpoint;
use crate::provider::window::{MAX_BYTES_PER_TOKEN, Window};
use crate::provider::{Conversation, Token, Turn, tokenizer};
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
    let prompt = prompt_text(&conversation);
    let mut dialogue = Dialogue::new(provider, format, conversation, limits.max_loops);
    let endpoint = provider.endpoint();
    let Some((first, _counted)) = first_request(call, &dialogue, &prompt) else {
        return Ok(Read::InParts(Usage::default()));
    };
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

/// The first request of `dialogue`, whose prompt is `prompt`, when it leaves the answer the
/// room a whole text needs ([`Window::whole_text_room`]) by the estimate or, when the estimate
/// says not, by the server's count (planned with it while the count lives); `None` when the
/// text is to be read in parts.
///
/// [`Window::whole_text_room`]: crate::provider::window::Window::whole_text_room
fn first_request<'a>(
    call: Call<'a>,
    dialogue: &Dialogue<'_>,
    prompt: &str,
) -> Option<(HttpRequest, Option<Counted<'a>>)> {
    let endpoint = call.provider.endpoint();
    let room = endpoint
        .window()
        .whole_text_room(endpoint.max_output_tokens);
    let first = dialogue.request();
    match first.tokens {
        Some(estimate) if estimate.output < room => {
            let counted = Counted::fits(call, prompt, estimate.prompt_bytes, room)?;
            Some((dialogue.request(), Some(counted)))
        }
        _ => Some((first, None)),
    }
}

/// The text of `conversation`'s prompt, as a server counts its tokens: the system prompt and
/// the user's turns.
fn prompt_text(conversation: &Conversation) -> String {
    let mut text = conversation.system.text();
    for turn in &conversation.turns {
        if let Turn::User(said) = turn {
            text.push('\n');
            text.push_str(said);
        }
    }
    text
}

/// This call's requests planned with the server's count of its text's tokens, for as long as
/// it lives.
struct Counted<'a>(&'a Endpoint);

impl<'a> Counted<'a> {
    /// Whether the prompt `prompt` (sent in a request of `prompt_bytes`), which the estimate
    /// says leaves the answer less than `room`, leaves it `room` as the server counts it (see
    /// [`tokenizer`]): then this call's requests are planned with the count.
    fn fits(call: Call<'a>, prompt: &str, prompt_bytes: usize, room: u32) -> Option<Self> {
        let endpoint = call.provider.endpoint();
        // A prompt that would not fit at the most bytes a token can hold is not worth a count.
        let sparsest = Window {
            bytes_per_token: MAX_BYTES_PER_TOKEN,
            ..endpoint.window()
        };
        if !sparsest.fits(prompt_bytes, room) {
            return None;
        }
        let tokens = tokenizer::count(endpoint, prompt, call.ports)?;
        let counted = endpoint.plan_with_count(prompt_bytes, tokens);
        let planned = Counted(endpoint);
        counted.fits(prompt_bytes, room).then_some(planned)
    }
}

impl Drop for Counted<'_> {
    fn drop(&mut self) {
        self.0.forget_count();
    }
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
    let setting = limits.min_confidence;
    confidence::judge(
        &mut outcome,
        &confidences,
        text,
        form,
        setting,
        &target.compiled,
    );
    outcome
}
