//! The reason message fed back after a rejected answer (spec §4.1).

use crate::answer::format::{ANSWER_KEY, NEED_KEY};
use crate::provider::ANSWER_TOOL;
use crate::schema::violation::{Category, Violation};

/// The user turn that tells the model what to fix; `need`: whether the answer may take the need
/// path (else a value the text lacks is left out).
pub fn reason_message(violations: &[Violation], need: bool) -> String {
    let mut message = String::from("The previous output did not conform to the schema:\n");
    for violation in violations {
        message.push_str("- ");
        message.push_str(&violation.to_string());
        message.push('\n');
    }
    message.push_str(
        "\nPlease correct these and try again. Do not change fields that were valid. If the text \
         does not contain a value a field needs, ",
    );
    if need {
        message.push_str(&format!(
            "answer with an object with the single field {NEED_KEY} instead of inventing one."
        ));
    } else {
        message.push_str("leave that field out instead of inventing a value.");
    }
    message
}

/// The violation standing for an answer that is not JSON at all.
pub fn unreadable(reason: &str) -> Violation {
    Violation {
        category: Category::Unreadable,
        pointer: "/".to_owned(),
        constraint: format!(
            "the answer must be one JSON object, but it is not valid JSON ({reason})"
        ),
        actual: None,
    }
}

/// The feedback after a plain-text answer in tool mode.
pub fn tool_reminder() -> String {
    format!(
        "You answered in plain text. Call the tool {ANSWER_TOOL} with {{\"{ANSWER_KEY}\": <the object>}} \
         (or {{\"{ANSWER_KEY}\": {{\"{NEED_KEY}\": \"...\"}}}} if the text lacks a required value), and nothing else."
    )
}
