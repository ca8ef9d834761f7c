//! Records mode's content stage: a conversation per chunk (their calls in flight together,
//! [`crate::content::chunked::pump`]), each chunk's answer judged record by record
//! ([`super::judged`]), a chunk whose answer the model's output limit cut off halved and read
//! again, the rows of a table no record came from read again ([`super::reread`]), and the
//! records of every chunk merged.

use serde_json::Value;

use super::columns;
use super::judged::{Answers, Placement, Records, located};
use super::merge::{Found, merge};
use super::reread::{self, Reread};
use super::rows::{Table, tables};
use crate::answer::format::Shape;
use crate::content::call::Call;
use crate::content::chunked::offsets::Offsets;
use crate::content::chunked::pump::{ChunkRun, OnCut, OnStale, converse};
use crate::content::chunked::required::{need_of, without_required};
use crate::content::chunked::split::{self, Chunk};
use crate::content::chunked::{Chunking, runs, stale_errors};
use crate::content::confidence::{self, Held};
use crate::content::dialogue::Settled;
use crate::content::evidence;
use crate::error::StructureError;
use crate::outcome::{Answer, Incomplete, Outcome, Source, Trace, Usage};
use crate::settings::Grounding;

/// Every record `text` holds, each valid against `call`'s target.
pub(crate) fn extract(call: Call<'_>, text: &str) -> Result<Outcome, StructureError> {
    let Call { target, limits, .. } = call;
    let mut trace = call.trace();
    let tables = match limits.grounding {
        Grounding::Off => Vec::new(),
        _ => tables(text),
    };
    let direct = columns::read(text, &tables, target);
    // A record may lack a required value: the model leaves it out rather than invent it, and
    // the record is reported as incomplete.
    let loose = without_required(&target.schema);
    let chunking = Chunking::fitted(call, &loose, Shape::Records)?;
    // The tables say it all: no part is read whole, only the rows they did not give.
    let parts = match direct.whole {
        true => Vec::new(),
        false => chunking.split(text)?,
    };
    let mut usage = Usage::default();
    let (runs, parts) = read_parts(call, &loose, parts, &chunking, &mut usage, &mut trace)?;
    let iterations: u32 = runs.iter().map(|run| run.dialogue.iterations).sum();
    let (answer, sources, incomplete, reread) = gather(
        runs,
        (text, &tables, direct.found),
        (&parts, &chunking),
        call,
        (&mut usage, &mut trace),
    )?;
    let iterations = iterations + reread;
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
        review: None,
    })
}

/// The most times a chunk whose answer the model's output limit cut off is halved and read
/// again: a part a sixth of a chunk long still cut off is a model that does not stop.
const MAX_HALVINGS: u32 = 3;

/// Every part's conversation, in text order: a part whose answer was cut off (more records
/// than the model's output limit holds) read again as two halves, up to [`MAX_HALVINGS`] times,
/// so that its records are all read, not the error of one part lost with the others'.
fn read_parts<'t>(
    call: Call<'t>,
    loose: &Value,
    parts: Vec<Chunk<'t>>,
    chunking: &Chunking,
    usage: &mut Usage,
    trace: &mut Trace,
) -> Result<(Vec<ChunkRun<'t, Records<'t>>>, Vec<Chunk<'t>>), StructureError> {
    let mut read: Vec<(Chunk<'t>, ChunkRun<'t, Records<'t>>)> = Vec::new();
    let mut asking = parts;
    for halving in 0..=MAX_HALVINGS {
        trace.chunks += asking.len() as u32;
        let mut runs = runs(call, loose, &asking, Shape::Records, trace, |text| {
            Records {
                target: call.target,
                text,
                grounding: call.limits.grounding,
            }
        });
        let on = (OnStale::Stop, OnCut::Keep);
        converse(
            &mut runs,
            call.caller(),
            chunking.max_concurrent,
            on,
            usage,
            trace,
        )?;
        let mut cut = Vec::new();
        for (part, mut run) in asking.into_iter().zip(runs) {
            match run.cut.take() {
                Some(error) => cut.push((part, error)),
                None => read.push((part, run)),
            }
        }
        let stale = (read.iter()).any(|(_, run)| matches!(run.settled, Some(Settled::Stale(_))));
        if cut.is_empty() || stale {
            break;
        }
        if halving == MAX_HALVINGS {
            let (_, error) = cut.swap_remove(0);
            return Err(error.with_usage(*usage));
        }
        asking = (cut.iter())
            .flat_map(|(part, _)| halves(part, chunking.overlap_bytes))
            .collect();
    }
    read.sort_by_key(|(part, _)| part.start);
    Ok(read.into_iter().map(|(part, run)| (run, part)).unzip())
}

/// `part` in two (or, with their overlap, three) parts, sharing at most an eighth of it.
fn halves<'t>(part: &Chunk<'t>, overlap: usize) -> Vec<Chunk<'t>> {
    let overlap = overlap.min(part.text.len() / 8);
    let half = (part.text.len() + overlap).div_ceil(2);
    (split::chunks(part.text, half, overlap).into_iter())
        .map(|piece| Chunk {
            text: piece.text,
            start: part.start + piece.start,
        })
        .collect()
}

/// What the chunks' conversations came to, as one answer: every record merged (the rows of
/// a table no record came from read again, [`reread`]), with the sources and the incomplete
/// records; or stale with the errors of the chunks that were.
fn gather<'t>(
    runs: Vec<ChunkRun<'t, Records<'t>>>,
    (text, tables, direct): (&'t str, &[Table], Vec<Found>),
    (parts, chunking): (&[Chunk<'t>], &Chunking),
    call: Call<'_>,
    (usage, trace): (&mut Usage, &mut Trace),
) -> Result<Gathered, StructureError> {
    let schema = &call.target.schema;
    let placements = Offsets::of(text, parts).into_iter().map(Placement::Chunk);
    let answers = Answers::of(runs, placements, trace);
    if !answers.stale.is_empty() {
        let errors = stale_errors(answers.stale.iter().filter_map(|(at, violations)| {
            let Placement::Chunk(offsets) = at else {
                return None;
            };
            Some((*offsets, violations.as_slice()))
        }));
        return Ok((Answer::Stale(errors), Vec::new(), None, 0));
    }
    let form = answers.form;
    let (mut valid, mut incomplete) = located(answers.found, schema, call.limits.grounding);
    // The rows the tables gave without a model, as one more part's records.
    valid.push(direct);
    let reread = match call.limits.grounding {
        Grounding::Off => Reread::default(),
        _ => reread::complete(
            call,
            (text, tables),
            chunking,
            (&mut valid, &mut incomplete),
            usage,
            trace,
        )?,
    };
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
    incomplete.extend(reread.missing);
    let (data, sources) = numbered(valid);
    Ok((
        Answer::Ok(Value::Array(data)),
        sources,
        Some(incomplete),
        reread.iterations,
    ))
}

/// The answer, its sources, the incomplete records, and the iterations the rows read again
/// took.
type Gathered = (Answer, Vec<Source>, Option<Vec<Incomplete>>, u32);

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
