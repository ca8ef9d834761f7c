//! One look: a field read again, alone, from the few passages of the text about it, and what
//! the look found joined to the answer (or the note of why it found nothing).

use serde_json::Value;

use crate::content::call::Call;
use crate::content::confidence;
use crate::content::grounding::provenance;
use crate::content::leave_out::{Dropped, droppable, within};
use crate::content::one::{self, Read};
use crate::content::passages::{self, Passages};
use crate::error::StructureError;
use crate::outcome::{Answer, Outcome, Source, Usage};
use crate::schema::{TargetSchema, walk};
use crate::settings::{Grounding, MinConfidence};

/// The passages a look is given.
pub(super) const PASSAGES: usize = 3;
/// The shortest text a look is taken of: one longer than its passages could be, which the first
/// reading read as closely.
pub(super) const MIN_TEXT_BYTES: usize = PASSAGES * passages::MAX_PASSAGE_BYTES;
/// What stands between two passages in the text a look is given.
pub(super) const GAP: &str = "\n…\n";

/// The text a call's looks read, split into its passages once for them all.
pub(super) struct Text<'t> {
    pub(super) whole: &'t str,
    pub(super) passages: Passages,
}

/// Why a field is looked at again.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) enum Doubt {
    /// The threshold left it out.
    LeftOut,
    /// Kept, with this confidence, under [`JUDGED`](crate::content::evidence::JUDGED).
    Kept(f64),
    /// Needed by the answer, read with this confidence under the threshold, and not found stated
    /// by the text: the first reading was a guess, and the look may find the value it missed.
    Needed(f64),
}

/// What a look came to.
pub(super) struct Looked {
    /// What it found, for `trace.secondLooks` (none for a kept value no look could be taken of).
    pub(super) note: Option<String>,
    /// Whether what it read joined the answer.
    pub(super) joined: bool,
}

/// [`look`], its note in `trace.secondLooks` (a failed look's too: the answer stands as it
/// was); whether what it read joined the answer.
pub(super) fn look_noted(
    call: Call<'_>,
    text: &Text<'_>,
    field: &str,
    (doubt, min): (Doubt, f64),
    outcome: &mut Outcome,
) -> bool {
    let looked = look(call, text, field, (doubt, min), outcome).unwrap_or_else(|error| {
        outcome.usage.add(error.usage);
        Looked {
            note: Some(format!(
                "/{field}: the look failed ({}); the answer stands as it was",
                error.message
            )),
            joined: false,
        }
    });
    outcome.trace.second_looks.extend(looked.note);
    looked.joined
}

/// Whether a look at a field of `text` can tell more than the first reading of it: a text
/// longer than the passages a look reads, all of it in the text (no attachment), the answer an
/// object of the target's own.
pub(super) fn lookable(call: Call<'_>, text: &str) -> bool {
    text.len() > MIN_TEXT_BYTES && call.attachment.is_none() && !call.target.wrapped
}

/// Whether the target's `field` is a list: its items are spread over the text, more than a few
/// passages hold.
pub(super) fn listed(call: Call<'_>, field: &str) -> bool {
    let property = &call.target.schema["properties"][field];
    let property = walk::follow(&call.target.schema, property);
    let array = Value::from("array");
    property.get("items").is_some()
        || match property.get("type") {
            Some(Value::Array(types)) => types.contains(&array),
            named => named == Some(&array),
        }
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
) -> Result<Looked, StructureError> {
    let noted = |note: String| Looked {
        note: Some(note),
        joined: false,
    };
    // A value kept is compared with what the look reads however sure it is of it; one left out
    // or not found stated takes only what the look is sure of, weighed as the first reading was.
    let threshold = match doubt {
        Doubt::LeftOut | Doubt::Needed(_) => call.limits.min_confidence,
        Doubt::Kept(_) => MinConfidence::Off,
    };
    let (read, passages) = match read_again(call, text, field, threshold, outcome.usage)? {
        Again::Read(read, passages) => (read, passages),
        Again::NotTaken(why) => {
            // A value kept is not worth a note of a look not taken.
            return Ok(Looked {
                note: (!matches!(doubt, Doubt::Kept(_))).then(|| format!("/{field}: {why}")),
                joined: false,
            });
        }
        Again::TooLong(passages) => {
            return Ok(noted(format!(
                "/{field}: {passages} did not fit the window"
            )));
        }
    };
    outcome.usage.add(read.usage);
    let value = match &read.answer {
        Answer::Ok(data) => data.get(field).cloned(),
        _ => None,
    };
    let Some(value) = value else {
        return Ok(noted(unread(
            call,
            field,
            doubt,
            (&read, &passages),
            outcome,
        )));
    };
    let sure = least_confidence(&read.sources, &pointer_of(field));
    let said = match sure {
        Some(sure) => format!("{value} ({sure})"),
        None => value.to_string(),
    };
    if let (Doubt::Kept(first), Answer::Ok(data)) = (doubt, &outcome.answer) {
        if data.get(field) == Some(&value) {
            return Ok(noted(format!("/{field}: {said} confirmed by {passages}")));
        }
        if sure.is_none_or(|sure| sure < first.max(min)) {
            return Ok(noted(format!(
                "/{field}: {passages} give {said}, less sure than the first reading ({first}), which stands"
            )));
        }
    }
    if !join(call, text.whole, field, value, &read.sources, outcome) {
        return Ok(noted(format!(
            "/{field}: {said} from {passages} would break the schema"
        )));
    }
    let note = match doubt {
        Doubt::LeftOut => format!("/{field}: {said} from {passages}"),
        Doubt::Kept(first) => {
            format!("/{field}: {said} from {passages}, surer than the first reading ({first})")
        }
        Doubt::Needed(first) => format!(
            "/{field}: {said} from {passages}, in place of the first reading ({first}), which \
             the text was not found to state"
        ),
    };
    Ok(Looked {
        note: Some(note),
        joined: true,
    })
}

/// The note of a look at `field` in `doubt` whose `read` of its `passages` gave no value of it;
/// a kept value it did not confirm is left out of `outcome` where the answer can do without it.
fn unread(
    call: Call<'_>,
    field: &str,
    doubt: Doubt,
    (read, passages): (&Outcome, &str),
    outcome: &mut Outcome,
) -> String {
    let why = match (&read.answer, read.trace.low_confidence.is_empty()) {
        (Answer::Ok(_), false) => "give it only under the threshold",
        (Answer::Stale(_), _) => "gave no valid value of it",
        _ => "do not state it",
    };
    let kept = match doubt {
        Doubt::LeftOut => "",
        Doubt::Needed(_) => "; the answer needs it",
        Doubt::Kept(_) if leave_out(call, field, outcome) => "; unconfirmed, left out",
        Doubt::Kept(_) => "; unconfirmed, but the answer needs it",
    };
    format!("/{field}: {passages} {why}{kept}")
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
    Ok(
        match one::run(call.aside(&target, threshold, spent), &excerpt)? {
            Read::Whole(read) => Again::Read(read, passages),
            Read::InParts(_) => Again::TooLong(passages),
        },
    )
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
pub(super) fn query(field: &str, property: &Value) -> String {
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
pub(super) fn field_of(pointer: &str) -> String {
    let first = (pointer.trim_start_matches('/').split('/'))
        .next()
        .unwrap_or("");
    walk::unescape(first)
}

/// The JSON pointer of the top-level `field`.
pub(super) fn pointer_of(field: &str) -> String {
    format!("/{}", walk::escape(field))
}

/// The least confidence of the `sources` at or within `prefix`, where they have one.
pub(super) fn least_confidence(sources: &[Source], prefix: &str) -> Option<f64> {
    (sources.iter())
        .filter(|source| within(&source.pointer, prefix))
        .filter_map(|source| source.confidence)
        .min_by(f64::total_cmp)
}
