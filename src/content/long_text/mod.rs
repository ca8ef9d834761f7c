//! One object from a text longer than the model's window: the text is read in chunks
//! ([`crate::content::chunked`]: sentence-aligned, overlapping, their calls in flight together),
//! each asked for the values it states (nothing is required of a part), and the parts' answers
//! merged field by field (`fields.rs`). Values the parts disagree on are settled by one short
//! call that sees only the candidates and the passages around them (`choose.rs`); a required
//! value no part gives makes the call `need-more-input`, never an invented one; the merged
//! object is validated against the full schema, and fixed in the usual loop when it breaks it.
//!
//! `sources` are spans of the whole text; `trace.chunks` says how many chunks there were and
//! `trace.chunkOf` which chunk each value came from.

mod choose;
mod fields;

use serde_json::Value;

use crate::answer::format::{AnswerFormat, Shape};
use crate::answer::{Decoded, decode};
use crate::content::check::{partial, violations};
use crate::content::chunked::offsets::Offsets;
use crate::content::chunked::pump::{ChunkRun, converse};
use crate::content::chunked::required::{missing, need_of, without_required};
use crate::content::chunked::split::chunks;
use crate::content::chunked::{Chunking, chunk_format, stale_errors};
use crate::content::dialogue::{Dialogue, Judge, Settled};
use crate::content::grounding::provenance;
use crate::content::one::finish;
use crate::content::{Call, prompt, reason};
use crate::error::StructureError;
use crate::outcome::{Answer, Outcome, Usage};
use crate::schema::TargetSchema;
use crate::schema::violation::{Category, Violation};
use crate::settings::Grounding;
use choose::Asked;
use fields::{Merged, Part, merge};

/// The object `text`, too long for the model's window, gives of `call`'s target.
pub(crate) fn extract(call: Call<'_>, text: &str) -> Result<Outcome, StructureError> {
    let Call {
        target,
        limits,
        provider,
        ..
    } = call;
    let mut trace = call.trace();
    let loose = without_required(&target.schema);
    let chunking = Chunking::fitted(call, &loose, Shape::Part)?;
    let parts = chunks(text, chunking.chunk_bytes, chunking.overlap_bytes);
    trace.chunks = parts.len() as u32;
    let mut runs: Vec<ChunkRun<'_, Piece<'_>>> = parts
        .iter()
        .map(|chunk| {
            let format = chunk_format(
                &loose,
                chunk.text,
                limits,
                Shape::Part,
                provider,
                &mut trace,
            );
            let conversation = prompt::conversation(call, chunk.text, Shape::Part);
            let judge = Piece {
                target,
                text: chunk.text,
                grounding: limits.grounding,
            };
            ChunkRun::new(
                Dialogue::new(provider, format, conversation, limits.max_loops),
                judge,
            )
        })
        .collect();
    let mut usage = Usage::default();
    converse(
        &mut runs,
        call.caller(),
        chunking.max_concurrent,
        &mut usage,
        &mut trace,
    )?;
    let mut iterations = runs.iter().map(|run| run.dialogue.iterations).sum();
    let offsets = Offsets::of(text, &parts);
    let mut found = Vec::with_capacity(runs.len());
    let mut stale = Vec::new();
    for (chunk, (run, offset)) in runs.into_iter().zip(&offsets).enumerate() {
        trace.absorb(run.dialogue.trace);
        match run.settled {
            Some(Settled::Accepted(data)) => {
                let sources = provenance::sources(&data, &target.schema, parts[chunk].text);
                found.push(Part {
                    chunk,
                    sources: offset.place(sources),
                    data,
                });
            }
            Some(Settled::Stale(violations)) => stale.push((*offset, violations)),
            // A chunk never asked: another one's answer already made the result stale.
            None => {}
        }
    }
    if !stale.is_empty() {
        let errors = stale_errors(stale.iter().map(|(at, found)| (*at, found.as_slice())));
        return Ok(finish(
            Answer::Stale(errors),
            target,
            iterations,
            usage,
            trace,
        ));
    }
    let mut merged = merge(found, &target.schema);
    if !merged.conflicts.is_empty() {
        let Asked {
            settled,
            iterations: asked,
        } = choose::settle(call, text, &mut merged, &mut usage, &mut trace)?;
        iterations += asked;
        if let Settled::Stale(violations) = settled {
            let errors = violations.iter().map(Violation::to_string).collect();
            return Ok(finish(
                Answer::Stale(errors),
                target,
                iterations,
                usage,
                trace,
            ));
        }
    }
    let Merged {
        data,
        sources,
        chunk_of,
        ..
    } = merged;
    let data = Value::Object(data);
    if !missing(&data, &target.schema).is_empty() {
        // No part gives it: asked for, never invented.
        let need = need_of(&data, &target.schema);
        return Ok(finish(
            Answer::NeedMoreInput(need),
            target,
            iterations,
            usage,
            trace,
        ));
    }
    let broken = violations(target, &data, text, limits.grounding, |_| false);
    let (answer, sources) = if broken.is_empty() {
        (Answer::Ok(data), sources)
    } else {
        let Asked {
            settled,
            iterations: asked,
        } = choose::repair(call, text, data, &sources, &broken, &mut usage, &mut trace)?;
        iterations += asked;
        match settled {
            Settled::Accepted(Answer::Ok(fixed)) => {
                let sources = provenance::sources(&fixed, &target.schema, text);
                (Answer::Ok(fixed), sources)
            }
            Settled::Accepted(other) => (other, Vec::new()),
            Settled::Stale(violations) => (
                Answer::Stale(violations.iter().map(Violation::to_string).collect()),
                Vec::new(),
            ),
        }
    };
    let mut outcome = finish(answer, target, iterations, usage, trace);
    if let Answer::Ok(data) = &outcome.answer {
        outcome.trace.chunk_of = chunk_of
            .into_iter()
            .filter(|(pointer, _)| data.pointer(pointer).is_some())
            .collect();
        if limits.grounding != Grounding::Off {
            outcome.sources = sources;
        }
    }
    Ok(outcome)
}

/// Judges a part's answer: an object of what the part states, which may lack required values.
struct Piece<'a> {
    target: &'a TargetSchema,
    /// The part's text.
    text: &'a str,
    grounding: Grounding,
}

impl Judge for Piece<'_> {
    type Accepted = Value;

    fn judge(
        &self,
        text: &str,
        format: &AnswerFormat,
        repairs: &mut Vec<String>,
    ) -> Result<Value, Vec<Violation>> {
        let object = match decode(text, format, &self.target.schema, repairs) {
            Decoded::Unreadable(reason) => return Err(vec![reason::unreadable(&reason)]),
            // A part's answer has no need branch: a model that names a need anyway found
            // nothing here.
            Decoded::Need(need) => {
                repairs.push(format!("read \"{need}\" as nothing in this part"));
                return Ok(Value::Object(serde_json::Map::new()));
            }
            Decoded::Candidate(object @ Value::Object(_)) => object,
            Decoded::Candidate(_) => {
                return Err(vec![Violation {
                    category: Category::Type,
                    pointer: "/".to_owned(),
                    constraint: "must be an object".to_owned(),
                    actual: None,
                }]);
            }
        };
        partial(self.target, &object, self.text, self.grounding).map(|_| object)
    }
}
