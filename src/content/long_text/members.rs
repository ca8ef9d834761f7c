//! Which items of a list gathered from several parts of a long text the document states as
//! that field. A part asked for "the parties" offers every name of that kind it reads — the
//! agreement's parties, and the counsel, a committee, a list of brands a clause names; one
//! part alone cannot tell them apart, the whole list can. One short call sees each item with
//! the passage it was read from and answers, for each, `yes` (the document states it as one of
//! that field) or `no` (it names it in another role); the items answered `no` are left out,
//! each named in `trace.leftOut`.
//!
//! Nothing is lost to a failed question: when the call's answer stays invalid, or it answers
//! `no` to every item of a list (the list is the field's, whatever the model says), the list
//! stays whole and `trace.leftOut` says so. A list longer than [`MAX_ASKED`] items is not
//! asked of: its passages would crowd the window.

use serde_json::{Map, Value, json};

use super::choose::{Asked, ask, description, labels_of, passage};
use super::fields::{List, Merged};
use crate::answer::format::Shape;
use crate::content::call::Call;
use crate::content::dialogue::Settled;
use crate::content::prompt;
use crate::error::StructureError;
use crate::outcome::{Answer, Trace, Usage};
use crate::provider::{Conversation, Turn};
use crate::schema::TargetSchema;
use crate::schema::walk::escape;

/// The answer for an item the document states as the field's.
const YES: &str = "yes";
/// And for one it names in another role.
const NO: &str = "no";
/// The most items of all lists one question asks of.
const MAX_ASKED: usize = 40;

/// Places each list `merged` holds, without the items the question says the document does not
/// state as that field.
pub(super) fn confirm(
    call: Call<'_>,
    text: &str,
    merged: &mut Merged,
    usage: &mut Usage,
    trace: &mut Trace,
) -> Result<u32, StructureError> {
    let lists = std::mem::take(&mut merged.lists);
    let (asked, unasked): (Vec<List>, Vec<List>) = lists
        .into_iter()
        .partition(|list| list.items.len() <= MAX_ASKED);
    for list in unasked {
        merged.place(&list.name, list.items);
    }
    let asked = within_bound(asked, merged);
    if asked.is_empty() {
        return Ok(0);
    }
    let labels: Vec<Vec<String>> = (asked.iter())
        .map(|list| labels_of(list.items.iter()))
        .collect();
    let schema = answer_schema(&call.target.schema, &asked, &labels)?;
    let asking = |passage_bytes: usize| Conversation {
        system: prompt::membership_prompt(call.provider.delivery()),
        attachment: None,
        turns: vec![Turn::User(question(text, &asked, &labels, passage_bytes))],
    };
    let Asked {
        settled,
        iterations,
    } = ask(call, &schema, Shape::Part, asking, usage, trace)?;
    let answered = match settled {
        Settled::Accepted(Answer::Ok(answered)) => Some(answered),
        _ => None,
    };
    for (list, labels) in asked.into_iter().zip(&labels) {
        let verdicts: Option<Vec<bool>> = answered.as_ref().map(|answered| {
            (0..list.items.len())
                .map(|index| {
                    answered.get(key(&list.name, index)).and_then(Value::as_str) != Some(NO)
                })
                .collect()
        });
        place(merged, list, labels, verdicts, trace);
    }
    Ok(iterations)
}

/// The lists of `lists` whose items, added up, stay within [`MAX_ASKED`]; the others placed
/// whole in `merged`.
fn within_bound(lists: Vec<List>, merged: &mut Merged) -> Vec<List> {
    let mut count = 0;
    let mut asked = Vec::new();
    for list in lists {
        count += list.items.len();
        if count <= MAX_ASKED {
            asked.push(list);
        } else {
            merged.place(&list.name, list.items);
        }
    }
    asked
}

/// Places `list`'s items that `verdicts` keep (all of them without verdicts, or when none is
/// kept), each left out named in `trace.leftOut`.
fn place(
    merged: &mut Merged,
    list: List,
    labels: &[String],
    verdicts: Option<Vec<bool>>,
    trace: &mut Trace,
) {
    let at = format!("/{}", escape(&list.name));
    let Some(verdicts) = verdicts else {
        trace.left_out.push(format!(
            "kept every item of {at}: the question which of them the document states as {} \
             gave no valid answer",
            list.name
        ));
        merged.place(&list.name, list.items);
        return;
    };
    if !verdicts.contains(&true) {
        trace.left_out.push(format!(
            "kept every item of {at}: the question which of them the document states as {} \
             answered none",
            list.name
        ));
        merged.place(&list.name, list.items);
        return;
    }
    let mut kept = Vec::with_capacity(list.items.len());
    for ((item, keep), label) in list.items.into_iter().zip(verdicts).zip(labels) {
        if keep {
            kept.push(item);
        } else {
            trace.left_out.push(format!(
                "left out {at} item {}: read by a part, but the document does not state it as \
                 one of {} (asked of the items the parts gave)",
                json!(label),
                list.name
            ));
        }
    }
    merged.place(&list.name, kept);
}

/// The key of item `index` of list `name` in the question's answer.
fn key(name: &str, index: usize) -> String {
    format!("{name} {}", index + 1)
}

/// The answer's schema: for each item of each list, `yes` or `no`.
fn answer_schema(
    target: &Value,
    lists: &[List],
    labels: &[Vec<String>],
) -> Result<TargetSchema, StructureError> {
    let mut properties = Map::new();
    for (list, labels) in lists.iter().zip(labels) {
        let field = match description(target, &list.name) {
            Some(said) => format!("{} ({said})", list.name),
            None => list.name.clone(),
        };
        for (index, label) in labels.iter().enumerate() {
            let described = format!("Whether the document states {label} as one of its {field}");
            properties.insert(
                key(&list.name, index),
                json!({ "type": "string", "enum": [YES, NO], "description": described }),
            );
        }
    }
    let keys: Vec<String> = properties.keys().cloned().collect();
    let schema = json!({
        "type": "object",
        "properties": properties,
        "required": keys,
        "additionalProperties": false,
    });
    TargetSchema::stored(schema, None, "members".to_owned())
}

/// The question: each list's items, each with `passage_bytes` of the passage it was read from.
fn question(text: &str, lists: &[List], labels: &[Vec<String>], passage_bytes: usize) -> String {
    let mut question = String::from(
        "Lists the parts of one document gave, each item with the passage it was read from. \
         For each item answer yes when the document states it as one of that list, no when the \
         passage names it in another role:\n",
    );
    for (list, labels) in lists.iter().zip(labels) {
        question.push_str(&format!("\n{}:\n", list.name));
        for (index, (item, label)) in list.items.iter().zip(labels).enumerate() {
            question.push_str(&format!(
                "- {} ({}): {}\n",
                json!(key(&list.name, index)),
                label,
                passage(text, item, passage_bytes)
            ));
        }
    }
    question
}
