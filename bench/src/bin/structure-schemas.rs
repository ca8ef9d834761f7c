//! `structure-schemas`: schemas from the wild through the schema stage. For each schema of a
//! folder of MaskBench entries (`{"schema", "tests": [{"data", "valid"}]}`) or of plain schema
//! files (JSONSchemaBench's splits) — read at run time, never copied — whether it is accepted,
//! why not (grouped), how its root runs, whether the schema sent to OpenAI in strict mode obeys
//! OpenAI's rules and totals, and whether the labelled instances get the verdict their label
//! gives.
//!
//! ```text
//! cargo run --release -p structure-bench --bin structure-schemas -- \
//!     --folder DATA/maskbench [--sample DATA/maskbench-sample-300.txt] [--show 10]
//! ```

#[path = "../shared/maskbench.rs"]
mod maskbench;
#[path = "../../../tests/support/strict.rs"]
mod strict;

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde_json::Value;
use structure::answer::format::{AnswerFormat, Shape};
use structure::limits::CallLimits;
use structure::schema::root::{self, Root};
use structure::schema::subset::OPENAI_STRICT;
use structure::schema::{TargetSchema, root::classify};

#[derive(clap::Parser)]
struct Args {
    /// A folder of `*.json` files: MaskBench entries or plain schemas.
    #[arg(long)]
    folder: PathBuf,
    /// Only the ids (file stems) listed in this file, one a line.
    #[arg(long)]
    sample: Option<PathBuf>,
    /// How many examples of each refusal and strict problem to print.
    #[arg(long, default_value_t = 5)]
    show: usize,
    /// Print the schema sent to OpenAI in strict mode for this id, and nothing else.
    #[arg(long)]
    dump: Option<String>,
}

#[derive(Default)]
struct Tally {
    schemas: usize,
    accepted: usize,
    roots: BTreeMap<&'static str, usize>,
    refused: BTreeMap<String, Vec<String>>,
    strict_problems: BTreeMap<String, Vec<String>>,
    strict_schemas: usize,
    instances: usize,
    false_accepts: Vec<String>,
    false_rejects: Vec<String>,
}

fn main() -> anyhow::Result<()> {
    let args = <Args as clap::Parser>::parse();
    let ids = maskbench::files(&args.folder, args.sample.as_deref())?;
    let mut tally = Tally::default();
    for (id, path) in ids {
        let (schema, tests) = maskbench::read(&path)?;
        tally.schemas += 1;
        if args.dump.as_ref().is_some_and(|dump| *dump == id) {
            dump(schema);
            return Ok(());
        }
        judge(&id, schema, &tests, &mut tally);
    }
    report(&tally, args.show);
    Ok(())
}

fn judge(id: &str, schema: Value, tests: &Value, tally: &mut Tally) {
    if !schema.is_object() {
        refuse(tally, "not an object (a boolean schema)", id, "");
        return;
    }
    let target = match TargetSchema::new(schema, None, "inline".to_owned(), &CallLimits::default())
    {
        Ok(target) => target,
        Err(error) => {
            refuse(tally, refusal_kind(&error.message), id, &error.message);
            return;
        }
    };
    tally.accepted += 1;
    let kind = match classify(&target.schema) {
        Ok(Root::Object) => "object",
        Ok(Root::Records) => "array of objects (records)",
        Ok(Root::Wrapped) => "wrapped",
        Err(_) => "refused",
    };
    *tally.roots.entry(kind).or_default() += 1;
    for (data, valid) in maskbench::labelled(tests) {
        tally.instances += 1;
        match (target.compiled.is_valid(data), valid) {
            (true, false) => tally.false_accepts.push(id.to_owned()),
            (false, true) => tally.false_rejects.push(id.to_owned()),
            _ => {}
        }
    }
    let (planned, plan) = match root::plan(target, false) {
        Ok(planned) => planned,
        Err(error) => {
            tally.accepted -= 1;
            refuse(tally, "its root cannot be planned", id, &error.message);
            return;
        }
    };
    // The one object, and what a part of a long text is asked for; or the records.
    let shapes: &[Shape] = if plan.records() {
        &[Shape::Records]
    } else {
        &[Shape::One, Shape::Part]
    };
    tally.strict_schemas += 1;
    let problems: Vec<String> = shapes
        .iter()
        .flat_map(|shape| {
            let sent = AnswerFormat::build(&planned.schema, &OPENAI_STRICT, *shape);
            strict::strict_violations(&sent.schema)
                .into_iter()
                .map(move |problem| format!("{shape:?} {problem}"))
        })
        .collect();
    let mut kinds: Vec<String> = problems
        .iter()
        .map(|problem| problem_kind(problem))
        .collect();
    kinds.sort();
    kinds.dedup();
    for kind in kinds {
        let example = problems
            .iter()
            .find(|problem| problem_kind(problem) == kind)
            .cloned()
            .unwrap_or_default();
        tally
            .strict_problems
            .entry(kind)
            .or_default()
            .push(format!("{id}: {example}"));
    }
}

/// The schema sent to OpenAI in strict mode for `schema`, as JSON, or why there is none.
fn dump(schema: Value) {
    let sent = TargetSchema::new(schema, None, "inline".to_owned(), &CallLimits::default())
        .and_then(|target| root::plan(target, false))
        .map(|(planned, plan)| {
            let shape = if plan.records() {
                Shape::Records
            } else {
                Shape::One
            };
            AnswerFormat::build(&planned.schema, &OPENAI_STRICT, shape).schema
        });
    match sent {
        Ok(sent) => println!(
            "{}",
            serde_json::to_string_pretty(&*sent).unwrap_or_default()
        ),
        Err(error) => println!("refused: {}", error.message),
    }
}

fn refuse(tally: &mut Tally, kind: &str, id: &str, message: &str) {
    tally
        .refused
        .entry(kind.to_owned())
        .or_default()
        .push(format!(
            "{id}: {}",
            message.chars().take(220).collect::<String>()
        ));
}

/// The group a refusal falls in, by what its message names.
fn refusal_kind(message: &str) -> &'static str {
    if message.contains("external reference") {
        "external $ref"
    } else if message.contains("structure_max_") {
        "over an operator's limit"
    } else if message.contains("does not compile")
        || message.contains("meta-schema")
        || message.contains("is not valid")
    {
        "not valid JSON Schema"
    } else if message.contains("did you mean") {
        "near miss of a keyword or format"
    } else if message.contains("points to nothing") {
        "dangling $ref"
    } else {
        "other"
    }
}

/// A strict problem without its location: what kind of rule it breaks.
fn problem_kind(problem: &str) -> String {
    let shape = problem.split(' ').next().unwrap_or_default();
    let words = problem.split_once(": ").map_or(problem, |(_, rest)| rest);
    let words = &format!("{shape} {words}");
    words
        .split(|c: char| c.is_ascii_digit())
        .next()
        .unwrap_or(words)
        .trim()
        .to_owned()
        .chars()
        .take(60)
        .collect::<String>()
        .replace("keyword ", "keyword: ")
}

fn report(tally: &Tally, show: usize) {
    let refused: usize = tally.refused.values().map(Vec::len).sum();
    println!(
        "schemas {}  accepted {}  refused {} ({:.1}%)",
        tally.schemas,
        tally.accepted,
        refused,
        100.0 * refused as f64 / tally.schemas.max(1) as f64
    );
    for (kind, count) in &tally.roots {
        println!("  root {kind}: {count}");
    }
    for (kind, ids) in &tally.refused {
        println!("refused, {kind}: {}", ids.len());
        for id in ids.iter().take(show) {
            println!("    {id}");
        }
    }
    let broken: std::collections::BTreeSet<&str> = tally
        .strict_problems
        .values()
        .flatten()
        .filter_map(|line| line.split(':').next())
        .collect();
    println!(
        "sent to OpenAI strict: {}  breaking its rules: {}",
        tally.strict_schemas,
        broken.len()
    );
    for (kind, ids) in &tally.strict_problems {
        println!("  {kind}: {}", ids.len());
        for id in ids.iter().take(show) {
            println!("    {id}");
        }
    }
    println!(
        "labelled instances {}  false accepts {}  false rejects {}",
        tally.instances,
        tally.false_accepts.len(),
        tally.false_rejects.len()
    );
    for id in tally
        .false_accepts
        .iter()
        .chain(&tally.false_rejects)
        .take(show)
    {
        println!("    {id}");
    }
}
