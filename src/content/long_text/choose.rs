//! The two calls a long text may need after its parts are merged, each as short as the passages
//! it needs: choosing among the values the parts disagree on ([`settle`]), and fixing a merged
//! object the full schema rejects ([`repair`]). Both are conversations like any other: their
//! answers validated, their violations fed back up to `maxLoops` times.

use serde_json::{Map, Value, json};

use super::fields::{Candidate, Conflict, Merged};
use crate::answer::format::{ANSWER_KEY, Shape};
use crate::content::call::Call;
use crate::content::chunked::required::missing;
use crate::content::dialogue::{Dialogue, Settled};
use crate::content::judge::Whole;
use crate::content::{passages, prompt};
use crate::error::StructureError;
use crate::outcome::{Answer, Source, Trace, Usage};
use crate::ports::HttpRequest;
use crate::provider::{Conversation, Delivered, Turn};
use crate::schema::TargetSchema;
use crate::schema::violation::Violation;
use crate::settings::Grounding;

/// The choice of none of a field's candidates: the field is left out (an optional one only).
const NONE: &str = "(none of these)";
/// The most candidates of one field shown to the choosing call (the best supported).
const MAX_SHOWN: usize = 8;
/// The most bytes of the passage shown around a value, before the window asks for less.
const PASSAGE_BYTES: usize = 480;
/// The least an answer of these calls is left: a choice or an object is short.
const ANSWER_ROOM: u32 = 256;

/// What a call after the merge came to.
pub(super) struct Asked<T> {
    pub settled: Settled<T>,
    pub iterations: u32,
}

/// A required field the choosing call could not settle: its name and its candidates.
pub(super) type Undecided = (String, Vec<String>);

/// Chooses, with one call that sees each candidate with the passage it was read from, the
/// value of every field `merged`'s parts disagree on, and sets it. When that call's answer
/// stays invalid, an optional field is left out (`trace.leftOut` says why) and a required one
/// comes back undecided, never guessed.
pub(super) fn settle(
    call: Call<'_>,
    text: &str,
    merged: &mut Merged,
    usage: &mut Usage,
    trace: &mut Trace,
) -> Result<Asked<Vec<Undecided>>, StructureError> {
    let conflicts = std::mem::take(&mut merged.conflicts);
    let required = missing(&json!({}), &call.target.schema);
    // Each field's candidates by name; an optional field may also be none of them.
    let offers: Vec<Vec<String>> = conflicts
        .iter()
        .map(|conflict| {
            let mut labels = labels_of(conflict.candidates.iter().take(MAX_SHOWN));
            if !required.contains(&conflict.name.as_str()) {
                labels.push(NONE.to_owned());
            }
            labels
        })
        .collect();
    let choice = choice_schema(&call.target.schema, &conflicts, &offers)?;
    let asking = |passage_bytes: usize| Conversation {
        system: prompt::choice_prompt(call.provider.delivery()),
        attachment: None,
        turns: vec![Turn::User(question(
            text,
            &conflicts,
            &offers,
            passage_bytes,
        ))],
    };
    let asked = ask(call, &choice, Shape::Part, asking, usage, trace)?;
    let undecided = match asked.settled {
        Settled::Accepted(Answer::Ok(chosen)) => {
            for (conflict, labels) in conflicts.into_iter().zip(&offers) {
                let picked = chosen.get(&conflict.name).and_then(Value::as_str);
                // `NONE` is past the candidates: it picks none of them.
                let index = labels
                    .iter()
                    .position(|label| Some(label.as_str()) == picked);
                if let Some(candidate) =
                    index.and_then(|at| conflict.candidates.into_iter().nth(at))
                {
                    merged.take(&conflict.name, candidate);
                }
            }
            Vec::new()
        }
        Settled::Stale(violations) => {
            let why = (violations.iter().map(Violation::to_string))
                .collect::<Vec<_>>()
                .join("; ");
            unsettled(conflicts, offers, &required, &why, trace)
        }
        Settled::Accepted(_) => {
            unsettled(conflicts, offers, &required, "it named none of them", trace)
        }
    };
    Ok(Asked {
        settled: Settled::Accepted(undecided),
        iterations: asked.iterations,
    })
}

/// The schema of the choice: for each conflict, one of its `offers`.
fn choice_schema(
    target: &Value,
    conflicts: &[Conflict],
    offers: &[Vec<String>],
) -> Result<TargetSchema, StructureError> {
    let mut properties = Map::new();
    for (conflict, labels) in conflicts.iter().zip(offers) {
        let mut property = json!({ "type": "string", "enum": labels });
        if let Some(description) = description(target, &conflict.name) {
            property["description"] = json!(description);
        }
        properties.insert(conflict.name.clone(), property);
    }
    let names: Vec<&str> = conflicts.iter().map(|c| c.name.as_str()).collect();
    let schema = json!({
        "type": "object",
        "properties": properties,
        "required": names,
        "additionalProperties": false,
    });
    TargetSchema::stored(schema, None, "choice".to_owned())
}

/// The choosing call's question: each field's candidates, each with `passage_bytes` of the
/// passage it was read from.
fn question(
    text: &str,
    conflicts: &[Conflict],
    offers: &[Vec<String>],
    passage_bytes: usize,
) -> String {
    let mut question = String::from(
        "Fields the parts of the document gave doubtful or different values for, each \
         candidate with the passage it was read from:\n",
    );
    for (conflict, labels) in conflicts.iter().zip(offers) {
        question.push_str(&format!("\n{}:\n", conflict.name));
        for (candidate, label) in conflict.candidates.iter().zip(labels) {
            question.push_str(&format!(
                "- {}: {}\n",
                json!(label),
                passage(text, candidate, passage_bytes)
            ));
        }
        if labels.last().map(String::as_str) == Some(NONE) {
            question.push_str(&format!(
                "- {}: the document gives this field no value\n",
                json!(NONE)
            ));
        }
    }
    question
}

/// What a choice that settled nothing leaves: each optional field out (`trace.leftOut` says
/// `why`), each required one undecided.
fn unsettled(
    conflicts: Vec<Conflict>,
    offers: Vec<Vec<String>>,
    required: &[&str],
    why: &str,
    trace: &mut Trace,
) -> Vec<Undecided> {
    let mut undecided = Vec::new();
    for (conflict, mut labels) in conflicts.into_iter().zip(offers) {
        labels.retain(|label| label != NONE);
        if required.contains(&conflict.name.as_str()) {
            undecided.push((conflict.name, labels));
        } else {
            trace.left_out.push(format!(
                "left out /{}: the parts gave different values ({}) and the choice among them \
                 stayed invalid ({why})",
                crate::schema::walk::escape(&conflict.name),
                labels.join(", ")
            ));
        }
    }
    undecided
}

/// Fixes `data`, merged from the parts, which the full schema rejects (`reason` says why): the
/// model sees the passages its values were read from, the object, and the reason.
pub(super) fn repair(
    call: Call<'_>,
    text: &str,
    data: Value,
    sources: &[Source],
    reason: String,
    usage: &mut Usage,
    trace: &mut Trace,
) -> Result<Asked<Answer>, StructureError> {
    let asking = |passage_bytes: usize| {
        let mut evidence = String::from(
            "Passages of a long document, with the values found in them for the object:\n",
        );
        for source in sources.iter().filter(|source| source.span.is_some()) {
            let found = Candidate {
                value: Value::Null,
                sources: vec![source.clone()],
                chunk: 0,
                support: 1,
                supported: true,
                unsupported: Vec::new(),
            };
            evidence.push_str(&format!(
                "- {}: {}\n",
                source.pointer,
                passage(text, &found, passage_bytes)
            ));
        }
        let mut conversation = prompt::conversation(call, &evidence, Shape::One);
        conversation.turns.push(Turn::Model(Delivered::Text(
            json!({ ANSWER_KEY: data }).to_string(),
        )));
        conversation.turns.push(Turn::Feedback(reason.clone()));
        conversation
    };
    ask(call, call.target, Shape::One, asking, usage, trace)
}

/// Runs the conversation `asking` makes (given how many bytes of passage to show around each
/// value: fewer until its request fits the window), its answers of `shape` judged against
/// `schema`.
pub(super) fn ask(
    call: Call<'_>,
    schema: &TargetSchema,
    shape: Shape,
    asking: impl Fn(usize) -> Conversation,
    usage: &mut Usage,
    trace: &mut Trace,
) -> Result<Asked<Answer>, StructureError> {
    let provider = call.provider;
    let format = provider.answer_format(&schema.schema, shape);
    let room = ANSWER_ROOM.min(provider.endpoint().max_output_tokens);
    let mut passage_bytes = PASSAGE_BYTES;
    let (mut dialogue, first) = loop {
        let dialogue = Dialogue::new(
            provider,
            format.clone(),
            asking(passage_bytes),
            call.limits.max_loops,
        );
        let first: HttpRequest = dialogue.request();
        let fits = first.tokens.is_none_or(|tokens| tokens.output >= room);
        if fits || passage_bytes == 0 {
            break (dialogue, first);
        }
        passage_bytes = if passage_bytes > 40 {
            passage_bytes / 2
        } else {
            0
        };
    };
    trace
        .schema_transforms
        .extend(dialogue.format.transforms.iter().cloned());
    let judge = Whole {
        target: schema,
        text: "",
        grounding: Grounding::Off,
    };
    let settled = call.caller().converse(
        &mut dialogue,
        &judge,
        Some(first),
        usage,
        &mut trace.retries,
    )?;
    let iterations = dialogue.iterations;
    trace.absorb(dialogue.trace);
    Ok(Asked {
        settled,
        iterations,
    })
}

/// The candidates as the choosing call names them: each value in plain words (a string as it
/// is, an object or array as its values one after another: `2 years`), with no quote or
/// backslash (a grammar-constrained server turns the names into its grammar, and some break on
/// them), a name taken already numbered apart.
pub(super) fn labels_of<'c>(candidates: impl Iterator<Item = &'c Candidate>) -> Vec<String> {
    let mut labels: Vec<String> = Vec::new();
    for candidate in candidates {
        let mut words = Vec::new();
        plain(&candidate.value, &mut words);
        let mut label = words.join(" ").replace(['"', '\\'], "'");
        if label.is_empty() {
            label = "(none)".to_owned();
        }
        let base = label.clone();
        let mut again = 1;
        while labels.contains(&label) {
            again += 1;
            label = format!("{base} ({again})");
        }
        labels.push(label);
    }
    labels
}

/// The leaves of `value`, as text, in order.
fn plain(value: &Value, words: &mut Vec<String>) {
    match value {
        Value::String(text) => words.push(text.split_whitespace().collect::<Vec<_>>().join(" ")),
        Value::Array(items) => items.iter().for_each(|item| plain(item, words)),
        Value::Object(members) => members.values().for_each(|member| plain(member, words)),
        Value::Null => {}
        other => words.push(other.to_string()),
    }
}

/// The description the target gives property `name`, if any.
pub(super) fn description(schema: &Value, name: &str) -> Option<String> {
    crate::content::chunked::required::record_root(schema)
        .pointer(&format!(
            "/properties/{}/description",
            crate::schema::walk::escape(name)
        ))
        .and_then(Value::as_str)
        .map(str::to_owned)
}

/// The passage `candidate` was read from: its line with the line before and after, at most
/// `max_bytes` around the value, spacing folded; what says so when no span supports it.
pub(super) fn passage(text: &str, candidate: &Candidate, max_bytes: usize) -> String {
    let Some(span) = candidate.first_span() else {
        return "(no passage of the text writes it)".to_owned();
    };
    if max_bytes == 0 {
        return format!("(characters {}–{})", span.start, span.end);
    }
    let start = passages::byte_at(text, span.start);
    let end = passages::byte_at(text, span.end).max(start);
    let line_before = text[..start].rfind('\n').unwrap_or(0);
    let from = text[..line_before].rfind('\n').map_or(0, |at| at + 1);
    let line_after = text[end..].find('\n').map_or(text.len(), |at| end + at + 1);
    let to = text[line_after..]
        .find('\n')
        .map_or(text.len(), |at| line_after + at);
    let half = max_bytes / 2;
    let from = from.max(floor(text, start.saturating_sub(half)));
    let to = to.min(ceil(text, end + half)).max(end);
    let shown: Vec<&str> = text[from..to].split_whitespace().collect();
    format!("\"…{}…\"", shown.join(" "))
}

fn floor(text: &str, mut at: usize) -> usize {
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    at
}

fn ceil(text: &str, mut at: usize) -> usize {
    at = at.min(text.len());
    while !text.is_char_boundary(at) {
        at += 1;
    }
    at
}
