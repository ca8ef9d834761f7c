//! Records mode's content stage: a conversation per chunk, their requests sent together up to
//! `structure_max_concurrent_calls` at a time, each chunk's answer judged record by record, and
//! the records of every chunk merged.

use std::collections::VecDeque;
use std::time::Duration;

use serde_json::Value;

use super::anchor::anchored;
use super::chunk::{Chunk, chunks};
use super::merge::{Found, merge};
use super::required::{missing, need_of, without_required};
use crate::answer::format::{AnswerFormat, RECORDS_KEY, Shape};
use crate::answer::{Decoded, decode};
use crate::content::dialogue::{Dialogue, Judge, Settled};
use crate::content::grounding::{Grounded, ground, provenance};
use crate::content::{Answered, Caller, Limits, conversation, reason, violations};
use crate::error::StructureError;
use crate::outcome::{Answer, Incomplete, Outcome, Source, Trace, Usage};
use crate::ports::{HttpRequest, HttpResponse, Next, Ports, Pump, TransportError};
use crate::provider::Provider;
use crate::schema::TargetSchema;
use crate::schema::violation::{Category, Violation};
use crate::schema::walk::escape;
use crate::settings::Grounding;

/// How records mode reads a text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Chunking {
    /// The most bytes of text one call is sent (`structure_chunk_tokens`).
    pub chunk_bytes: usize,
    /// Bytes consecutive chunks share, so a record cut by a chunk's end is whole in the next.
    pub overlap_bytes: usize,
    /// Calls in flight at once (`structure_max_concurrent_calls`).
    pub max_concurrent: usize,
}

/// What one record of a chunk's answer is.
enum Judged {
    Valid(Value),
    /// A record without a value its schema requires.
    Incomplete(Value),
}

/// Every record `text` holds, each valid against `target`.
pub(crate) fn extract(
    text: &str,
    target: &TargetSchema,
    limits: Limits,
    chunking: Chunking,
    provider: &dyn Provider,
    ports: &Ports<'_>,
    mut trace: Trace,
) -> Result<Outcome, StructureError> {
    let parts = chunks(text, chunking.chunk_bytes, chunking.overlap_bytes);
    trace.chunks = parts.len() as u32;
    // A record may lack a required value: the model leaves it out rather than invent it, and
    // the record is reported as incomplete.
    let loose = without_required(&target.schema);
    let mut runs: Vec<ChunkRun> = parts
        .iter()
        .map(|chunk| {
            let format = chunk_format(&loose, chunk.text, limits, provider, &mut trace);
            let conversation =
                conversation(chunk.text, target, limits, Shape::Records, provider, ports);
            ChunkRun {
                dialogue: Dialogue::new(provider, format, conversation, limits.max_loops),
                judge: Records {
                    target,
                    text: chunk.text,
                    grounding: limits.grounding,
                },
                settled: None,
                prepared: None,
            }
        })
        .collect();
    let caller = limits.caller(provider, ports);
    let mut usage = Usage::default();
    if let Some(budget) = limits.budget {
        // The budget covers every chunk: none is asked when the first calls alone could pass it.
        for run in &mut runs {
            run.prepared = Some(run.dialogue.request());
        }
        let first: Vec<&HttpRequest> = runs
            .iter()
            .filter_map(|run| run.prepared.as_ref())
            .collect();
        budget.check(usage, &first)?;
    }
    converse(
        &mut runs,
        caller,
        chunking.max_concurrent,
        &mut usage,
        &mut trace,
    )?;
    let iterations = runs.iter().map(|run| run.dialogue.iterations).sum();
    let (answer, sources, incomplete) = gather(
        runs,
        text,
        &parts,
        &target.schema,
        limits.grounding,
        &mut trace,
    );
    Ok(Outcome {
        answer,
        sources,
        incomplete,
        schema_origin: target.origin.clone(),
        iterations,
        usage,
        trace,
    })
}

/// What the chunks' conversations came to, as one answer: every record merged, with the
/// sources and the incomplete records; or stale with the errors of the chunks that were.
fn gather(
    runs: Vec<ChunkRun<'_>>,
    text: &str,
    parts: &[Chunk<'_>],
    schema: &Value,
    grounding: Grounding,
    trace: &mut Trace,
) -> (Answer, Vec<Source>, Option<Vec<Incomplete>>) {
    let offsets = Offsets::of(text, parts);
    let mut found = Vec::with_capacity(runs.len());
    let mut stale = Vec::new();
    for ((run, chunk), offset) in runs.into_iter().zip(parts).zip(&offsets) {
        trace.absorb(run.dialogue.trace);
        match run.settled {
            Some(Settled::Accepted(records)) => found.push((records, chunk.text, *offset)),
            Some(Settled::Stale(violations)) => {
                let at = format!("characters {}–{}", offset.chars, offset.end_chars);
                stale.extend(
                    violations
                        .iter()
                        .map(|violation| format!("{at}: {violation}")),
                );
            }
            // A chunk never asked: another one's answer already made the result stale.
            None => {}
        }
    }
    if !stale.is_empty() {
        return (Answer::Stale(stale), Vec::new(), None);
    }
    let (valid, incomplete) = located(found, schema, grounding);
    let (data, sources) = numbered(merge(valid));
    let incomplete = merge(incomplete)
        .into_iter()
        .map(|found| Incomplete {
            need: need_of(&found.record, schema),
            record: found.record,
            sources: found.sources,
        })
        .collect();
    (Answer::Ok(Value::Array(data)), sources, Some(incomplete))
}

/// One chunk's conversation, and what it came to.
struct ChunkRun<'a> {
    dialogue: Dialogue<'a>,
    judge: Records<'a>,
    settled: Option<Settled<Vec<Judged>>>,
    /// The first request, when it was made before any was sent (for the budget's check).
    prepared: Option<HttpRequest>,
}

/// Runs every chunk's conversation to its end, up to `max_concurrent` requests in flight (the
/// transport's [`pump`](crate::ports::Transport::pump)); once a chunk's answer is stale no new
/// request is started.
fn converse<'a>(
    runs: &mut [ChunkRun<'a>],
    caller: Caller<'a>,
    max_concurrent: usize,
    usage: &mut Usage,
    trace: &mut Trace,
) -> Result<(), StructureError> {
    let mut chunks = Conversations {
        waiting: (0..runs.len()).collect(),
        runs,
        caller,
        in_flight: Vec::new(),
        retrying: Vec::new(),
        usage: *usage,
        retries: 0,
        failed: None,
    };
    caller.ports.transport.pump(max_concurrent, &mut chunks);
    *usage = chunks.usage;
    trace.retries += chunks.retries;
    match chunks.failed {
        Some(error) => Err(error.with_usage(*usage)),
        None => Ok(()),
    }
}

/// The chunks' conversations as the transport's pump sees them: the next request of a chunk
/// that waits for one, each answer taken by its chunk, and the retries whose wait is over.
struct Conversations<'r, 'a> {
    runs: &'r mut [ChunkRun<'a>],
    caller: Caller<'a>,
    /// Chunks whose next request is to be started, in order.
    waiting: VecDeque<usize>,
    /// The requests under way (for the budget and for retries).
    in_flight: Vec<Attempt>,
    /// Requests to start again once their wait is over; the other chunks go on meanwhile.
    retrying: Vec<(Attempt, u64)>,
    usage: Usage,
    retries: u32,
    /// The first error: nothing more is started, and the call ends with it.
    failed: Option<StructureError>,
}

/// One attempt at a chunk's request.
struct Attempt {
    chunk: usize,
    request: HttpRequest,
    /// 0 for the first.
    attempt: u32,
}

impl Pump for Conversations<'_, '_> {
    fn next(&mut self) -> Next {
        let stale = self
            .runs
            .iter()
            .any(|run| matches!(run.settled, Some(Settled::Stale(_))));
        if stale || self.failed.is_some() {
            return Next::Idle;
        }
        let now = self.caller.ports.clock.now_unix_millis();
        let soonest = (self.retrying.iter().enumerate())
            .map(|(at, (_, due))| (at, *due))
            .min_by_key(|(_, due)| *due);
        if let Some((at, due)) = soonest
            && due <= now
        {
            return self.restart(at);
        }
        if let Some(chunk) = self.waiting.pop_front() {
            return self.start(chunk);
        }
        let Some((at, due)) = soonest else {
            return Next::Idle;
        };
        let wait = Duration::from_millis(due.saturating_sub(now));
        if !self.in_flight.is_empty() {
            return Next::Wait(wait);
        }
        // Nothing in flight for the pump to wait on: the wait is taken here.
        self.caller.ports.clock.sleep(wait);
        self.restart(at)
    }

    fn done(&mut self, chunk: usize, answer: Result<HttpResponse, TransportError>) {
        let Some(at) = self.in_flight.iter().position(|sent| sent.chunk == chunk) else {
            return;
        };
        let sent = self.in_flight.swap_remove(at);
        if self.failed.is_some() {
            // What an answer after the failure cost still counts.
            if let Ok(completion) =
                answer.map(|response| self.caller.provider.completion(&response))
            {
                self.usage
                    .add(completion.map_or_else(|error| error.usage, |c| c.usage));
            }
            return;
        }
        let taken = match self
            .caller
            .answered(&sent.request, answer, sent.attempt, &mut self.usage)
        {
            Ok(Answered::Completed(completion)) => {
                let run = &mut self.runs[chunk];
                run.dialogue
                    .take(completion.delivered, &run.judge, self.usage)
            }
            Ok(Answered::RetryAfter(wait)) => {
                let due = (self.caller.ports.clock.now_unix_millis())
                    .saturating_add(u64::try_from(wait.as_millis()).unwrap_or(u64::MAX));
                let again = Attempt {
                    attempt: sent.attempt + 1,
                    ..sent
                };
                self.retrying.push((again, due));
                return;
            }
            Err(error) => Err(error),
        };
        match taken {
            Ok(Some(settled)) => self.runs[chunk].settled = Some(settled),
            Ok(None) => self.waiting.push_back(chunk),
            Err(error) => self.failed = Some(error),
        }
    }
}

impl Conversations<'_, '_> {
    /// Starts `chunk`'s next request, if the budget lets it go with those in flight.
    fn start(&mut self, chunk: usize) -> Next {
        let run = &mut self.runs[chunk];
        let request = run
            .prepared
            .take()
            .unwrap_or_else(|| run.dialogue.request());
        let in_flight: Vec<&HttpRequest> =
            self.in_flight.iter().map(|sent| &sent.request).collect();
        match self.caller.start(&request, &in_flight, &mut self.usage) {
            Ok(sent) => {
                let sent = sent.into_owned();
                self.in_flight.push(Attempt {
                    chunk,
                    request,
                    attempt: 0,
                });
                Next::Start(chunk, sent)
            }
            Err(error) => {
                self.failed = Some(error);
                Next::Idle
            }
        }
    }

    /// Starts the retry at `at` of the waiting ones.
    fn restart(&mut self, at: usize) -> Next {
        let (again, _) = self.retrying.swap_remove(at);
        self.retries += 1;
        match self.caller.restart(&again.request, &mut self.usage) {
            Ok(sent) => {
                let sent = sent.into_owned();
                let chunk = again.chunk;
                self.in_flight.push(again);
                Next::Start(chunk, sent)
            }
            Err(error) => {
                self.failed = Some(error);
                Next::Idle
            }
        }
    }
}

/// The answer format for one chunk: the record schema grounded in the chunk's text.
fn chunk_format(
    loose: &Value,
    text: &str,
    limits: Limits,
    provider: &dyn Provider,
    trace: &mut Trace,
) -> AnswerFormat {
    let sent = match ground(loose, text, limits.extractive) {
        Grounded::Narrowed { schema, notes } => {
            note(trace, notes);
            schema.into_owned()
        }
        // Nothing is required of a record here; a nested required field may still find no
        // candidate: the schema is then sent as it is.
        Grounded::Missing(_) => loose.clone(),
    };
    let format = provider.answer_format(&sent, Shape::Records);
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
        let list = match decode(text, format, &self.target.schema, repairs) {
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
            match self.record(record) {
                Ok(record) => judged.push(record),
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

impl Records<'_> {
    /// A record is valid, incomplete (it lacks a value required at its root, and the values it
    /// has break nothing), or has violations to feed back.
    fn record(&self, record: Value) -> Result<Judged, Vec<Violation>> {
        let schema = &self.target.schema;
        let lacking: Vec<String> = missing(&record, schema)
            .into_iter()
            .map(|name| format!("/{}", escape(name)))
            .collect();
        let violations = violations(
            self.target,
            &record,
            self.text,
            self.grounding,
            |violation| {
                violation.category == Category::Required && lacking.contains(&violation.pointer)
            },
        );
        match (violations.is_empty(), lacking.is_empty()) {
            (false, _) => Err(violations),
            (true, true) => Ok(Judged::Valid(record)),
            (true, false) => Ok(Judged::Incomplete(record)),
        }
    }
}

/// Where a chunk starts and ends in the whole text, in code points and UTF-16 code units.
#[derive(Debug, Clone, Copy)]
struct Offsets {
    chars: usize,
    end_chars: usize,
    utf16: usize,
}

impl Offsets {
    /// The offsets of `parts` (in text order) in `text`, counted in one pass.
    fn of(text: &str, parts: &[Chunk<'_>]) -> Vec<Offsets> {
        let (mut byte, mut chars, mut utf16) = (0, 0, 0);
        let mut advance = |to: usize| {
            let passed = &text[byte.min(to)..to];
            chars += passed.chars().count();
            utf16 += passed.encode_utf16().count();
            byte = byte.max(to);
            (chars, utf16)
        };
        parts
            .iter()
            .map(|chunk| {
                let (start_chars, start_utf16) = advance(chunk.start);
                Offsets {
                    chars: start_chars,
                    end_chars: start_chars + chunk.text.chars().count(),
                    utf16: start_utf16,
                }
            })
            .collect()
    }

    /// `sources` found in the chunk, placed in the whole text.
    fn place(self, mut sources: Vec<Source>) -> Vec<Source> {
        for span in sources.iter_mut().filter_map(|source| source.span.as_mut()) {
            span.start += self.chars;
            span.end += self.chars;
            span.utf16_start += self.utf16;
            span.utf16_end += self.utf16;
        }
        sources
    }
}

/// Each chunk's valid and incomplete records, with their sources placed in the whole text.
fn located(
    found: Vec<(Vec<Judged>, &str, Offsets)>,
    schema: &Value,
    grounding: Grounding,
) -> (Vec<Vec<Found>>, Vec<Vec<Found>>) {
    let mut valid = Vec::with_capacity(found.len());
    let mut incomplete = Vec::with_capacity(found.len());
    for (records, text, offsets) in found {
        let (mut complete, mut partial) = (Vec::new(), Vec::new());
        for judged in records {
            let (record, list) = match judged {
                Judged::Valid(record) => (record, &mut complete),
                Judged::Incomplete(record) => (record, &mut partial),
            };
            let sources = if grounding == Grounding::Off {
                Vec::new()
            } else {
                offsets.place(anchored(provenance::sources(&record, schema, text), text))
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
