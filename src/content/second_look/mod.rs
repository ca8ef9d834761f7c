//! A second look at what the model was unsure of. A field of a long text's answer is read
//! again, alone, from the few passages of the text that speak of it ([`passages::about`]): one
//! short request a field, with the same prompt, checks and threshold as the whole call. A small
//! model that hesitates over "which state's law governs" in twenty pages answers it surely from
//! the one clause that says so, and a value the text does not state stays out, as the passages
//! do not state it either.
//!
//! Three kinds of field are looked at again, where `structure_min_confidence` holds the answer:
//!
//! - one the threshold **left out** whole: what the look is sure of joins the answer;
//! - one the answer **needs**, read under the threshold, that the model, asked, did not find
//!   stated in the text ([`settle`]): what the look is sure of takes its place, and without it
//!   the call asks for the value;
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

use crate::content::call::Call;
use crate::content::evidence::JUDGED;
use crate::content::passages::Passages;
use crate::outcome::{Answer, Outcome};

mod look;
mod settle;

use look::{Doubt, Text, field_of, least_confidence, listed, look_noted, lookable, pointer_of};

/// The most fields one call looks at again: each look is a request.
const MAX_LOOKS: usize = 4;

/// `outcome` (an answer to `call` from `text`) with what a second look at each field in doubt
/// found.
pub(super) fn run(call: Call<'_>, text: &str, mut outcome: Outcome) -> Outcome {
    let Some(min) = (call.limits.min_confidence).threshold(outcome.trace.form_confidence) else {
        return outcome;
    };
    let looked;
    (outcome, looked) = settle::needed(call, text, min, outcome);
    let mut fields = doubted(call, text, min, &outcome);
    // A field looked at while settling is not read a second time.
    fields.retain(|(field, _)| !looked.contains(field));
    if fields.is_empty() {
        return outcome;
    }
    let text = Text {
        whole: text,
        passages: Passages::of(text),
    };
    for (field, doubt) in fields {
        look_noted(call, &text, &field, (doubt, min), &mut outcome);
    }
    outcome
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
    if !lookable(call, text) {
        return Vec::new();
    }
    let listed = |field: &str| listed(call, field);
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
