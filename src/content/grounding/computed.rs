//! Fields whose value is worked out from the text rather than copied from it: a count, a total,
//! a sum. Grounding neither narrows them to the numbers the text writes nor decides they are
//! missing for want of one ("Ada, Bob and Carol came" has three attendees and no digit).

use serde_json::Value;

use crate::schema::walk;

/// Words a field's name, title or description says its value is worked out with: a count, a
/// total, a sum (`attendee_count`, "number of items listed", "total amount due").
const COMPUTED_WORDS: &[&str] = &[
    "count",
    "number of",
    "how many",
    "total",
    "sum",
    "average",
    "computed",
    "calculated",
];

/// Whether the field at `at` is described as computed from the text ([`COMPUTED_WORDS`]), not
/// copied from it.
pub(super) fn is_computed(field: &Value, at: &str) -> bool {
    let number = matches!(
        field.get("type").and_then(Value::as_str),
        Some("integer" | "number")
    );
    if !number {
        return false;
    }
    let name = at.rsplit('/').next().unwrap_or_default();
    let name = split_camel_case(&walk::unescape(name).replace(['_', '-'], " ")).to_lowercase();
    // A field called `count` alone is as often a quantity the text writes (`count` and `unit`
    // of a term: "two (2) years") as one to count: only its description can say.
    let named = name != "count" && (COMPUTED_WORDS.iter()).any(|word| words_contain(&name, word));
    let described = ["title", "description"].iter().any(|key| {
        let said = field
            .get(*key)
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_lowercase();
        (COMPUTED_WORDS.iter()).any(|word| words_contain(&said, word))
    });
    named || described
}

/// `attendeeCount` → `attendee Count`.
fn split_camel_case(text: &str) -> String {
    let mut split = String::with_capacity(text.len() + 4);
    let mut previous_lower = false;
    for character in text.chars() {
        if character.is_uppercase() && previous_lower {
            split.push(' ');
        }
        previous_lower = character.is_lowercase();
        split.push(character);
    }
    split
}

/// Whether `phrase` stands in `text` as whole words.
fn words_contain(text: &str, phrase: &str) -> bool {
    text.match_indices(phrase).any(|(at, _)| {
        let before = text[..at].chars().next_back();
        let after = text[at + phrase.len()..].chars().next();
        !before.is_some_and(char::is_alphanumeric) && !after.is_some_and(char::is_alphanumeric)
    })
}
