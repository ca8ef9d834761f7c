//! Settling the values the answer needs that the model was unsure of: does the text state
//! them at all? Uncertain is not absent: a value the text states is kept (in doubt, for a person
//! to check); one it was not found to state is read once more from its field's passages; what no
//! look reads surely is asked for, with the rest of the answer as its `partial`.

use serde_json::Value;

use super::look::{Doubt, GAP, MIN_TEXT_BYTES, PASSAGES, Text};
use super::look::{field_of, least_confidence, listed, look_noted, lookable, pointer_of, query};
use crate::content::call::Call;
use crate::content::leave_out::{Dropped, by_segments, remove, within};
use crate::content::passages::{self, Passages};
use crate::content::stated;
use crate::keys;
use crate::outcome::{Answer, Outcome, Source};
use crate::schema::walk;

/// `outcome` with each value it needs that the model was unsure of (`trace.inDoubt`, under the
/// threshold `min`) settled by asking the model whether the text states it at all
/// ([`stated::ask`], one call for all of them, of a long text the passages around each value's
/// span, or about its field when no span writes it): a small model that hesitated over a value
/// it read says yes, one that took a span of the right kind for a value the text lacks says
/// no. Stated, the value is kept and stays named in `trace.inDoubt` (uncertain is not absent);
/// not, a field of a long text is read again from the passages about it ([`look_again`]: the
/// first reading may have missed the clause that states it); what no look reads surely, the
/// call asks for (`need-more-input`), with the rest of the answer as its `partial`. Also the
/// fields it looked at.
pub(super) fn needed(
    call: Call<'_>,
    text: &str,
    min: f64,
    mut outcome: Outcome,
) -> (Outcome, Vec<String>) {
    let Answer::Ok(data) = &outcome.answer else {
        return (outcome, Vec::new());
    };
    if outcome.trace.in_doubt.is_empty() {
        return (outcome, Vec::new());
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
    let (unconfirmed, looked) = look_again(call, text, min, unconfirmed, &mut outcome);
    if let (false, Answer::Ok(data)) = (unconfirmed.is_empty(), &outcome.answer) {
        // Asked for, with the rest of what the text gave: never answered with nothing.
        let mut partial = data.clone();
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
        outcome.answer = Answer::NeedMoreInput(unstated_need(&unconfirmed));
    }
    (outcome, looked)
}

/// What the call says when the values the answer needs at `unconfirmed` (with the confidence
/// each was read with) were not found stated by the text.
fn unstated_need(unconfirmed: &[(String, f64)]) -> String {
    let listed: Vec<String> = (unconfirmed.iter())
        .map(|(pointer, confidence)| format!("{pointer} (read with confidence {confidence})"))
        .collect();
    format!(
        "the text was not found to state {}: the model was unsure of the value it read ({}) \
         and, asked again, found no place in the text that states it; give it, or check that \
         the text states it",
        listed.join(", "),
        keys::MIN_CONFIDENCE
    )
}

/// Of the values `unconfirmed` (each with its first confidence, under `min`) that the answer
/// needs and the text was not found to state, those a look at their field's passages does not
/// read surely, and the fields it looked at; what a look reads surely replaces the first
/// reading. Only where a look can tell more ([`lookable`]), of an object's fields that are not
/// lists.
fn look_again(
    call: Call<'_>,
    text: &str,
    min: f64,
    unconfirmed: Vec<(String, f64)>,
    outcome: &mut Outcome,
) -> (Vec<(String, f64)>, Vec<String>) {
    if unconfirmed.is_empty() || !lookable(call, text) {
        return (unconfirmed, Vec::new());
    }
    let text = Text {
        whole: text,
        passages: Passages::of(text),
    };
    let (mut left, mut looked) = (Vec::new(), Vec::new());
    for (pointer, first) in unconfirmed {
        let field = field_of(&pointer);
        if pointer != pointer_of(&field) || listed(call, &field) {
            left.push((pointer, first));
            continue;
        }
        if !look_noted(call, &text, &field, (Doubt::Needed(first), min), outcome) {
            left.push((pointer, first));
        }
        looked.push(field);
    }
    (left, looked)
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
