//! Which values of a result a person should look at, and why: what the product already knows
//! it doubts — a value less sure than the confidence threshold, a value no span of the text
//! supports (`derived`), values in doubt a second look kept, values left out for their
//! confidence, records that lack a value, a question, a stale answer.

use crate::outcome::{Answer, Match, Outcome, ReviewField};

/// The values of `outcome` in doubt, one entry a pointer (its reasons joined), in the order
/// the result writes them; `threshold` is `structure_confidence_threshold`.
pub fn doubts(outcome: &Outcome, threshold: f64) -> Vec<ReviewField> {
    let mut fields: Vec<ReviewField> = Vec::new();
    let mut add = |pointer: &str, reason: String| match fields
        .iter_mut()
        .find(|field| field.pointer == pointer)
    {
        Some(field) => {
            field.reason.push_str("; ");
            field.reason.push_str(&reason);
        }
        None => fields.push(ReviewField {
            pointer: pointer.to_owned(),
            reason,
        }),
    };
    match &outcome.answer {
        Answer::Ok(_) => {}
        Answer::NeedMoreInput(need) => add("", format!("need-more-input: {need}")),
        Answer::Stale(errors) => add("", format!("stale: {}", errors.join("; "))),
    }
    for source in &outcome.sources {
        if source.matched == Match::Derived {
            add(
                &source.pointer,
                "derived: no span of the text supports it".to_owned(),
            );
        }
        if let Some(confidence) = source.confidence.filter(|c| *c < threshold) {
            add(
                &source.pointer,
                format!("confidence {confidence:.2}, under {threshold}"),
            );
        }
    }
    let trace = &outcome.trace;
    for pointer in &trace.in_doubt {
        add(
            pointer,
            "in doubt: the model was unsure, a second look kept it".to_owned(),
        );
    }
    for pointer in &trace.low_confidence {
        add(
            pointer,
            "left out: its confidence was under structure_min_confidence".to_owned(),
        );
    }
    for line in &trace.left_out {
        add("", format!("left out: {line}"));
    }
    for (index, record) in outcome.incomplete.iter().flatten().enumerate() {
        add("", format!("incomplete record {index}: {}", record.need));
    }
    fields
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::outcome::{Source, Trace, Usage};
    use serde_json::json;

    fn outcome(answer: Answer, sources: Vec<Source>, trace: Trace) -> Outcome {
        Outcome {
            answer,
            sources,
            partial: None,
            incomplete: None,
            schema_origin: "inline".into(),
            iterations: 1,
            usage: Usage::default(),
            trace,
            text: None,
            review: None,
        }
    }

    fn source(pointer: &str, matched: Match, confidence: Option<f64>) -> Source {
        Source {
            confidence,
            ..Source::spanned(pointer.into(), None, matched)
        }
    }

    #[test]
    fn a_sure_stated_answer_has_no_doubt_and_each_doubt_says_why() {
        let sure = outcome(
            Answer::Ok(json!({ "a": "x" })),
            vec![source("/a", Match::Exact, Some(0.97))],
            Trace::default(),
        );
        assert!(doubts(&sure, 0.8).is_empty());
        let trace = Trace {
            in_doubt: vec!["/b".into()],
            left_out: vec!["/c: stayed invalid".into()],
            ..Trace::default()
        };
        let unsure = outcome(
            Answer::Ok(json!({ "a": "x", "b": 2 })),
            vec![
                source("/a", Match::Derived, Some(0.5)),
                source("/b", Match::Exact, None),
            ],
            trace,
        );
        let found = doubts(&unsure, 0.8);
        let pointers: Vec<&str> = found.iter().map(|f| f.pointer.as_str()).collect();
        assert_eq!(pointers, ["/a", "/b", ""]);
        assert_eq!(
            found[0].reason,
            "derived: no span of the text supports it; confidence 0.50, under 0.8"
        );
        let asked = outcome(
            Answer::NeedMoreInput("the text gives no value for /date".into()),
            Vec::new(),
            Trace::default(),
        );
        assert!(
            doubts(&asked, 0.8)[0]
                .reason
                .starts_with("need-more-input: the text gives")
        );
    }
}
