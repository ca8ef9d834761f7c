//! How sure the model was of each value: the probability it gave the tokens it wrote the value
//! with, read from the token log-probabilities the provider returned with the answer.
//!
//! A value's confidence is the geometric mean of the probabilities of the tokens that overlap
//! the value's text in the answer, `exp(mean logprob)` — for a string, its quotes included (the
//! closing quote is the model deciding the value ends); for a number, `true`, `false` or `null`,
//! its characters. The mean per token rather than the product: on the eval's local model both
//! rank right and wrong values alike (AUROC 0.78), but the product falls with every token a
//! long value has and was far from the share of values that were right (expected calibration
//! error 0.62 against 0.28; docs/history/eval.md, "Confidence (issue 27)"). Values the answer
//! does not write as such (a value restored from an encoded field) get none.
//!
//! ```
//! use structure::content::confidence::of_values;
//! use structure::provider::Token;
//!
//! let token = |text: &str, probability: f64| Token {
//!     text: text.to_owned(),
//!     bytes: None,
//!     logprob: probability.ln(),
//! };
//! let tokens = [token("{\"answer\": {\"name\": ", 1.0), token("\"Ada\"", 0.9), token("}}", 1.0)];
//! let confidence = of_values(r#"{"answer": {"name": "Ada"}}"#, &tokens);
//! assert!((confidence["/name"] - 0.9).abs() < 1e-9);
//! ```

use std::collections::BTreeMap;
use std::ops::Range;

use serde_json::Value;

use crate::answer::format::ANSWER_KEY;
use crate::answer::spans;
use crate::content::evidence;
use crate::content::leave_out::{Dropped, by_segments, droppable};
use crate::keys;
use crate::outcome::{Answer, Outcome, Source};
use crate::provider::Token;
use crate::schema::validator::CompiledSchema;
use crate::schema::walk;
use crate::settings::MinConfidence;

/// The confidence of each value `text` (an answer, in or out of its `{"answer": …}` envelope)
/// writes, by JSON pointer into the answer; empty when `tokens` do not spell `text` or `text`
/// is not plain JSON.
pub fn of_values(text: &str, tokens: &[Token]) -> BTreeMap<String, f64> {
    let Some(offsets) = token_offsets(text, tokens) else {
        return BTreeMap::new();
    };
    let Some(leaves) = spans::leaves(text) else {
        return BTreeMap::new();
    };
    let envelope = format!("/{}", walk::escape(ANSWER_KEY));
    let enveloped = leaves
        .keys()
        .all(|pointer| pointer.starts_with(&format!("{envelope}/")) || *pointer == envelope);
    leaves
        .into_iter()
        .map(|(pointer, range)| {
            let pointer = match enveloped {
                true => pointer[envelope.len()..].to_owned(),
                false => pointer,
            };
            (pointer, probability(&offsets, tokens, &range))
        })
        .collect()
}

/// How sure the model was of the form of answer `text` — every token that writes no value:
/// the keys, the brackets and the punctuation the schema fixes — as the geometric mean of those
/// tokens' probabilities, the least sure tenth (at least one token) left out; `None` when
/// `tokens` do not spell `text` or it is not plain JSON. A model that follows the format by
/// itself gives them probabilities near 1 (a server that constrains decoding reports the
/// model's own, before the grammar); one that does not, far less, and its probabilities of the
/// values then tell right from wrong no better. The least sure left out: the key of an optional
/// value the model hesitated to give is a form token too, and one such must not make a reading
/// model look like one that cannot; a mean over the rest, not their median, because a model
/// that cannot follow the format is unsure of many of them (measured in EVAL.md).
pub fn of_form(text: &str, tokens: &[Token]) -> Option<f64> {
    let offsets = token_offsets(text, tokens)?;
    let leaves = spans::leaves(text)?;
    let mut logprobs: Vec<f64> = (offsets.iter().zip(tokens))
        .filter(|(at, _)| at.start < at.end && at.end <= text.len())
        .filter(|(at, _)| {
            !text.as_bytes()[at.start..at.end]
                .iter()
                .all(u8::is_ascii_whitespace)
        })
        .filter(|(at, _)| !(leaves.values()).any(|leaf| at.start < leaf.end && at.end > leaf.start))
        .map(|(_, token)| token.logprob.min(0.0))
        .collect();
    if logprobs.is_empty() {
        return None;
    }
    logprobs.sort_by(f64::total_cmp);
    let kept = &logprobs[logprobs.len().div_ceil(10).min(logprobs.len() - 1)..];
    let mean = kept.iter().sum::<f64>() / kept.len() as f64;
    Some((mean.exp().clamp(0.0, 1.0) * 10_000.0).round() / 10_000.0)
}

/// The form confidence of a conversation's accepted answer ([`of_form`]), if it has one.
pub fn of_answered(answered: Option<&(String, Vec<Token>)>) -> Option<f64> {
    answered.and_then(|(text, tokens)| of_form(text, tokens))
}

/// Where each token starts and ends in `text` (bytes), or `None` when the tokens do not
/// spell it (a provider that gave logprobs for other text, or none at all).
fn token_offsets(text: &str, tokens: &[Token]) -> Option<Vec<Range<usize>>> {
    if tokens.is_empty() {
        return None;
    }
    let with_bytes = tokens.iter().all(|token| token.bytes.is_some());
    let spelled: Vec<u8> = tokens
        .iter()
        .flat_map(|token| match (&token.bytes, with_bytes) {
            (Some(bytes), true) => bytes.clone(),
            _ => token.text.as_bytes().to_vec(),
        })
        .collect();
    // The answer's text may be trimmed of what the model wrote around it.
    let shift = find(&spelled, text.as_bytes())?;
    let mut start = 0usize;
    let offsets = tokens
        .iter()
        .map(|token| {
            let len = match (&token.bytes, with_bytes) {
                (Some(bytes), true) => bytes.len(),
                _ => token.text.len(),
            };
            let range = start.saturating_sub(shift)..(start + len).saturating_sub(shift);
            start += len;
            range
        })
        .collect();
    Some(offsets)
}

/// Where `needle` first occurs in `haystack`.
fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    if needle.is_empty() {
        return None;
    }
    haystack
        .windows(needle.len())
        .position(|window| window == needle)
}

/// The geometric mean of the probabilities of the tokens overlapping `range`, rounded to four
/// places.
fn probability(offsets: &[Range<usize>], tokens: &[Token], range: &Range<usize>) -> f64 {
    let logprobs: Vec<f64> = offsets
        .iter()
        .zip(tokens)
        .filter(|(at, _)| at.start < range.end && at.end > range.start)
        .map(|(_, token)| token.logprob.min(0.0))
        .collect();
    let mean = logprobs.iter().sum::<f64>() / logprobs.len().max(1) as f64;
    (mean.exp().clamp(0.0, 1.0) * 10_000.0).round() / 10_000.0
}

/// Gives each of `sources` the confidence of its value, found under `at` in the answer (a
/// record's sources under `/records/3`; `""` for the answer itself).
pub fn annotate(sources: &mut [Source], confidences: &BTreeMap<String, f64>, at: &str) {
    for source in sources {
        source.confidence = confidences.get(&format!("{at}{}", source.pointer)).copied();
    }
}

/// The confidence of each source that has one, by pointer.
pub fn of_sources(sources: &[Source]) -> BTreeMap<String, f64> {
    (sources.iter())
        .filter_map(|source| Some((source.pointer.clone(), source.confidence?)))
        .collect()
}

/// Holds an `ok` outcome to `min` ([`hold_to`]): its data without the optional values below
/// it (their sources gone, `trace.lowConfidence` naming them). A value it needs below it is
/// kept and named in `trace.inDoubt`: uncertain is not absent, and the second look
/// (`second_look::settle::needed`) reads it again before the call asks for it.
pub fn hold(
    outcome: &mut Outcome,
    confidences: &BTreeMap<String, f64>,
    min: f64,
    schema: &CompiledSchema,
) {
    let Answer::Ok(data) = &outcome.answer else {
        return;
    };
    match hold_to(data.clone(), confidences, min, schema) {
        Held::Kept {
            data: kept,
            dropped,
        } => leave_out(outcome, kept, &dropped),
        Held::Unsure {
            data: kept,
            dropped,
            doubted,
            ..
        } => {
            leave_out(outcome, kept, &dropped);
            outcome.trace.in_doubt.extend(doubted);
        }
    }
}

/// What the call says when the values the answer needs at `doubted` (with their confidences)
/// stay in doubt under `min`.
pub fn unsure_need(doubted: &[(String, f64)], min: f64) -> String {
    let listed: Vec<String> = (doubted.iter())
        .map(|(pointer, confidence)| format!("{pointer} ({confidence})"))
        .collect();
    format!(
        "the model is not sure of {} (confidence below {min}, {}): check that the text states \
         them",
        listed.join(", "),
        keys::MIN_CONFIDENCE
    )
}

/// Holds `outcome`, whose answer's form the model wrote with confidence `form`, as `setting`
/// says: to its threshold, with what `text` says of each value weighed in
/// ([`evidence::weigh`]); or, where the form says the model's confidences mean nothing,
/// without the optional values it read from the words of a value the answer needs
/// ([`evidence::doubled`]).
pub fn judge(
    outcome: &mut Outcome,
    confidences: &BTreeMap<String, f64>,
    text: &str,
    form: Option<f64>,
    setting: MinConfidence,
    schema: &CompiledSchema,
) {
    if let Some(min) = setting.threshold(form) {
        let weighed = evidence::weigh(confidences, &outcome.sources, text, min);
        hold(outcome, &weighed, min, schema);
    } else if setting.unsure_reader(form)
        && let Some(form) = form
    {
        undouble(outcome, form, schema);
    }
}

/// `outcome` without the optional values [`evidence::doubled`] finds, each named under
/// `trace.leftOut` with the value whose words it took (`form`: the answer's form confidence).
fn undouble(outcome: &mut Outcome, form: f64, schema: &CompiledSchema) {
    let Answer::Ok(data) = &outcome.answer else {
        return;
    };
    let alone = |pointer: &str| {
        droppable(data, pointer, |without| schema.is_valid(without))
            .is_some_and(|(at, _)| at == pointer)
    };
    let pairs = evidence::doubled(&outcome.sources, alone);
    let guesses = (pairs.iter())
        .map(|(guess, _)| (guess.clone(), 0.0))
        .collect();
    let Held::Kept { data, dropped } = hold_to(data.clone(), &guesses, 1.0, schema) else {
        return;
    };
    let words = |pointer: &str| {
        (outcome.sources.iter())
            .find(|source| source.pointer == pointer)
            .and_then(|source| Some(source.span.as_ref()?.text.clone()))
            .unwrap_or_default()
    };
    let lines: Vec<String> = (pairs.iter())
        .map(|(guess, needed)| {
            format!(
                "{guess} ({:?}): read from the words of {needed}, which the answer needs, by a \
                 model whose form confidence ({form}) says its confidences cannot tell which is \
                 the guess",
                words(guess)
            )
        })
        .collect();
    set_answer(outcome, data, &dropped);
    outcome.trace.left_out.extend(lines);
}

/// `outcome` with the answer `kept`, which is its own without the values `dropped`: their
/// sources and chunks gone, the others' where their values are now, the dropped ones listed
/// under `trace.lowConfidence`.
pub(super) fn leave_out(outcome: &mut Outcome, kept: Value, dropped: &Dropped) {
    set_answer(outcome, kept, dropped);
    outcome.trace.low_confidence.extend(dropped.pointers());
}

/// `outcome` with the answer `kept`, which is its own without the values `dropped`: their
/// sources and chunks gone, the others' where their values are now.
fn set_answer(outcome: &mut Outcome, kept: Value, dropped: &Dropped) {
    outcome.sources = dropped.sources(std::mem::take(&mut outcome.sources));
    let chunk_of = std::mem::take(&mut outcome.trace.chunk_of);
    outcome.trace.chunk_of = (chunk_of.into_iter())
        .filter_map(|(pointer, chunk)| Some((dropped.moved(&pointer)?, chunk)))
        .collect();
    outcome.answer = Answer::Ok(kept);
}

/// What `structure_min_confidence` makes of a valid answer.
#[derive(Debug, PartialEq)]
pub enum Held {
    /// The answer without its optional values below the threshold, and where its values are
    /// now that those are gone.
    Kept { data: Value, dropped: Dropped },
    /// A value the answer needs is below the threshold: what to tell the caller, and the answer
    /// as [`Held::Kept`] would be, with the pointers of the values it needs in doubt.
    Unsure {
        need: String,
        data: Value,
        dropped: Dropped,
        doubted: Vec<String>,
    },
}

/// Holds `data` to `min`: each value whose confidence is below it is dropped when the answer
/// stays valid against `schema` without it (it was optional), else the answer is unsure.
pub fn hold_to(
    data: Value,
    confidences: &BTreeMap<String, f64>,
    min: f64,
    schema: &CompiledSchema,
) -> Held {
    let mut low: Vec<(&String, f64)> = confidences
        .iter()
        .filter(|(pointer, confidence)| **confidence < min && data.pointer(pointer).is_some())
        .map(|(pointer, confidence)| (pointer, *confidence))
        .collect();
    // Last first: dropping an array's later item leaves its earlier ones where they are.
    low.sort_by(|(a, _), (b, _)| by_segments(b, a));
    let mut data = data;
    let mut dropped = Dropped::default();
    let mut unsure = Vec::new();
    for (pointer, confidence) in low {
        if data.pointer(pointer).is_none() {
            continue; // gone with an optional object that held it
        }
        match droppable(&data, pointer, |without| schema.is_valid(without)) {
            Some((at, without)) => {
                let holder = at.rsplit_once('/').map(|(parent, _)| parent.to_owned());
                dropped.push(&data, at);
                data = without;
                // An array left empty by it goes too, where it may: the model gave no empty
                // list, and none is what the text states.
                if let Some(holder) = holder.filter(|holder| !holder.is_empty())
                    && data
                        .pointer(&holder)
                        .and_then(Value::as_array)
                        .is_some_and(Vec::is_empty)
                    && let Some((at, without)) =
                        droppable(&data, &holder, |without| schema.is_valid(without))
                {
                    dropped.push(&data, at);
                    data = without;
                }
            }
            None => unsure.push((pointer.clone(), confidence)),
        }
    }
    if unsure.is_empty() {
        return Held::Kept { data, dropped };
    }
    unsure.reverse();
    Held::Unsure {
        need: unsure_need(&unsure, min),
        data,
        dropped,
        doubted: unsure.into_iter().map(|(pointer, _)| pointer).collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn token(text: &str, probability: f64) -> Token {
        Token {
            text: text.to_owned(),
            bytes: None,
            logprob: probability.ln(),
        }
    }

    #[test]
    fn a_value_is_the_mean_probability_of_its_own_tokens() {
        let tokens = [
            token("{\"answer\":{\"name\":", 0.99),
            token("\"A", 0.5),
            token("da\"", 0.8),
            token(",\"age\":", 0.99),
            token("3", 0.9),
            token("6", 0.5),
            token(",\"tags\":[", 1.0),
            token("\"x\"", 0.25),
            token("]}}", 1.0),
        ];
        let text: String = tokens.iter().map(|token| token.text.as_str()).collect();
        let confidence = of_values(&text, &tokens);
        assert_eq!(confidence["/name"], 0.6325, "√(0.5 × 0.8)");
        assert_eq!(confidence["/age"], 0.6708, "√(0.9 × 0.5)");
        assert_eq!(confidence["/tags/0"], 0.25);
        assert_eq!(confidence.len(), 3, "leaves only: {confidence:?}");
    }

    #[test]
    fn tokens_that_end_inside_a_character_are_placed_by_their_bytes() {
        let text = r#"{"city": "Zürich"}"#;
        let ue = "ü".as_bytes();
        let tokens = [
            Token {
                text: "{\"city\": \"Z".into(),
                bytes: Some(b"{\"city\": \"Z".to_vec()),
                logprob: 0.0,
            },
            Token {
                text: "\u{FFFD}".into(),
                bytes: Some(vec![ue[0]]),
                logprob: 0.5f64.ln(),
            },
            Token {
                text: "\u{FFFD}rich\"}".into(),
                bytes: Some([&ue[1..], b"rich\"}"].concat()),
                logprob: 0.0,
            },
        ];
        assert_eq!(
            of_values(text, &tokens)["/city"],
            0.7937,
            "∛(1 × 0.5 × 1), a bare answer"
        );
    }

    #[test]
    fn the_form_is_every_token_that_writes_no_value() {
        let tokens = [
            token("{\"answer\": {\"name\": ", 0.9),
            token("\"Ada\"", 0.1),
            token(", \"age\": ", 0.8),
            token("36", 0.2),
            token("}}", 0.9),
        ];
        let text = r#"{"answer": {"name": "Ada", "age": 36}}"#;
        // The form's tokens are at 0.9, 0.8 and 0.9: the least sure left out, 0.9 and 0.9.
        assert_eq!(of_form(text, &tokens), Some(0.9));
        // Nineteen form tokens: the two least sure (0.1, 0.2) left out, all the others at 0.5.
        let mut many = vec![token("{\"answer\": {", 0.5)];
        for (key, probability) in ["a", "b", "c", "d", "e", "f", "g", "h", "i"]
            .iter()
            .zip([0.1, 0.2, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5])
        {
            many.push(token(&format!("\"{key}\": "), probability));
            many.push(token("1", 0.2));
            many.push(token(if *key == "i" { "" } else { ", " }, 0.5));
        }
        many.push(token("}}", 0.5));
        let many: Vec<Token> = many
            .into_iter()
            .filter(|token| !token.text.is_empty())
            .collect();
        let text: String = many.iter().map(|token| token.text.as_str()).collect();
        assert_eq!(of_form(&text, &many), Some(0.5));
        assert_eq!(of_form("not json", &tokens), None);
    }

    #[test]
    fn tokens_that_do_not_spell_the_answer_give_nothing() {
        let tokens = [token("{\"name\": \"Bob\"}", 0.9)];
        assert!(of_values(r#"{"name": "Ada"}"#, &tokens).is_empty());
        assert!(of_values(r#"{"name": "Ada"}"#, &[]).is_empty());
        let text = r#"{"name": "Ada",}"#;
        assert!(of_values(text, &[token(text, 0.9)]).is_empty(), "near-JSON");
    }

    #[test]
    fn text_around_the_answer_is_skipped() {
        let tokens = [
            token("Sure: ", 0.5),
            token("{\"n\": ", 1.0),
            token("7", 0.7),
            token("}", 1.0),
        ];
        assert_eq!(of_values("{\"n\": 7}", &tokens)["/n"], 0.7);
    }

    fn schema() -> CompiledSchema {
        CompiledSchema::compile(&serde_json::json!({
            "type": "object",
            "properties": {
                "name": { "type": "string" },
                "email": { "type": "string" },
                "tags": { "type": "array", "items": { "type": "string" } }
            },
            "required": ["name"]
        }))
        .unwrap()
    }

    #[test]
    fn an_unsure_optional_value_is_dropped_and_an_unsure_required_one_asks() {
        let data = serde_json::json!({"name": "Ada", "email": "a@x", "tags": ["a", "b", "c"]});
        let confidences: BTreeMap<String, f64> = [
            ("/name", 0.9),
            ("/email", 0.3),
            ("/tags/0", 0.2),
            ("/tags/1", 0.95),
            ("/tags/2", 0.1),
        ]
        .into_iter()
        .map(|(pointer, confidence)| (pointer.to_owned(), confidence))
        .collect();
        let held = hold_to(data.clone(), &confidences, 0.5, &schema());
        let Held::Kept {
            data: kept,
            dropped,
        } = held
        else {
            panic!("{held:?}");
        };
        assert_eq!(kept, serde_json::json!({"name": "Ada", "tags": ["b"]}));
        assert_eq!(dropped.pointers(), ["/tags/2", "/tags/0", "/email"]);
        let pointers: Vec<Option<String>> = ["/name", "/email", "/tags/0", "/tags/1", "/tags/2"]
            .iter()
            .map(|pointer| dropped.moved(pointer))
            .collect();
        assert_eq!(
            pointers,
            [
                Some("/name".into()),
                None,
                None,
                Some("/tags/0".into()),
                None
            ],
            "b moved up to /tags/0"
        );

        let held = hold_to(data, &confidences, 0.95, &schema());
        let Held::Unsure { need, doubted, .. } = held else {
            panic!("{held:?}");
        };
        assert_eq!(
            need,
            "the model is not sure of /name (0.9) (confidence below 0.95, \
             structure_min_confidence): check that the text states them"
        );
        assert_eq!(doubted, ["/name"]);
    }

    #[test]
    fn an_array_left_empty_by_its_unsure_items_goes_with_them() {
        let schema = CompiledSchema::compile_checked(&serde_json::json!({
            "type": "object",
            "properties": {
                "name": { "type": "string" },
                "tags": { "type": "array", "items": { "type": "string" } },
                "kept": { "type": "array", "items": { "type": "string" } },
            },
            "required": ["name"],
        }))
        .unwrap();
        let data = serde_json::json!({ "name": "Ada", "tags": ["a", "b"], "kept": [] });
        let confidences: BTreeMap<String, f64> =
            [("/name", 0.9), ("/tags/0", 0.1), ("/tags/1", 0.2)]
                .into_iter()
                .map(|(pointer, confidence)| (pointer.to_owned(), confidence))
                .collect();
        let Held::Kept { data, dropped } = hold_to(data, &confidences, 0.5, &schema) else {
            panic!("kept")
        };
        assert_eq!(
            data,
            serde_json::json!({ "name": "Ada", "kept": [] }),
            "an empty list the model gave stays"
        );
        assert_eq!(dropped.pointers(), ["/tags/1", "/tags/0", "/tags"]);
    }

    #[test]
    fn an_unsure_value_an_optional_object_requires_goes_with_the_object() {
        let schema = CompiledSchema::compile(&serde_json::json!({
            "type": "object",
            "properties": {
                "name": { "type": "string" },
                "term": {
                    "type": "object",
                    "properties": { "count": { "type": "integer" }, "unit": { "type": "string" } },
                    "required": ["count", "unit"]
                }
            },
            "required": ["name"]
        }))
        .unwrap();
        let data = serde_json::json!({"name": "Ada", "term": {"count": 2, "unit": "years"}});
        let confidences: BTreeMap<String, f64> = [("/term/count", 0.2), ("/term/unit", 0.3)]
            .into_iter()
            .map(|(pointer, confidence)| (pointer.to_owned(), confidence))
            .collect();
        let Held::Kept { data, dropped } = hold_to(data, &confidences, 0.5, &schema) else {
            panic!("the term is optional");
        };
        assert_eq!(data, serde_json::json!({"name": "Ada"}));
        assert_eq!(dropped.pointers(), ["/term"]);
    }
}
