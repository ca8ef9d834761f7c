//! What the text itself says of a value, weighed beside the model's confidence when an answer
//! is held to `structure_min_confidence` ([`super::confidence::hold`]):
//!
//! - a value the text **labels with its field's name** (`Occupation: nurse`, `status=open`,
//!   `low priority`) is read, not guessed: however unsure the model was of writing it, the
//!   threshold does not drop it;
//! - **one span, one value**: of two values read from the very same span of the text (a `name`
//!   that is the event's date, a `company` that is the person's name), the less sure one is a
//!   guess, weighed as under the threshold;
//! - a value **no span of the text writes** (a judgement: an enum value the text does not name,
//!   a yes or no) is held to [`JUDGED`], where the model's values are reliably right (EVAL.md,
//!   "Confidence on the model that reads": 98 % of those at 0.9 or more, 61 % of those from 0.7
//!   to 0.9), when that is above the threshold.
//!
//! The confidences the answer reports are the model's, unchanged: only what is kept is weighed.
//!
//! A model whose form says its confidences mean nothing (`structure_min_confidence=auto`, the
//! form under its floor) is held to no threshold, but one span still gives one value: an
//! optional value read from the words a value the answer needs was read from (a `company` that
//! is the person's name, `tags` that copy the `userId`, an `occupation` that is the surname) is
//! the weak reader's typical guess, and is left out ([`doubled`]).

use std::collections::BTreeMap;

use crate::outcome::{Source, Span};

/// Characters that may stand between a label and its value: `Name: Ada`, `status="open"`,
/// `medium-priority`.
const SEPARATORS: &[char] = &[':', '=', '-', '"', '\'', ' ', '\t'];
/// The most characters between a label and its value.
const MAX_GAP: usize = 4;
/// The confidence a value the text does not write is held to.
pub const JUDGED: f64 = 0.9;

/// `confidences` (JSON pointer → the model's confidence) as the threshold `min` should weigh
/// them against the `sources` of the same answer in `text`.
pub fn weigh(
    confidences: &BTreeMap<String, f64>,
    sources: &[Source],
    text: &str,
    min: f64,
) -> BTreeMap<String, f64> {
    let mut weighed = confidences.clone();
    for source in sources {
        let Some(own) = confidences.get(&source.pointer).copied() else {
            continue;
        };
        let Some(span) = &source.span else {
            if own < JUDGED.max(min) {
                weighed.insert(source.pointer.clone(), own.min(below(min)));
            }
            continue;
        };
        let shared = sources.iter().any(|other| {
            other.pointer != source.pointer
                && other.span.as_ref().is_some_and(|theirs| {
                    (theirs.start, theirs.end) == (span.start, span.end)
                        && confidences
                            .get(&other.pointer)
                            .is_some_and(|&their| their > own)
                })
        });
        let weight = if shared {
            // Just under the threshold: held as unsure as the model would have to be.
            own.min(below(min))
        } else if labelled(text, span.start, span.end, field_of(&source.pointer)) {
            own.max(min)
        } else {
            own
        };
        weighed.insert(source.pointer.clone(), weight);
    }
    weighed
}

/// One span, one value, where the model's confidences cannot say which of two readings is the
/// guess but the schema can: each value of `sources` that `optional` says the answer can do
/// without, read from words (the same span, or one overlapping it) that a value the answer
/// needs was read from, paired with that value's pointer. (Two values the answer needs read
/// from one span stay: asking for either would tell the caller the text lacks what it states.)
pub fn doubled(sources: &[Source], optional: impl Fn(&str) -> bool) -> Vec<(String, String)> {
    let spans: Vec<(&Source, &Span)> = (sources.iter())
        .filter_map(|source| Some((source, source.span.as_ref()?)))
        .collect();
    let overlap = |a: &Span, b: &Span| a.start < b.end && b.start < a.end;
    // Whether the answer can do without a value is asked only of those that share words: the
    // question validates the answer without it.
    let optional: Vec<Option<bool>> = (spans.iter().enumerate())
        .map(|(at, (source, span))| {
            let shared = (spans.iter().enumerate())
                .any(|(other_at, (_, theirs))| other_at != at && overlap(span, theirs));
            shared.then(|| optional(&source.pointer))
        })
        .collect();
    let mut pairs = Vec::new();
    for ((source, span), _) in spans
        .iter()
        .zip(&optional)
        .filter(|(_, o)| **o == Some(true))
    {
        let needed = (spans.iter().zip(&optional))
            .find(|((_, theirs), other)| **other == Some(false) && overlap(span, theirs));
        if let Some(((other, _), _)) = needed {
            pairs.push((source.pointer.clone(), other.pointer.clone()));
        }
    }
    pairs
}

/// The largest confidence the threshold `min` holds as under it, to four places as the
/// answer reports confidences.
fn below(min: f64) -> f64 {
    ((min * 10_000.0).ceil() - 1.0).max(0.0) / 10_000.0
}

/// The field a pointer's value belongs to: its last segment that is not an array index
/// (`/tags/0` → `tags`).
fn field_of(pointer: &str) -> &str {
    pointer
        .rsplit('/')
        .find(|segment| !segment.is_empty() && !segment.bytes().all(|b| b.is_ascii_digit()))
        .unwrap_or("")
}

/// Whether `text` labels the span between code points `start` and `end` with `field`'s name,
/// just before it or just after it, in words (`effective_date`, `effectiveDate`: `effective
/// date`), the two apart by at most [`MAX_GAP`] [`SEPARATORS`].
fn labelled(text: &str, start: usize, end: usize, field: &str) -> bool {
    let words = words_of(field);
    if words.is_empty() {
        return false;
    }
    let lower: Vec<char> = text.chars().flat_map(char::to_lowercase).collect();
    if lower.len() != text.chars().count() || end > lower.len() || start > end {
        return false; // a character whose lower case is longer: the offsets would not match
    }
    let name: Vec<char> = words.chars().collect();
    let before = {
        let gap = gap_back(&lower, start);
        start - gap >= name.len()
            && lower[start - gap - name.len()..start - gap] == name[..]
            && boundary(&lower, (start - gap - name.len()).checked_sub(1))
            && gap > 0
    };
    let after = {
        let gap = gap_forward(&lower, end);
        end + gap + name.len() <= lower.len()
            && lower[end + gap..end + gap + name.len()] == name[..]
            && boundary(&lower, Some(end + gap + name.len()))
            && gap > 0
    };
    before || after
}

/// `field` in lower-case words: `_`, `-` and a lower-to-upper case change part them.
fn words_of(field: &str) -> String {
    let mut words = String::new();
    let mut previous_lower = false;
    for c in field.chars() {
        if c == '_' || c == '-' || c == ' ' {
            words.push(' ');
            previous_lower = false;
            continue;
        }
        if c.is_uppercase() && previous_lower {
            words.push(' ');
        }
        previous_lower = c.is_lowercase() || c.is_ascii_digit();
        words.extend(c.to_lowercase());
    }
    words.trim().to_owned()
}

/// How many separators stand just before code point `at` (at most [`MAX_GAP`]).
fn gap_back(text: &[char], at: usize) -> usize {
    text[..at]
        .iter()
        .rev()
        .take(MAX_GAP)
        .take_while(|c| SEPARATORS.contains(c))
        .count()
}

/// How many separators stand from code point `at` on (at most [`MAX_GAP`]).
fn gap_forward(text: &[char], at: usize) -> usize {
    text[at..]
        .iter()
        .take(MAX_GAP)
        .take_while(|c| SEPARATORS.contains(c))
        .count()
}

/// Whether the character at `at` (none: the text's edge) ends a word.
fn boundary(text: &[char], at: Option<usize>) -> bool {
    at.and_then(|at| text.get(at))
        .is_none_or(|c| !c.is_alphanumeric())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::content::grounding::provenance::exact_source;

    fn is_labelled(text: &str, written: &str, field: &str) -> bool {
        let source = exact_source("/x", text, written);
        let span = source.span.unwrap();
        labelled(text, span.start, span.end, field)
    }

    #[test]
    fn a_label_before_or_after_the_value_names_its_field() {
        assert!(is_labelled(
            "Name: Priya. Occupation: nurse.",
            "nurse",
            "occupation"
        ));
        assert!(is_labelled("priority=urgent status=open", "open", "status"));
        assert!(is_labelled("title=\"App crashes\"", "App crashes", "title"));
        assert!(is_labelled("It's low priority, really.", "low", "priority"));
        assert!(is_labelled("the medium-priority one", "medium", "priority"));
        assert!(is_labelled(
            "Effective date: 1 May",
            "1 May",
            "effectiveDate"
        ));
        assert!(is_labelled(
            "effective date 1 May",
            "1 May",
            "effective_date"
        ));
        // Another field's label, a label inside a word, or none.
        assert!(!is_labelled(
            "Name: Priya. Occupation: nurse.",
            "Priya",
            "occupation"
        ));
        assert!(!is_labelled("substatus=open", "open", "status"));
        assert!(!is_labelled("statusopen", "open", "status"));
        assert!(!is_labelled(
            "Ticket \"Login\": priority high.",
            "Login",
            "status"
        ));
        assert!(!is_labelled(
            "Maria is a 34-year-old architect.",
            "architect",
            "occupation"
        ));
    }

    #[test]
    fn field_names_are_read_as_words() {
        assert_eq!(words_of("userId"), "user id");
        assert_eq!(words_of("effective_date"), "effective date");
        assert_eq!(words_of("HTTPStatus"), "httpstatus");
        assert_eq!(field_of("/tags/0"), "tags");
        assert_eq!(field_of("/customer/name"), "name");
    }

    #[test]
    fn labelled_values_are_kept_and_the_less_sure_of_one_span_is_not() {
        let text = "Occupation: nurse. On 22 November 2025 at the hall.";
        let sources = [
            exact_source("/occupation", text, "nurse"),
            exact_source("/date", text, "22 November 2025"),
            exact_source("/name", text, "22 November 2025"),
            exact_source("/location", text, "hall"),
        ];
        let confidences: BTreeMap<String, f64> = [
            ("/occupation", 0.4),
            ("/date", 0.93),
            ("/name", 0.71),
            ("/location", 0.6),
        ]
        .into_iter()
        .map(|(pointer, confidence)| (pointer.to_owned(), confidence))
        .collect();
        let mut sources = sources.to_vec();
        let mut judged = exact_source("/status", text, "hall");
        judged.span = None;
        let mut sure = judged.clone();
        sure.pointer = "/sure".to_owned();
        sources.extend([judged, sure]);
        let mut confidences = confidences;
        confidences.insert("/status".to_owned(), 0.85);
        confidences.insert("/sure".to_owned(), 0.95);
        let weighed = weigh(&confidences, &sources, text, 0.7);
        assert_eq!(weighed["/status"], 0.6999, "judged, under 0.9");
        assert_eq!(weighed["/sure"], 0.95, "judged, over 0.9");
        assert_eq!(weighed["/occupation"], 0.7, "labelled: kept");
        assert_eq!(weighed["/date"], 0.93, "the surer of the span");
        assert_eq!(weighed["/name"], 0.6999, "the less sure of the span");
        assert_eq!(weighed["/location"], 0.6, "the model's");
        assert_eq!(below(0.7), 0.6999);
        assert_eq!(below(0.0), 0.0);
    }
}
