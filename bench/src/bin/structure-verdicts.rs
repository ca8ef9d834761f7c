//! `structure-verdicts`: MaskBench's labelled instances through the whole call, as a model that
//! answers exactly the instance would give them. For each entry's schema and each labelled
//! instance, `structure` reads the instance's JSON as its text, in prompt mode, against an
//! OpenAI-compatible server that states no window (its window is guessed), and the model
//! answers `{"answer": <instance>}` to every request (a choice among a long text's parts: the
//! first candidate). A valid instance must come back `ok` with itself as `data`; an invalid one
//! must not come back `ok` as it is.
//!
//! ```text
//! cargo run --release -p structure-bench --bin structure-verdicts -- \
//!     --folder DATA/maskbench [--sample DATA/maskbench-sample-300.txt] [--show 20]
//! ```
//!
//! Every disagreement is listed with what the call said, so each can be explained.

#[path = "../shared/maskbench.rs"]
mod maskbench;

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde_json::{Value, json};
use structure::ports::{
    Config, HttpRequest, HttpResponse, MemoryKeyValue, Ports, SystemClock, Transport,
    TransportError,
};
use structure::{Answer, ErrorKind, SchemaInput, Scope, StructureRequest};

#[derive(clap::Parser)]
struct Args {
    /// A folder of MaskBench entries (`*.json`).
    #[arg(long)]
    folder: PathBuf,
    /// Only the ids (file stems) listed in this file, one a line.
    #[arg(long)]
    sample: Option<PathBuf>,
    /// How many disagreements of each kind to print (all: a large number).
    #[arg(long, default_value_t = 20)]
    show: usize,
    /// Print each instance of this id (file stem) with the data the call gave, and nothing else.
    #[arg(long)]
    explain: Option<String>,
}

/// What the call made of one labelled instance.
enum Verdict {
    /// `ok` with the instance itself.
    Accepted,
    /// `ok`, the instance's optional values that break the schema left out (`trace.leftOut`).
    AcceptedWithout(Vec<String>),
    /// `ok` with other data than the instance, and how it differs.
    Changed(&'static str),
    /// `need-more-input` or `stale`, with what it said.
    Rejected(String),
    /// The schema stage refused the schema.
    Refused(String),
    /// Any other error.
    Failed(String),
}

#[derive(Default)]
struct Tally {
    instances: usize,
    /// Schemas refused, with why (once each).
    refused: BTreeMap<String, String>,
    false_accepts: Vec<String>,
    false_rejects: Vec<String>,
    changed: Vec<String>,
    /// Invalid instances answered `ok` without their broken optional values.
    left_out: Vec<String>,
    errors: Vec<String>,
}

fn main() -> anyhow::Result<()> {
    let args = <Args as clap::Parser>::parse();
    let mut tally = Tally::default();
    for (id, path) in maskbench::files(&args.folder, args.sample.as_deref())? {
        let (schema, tests) = maskbench::read(&path)?;
        if let Some(wanted) = &args.explain {
            if *wanted == id {
                explain(&schema, &tests);
            }
            continue;
        }
        for (index, (instance, valid)) in maskbench::labelled(&tests).enumerate() {
            tally.instances += 1;
            let at = format!("{id} #{index}");
            match (verdict(&schema, instance), valid) {
                (Verdict::Refused(why), _) => {
                    tally.refused.insert(id.clone(), why);
                    break;
                }
                (Verdict::Failed(why), _) => tally.errors.push(format!("{at}: {why}")),
                (Verdict::Accepted, false) => tally.false_accepts.push(at),
                (Verdict::Rejected(why), true) => tally.false_rejects.push(format!("{at}: {why}")),
                (Verdict::AcceptedWithout(left), true) => {
                    tally.false_rejects.push(format!("{at}: left out {left:?}"));
                }
                (Verdict::AcceptedWithout(left), false) => {
                    tally.left_out.push(format!("{at}: {left:?}"));
                }
                (Verdict::Changed(how), _) => tally.changed.push(format!("{at}: {how}")),
                (Verdict::Accepted, true) | (Verdict::Rejected(_), false) => {}
            }
        }
    }
    report(&tally, args.show);
    Ok(())
}

/// Prints each labelled instance of `tests`, its label and what the call made of it.
fn explain(schema: &Value, tests: &Value) {
    for (index, (instance, valid)) in maskbench::labelled(tests).enumerate() {
        let (outcome, _) = call(schema, instance);
        println!("#{index} valid {valid}\n  instance {instance}\n  outcome  {outcome}");
    }
}

/// One call of `schema` over `instance`'s JSON, the model answering `instance`: the outcome's
/// JSON (or the error's), and the outcome.
fn call(
    schema: &Value,
    instance: &Value,
) -> (Value, Result<structure::Outcome, structure::StructureError>) {
    let text = serde_json::to_string_pretty(instance).unwrap_or_default();
    let result = StructureRequest::new(&text, SchemaInput::Inline(schema.clone()), None).and_then(
        |request| {
            let model = Answering {
                instance: instance.clone(),
            };
            let key_value = MemoryKeyValue::default();
            let ports = Ports {
                transport: &model,
                config: &Settings,
                key_value: &key_value,
                clock: &SystemClock,
            };
            structure::structure(&request, &Scope::default(), &ports)
        },
    );
    let shown = match &result {
        Ok(outcome) => outcome.to_json(),
        Err(error) => json!({ "error": error.message }),
    };
    (shown, result)
}

/// One call of `schema` over `instance`'s JSON, the model answering `instance`.
fn verdict(schema: &Value, instance: &Value) -> Verdict {
    match call(schema, instance).1 {
        Ok(outcome) => match outcome.answer {
            Answer::Ok(data) if &data == instance => Verdict::Accepted,
            Answer::Ok(_) if !outcome.trace.left_out.is_empty() => {
                Verdict::AcceptedWithout(outcome.trace.left_out)
            }
            Answer::Ok(data) => Verdict::Changed(difference(instance, &data)),
            Answer::NeedMoreInput(need) => Verdict::Rejected(format!("need: {need}")),
            Answer::Stale(errors) => Verdict::Rejected(format!("stale: {}", errors.join("; "))),
        },
        Err(error) if matches!(error.kind, ErrorKind::InvalidSchema { .. }) => {
            Verdict::Refused(error.message)
        }
        Err(error) => Verdict::Failed(format!("{}: {}", error.kind.name(), error.message)),
    }
}

/// How `data` differs from `instance`: nulls read as absent (an optional value the model gave
/// as `null` is one it did not give), the instance itself read as the value it wraps
/// (`{"value": "a"}` for a root that is not an object), or otherwise.
fn difference(instance: &Value, data: &Value) -> &'static str {
    if without_nulls(instance) == *data {
        "nulls read as absent"
    } else if instance.get("value") == Some(data) {
        "the instance is the wrapper of its value"
    } else {
        "other"
    }
}

fn without_nulls(value: &Value) -> Value {
    match value {
        Value::Object(members) => Value::Object(
            (members.iter())
                .filter(|(_, member)| !member.is_null())
                .map(|(key, member)| (key.clone(), without_nulls(member)))
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(without_nulls).collect()),
        other => other.clone(),
    }
}

/// An OpenAI-compatible server at a base URL of its own, in prompt mode.
struct Settings;

impl Config for Settings {
    fn get(&self, key: &str) -> Result<Option<String>, String> {
        Ok(match key {
            "structure_model" => Some("openai/exact-model".to_owned()),
            "openai_base_url" => Some("http://127.0.0.1:9/v1".to_owned()),
            "structure_delivery" => Some("prompt".to_owned()),
            "structure_require_provider_strict_output" => Some("false".to_owned()),
            _ => None,
        })
    }
}

/// A model that answers `instance` to every request (and, asked to choose among a long text's
/// parts, the first candidate of each field); a server that says nothing of itself.
struct Answering {
    instance: Value,
}

impl Transport for Answering {
    fn send(&self, request: &HttpRequest) -> Result<HttpResponse, TransportError> {
        if request.method != "POST" {
            return Ok(HttpResponse {
                status: 404,
                headers: Vec::new(),
                body: b"{}".to_vec(),
            });
        }
        let body: Value = serde_json::from_slice(&request.body).unwrap_or(Value::Null);
        let answer = if mock_llm::document::is_choice(&body) {
            let question = (body["messages"].as_array().into_iter().flatten())
                .filter_map(|message| message["content"].as_str())
                .next_back()
                .unwrap_or_default();
            mock_llm::document::choose(question)
        } else {
            self.instance.clone()
        };
        let content = json!({ "answer": answer }).to_string();
        let reply = json!({
            "choices": [{ "message": { "role": "assistant", "content": content }, "finish_reason": "stop" }],
            "usage": { "prompt_tokens": 100, "completion_tokens": 20 }
        });
        Ok(HttpResponse {
            status: 200,
            headers: vec![("content-type".to_owned(), "application/json".to_owned())],
            body: reply.to_string().into_bytes(),
        })
    }
}

fn report(tally: &Tally, show: usize) {
    println!(
        "labelled instances {}  false accepts {}  false rejects {}  changed {}  refused schemas {}  \
         errors {}  invalid instances answered without their broken optional values {}",
        tally.instances,
        tally.false_accepts.len(),
        tally.false_rejects.len(),
        tally.changed.len(),
        tally.refused.len(),
        tally.errors.len(),
        tally.left_out.len(),
    );
    let lists: [(&str, Vec<String>); 5] = [
        ("false accepts", tally.false_accepts.clone()),
        ("false rejects", tally.false_rejects.clone()),
        ("changed", tally.changed.clone()),
        ("errors", tally.errors.clone()),
        (
            "refused",
            (tally.refused.iter())
                .map(|(id, why)| format!("{id}: {}", why.chars().take(200).collect::<String>()))
                .collect(),
        ),
    ];
    for (name, lines) in lists {
        if lines.is_empty() {
            continue;
        }
        println!("{name}:");
        for line in lines.iter().take(show) {
            println!("    {}", line.chars().take(400).collect::<String>());
        }
    }
}
