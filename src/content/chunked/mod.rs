//! What reading a text in chunks shares, in records mode and for one object from a long text:
//! splitting the text where a model's window holds each part ([`split`]), the schema a chunk is
//! sent (nothing required: a chunk gives what it holds, [`required`]), the chunks'
//! conversations with their calls in flight together ([`pump`]), and their places in the whole
//! text ([`offsets`]).

pub(super) mod offsets;
pub(super) mod pump;
pub(super) mod required;
pub(super) mod split;

use serde_json::Value;

use crate::answer::format::{AnswerFormat, Shape};
use crate::content::call::{Call, Limits};
use crate::content::dialogue::{Dialogue, Judge};
use crate::content::grounding::Grounded;
use crate::content::prompt;
use crate::error::StructureError;
use crate::keys;
use crate::outcome::Trace;
use crate::provider::Provider;
use crate::provider::window::{Window, WindowSource};
use pump::ChunkRun;
use split::Chunk;

/// How a text is read in chunks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Chunking {
    /// The most bytes of text one call is sent.
    pub chunk_bytes: usize,
    /// Bytes consecutive chunks share, so a record or a sentence cut by a chunk's end is whole
    /// in the next.
    pub overlap_bytes: usize,
    /// Calls in flight at once (`structure_max_concurrent_calls`).
    pub max_concurrent: usize,
    /// The most chunks a text may be read in (`structure_max_chunks`).
    pub max_chunks: usize,
}

/// The fewest tokens of text a chunk must hold to be worth a call.
const MIN_CHUNK_TOKENS: u32 = 64;

impl Chunking {
    /// Chunks of at most the call's `chunk_bytes` (`structure_chunk_tokens`) that fit the
    /// model's window with the instructions and `schema` of a `shape` conversation, and room
    /// for the answer (and for one round of feedback after it), an eighth of each repeated by
    /// the next.
    pub(super) fn fitted(
        call: Call<'_>,
        schema: &Value,
        shape: Shape,
    ) -> Result<Self, StructureError> {
        let Call {
            limits, provider, ..
        } = call;
        let endpoint = provider.endpoint();
        let window = endpoint.window();
        let format = provider.answer_format(schema, shape);
        let empty = prompt::conversation(call, "", shape);
        let fixed = Dialogue::new(provider, format, empty, limits.max_loops)
            .request()
            .tokens
            .map_or(0, |tokens| tokens.prompt);
        let room = window.answer_room(endpoint.max_output_tokens);
        // A rejected answer and the reason after it share the window with the text.
        let feedback = if limits.max_loops > 1 { room / 2 } else { 0 };
        let left = window
            .tokens
            .saturating_sub(fixed)
            .saturating_sub(room)
            .saturating_sub(feedback);
        let chunk_bytes = if left >= MIN_CHUNK_TOKENS {
            (window.bytes_for(left + Window::REQUEST_OVERHEAD))
                .min(limits.chunk_bytes)
                .max(1)
        } else if window.source == WindowSource::Default {
            // A guessed window never refuses: the chunks are sent at the profile's size, and a
            // server whose window is smaller says so.
            limits.chunk_bytes
        } else {
            return Err(too_small(window, fixed, room));
        };
        Ok(Self {
            chunk_bytes,
            overlap_bytes: chunk_bytes / 8,
            max_concurrent: limits.max_concurrent,
            max_chunks: limits.max_chunks,
        })
    }

    /// `text` in chunks; a text that would take more than `structure_max_chunks` is refused
    /// before any of them is sent.
    pub(super) fn split<'t>(&self, text: &'t str) -> Result<Vec<Chunk<'t>>, StructureError> {
        let parts = split::chunks(text, self.chunk_bytes, self.overlap_bytes);
        if parts.len() > self.max_chunks {
            return Err(StructureError::invalid_request(
                "prompt",
                format!(
                    "this text would be read in {} chunks of at most {} bytes, more than the {} \
                     this deployment allows a call ({}): send a shorter text, or a larger \
                     chunkTokens if the model's window holds it",
                    parts.len(),
                    self.chunk_bytes,
                    self.max_chunks,
                    keys::MAX_CHUNKS
                ),
            ));
        }
        Ok(parts)
    }
}

/// The error of a model whose window cannot hold the instructions, the schema and an answer.
fn too_small(window: Window, fixed: u32, room: u32) -> StructureError {
    StructureError::configuration(
        keys::CONTEXT_TOKENS,
        format!(
            "the model's context window of {} tokens cannot hold the instructions and the schema \
             (about {fixed} tokens), an answer of {room} and any text: use a model with a larger \
             window, a smaller schema, or set {} if the window is larger than that",
            window.tokens,
            keys::CONTEXT_TOKENS
        ),
    )
}

/// A conversation for each of `parts` about what it holds of `loose` (the schema with nothing
/// required at its root), in `shape`, each judged by what `judge` makes for its text.
pub(super) fn runs<'a, J: Judge>(
    call: Call<'a>,
    loose: &Value,
    parts: &[Chunk<'a>],
    shape: Shape,
    trace: &mut Trace,
    judge: impl Fn(&'a str) -> J,
) -> Vec<ChunkRun<'a, J>> {
    let Call {
        limits, provider, ..
    } = call;
    parts
        .iter()
        .map(|chunk| {
            let format = chunk_format(loose, chunk.text, limits, shape, provider, trace);
            let conversation = prompt::conversation(call, chunk.text, shape);
            ChunkRun::new(
                Dialogue::new(provider, format, conversation, limits.max_loops),
                judge(chunk.text),
            )
        })
        .collect()
}

/// The answer format for one chunk: `loose` (the schema with nothing required at its root)
/// grounded in the chunk's text, its notes added to the trace once.
fn chunk_format(
    loose: &Value,
    text: &str,
    limits: Limits,
    shape: Shape,
    provider: &dyn Provider,
    trace: &mut Trace,
) -> AnswerFormat {
    let sent = match limits.ground(loose, text) {
        Grounded::Narrowed { schema, notes } => {
            note(trace, notes);
            schema.into_owned()
        }
        // Nothing is required of a chunk's answer here; a nested required field may still
        // find no candidate: the schema is then sent as it is.
        Grounded::Missing(_) => loose.clone(),
    };
    let format = provider.answer_format(&sent, shape);
    note(trace, format.transforms.clone());
    format
}

/// Adds the notes not yet in the trace's schema transforms (chunks repeat them).
fn note(trace: &mut Trace, notes: Vec<String>) {
    for note in notes {
        if !trace.schema_transforms.contains(&note) {
            trace.schema_transforms.push(note);
        }
    }
}

/// The errors of the chunks whose answers stayed invalid, each prefixed with where its chunk is.
pub(super) fn stale_errors<'v>(
    stale: impl IntoIterator<Item = (offsets::Offsets, &'v [crate::schema::violation::Violation])>,
) -> Vec<String> {
    stale
        .into_iter()
        .flat_map(|(offsets, violations)| {
            let at = offsets.label();
            violations
                .iter()
                .map(move |violation| format!("{at}: {violation}"))
        })
        .collect()
}
