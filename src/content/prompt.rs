//! The system prompt of the content stage (spec §4): the task, the `_need` convention, the
//! current time for relative dates (only for a text that gives one: shown it otherwise, a small
//! model writes today's date for a date the text gives in full), the schema where the provider
//! does not show it, the manual.

use serde_json::Value;

use crate::answer::format::{ANSWER_KEY, NEED_KEY, RECORDS_KEY, Shape};
use crate::content::call::Call;
use crate::content::grounding::needs_the_current_date;
use crate::provider::{ANSWER_TOOL, Conversation, Delivery, SystemPrompt, Turn};
use crate::time::rfc3339;

/// The start of a `shape` conversation about `text`: the system prompt, and the text.
pub fn conversation(call: Call<'_>, text: &str, shape: Shape) -> Conversation {
    let provider = call.provider;
    let shown_schema = provider.schema_in_prompt().then_some(&*call.target.schema);
    let now = needs_the_current_date(text).then(|| {
        (call.limits.reference_time).unwrap_or_else(|| call.ports.clock.now_unix_millis())
    });
    let mut system = system_prompt(
        now,
        provider.delivery(),
        shape,
        shown_schema,
        call.target.manual.as_deref(),
    );
    system
        .volatile
        .push_str(&earlier_violations(call.earlier_violations));
    // A picture without a prompt or a text page: the user turn says where the text is (a
    // provider refuses an empty text part).
    let text = match (text.trim().is_empty(), call.attachment) {
        (true, Some(_)) => IN_THE_ATTACHMENT,
        _ => text,
    };
    Conversation {
        system,
        turns: vec![Turn::User(text.to_owned())],
        attachment: call.attachment.cloned(),
    }
}

/// The user turn of a call whose only text is in the attached document.
const IN_THE_ATTACHMENT: &str = "The text to structure is in the attached document.";

/// What an earlier model's last answer broke, for the next model to avoid (escalation); empty
/// when there was none.
fn earlier_violations(violations: &[String]) -> String {
    if violations.is_empty() {
        return String::new();
    }
    let mut told =
        "\nAn earlier answer to this text was rejected; avoid what it broke:\n".to_owned();
    for violation in violations {
        told.push_str("- ");
        told.push_str(violation);
        told.push('\n');
    }
    told
}

/// The system prompt of the call that chooses among the values the parts of a long text
/// disagree on.
pub fn choice_prompt(delivery: Delivery) -> SystemPrompt {
    let answer = answer_instruction(delivery);
    SystemPrompt {
        stable: format!(
            "Parts of one long document gave different values for the same fields. For each \
             field, choose the candidate the document as a whole gives it, reading the passage \
             each candidate was read from. {answer}: one field for each field listed, its value \
             one of that field's candidates, written exactly as listed."
        ),
        volatile: String::new(),
        cacheable: false,
    }
}

/// The system prompt of the call asking which items of a list merged from a long document's
/// parts the document states as that field.
pub fn membership_prompt(delivery: Delivery) -> SystemPrompt {
    let answer = answer_instruction(delivery);
    SystemPrompt {
        stable: format!(
            "Parts of one long document each gave items for the same lists. A part may give a \
             name of the right kind that the document mentions in another role. For each item, \
             read the passage it was read from and say whether the document states it as one of \
             that list. {answer}: one field for each item listed, yes or no."
        ),
        volatile: String::new(),
        cacheable: false,
    }
}

/// How an answer of the calls after a long text's merge is delivered.
fn answer_instruction(delivery: Delivery) -> String {
    match delivery {
        Delivery::Tool => format!(
            "Deliver your answer by calling the tool {ANSWER_TOOL} with {{\"{ANSWER_KEY}\": <the object>}}"
        ),
        Delivery::Native | Delivery::Prompt => {
            format!("Answer with {{\"{ANSWER_KEY}\": <the object>}}")
        }
    }
}

/// The system prompt for one call: with the current time `now_unix_millis` when the text needs
/// it, the schema when the prompt must carry it.
pub fn system_prompt(
    now_unix_millis: Option<u64>,
    delivery: Delivery,
    shape: Shape,
    schema: Option<&Value>,
    manual: Option<&str>,
) -> SystemPrompt {
    let content = match shape {
        Shape::One | Shape::Part => "<the object>".to_owned(),
        Shape::Records => format!("{{\"{RECORDS_KEY}\": [<one object per record>]}}"),
    };
    let answer = match delivery {
        Delivery::Tool => format!(
            "Deliver your answer by calling the tool {ANSWER_TOOL} with {{\"{ANSWER_KEY}\": {content}}}"
        ),
        Delivery::Native | Delivery::Prompt => {
            format!("Answer with {{\"{ANSWER_KEY}\": {content}}}")
        }
    };
    // Every word here is sent with every call: as short as the eval allows
    // (docs/history/eval.md, r11/r12: a terser wording cost exact answers of the small model).
    let (task, absent, object) = match shape {
        Shape::One => (
            "You turn the user's text into one JSON object that conforms to a JSON Schema.",
            format!(
                "- If, and only if, the text lacks a value that a required field needs, give \
                 instead of the object an object with the single field {NEED_KEY}: a short \
                 description of what is missing.\n"
            ),
            "the object",
        ),
        Shape::Part => (
            "The user's text is one part of a longer document. You turn what this part states \
             into one JSON object that conforms to a JSON Schema.",
            "- Leave out every field whose value this part does not state; never guess a value \
             that another part may give.\n"
                .to_owned(),
            "the object",
        ),
        Shape::Records => (
            "You find every record the user's text holds, in the order it gives them, and turn \
             each into one JSON object that conforms to a JSON Schema.",
            format!(
                "- Leave out any field whose value the text does not give for that record, \
                 required or not; never copy a value from another record.\n\
                 - No record in the text: {{\"{RECORDS_KEY}\": []}}.\n"
            ),
            "each record",
        ),
    };
    let mut stable = format!(
        "{task}\n\
         \n\
         Rules:\n\
         - {answer}.\n\
         - Use only information the text states or directly implies. Never invent a value.\n\
         - Leave out optional fields the text does not mention (write null for them when the \
           schema requires the key).\n\
         {absent}"
    );
    if let Some(schema) = schema {
        stable.push_str(&format!(
            "- Answer with the JSON only: no prose, no code fences.\n\nThe JSON Schema of {object}:\n"
        ));
        stable.push_str(&schema.to_string());
        stable.push('\n');
    }
    let manual = manual.map(str::trim).filter(|manual| !manual.is_empty());
    if let Some(manual) = manual {
        stable.push_str("\nNotes on this schema:\n");
        stable.push_str(manual);
        stable.push('\n');
    }
    SystemPrompt {
        stable,
        volatile: now_unix_millis.map_or_else(String::new, |now| {
            format!(
                "The current date and time is {} (UTC): resolve relative dates such as \
                 \"today\" or \"yesterday at 3 pm\" against it.",
                rfc3339(now)
            )
        }),
        cacheable: manual.is_some(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_prompt_carries_the_need_convention_time_schema_and_manual() {
        let schema = serde_json::json!({"type": "object"});
        let prompt = system_prompt(
            Some(1_778_077_800_000),
            Delivery::Native,
            Shape::One,
            Some(&schema),
            Some("# manual\nuse snake_case"),
        );
        assert!(prompt.cacheable);
        assert!(
            !prompt.stable.contains("2026"),
            "the time stays out of the cacheable part"
        );
        let prompt = prompt.text();
        assert!(
            prompt.contains("an object with the single field _need"),
            "the need convention, in words: a small model copies a literal example"
        );
        assert!(prompt.contains("2026-05-06T14:30:00Z"));
        assert!(prompt.contains("{\"type\":\"object\"}"));
        assert!(prompt.contains("use snake_case"));
        let bare = system_prompt(None, Delivery::Native, Shape::One, None, None);
        assert!(!bare.cacheable);
        let bare = bare.text();
        assert!(
            !bare.contains("current date"),
            "no clock for a text that needs none"
        );
        assert!(!bare.contains("JSON Schema of the object"));
        assert!(!bare.contains("Notes on this schema"));
        let tool = system_prompt(None, Delivery::Tool, Shape::One, None, None).text();
        assert!(
            tool.contains("calling the tool __structured_output__ with {\"answer\": <the object>}"),
            "{tool}"
        );
        let records =
            system_prompt(None, Delivery::Prompt, Shape::Records, Some(&schema), None).text();
        assert!(records.contains("{\"answer\": {\"records\": [<one object per record>]}}"));
        assert!(records.contains("The JSON Schema of each record:"));
        assert!(
            !records.contains("_need"),
            "records mode has no need branch"
        );
    }
}
