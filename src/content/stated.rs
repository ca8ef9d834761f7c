//! Whether the text states a value the answer needs that the model was unsure of: a question
//! other than "what is it?". A small model asked again for a value writes its guess again (a
//! recipe's servings from "40 minutes", a name from "a 58-year-old taxi driver"); asked whether
//! the text gives the servings at all, it says no. One short request for every value in doubt,
//! each answered `stated` or `not stated` within the grammar, the answer's own value shown
//! beside its field's description.

use serde_json::{Map, Value, json};

use crate::content::call::Call;
use crate::content::grounding::provenance::DERIVED_ANNOTATION;
use crate::content::one::{self, Read};
use crate::error::StructureError;
use crate::outcome::{Answer, Usage};
use crate::schema::{TargetSchema, walk};
use crate::settings::MinConfidence;

/// The answer a field's question takes when the text gives its value.
const STATED: &str = "stated";
/// And when it does not.
const NOT_STATED: &str = "not stated";

/// What the text says of each value in doubt: `Some(true)` stated, `Some(false)` not, `None`
/// when the question gave no answer for it.
pub(super) struct Verdicts {
    pub verdicts: Vec<(String, Option<bool>)>,
    pub usage: Usage,
}

/// Asks whether `text` states each value of `data` at `pointers` (into the answer to `call`).
pub(super) fn ask(
    call: Call<'_>,
    text: &str,
    data: &Value,
    pointers: &[String],
    spent: Usage,
) -> Result<Verdicts, StructureError> {
    let mut properties = Map::new();
    let mut keys = Vec::new();
    for (index, pointer) in pointers.iter().enumerate() {
        let key = format!("value_{}", index + 1);
        let described = describe(&call.target.schema, pointer, data.pointer(pointer));
        // A judgement: never narrowed to the one of its words the text happens to hold.
        properties.insert(
            key.clone(),
            json!({ "type": "string", "enum": [STATED, NOT_STATED], "description": described,
                    DERIVED_ANNOTATION: true }),
        );
        keys.push(key);
    }
    let schema = json!({
        "type": "object",
        "properties": properties,
        "required": keys,
        "additionalProperties": false,
    });
    let target = TargetSchema::stored(schema, None, call.target.origin.clone())?;
    let question = call.aside(&target, MinConfidence::Off, spent);
    let Read::Whole(read) = one::run(question, text)? else {
        return Ok(Verdicts {
            verdicts: undecided(pointers),
            usage: Usage::default(),
        });
    };
    let answered = match &read.answer {
        Answer::Ok(answered) => Some(answered),
        _ => None,
    };
    let verdicts = (pointers.iter().zip(&keys))
        .map(|(pointer, key)| {
            let said = answered
                .and_then(|answered| answered.get(key))
                .and_then(Value::as_str);
            (pointer.clone(), said.map(|said| said == STATED))
        })
        .collect();
    Ok(Verdicts {
        verdicts,
        usage: read.usage,
    })
}

fn undecided(pointers: &[String]) -> Vec<(String, Option<bool>)> {
    pointers
        .iter()
        .map(|pointer| (pointer.clone(), None))
        .collect()
}

/// The question of one value: its field, what the schema says of it, the value the answer
/// gave.
fn describe(schema: &Value, pointer: &str, value: Option<&Value>) -> String {
    let mut node = schema;
    let mut names = Vec::new();
    for token in pointer.trim_start_matches('/').split('/') {
        let name = walk::unescape(token);
        let next = walk::follow(schema, node);
        node = next
            .get("properties")
            .and_then(|properties| properties.get(&name))
            .unwrap_or(&Value::Null);
        names.push(name);
    }
    let node = walk::follow(schema, node);
    let said = ["description", "title"]
        .iter()
        .find_map(|key| node.get(*key).and_then(Value::as_str));
    let field = names.join(" ").replace('_', " ");
    let value = value.map_or_else(String::new, |value| format!(" (an answer gave {value})"));
    match said {
        Some(said) => format!("Whether the text states the {field}: {said}{value}"),
        None => format!("Whether the text states the {field}{value}"),
    }
}
