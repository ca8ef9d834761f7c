//! Records mode's content stage: a conversation per chunk (their calls in flight together,
//! [`crate::content::chunked::pump`]), each chunk's answer judged record by record, and the
//! records of every chunk merged.

use std::collections::BTreeMap;

use serde_json::Value;

use super::anchor::anchored;
use super::merge::{Found, merge};
use crate::answer::format::{AnswerFormat, RECORDS_KEY, Shape};
use crate::answer::{Decoded, decode};
use crate::content::call::Call;
use crate::content::check::{Whole, partial};
use crate::content::chunked::offsets::Offsets;
use crate::content::chunked::pump::{ChunkRun, OnStale, converse};
use crate::content::chunked::required::{need_of, without_required};
use crate::content::chunked::split::Chunk;
use crate::content::chunked::{Chunking, runs, stale_errors};
use crate::content::confidence::{self, Held};
use crate::content::dialogue::{Judge, Settled};
use crate::content::evidence;
use crate::content::grounding::provenance;
use crate::content::reason;
use crate::error::StructureError;
use crate::outcome::{Answer, Incomplete, Outcome, Source, Trace, Usage};
use crate::schema::TargetSchema;
use crate::schema::violation::{Category, Violation};
use crate::settings::Grounding;

/// What one record of a chunk's answer is.
enum Judged {
    Valid(Value),
    /// A record without a value its schema requires.
    Incomplete(Value),
}

/// Every record `text` holds, each valid against `call`'s target.
pub(crate) fn extract(call: Call<'_>, text: &str) -> Result<Outcome, StructureError> {
    let Call { target, limits, .. } = call;
    let mut trace = call.trace();
    // A record may lack a required value: the model leaves it out rather than invent it, and
    // the record is reported as incomplete.
    let loose = without_required(&target.schema);
    let chunking = Chunking::fitted(call, &loose, Shape::Records)?;
    let parts = chunking.split(text)?;
    trace.chunks = parts.len() as u32;
    let mut runs = runs(call, &loose, &parts, Shape::Records, &mut trace, |text| {
        Records {
            target,
            text,
            grounding: limits.grounding,
        }
    });
    let mut usage = Usage::default();
    converse(
        &mut runs,
        call.caller(),
        chunking.max_concurrent,
        OnStale::Stop,
        &mut usage,
        &mut trace,
    )?;
    let iterations = runs.iter().map(|run| run.dialogue.iterations).sum();
    let (answer, sources, incomplete) = gather(runs, text, &parts, call, &mut trace);
    Ok(Outcome {
        answer,
        sources,
        partial: None,
        incomplete,
        schema_origin: target.origin.clone(),
        iterations,
        usage,
        trace,
        text: None,
    })
}

/// What the chunks' conversations came to, as one answer: every record merged, with the
/// sources and the incomplete records; or stale with the errors of the chunks that were.
fn gather(
    runs: Vec<ChunkRun<'_, Records<'_>>>,
    text: &str,
    parts: &[Chunk<'_>],
    call: Call<'_>,
    trace: &mut Trace,
) -> (Answer, Vec<Source>, Option<Vec<Incomplete>>) {
    let schema = &call.target.schema;
    let offsets = Offsets::of(text, parts);
    let mut found = Vec::with_capacity(runs.len());
    let mut stale = Vec::new();
    // The chunks' least sure form speaks for the text (`confidence::of_form`).
    let mut form: Option<f64> = None;
    for ((run, chunk), offset) in runs.into_iter().zip(parts).zip(&offsets) {
        trace.absorb(run.dialogue.trace);
        match run.settled {
            Some(Settled::Accepted(records)) => {
                let confidences = (run.dialogue.answered.as_ref())
                    .map(|(answer, tokens)| confidence::of_values(answer, tokens))
                    .unwrap_or_default();
                if let Some(own) = confidence::of_answered(run.dialogue.answered.as_ref()) {
                    form = Some(form.map_or(own, |least| least.min(own)));
                }
                found.push((records, chunk.text, *offset, confidences));
            }
            Some(Settled::Stale(violations)) => stale.push((*offset, violations)),
            // A chunk never asked: another one's answer already made the result stale.
            None => {}
        }
    }
    if !stale.is_empty() {
        let errors = stale_errors(
            stale
                .iter()
                .map(|(offset, violations)| (*offset, violations.as_slice())),
        );
        return (Answer::Stale(errors), Vec::new(), None);
    }
    let (valid, incomplete) = located(found, schema, call.limits.grounding);
    let mut incomplete: Vec<Incomplete> = merge(incomplete)
        .into_iter()
        .map(|found| Incomplete {
            need: need_of(&found.record, schema),
            record: found.record,
            sources: found.sources,
        })
        .collect();
    trace.form_confidence = form;
    let valid = match call.limits.min_confidence.threshold(form) {
        Some(min) => held(merge(valid), min, call, text, &mut incomplete, trace),
        None => merge(valid),
    };
    let (data, sources) = numbered(valid);
    (Answer::Ok(Value::Array(data)), sources, Some(incomplete))
}

/// The records held to `min` (`structure_min_confidence`), their confidences weighed with what
/// `text` says ([`evidence`]): a value below it dropped when its record stays valid without it
/// (`trace.lowConfidence`), a record unsure of a value it needs listed with the incomplete
/// ones, its need saying which.
fn held(
    records: Vec<Found>,
    min: f64,
    call: Call<'_>,
    text: &str,
    incomplete: &mut Vec<Incomplete>,
    trace: &mut Trace,
) -> Vec<Found> {
    let mut kept = Vec::with_capacity(records.len());
    for found in records {
        let confidences = confidence::of_sources(&found.sources);
        let confidences = evidence::weigh(&confidences, &found.sources, text, min);
        match confidence::hold_to(
            found.record.clone(),
            &confidences,
            min,
            &call.target.compiled,
        ) {
            Held::Kept { data, dropped } => {
                let index = kept.len();
                (trace.low_confidence)
                    .extend(dropped.pointers().iter().map(|at| format!("/{index}{at}")));
                kept.push(Found {
                    record: data,
                    sources: dropped.sources(found.sources),
                    at: found.at,
                });
            }
            Held::Unsure { need, .. } => incomplete.push(Incomplete {
                record: found.record,
                need,
                sources: found.sources,
            }),
        }
    }
    kept
}

/// Judges a chunk's answer record by record.
struct Records<'a> {
    target: &'a TargetSchema,
    /// The chunk's text.
    text: &'a str,
    grounding: Grounding,
}

impl Judge for Records<'_> {
    type Accepted = Vec<Judged>;

    fn judge(
        &self,
        text: &str,
        format: &AnswerFormat,
        repairs: &mut Vec<String>,
    ) -> Result<Vec<Judged>, Vec<Violation>> {
        let list = match decode(text, format, self.target, repairs) {
            Decoded::Unreadable(reason) => return Err(vec![reason::unreadable(&reason)]),
            // The records envelope has no need branch: a model that names a need anyway found
            // nothing whole.
            Decoded::Need(need) => {
                repairs.push(format!("read \"{need}\" as no record"));
                return Ok(Vec::new());
            }
            Decoded::Candidate(Value::Object(mut answer)) => answer.remove(RECORDS_KEY),
            Decoded::Candidate(list @ Value::Array(_)) => {
                repairs.push(format!(
                    "read a list given without the \"{RECORDS_KEY}\" key"
                ));
                Some(list)
            }
            Decoded::Candidate(_) => None,
        };
        let Some(Value::Array(records)) = list else {
            return Err(vec![Violation {
                category: Category::Type,
                pointer: format!("/{RECORDS_KEY}"),
                constraint: "must be an array of records".to_owned(),
                actual: None,
            }]);
        };
        let mut judged = Vec::with_capacity(records.len());
        let mut violations = Vec::new();
        for (index, record) in records.into_iter().enumerate() {
            match partial(self.target, &record, self.text, self.grounding) {
                Ok(Whole::Yes) => judged.push(Judged::Valid(record)),
                Ok(Whole::Lacking) => judged.push(Judged::Incomplete(record)),
                Err(found) => violations.extend(found.into_iter().map(|mut violation| {
                    violation.pointer = format!("/{RECORDS_KEY}/{index}{}", violation.pointer);
                    violation
                })),
            }
        }
        if violations.is_empty() {
            Ok(judged)
        } else {
            Err(violations)
        }
    }
}

/// A chunk's records, its text, where it starts, and the confidence of each value its answer
/// wrote (by pointer into the answer: `/records/0/name`).
type Chunked<'t> = (Vec<Judged>, &'t str, Offsets, BTreeMap<String, f64>);

/// Each chunk's valid and incomplete records, with their sources placed in the whole text.
fn located(
    found: Vec<Chunked<'_>>,
    schema: &Value,
    grounding: Grounding,
) -> (Vec<Vec<Found>>, Vec<Vec<Found>>) {
    let mut valid = Vec::with_capacity(found.len());
    let mut incomplete = Vec::with_capacity(found.len());
    for (records, text, offsets, confidences) in found {
        let (mut complete, mut partial) = (Vec::new(), Vec::new());
        for (index, judged) in records.into_iter().enumerate() {
            let (record, list) = match judged {
                Judged::Valid(record) => (record, &mut complete),
                Judged::Incomplete(record) => (record, &mut partial),
            };
            let sources = if grounding == Grounding::Off {
                Vec::new()
            } else {
                let mut sources = anchored(provenance::sources(&record, schema, text), text);
                confidence::annotate(
                    &mut sources,
                    &confidences,
                    &format!("/{RECORDS_KEY}/{index}"),
                );
                offsets.place(sources)
            };
            list.push(Found {
                record,
                sources,
                at: offsets.chars,
            });
        }
        valid.push(complete);
        incomplete.push(partial);
    }
    (valid, incomplete)
}

/// The records as `data`, and their sources with pointers into it (`/3/name`).
fn numbered(records: Vec<Found>) -> (Vec<Value>, Vec<Source>) {
    let mut data = Vec::with_capacity(records.len());
    let mut sources = Vec::new();
    for (index, found) in records.into_iter().enumerate() {
        data.push(found.record);
        sources.extend(found.sources.into_iter().map(|mut source| {
            source.pointer = format!("/{index}{}", source.pointer);
            source
        }));
    }
    (data, sources)
}
