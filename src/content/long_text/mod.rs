//! One object from a text longer than the model's window: the text is read in chunks
//! ([`crate::content::chunked`]: sentence-aligned, overlapping, their calls in flight together),
//! each asked for the values it states (nothing is required of a part), and the parts' answers
//! merged field by field (`fields.rs`). Values the parts disagree on are settled by one short
//! call that sees only the candidates and the passages around them (`choose.rs`); a list
//! gathered from several parts keeps the items another short call says the document states as
//! that field, not every name of that kind a part read (`members.rs`); a required
//! value no part gives makes the call `need-more-input`, never an invented one; the merged
//! object is validated against the full schema, and fixed in the usual loop when it breaks it.
//!
//! `sources` are spans of the whole text; `trace.chunks` says how many chunks there were and
//! `trace.chunkOf` which chunk each value came from.

mod aliases;
mod choose;
mod fields;
mod members;

use std::collections::BTreeMap;

use serde_json::Value;

use crate::answer::format::{AnswerFormat, Shape};
use crate::answer::{Decoded, decode};
use crate::content::call::Call;
use crate::content::check::{partial, violations};
use crate::content::chunked::offsets::Offsets;
use crate::content::chunked::pump::{OnCut, OnStale, converse};
use crate::content::chunked::required::{missing, need_of, without_required};
use crate::content::chunked::{Chunking, runs, stale_errors};
use crate::content::dialogue::{Judge, Settled};
use crate::content::grounding::provenance;
use crate::content::judge::finish;
use crate::content::leave_out;
use crate::content::{confidence, reason};
use crate::error::StructureError;
use crate::outcome::{Answer, Outcome, Reason, Source, Trace, Usage};
use crate::schema::TargetSchema;
use crate::schema::violation::{Category, Violation};
use crate::schema::walk::escape;
use crate::settings::Grounding;
use fields::{Merged, Part, merge};

/// What the calls of a long text have come to so far.
struct Progress {
    trace: Trace,
    usage: Usage,
    iterations: u32,
    /// How sure the model was of each part's answer's form ([`confidence::of_form`]).
    forms: Vec<f64>,
}

/// An answer, the sources of its data and the chunk each value came from.
/// What a long text's parts came to: the answer, where its values (or those of a
/// `need-more-input`'s partial answer) come from, and the part each came from.
struct Assembled {
    answer: Answer,
    sources: Vec<Source>,
    chunk_of: BTreeMap<String, u32>,
    partial: Option<Value>,
}

impl Assembled {
    /// `answer`, with nothing to say where it comes from.
    fn bare(answer: Answer) -> Self {
        Assembled {
            answer,
            sources: Vec::new(),
            chunk_of: BTreeMap::new(),
            partial: None,
        }
    }
}

/// The object `text`, too long for the model's window, gives of `call`'s target.
pub(super) fn extract(call: Call<'_>, text: &str) -> Result<Outcome, StructureError> {
    let mut progress = Progress {
        trace: call.trace(),
        usage: Usage::default(),
        iterations: 0,
        forms: Vec::new(),
    };
    let assembled = match read_parts(call, text, &mut progress)? {
        Ok(parts) => assemble(
            call,
            text,
            merge(parts, &call.target.schema, text),
            &mut progress,
        )?,
        Err(stale) => Assembled::bare(Answer::Stale(stale)),
    };
    let Assembled {
        answer,
        sources,
        chunk_of,
        partial,
    } = assembled;
    if !matches!(answer, Answer::Ok(_)) {
        progress.trace.left_out.clear();
    }
    let Progress {
        trace,
        usage,
        iterations,
        forms,
    } = progress;
    let mut outcome = finish(answer, call.target, iterations, usage, trace);
    if let Some(partial) = partial {
        if call.limits.grounding != Grounding::Off {
            outcome.sources = sources;
        }
        outcome.partial = Some(partial);
    } else if let Answer::Ok(data) = &outcome.answer {
        outcome.trace.chunk_of = chunk_of
            .into_iter()
            .filter(|(pointer, _)| data.pointer(pointer).is_some())
            .collect();
        let confidences = confidence::of_sources(&sources);
        if call.limits.grounding != Grounding::Off {
            outcome.sources = sources;
        }
        // The parts' least sure form speaks for the document.
        let form = forms.into_iter().reduce(f64::min);
        outcome.trace.form_confidence = form;
        let (setting, schema) = (call.limits.min_confidence, &call.target.compiled);
        confidence::judge(&mut outcome, &confidences, text, form, setting, schema);
    }
    Ok(outcome)
}

/// What each part of `text` states, its calls in flight together. A part whose answer stays
/// invalid is left out (`trace.leftOut` says where and why), not the others; `Err` with its
/// errors when every part's did.
fn read_parts(
    call: Call<'_>,
    text: &str,
    progress: &mut Progress,
) -> Result<Result<Vec<Part>, Vec<String>>, StructureError> {
    let Call { target, limits, .. } = call;
    let trace = &mut progress.trace;
    let loose = without_required(&target.schema);
    let chunking = Chunking::fitted(call, &loose, Shape::Part)?;
    let parts = chunking.split(text)?;
    trace.chunks = parts.len() as u32;
    let mut runs = runs(call, &loose, &parts, Shape::Part, trace, |text| Piece {
        target,
        text,
        grounding: limits.grounding,
    });
    converse(
        &mut runs,
        call.caller(),
        chunking.max_concurrent,
        (OnStale::GoOn, OnCut::Fail),
        &mut progress.usage,
        trace,
    )?;
    progress.iterations += runs.iter().map(|run| run.dialogue.iterations).sum::<u32>();
    let offsets = Offsets::of(text, &parts);
    let mut found = Vec::with_capacity(runs.len());
    let mut stale = Vec::new();
    for (chunk, (run, offset)) in runs.into_iter().zip(&offsets).enumerate() {
        let mut part_trace = run.dialogue.trace;
        for line in &mut part_trace.left_out {
            *line = format!("{}: {line}", offset.label());
        }
        progress.trace.absorb(part_trace);
        match run.settled {
            Some(Settled::Accepted(data)) => {
                let text = parts[chunk].text;
                let mut sources = provenance::sources(&data, &target.schema, text);
                if let Some((answer, tokens)) = &run.dialogue.answered {
                    confidence::annotate(&mut sources, &confidence::of_values(answer, tokens), "");
                    progress.forms.extend(confidence::of_form(answer, tokens));
                }
                let unsupported = provenance::ungrounded(&data, &target.schema, text)
                    .into_iter()
                    .map(|(pointer, _)| pointer)
                    .collect();
                found.push(Part {
                    chunk,
                    sources: offset.place(sources),
                    data,
                    unsupported,
                });
            }
            Some(Settled::Stale(violations)) => stale.push((*offset, violations)),
            // A chunk never asked: another one's answer already made the result stale.
            None => {}
        }
    }
    let errors = stale_errors(stale.iter().map(|(at, found)| (*at, found.as_slice())));
    if found.is_empty() && !errors.is_empty() {
        return Ok(Err(errors));
    }
    (progress.trace.left_out).extend(
        errors
            .into_iter()
            .map(|error| format!("left out the part: {error}")),
    );
    Ok(Ok(found))
}

/// The answer `merged` makes: its disagreements settled, a required value it lacks asked
/// for, and a rule of the full schema it breaks fixed.
fn assemble(
    call: Call<'_>,
    text: &str,
    mut merged: Merged,
    progress: &mut Progress,
) -> Result<Assembled, StructureError> {
    let Progress {
        trace,
        usage,
        iterations,
        ..
    } = progress;
    if !merged.conflicts.is_empty() {
        let asked = choose::settle(call, text, &mut merged, usage, trace)?;
        *iterations += asked.iterations;
        if let Settled::Accepted(undecided) = asked.settled
            && !undecided.is_empty()
        {
            // Asked for, never guessed.
            let fields: Vec<String> = (undecided.iter())
                .map(|(name, values)| format!("/{} ({})", escape(name), values.join(", ")))
                .collect();
            let need = format!(
                "the parts of the text give different values for {}: say which one holds",
                fields.join("; ")
            );
            return Ok(Assembled::bare(Answer::NeedMoreInput(need)));
        }
    }
    if !merged.lists.is_empty() {
        *iterations += members::confirm(call, text, &mut merged, usage, trace)?;
    }
    let Merged {
        data,
        sources,
        chunk_of,
        ..
    } = merged;
    let schema = &call.target.schema;
    let data = Value::Object(data);
    if !missing(&data, schema).is_empty() {
        // No part gives it: asked for, never invented.
        let need = need_of(&data, schema);
        return Ok(Assembled {
            answer: Answer::NeedMoreInput(need),
            sources,
            chunk_of: BTreeMap::new(),
            partial: Some(data),
        });
    }
    let broken = violations(call.target, &data, text, call.limits.grounding, |_| false);
    if broken.is_empty() {
        return Ok(Assembled {
            answer: Answer::Ok(data),
            sources,
            chunk_of,
            partial: None,
        });
    }
    // The merged object's violations, fed back as an answer's are.
    let reason = reason::reason_message(&broken, true);
    trace.feedback.push(reason.clone());
    trace.reasons.extend(broken.iter().map(|violation| Reason {
        iteration: *iterations,
        pointer: violation.pointer.clone(),
        category: violation.category,
    }));
    let asked = choose::repair(call, text, data, &sources, reason, usage, trace)?;
    *iterations += asked.iterations;
    Ok(match asked.settled {
        Settled::Accepted(Answer::Ok(fixed)) => {
            let sources = provenance::sources(&fixed, schema, text);
            Assembled {
                answer: Answer::Ok(fixed),
                sources,
                chunk_of,
                partial: None,
            }
        }
        Settled::Accepted(other) => Assembled::bare(other),
        Settled::Stale(violations) => Assembled::bare(stale(&violations)),
    })
}

fn stale(violations: &[Violation]) -> Answer {
    Answer::Stale(violations.iter().map(Violation::to_string).collect())
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
        let object = match decode(text, format, self.target, repairs) {
            Decoded::Unreadable(reason) => return Err(vec![reason::unreadable(&reason)]),
            // A part's answer has no need branch: a model that names a need anyway found
            // nothing here.
            Decoded::Need(need) => {
                repairs.push(format!("read \"{need}\" as nothing in this part"));
                return Ok(Value::Object(serde_json::Map::new()));
            }
            Decoded::Candidate(Value::Object(mut object)) => {
                // A part writes null for each field it does not give.
                object.retain(|_, value| !value.is_null());
                Value::Object(object)
            }
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

    fn without_invalid(
        &self,
        text: &str,
        format: &AnswerFormat,
        broken: &[Violation],
    ) -> Option<(Value, Vec<String>)> {
        let Decoded::Candidate(mut candidate) = decode(text, format, self.target, &mut Vec::new())
        else {
            return None;
        };
        if let Value::Object(object) = &mut candidate {
            object.retain(|_, value| !value.is_null());
        }
        let (kept, dropped) = leave_out::without_invalid(&candidate, broken, |value| {
            partial(self.target, value, self.text, self.grounding)
                .err()
                .unwrap_or_default()
        })?;
        Some((kept, leave_out::reasons(&dropped, broken)))
    }
}
