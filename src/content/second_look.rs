//! A second look at what the model was unsure of. A field of a long text's answer is read
//! again, alone, from the few passages of the text that speak of it ([`passages::about`]): one
//! short request a field, with the same prompt, checks and threshold as the whole call. A small
//! model that hesitates over "which state's law governs" in twenty pages answers it surely from
//! the one clause that says so, and a value the text does not state stays out, as the passages
//! do not state it either.
//!
//! Two kinds of field are looked at again, where `structure_min_confidence` holds the answer:
//!
//! - one the threshold **left out** whole: what the look is sure of joins the answer;
//! - one **kept in doubt**, at or above the threshold but under [`JUDGED`] (where the
//!   reliability table puts the reading model right 61 % of the time, against 98 % above): the
//!   look, held to no threshold, confirms it (the same value, however sure), or gives another
//!   (of two readings that disagree, the surer one stands, when it is over the threshold), or
//!   gives none (the passages about it do not state it): then the value is left out where the
//!   answer may do without it, as one under the threshold.
//!
//! Only where a look can tell more than the first reading: an object's fields that are not
//! arrays (a list's items are spread over the text, more than a few passages hold), of a text at
//! least twice as long as the passages (else it is the same reading), read whole or in parts,
//! from its text alone (a document the model also saw as pictures is not all in its text). What
//! a look finds joins the answer only when the whole answer stays valid; `trace.secondLooks`
//! says what each look found, or why it found nothing.

use serde_json::Value;

use crate::content::call::{Call, Limits};
use crate::content::confidence;
use crate::content::evidence::JUDGED;
use crate::content::grounding::provenance;
use crate::content::leave_out::{Dropped, by_segments, droppable, remove, within};
use crate::content::one::{self, Read};
use crate::content::passages::{self, Passages};
use crate::content::stated;
use crate::error::StructureError;
use crate::outcome::{Answer, Outcome, Source, Usage};
use crate::schema::{TargetSchema, walk};
use crate::settings::{Grounding, MinConfidence};

/// The most fields one call looks at again: each look is a request.
const MAX_LOOKS: usize = 4;
/// The passages a look is given.
const PASSAGES: usize = 3;
/// The shortest text a look is taken of: one longer than its passages could be, which the first
/// reading read as closely.
const MIN_TEXT_BYTES: usize = PASSAGES * passages::MAX_PASSAGE_BYTES;
/// What stands between two passages in the text a look is given.
const GAP: &str = "\n…\n";

/// The text a call's looks read, split into its passages once for them all.
struct Text<'t> {
    whole: &'t str,
    passages: Passages,
}

/// Why a field is looked at again.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Doubt {
    /// The threshold left it out.
    LeftOut,
    /// Kept, with this confidence, under [`JUDGED`].
    Kept(f64),
}

/// `outcome` (an answer to `call` from `text`) with what a second look at each field in doubt
/// found.
pub(super) fn run(call: Call<'_>, text: &str, mut outcome: Outcome) -> Outcome {
    let Some(min) = (call.limits.min_confidence).threshold(outcome.trace.form_confidence) else {
        return outcome;
    };
    outcome = settle(call, text, min, outcome);
    let fields = doubted(call, text, min, &outcome);
    if fields.is_empty() {
        return outcome;
    }
    let text = Text {
        whole: text,
        passages: Passages::of(text),
    };
    for (field, doubt) in fields {
        let note = match look(call, &text, &field, (doubt, min), &mut outcome) {
            Ok(note) => note,
            Err(error) => {
                outcome.usage.add(error.usage);
                Some(format!(
                    "/{field}: the look failed ({}); the answer stands as it was",
                    error.message
                ))
            }
        };
        outcome.trace.second_looks.extend(note);
    }
    outcome
}

/// `outcome` with each value it needs that the model was unsure of (`trace.inDoubt`, under the
/// threshold `min`) settled by asking the model whether the text states it at all
/// ([`stated::ask`], one call for all of them, of a long text the passages around each value's
/// span, or about its field when no span writes it): a small model that hesitated over a value
/// it read says yes, one that took a span of the right kind for a value the text lacks says
/// no. Stated, the value is kept and stays named in `trace.inDoubt` (uncertain is not absent);
/// not, or with no answer, the call asks for it (`need-more-input`), with the rest of the
/// answer as its `partial`.
fn settle(call: Call<'_>, text: &str, min: f64, mut outcome: Outcome) -> Outcome {
    let Answer::Ok(data) = &outcome.answer else {
        return outcome;
    };
    if outcome.trace.in_doubt.is_empty() {
        return outcome;
    }
    let data = data.clone();
    let doubted = std::mem::take(&mut outcome.trace.in_doubt);
    let first = |pointer: &str| least_confidence(&outcome.sources, pointer).unwrap_or(0.0);
    let firsts: Vec<(String, f64)> = doubted
        .iter()
        .map(|pointer| (pointer.clone(), first(pointer)))
        .collect();
    let excerpt = around(call, text, &outcome.sources, &doubted);
    let verdicts = stated_verdicts(call, &excerpt, &data, &doubted, &mut outcome);
    let mut unconfirmed = Vec::new();
    for ((pointer, stated), (_, first)) in verdicts.into_iter().zip(&firsts) {
        let (note, kept) = match stated {
            Some(true) => ("the text states it; kept in doubt", true),
            Some(false) => ("the text does not state it", false),
            None => ("no answer to whether the text states it", false),
        };
        outcome
            .trace
            .second_looks
            .push(format!("{pointer} ({first}): {note}"));
        if kept {
            outcome.trace.in_doubt.push(pointer);
        } else {
            unconfirmed.push((pointer, *first));
        }
    }
    if !unconfirmed.is_empty() {
        // Asked for, with the rest of what the text gave: never answered with nothing.
        let mut partial = data;
        let mut dropped = Dropped::default();
        let mut gone: Vec<&String> = unconfirmed.iter().map(|(pointer, _)| pointer).collect();
        // Last first: dropping an array's later item leaves its earlier ones where they are.
        gone.sort_by(|a, b| by_segments(b, a));
        for pointer in gone {
            dropped.push(&partial, pointer.clone());
            remove(&mut partial, pointer);
        }
        outcome.sources = dropped.sources(std::mem::take(&mut outcome.sources));
        let in_doubt = std::mem::take(&mut outcome.trace.in_doubt);
        outcome.trace.in_doubt = (in_doubt.iter()).filter_map(|p| dropped.moved(p)).collect();
        outcome.partial = Some(partial);
        outcome.answer = Answer::NeedMoreInput(confidence::unsure_need(&unconfirmed, min));
    }
    outcome
}

/// What the question whether `text` states each value at `doubted` of `data` answered; `None`
/// for each when it failed (`outcome`'s trace says why).
fn stated_verdicts(
    call: Call<'_>,
    text: &str,
    data: &Value,
    doubted: &[String],
    outcome: &mut Outcome,
) -> Vec<(String, Option<bool>)> {
    match stated::ask(call, text, data, doubted, outcome.usage) {
        Ok(verdicts) => {
            outcome.usage.add(verdicts.usage);
            verdicts.verdicts
        }
        Err(error) => {
            outcome.usage.add(error.usage);
            let note = format!(
                "the question whether the text states them failed ({})",
                error.message
            );
            outcome.trace.second_looks.push(note);
            doubted
                .iter()
                .map(|pointer| (pointer.clone(), None))
                .collect()
        }
    }
}

/// The fields of `outcome`'s answer (from `text`) a look may tell more of, at most
/// [`MAX_LOOKS`]: left out whole by the threshold `min`, then kept at or above it but under
/// [`JUDGED`], least sure first; never an array, and none of a text no longer than
/// [`MIN_TEXT_BYTES`].
fn doubted(call: Call<'_>, text: &str, min: f64, outcome: &Outcome) -> Vec<(String, Doubt)> {
    let (Answer::Ok(Value::Object(data)), Some(properties)) = (
        &outcome.answer,
        (call.target.schema.get("properties")).and_then(Value::as_object),
    ) else {
        return Vec::new();
    };
    if text.len() <= MIN_TEXT_BYTES || call.attachment.is_some() || call.target.wrapped {
        return Vec::new();
    }
    let listed = |field: &str| {
        properties.get(field).is_some_and(|property| {
            let property = walk::follow(&call.target.schema, property);
            let array = Value::from("array");
            property.get("items").is_some()
                || match property.get("type") {
                    Some(Value::Array(types)) => types.contains(&array),
                    named => named == Some(&array),
                }
        })
    };
    let mut fields: Vec<(String, Doubt)> = Vec::new();
    for pointer in &outcome.trace.low_confidence {
        let field = field_of(pointer);
        if properties.contains_key(&field)
            && !data.contains_key(&field)
            && !listed(&field)
            && !fields.iter().any(|(seen, _)| *seen == field)
        {
            fields.push((field, Doubt::LeftOut));
        }
    }
    let mut kept: Vec<(String, f64)> = (data.keys())
        .filter(|field| properties.contains_key(*field) && !listed(field))
        .filter_map(|field| {
            let sure = least_confidence(&outcome.sources, &pointer_of(field))?;
            // Under the threshold and kept: the text labels it, it is read, not guessed.
            (min <= sure && sure < JUDGED).then(|| (field.clone(), sure))
        })
        .collect();
    kept.sort_by(|(_, a), (_, b)| a.total_cmp(b));
    fields.extend((kept.into_iter()).map(|(field, sure)| (field, Doubt::Kept(sure))));
    fields.truncate(MAX_LOOKS);
    fields
}

/// Looks at `field` again in the passages of `text` about it, in `doubt` under the threshold
/// `min`; what it found joins `outcome`. The note says what came of it (none for a kept value no
/// look could be taken of).
fn look(
    call: Call<'_>,
    text: &Text<'_>,
    field: &str,
    (doubt, min): (Doubt, f64),
    outcome: &mut Outcome,
) -> Result<Option<String>, StructureError> {
    // A value kept is compared with what the look reads however sure it is of it; one left out
    // takes only what the look is sure of, weighed as the first reading was.
    let threshold = match doubt {
        Doubt::LeftOut => call.limits.min_confidence,
        Doubt::Kept(_) => MinConfidence::Off,
    };
    let (read, passages) = match read_again(call, text, field, threshold, outcome.usage)? {
        Again::Read(read, passages) => (read, passages),
        Again::NotTaken(why) => {
            // A value kept is not worth a note of a look not taken.
            return Ok((doubt == Doubt::LeftOut).then(|| format!("/{field}: {why}")));
        }
        Again::TooLong(passages) => {
            return Ok(Some(format!("/{field}: {passages} did not fit the window")));
        }
    };
    outcome.usage.add(read.usage);
    let value = match &read.answer {
        Answer::Ok(data) => data.get(field).cloned(),
        _ => None,
    };
    let Some(value) = value else {
        let why = match (&read.answer, read.trace.low_confidence.is_empty()) {
            (Answer::Ok(_), false) => "give it only under the threshold",
            (Answer::Stale(_), _) => "gave no valid value of it",
            _ => "do not state it",
        };
        let kept = match doubt {
            Doubt::LeftOut => "",
            Doubt::Kept(_) if leave_out(call, field, outcome) => "; unconfirmed, left out",
            Doubt::Kept(_) => "; unconfirmed, but the answer needs it",
        };
        return Ok(Some(format!("/{field}: {passages} {why}{kept}")));
    };
    let sure = least_confidence(&read.sources, &pointer_of(field));
    let said = match sure {
        Some(sure) => format!("{value} ({sure})"),
        None => value.to_string(),
    };
    if let (Doubt::Kept(first), Answer::Ok(data)) = (doubt, &outcome.answer) {
        if data.get(field) == Some(&value) {
            return Ok(Some(format!("/{field}: {said} confirmed by {passages}")));
        }
        if sure.is_none_or(|sure| sure < first.max(min)) {
            return Ok(Some(format!(
                "/{field}: {passages} give {said}, less sure than the first reading ({first}), which stands"
            )));
        }
    }
    if !join(call, text.whole, field, value, &read.sources, outcome) {
        return Ok(Some(format!(
            "/{field}: {said} from {passages} would break the schema"
        )));
    }
    Ok(Some(match doubt {
        Doubt::LeftOut => format!("/{field}: {said} from {passages}"),
        Doubt::Kept(first) => {
            format!("/{field}: {said} from {passages}, surer than the first reading ({first})")
        }
    }))
}

/// What reading a field again came to.
enum Again {
    /// The look's outcome, and which passages it read (for the note).
    Read(Box<Outcome>, String),
    /// No look was taken: why.
    NotTaken(&'static str),
    /// These passages did not fit the model's window.
    TooLong(String),
}

/// `field` read alone from the passages of `text` about it, held to `threshold`, within what is
/// left of the call's token budget after `spent`.
fn read_again(
    call: Call<'_>,
    text: &Text<'_>,
    field: &str,
    threshold: MinConfidence,
    spent: Usage,
) -> Result<Again, StructureError> {
    let property = &call.target.schema["properties"][field];
    let found = text.passages.about(&query(field, property), PASSAGES);
    let excerpt: Vec<&str> = found
        .iter()
        .map(|range| &text.whole[range.clone()])
        .collect();
    let excerpt = excerpt.join(GAP);
    if excerpt.is_empty() {
        return Ok(Again::NotTaken("no passage of the text speaks of it"));
    }
    if excerpt.len() * 2 > text.whole.len() {
        return Ok(Again::NotTaken(
            "its passages are most of the text, read already",
        ));
    }
    let spans: Vec<String> = (found.iter())
        .map(|range| format!("{}–{}", range.start, range.end))
        .collect();
    let passages = format!("its passages (bytes {})", spans.join(", "));
    let target = TargetSchema::stored(
        alone(&call.target.schema, field),
        call.target.manual.clone(),
        call.target.origin.clone(),
    )?;
    let mut limits = Limits {
        min_confidence: threshold,
        ..call.limits
    };
    if let Some(budget) = &mut limits.budget {
        budget.spent_before += spent.prompt_tokens + spent.completion_tokens;
    }
    let alone = Call {
        target: &target,
        limits,
        earlier_violations: &[],
        attachment: None,
        ..call
    };
    Ok(match one::run(alone, &excerpt)? {
        Read::Whole(read) => Again::Read(read, passages),
        Read::InParts(_) => Again::TooLong(passages),
    })
}

/// `outcome`'s answer with `value` as its `field` (located in `text`, with the confidence the
/// look's `sources` give it), when the whole answer stays valid; whether it did.
fn join(
    call: Call<'_>,
    text: &str,
    field: &str,
    value: Value,
    sources: &[Source],
    outcome: &mut Outcome,
) -> bool {
    let Answer::Ok(Value::Object(data)) = &outcome.answer else {
        return false;
    };
    let mut joined = data.clone();
    joined.insert(field.to_owned(), value);
    let joined = Value::Object(joined);
    if !call.target.compiled.is_valid(&joined) {
        return false;
    }
    let prefix = pointer_of(field);
    (outcome.sources).retain(|source| !within(&source.pointer, &prefix));
    if call.limits.grounding != Grounding::Off {
        // Located in the whole text; the other values' sources stay as the first reading found
        // them.
        let mut added: Vec<Source> = provenance::sources(&joined, &call.target.schema, text)
            .into_iter()
            .filter(|source| within(&source.pointer, &prefix))
            .collect();
        confidence::annotate(&mut added, &confidence::of_sources(sources), "");
        outcome.sources.extend(added);
    }
    (outcome.trace.low_confidence).retain(|pointer| !within(pointer, &prefix));
    (outcome.trace.chunk_of).retain(|pointer, _| !within(pointer, &prefix));
    outcome.answer = Answer::Ok(joined);
    true
}

/// `outcome`'s answer without its `field`, listed under `trace.lowConfidence`, when the answer
/// stays valid without it; whether it did.
fn leave_out(call: Call<'_>, field: &str, outcome: &mut Outcome) -> bool {
    let Answer::Ok(data) = &outcome.answer else {
        return false;
    };
    let keeps = |without: &Value| call.target.compiled.is_valid(without);
    let Some((at, without)) = droppable(data, &pointer_of(field), keeps) else {
        return false;
    };
    let mut dropped = Dropped::default();
    dropped.push(data, at);
    confidence::leave_out(outcome, without, &dropped);
    true
}

/// What to look for: the field's name, title and description, and the values it names.
fn query(field: &str, property: &Value) -> String {
    let mut query = field.to_owned();
    for key in ["title", "description"] {
        if let Some(said) = property.get(key).and_then(Value::as_str) {
            query.push(' ');
            query.push_str(said);
        }
    }
    for named in (property.get("enum").and_then(Value::as_array).into_iter()).flatten() {
        if let Some(named) = named.as_str() {
            query.push(' ');
            query.push_str(named);
        }
    }
    query
}

/// The target `schema` asking for `field` alone: its property, optional, with the definitions
/// it may refer to.
fn alone(schema: &Value, field: &str) -> Value {
    let mut alone = serde_json::json!({
        "type": "object",
        "properties": { field: schema["properties"][field].clone() },
        "additionalProperties": false,
    });
    for key in ["$schema", "$defs", "definitions"] {
        if let Some(kept) = schema.get(key) {
            alone[key] = kept.clone();
        }
    }
    alone
}

/// The top-level field a JSON pointer into the answer is under.
fn field_of(pointer: &str) -> String {
    let first = (pointer.trim_start_matches('/').split('/'))
        .next()
        .unwrap_or("");
    walk::unescape(first)
}

/// The JSON pointer of the top-level `field`.
fn pointer_of(field: &str) -> String {
    format!("/{}", walk::escape(field))
}

/// What the question whether `text` states the values at `doubted` reads: a short text whole;
/// of a longer one, the passages around the spans that write them, and for a value no span
/// writes, the passages about its field.
fn around(call: Call<'_>, text: &str, sources: &[Source], doubted: &[String]) -> String {
    if text.len() <= MIN_TEXT_BYTES {
        return text.to_owned();
    }
    let passages = Passages::of(text);
    let byte = |chars: usize| passages::byte_at(text, chars);
    let mut ranges: Vec<std::ops::Range<usize>> = Vec::new();
    for pointer in doubted {
        let spans: Vec<std::ops::Range<usize>> = (sources.iter())
            .filter(|source| within(&source.pointer, pointer))
            .filter_map(|source| source.span.as_ref())
            .filter_map(|span| passages.around(byte(span.start)..byte(span.end)))
            .collect();
        if spans.is_empty() {
            let field = walk::unescape(
                pointer
                    .trim_start_matches('/')
                    .split('/')
                    .next()
                    .unwrap_or(""),
            );
            let property = &call.target.schema["properties"][&field];
            ranges.extend(passages.about(&query(&field, property), PASSAGES));
        }
        ranges.extend(spans);
    }
    ranges.sort_by_key(|range| range.start);
    let mut joined: Vec<std::ops::Range<usize>> = Vec::with_capacity(ranges.len());
    for range in ranges {
        match joined.last_mut() {
            Some(last) if range.start <= last.end => last.end = last.end.max(range.end),
            _ => joined.push(range),
        }
    }
    let excerpt: Vec<&str> = joined.into_iter().map(|range| &text[range]).collect();
    excerpt.join(GAP)
}

/// The least confidence of the `sources` at or within `prefix`, where they have one.
fn least_confidence(sources: &[Source], prefix: &str) -> Option<f64> {
    (sources.iter())
        .filter(|source| within(&source.pointer, prefix))
        .filter_map(|source| source.confidence)
        .min_by(f64::total_cmp)
}
