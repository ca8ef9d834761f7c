//! Reading a model's answer: text → JSON (leniently) → the need path or the object, mapped back
//! to the shape of the target schema.

pub mod format;
pub mod lenient;
pub mod spans;

use serde_json::{Value, json};

use crate::schema::violation::show;
use crate::schema::{TargetSchema, root, subset};
use format::{ANSWER_KEY, AnswerFormat, NEED_KEY};

/// What one answer says.
#[derive(Debug, Clone, PartialEq)]
pub enum Decoded {
    /// The model says the input lacks a required value.
    Need(String),
    /// A candidate object, still to be validated against the target schema.
    Candidate(Value),
    /// Not JSON at all; the parser's reason.
    Unreadable(String),
}

/// Decodes answer `text` written for `format`; repairs made on the way are appended to
/// `repairs`.
pub fn decode(
    text: &str,
    format: &AnswerFormat,
    target: &TargetSchema,
    repairs: &mut Vec<String>,
) -> Decoded {
    let parsed = match lenient::parse(text) {
        Ok(parsed) => parsed,
        Err(reason) => return Decoded::Unreadable(reason),
    };
    repairs.extend(parsed.repairs);
    let answer = match parsed.value {
        // `{"answer": …}`, and `{"answer": …, "_need": …}` where the provider cannot express a
        // union of objects (Gemini's OpenAPI subset).
        Value::Object(mut envelope)
            if envelope.contains_key(ANSWER_KEY)
                && envelope
                    .keys()
                    .all(|key| key == ANSWER_KEY || key == NEED_KEY) =>
        {
            if let Some(Value::String(need)) = envelope.remove(NEED_KEY)
                && !need.trim().is_empty()
            {
                return Decoded::Need(need.trim().to_owned());
            }
            envelope.remove(ANSWER_KEY).unwrap_or(Value::Null)
        }
        bare => {
            repairs.push(format!(
                "read an answer given without the \"{ANSWER_KEY}\" envelope"
            ));
            bare
        }
    };
    let answer = match need(answer, &target.schema, repairs) {
        Ok(need) => return Decoded::Need(need),
        Err(answer) => answer,
    };
    let answer = if !answer.is_object() && target.wrapped {
        // The value of a root that is not an object, given bare: the value it travels as.
        repairs.push(format!(
            "read the bare answer {} as the value asked for",
            show(&answer)
        ));
        json!({ root::WRAPPED_KEY: answer })
    } else {
        answer
    };
    Decoded::Candidate(subset::restore(
        &format.source,
        answer,
        format.encoded,
        repairs,
    ))
}

/// `Ok(need)` when the answer takes the need path. A non-empty `_need` wins over anything next to
/// it (abstaining is safer than a value the model itself doubts); an empty or null one is
/// dropped. A target that declares its own `_need` property keeps it as data.
fn need(answer: Value, target: &Value, repairs: &mut Vec<String>) -> Result<String, Value> {
    let declares_need = target
        .get("properties")
        .and_then(|properties| properties.get(NEED_KEY))
        .is_some();
    let Value::Object(mut object) = answer else {
        return Err(answer);
    };
    if declares_need || !object.contains_key(NEED_KEY) {
        return Err(Value::Object(object));
    }
    match object.remove(NEED_KEY) {
        Some(Value::String(need)) if !need.trim().is_empty() => {
            if !object.is_empty() {
                repairs.push(format!(
                    "ignored the other fields given next to \"{NEED_KEY}\""
                ));
            }
            Ok(need.trim().to_owned())
        }
        _ => {
            repairs.push(format!("dropped an empty \"{NEED_KEY}\""));
            Err(Value::Object(object))
        }
    }
}
