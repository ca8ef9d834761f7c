//! A chunk's answer judged record by record, and its records placed in the whole text.

use std::collections::BTreeMap;

use serde_json::Value;

use super::anchor::anchored;
use super::merge::Found;
use super::rows::Spliced;
use crate::answer::format::{AnswerFormat, RECORDS_KEY};
use crate::answer::{Decoded, decode};
use crate::content::check::{Whole, partial};
use crate::content::chunked::offsets::Offsets;
use crate::content::chunked::pump::ChunkRun;
use crate::content::confidence;
use crate::content::dialogue::{Judge, Settled};
use crate::content::grounding::provenance;
use crate::content::reason;
use crate::outcome::{Source, Trace};
use crate::schema::TargetSchema;
use crate::schema::violation::{Category, Violation};
use crate::settings::Grounding;

/// What one record of a chunk's answer is.
pub(super) enum Judged {
    Valid(Value),
    /// A record without a value its schema requires.
    Incomplete(Value),
}

/// What the runs came to: each accepted answer's records, with the text it read and where
/// that is; each stale one's violations, with where; the least sure form of them all.
pub(super) struct Answers<'t> {
    pub found: Vec<Chunked<'t>>,
    pub stale: Vec<(Placement<'t>, Vec<Violation>)>,
    pub form: Option<f64>,
}

impl<'t> Answers<'t> {
    /// What `runs`, each of the text placed by its placement, came to (their traces absorbed
    /// into `trace`).
    pub fn of(
        runs: Vec<ChunkRun<'t, Records<'t>>>,
        placements: impl IntoIterator<Item = Placement<'t>>,
        trace: &mut Trace,
    ) -> Self {
        let mut answers = Answers {
            found: Vec::with_capacity(runs.len()),
            stale: Vec::new(),
            form: None,
        };
        for (run, placement) in runs.into_iter().zip(placements) {
            trace.absorb(run.dialogue.trace);
            match run.settled {
                Some(Settled::Accepted(records)) => {
                    let confidences = (run.dialogue.answered.as_ref())
                        .map(|(answer, tokens)| confidence::of_values(answer, tokens))
                        .unwrap_or_default();
                    // The least sure form speaks for the text (`confidence::of_form`).
                    if let Some(own) = confidence::of_answered(run.dialogue.answered.as_ref()) {
                        answers.form = Some(answers.form.map_or(own, |least| least.min(own)));
                    }
                    answers
                        .found
                        .push((records, run.judge.text, placement, confidences));
                }
                Some(Settled::Stale(violations)) => answers.stale.push((placement, violations)),
                // Never asked: another one's answer already made the result stale.
                None => {}
            }
        }
        answers
    }
}

/// Judges a chunk's answer record by record.
pub(super) struct Records<'a> {
    pub target: &'a TargetSchema,
    /// The chunk's text.
    pub text: &'a str,
    pub grounding: Grounding,
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

/// A chunk's records, its text, where it is in the whole text, and the confidence of each value
/// its answer wrote (by pointer into the answer: `/records/0/name`).
pub(super) type Chunked<'t> = (Vec<Judged>, &'t str, Placement<'t>, BTreeMap<String, f64>);

/// Where a text a model read stands in the whole: a chunk of it, or rows of its tables read
/// again under their header.
pub(super) enum Placement<'t> {
    Chunk(Offsets),
    Rows(&'t Spliced<'t>),
}

impl Placement<'_> {
    /// `sources` found in the text read, placed in the whole.
    fn place(&self, sources: Vec<Source>) -> Vec<Source> {
        match self {
            Placement::Chunk(offsets) => offsets.place(sources),
            Placement::Rows(spliced) => spliced.place(sources),
        }
    }

    /// Where the text read starts in the whole (code points).
    fn at(&self) -> usize {
        match self {
            Placement::Chunk(offsets) => offsets.chars,
            Placement::Rows(spliced) => spliced.first(),
        }
    }
}

/// Each chunk's valid and incomplete records, with their sources placed in the whole text.
pub(super) fn located(
    found: Vec<Chunked<'_>>,
    schema: &Value,
    grounding: Grounding,
) -> (Vec<Vec<Found>>, Vec<Vec<Found>>) {
    let mut valid = Vec::with_capacity(found.len());
    let mut incomplete = Vec::with_capacity(found.len());
    for (records, text, placement, confidences) in found {
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
                placement.place(sources)
            };
            list.push(Found {
                record,
                sources,
                at: placement.at(),
            });
        }
        valid.push(complete);
        incomplete.push(partial);
    }
    (valid, incomplete)
}
