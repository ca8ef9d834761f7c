//! A second look at what the model was unsure of. A field of a long text's answer that
//! `structure_min_confidence` left out is read again, alone, from the few passages of the text
//! that speak of it ([`passages::about`]): one short request a field, with the same prompt,
//! checks and threshold as the whole call. A small model that hesitates over "which state's law
//! governs" in twenty pages answers it surely from the one clause that says so, and a value the
//! text does not state stays out, as the passages do not state it either.
//!
//! Only where a look can tell more than the first reading: an object's fields the threshold
//! took out whole (an array's items are spread over the text, more than a few passages hold),
//! of a text at least twice as long as the passages (else it is the same reading), read whole
//! or in parts, from its text alone (a document the model also saw as pictures is not all in
//! its text). What a
//! look finds joins the answer only when the whole answer stays valid; `trace.secondLooks`
//! says what each look found, or why it found nothing.

use serde_json::Value;

use crate::content::call::Call;
use crate::content::grounding::provenance;
use crate::content::one::{self, Read};
use crate::content::{confidence, passages};
use crate::error::StructureError;
use crate::outcome::{Answer, Outcome, Source};
use crate::schema::TargetSchema;
use crate::settings::Grounding;

/// The most fields one call looks at again: each look is a request.
const MAX_LOOKS: usize = 4;
/// The passages a look is given.
const PASSAGES: usize = 3;
/// What stands between two passages in the text a look is given.
const GAP: &str = "\n…\n";

/// `outcome` (an answer to `call` from `text`) with what a second look at each
/// field the threshold left out found.
pub(super) fn run(call: Call<'_>, text: &str, mut outcome: Outcome) -> Outcome {
    let fields = unsure_fields(call, &outcome);
    for field in fields {
        let note = match look(call, text, &field, &mut outcome) {
            Ok(note) => note,
            Err(error) => {
                outcome.usage.add(error.usage);
                format!(
                    "/{field}: the look failed ({}); the answer stands without it",
                    error.message
                )
            }
        };
        outcome.trace.second_looks.push(note);
    }
    outcome
}

/// The fields of `outcome`'s answer a look may tell more of: taken out whole by the threshold,
/// not arrays, at most [`MAX_LOOKS`].
fn unsure_fields(call: Call<'_>, outcome: &Outcome) -> Vec<String> {
    let (Answer::Ok(Value::Object(data)), Some(properties)) = (
        &outcome.answer,
        call.target
            .schema
            .get("properties")
            .and_then(Value::as_object),
    ) else {
        return Vec::new();
    };
    if call.attachment.is_some() || call.target.wrapped {
        return Vec::new();
    }
    let mut fields: Vec<String> = Vec::new();
    for pointer in &outcome.trace.low_confidence {
        let first = pointer
            .trim_start_matches('/')
            .split('/')
            .next()
            .unwrap_or("");
        let field = first.replace("~1", "/").replace("~0", "~");
        let listed = (properties.get(&field)).is_some_and(|property| {
            property.get("type") == Some(&Value::from("array")) || property.get("items").is_some()
        });
        if !field.is_empty()
            && !data.contains_key(&field)
            && properties.contains_key(&field)
            && !listed
            && !fields.contains(&field)
        {
            fields.push(field);
        }
    }
    fields.truncate(MAX_LOOKS);
    fields
}

/// Looks at `field` again in the passages of `text` about it; what it found joins `outcome`.
/// The note says what came of it.
fn look(
    call: Call<'_>,
    text: &str,
    field: &str,
    outcome: &mut Outcome,
) -> Result<String, StructureError> {
    let property = &call.target.schema["properties"][field];
    let found = passages::about(text, &query(field, property), PASSAGES);
    let excerpt: Vec<&str> = found.iter().map(|range| &text[range.clone()]).collect();
    let excerpt = excerpt.join(GAP);
    if excerpt.is_empty() {
        return Ok(format!("/{field}: no passage of the text speaks of it"));
    }
    if excerpt.len() * 2 > text.len() {
        return Ok(format!(
            "/{field}: its passages are most of the text, read already"
        ));
    }
    let spans: Vec<String> = (found.iter())
        .map(|range| format!("{}–{}", range.start, range.end))
        .collect();
    let spans = spans.join(", ");
    let target = TargetSchema::stored(
        alone(&call.target.schema, field),
        call.target.manual.clone(),
        call.target.origin.clone(),
    )?;
    let alone = Call {
        target: &target,
        earlier_violations: &[],
        attachment: None,
        ..call
    };
    let Read::Whole(read) = one::run(alone, &excerpt)? else {
        return Ok(format!(
            "/{field}: its passages (bytes {spans}) did not fit the window"
        ));
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
        return Ok(format!("/{field}: its passages (bytes {spans}) {why}"));
    };
    let Answer::Ok(Value::Object(data)) = &outcome.answer else {
        return Ok(format!("/{field}: the answer is no object to add it to"));
    };
    let mut joined = data.clone();
    joined.insert(field.to_owned(), value.clone());
    let joined = Value::Object(joined);
    if !call.target.compiled.is_valid(&joined) {
        return Ok(format!(
            "/{field}: {value} from its passages (bytes {spans}) would break the schema"
        ));
    }
    let prefix = format!("/{}", field.replace('~', "~0").replace('/', "~1"));
    if call.limits.grounding != Grounding::Off {
        // Located in the whole text; the other values' sources stay as the first reading found
        // them.
        let mut added: Vec<Source> = provenance::sources(&joined, &call.target.schema, text)
            .into_iter()
            .filter(|source| within(&source.pointer, &prefix))
            .collect();
        confidence::annotate(&mut added, &confidence::of_sources(&read.sources), "");
        outcome.sources.extend(added);
    }
    (outcome.trace.low_confidence).retain(|pointer| !within(pointer, &prefix));
    outcome.answer = Answer::Ok(joined);
    let sure = least_confidence(&read.sources)
        .map(|confidence| format!(" ({confidence})"))
        .unwrap_or_default();
    Ok(format!(
        "/{field}: {value}{sure} from its passages (bytes {spans})"
    ))
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

/// Whether `pointer` is `prefix` or within it.
fn within(pointer: &str, prefix: &str) -> bool {
    pointer == prefix || pointer.starts_with(&format!("{prefix}/"))
}

/// The least confidence of `sources`, where they have one.
fn least_confidence(sources: &[Source]) -> Option<f64> {
    (sources.iter())
        .filter_map(|source| source.confidence)
        .min_by(f64::total_cmp)
}
