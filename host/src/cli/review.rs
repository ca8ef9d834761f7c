//! `review results`: a batch's results as they stand once people reviewed them
//! (`structure_review`). Each line of the batch's output whose result waits in the review queue
//! is written when a reviewer has confirmed or corrected it — the reviewed result, status `ok` —
//! and held back while it waits; every other line is written as it is. Run again, it writes
//! what was reviewed since and skips the ids its output holds.

use std::path::Path;
use std::process::ExitCode;

use serde_json::Value;
use structure_host::batch::output::Output;
use structure_host::{Scope, Structure};

use crate::cli::arguments::ReviewAction;
use crate::cli::output::{EXIT_ERROR, EXIT_OK, fail};

/// What became of the lines of a batch's output.
#[derive(Default)]
struct Counted {
    written: usize,
    reviewed: usize,
    waiting: usize,
}

/// `review`: what the command does with the review queue.
pub(crate) fn review(client: &Structure, scope: &Scope, action: ReviewAction) -> ExitCode {
    match action {
        ReviewAction::Results { input, output } => results(client, scope, &input, &output),
    }
}

fn results(client: &Structure, scope: &Scope, input: &Path, output: &Path) -> ExitCode {
    let text = match std::fs::read_to_string(input) {
        Ok(text) => text,
        Err(error) => {
            return fail(
                EXIT_ERROR,
                &format!("cannot read {}: {error}", input.display()),
            );
        }
    };
    let (mut out, done) = match Output::open(output) {
        Ok(opened) => opened,
        Err(message) => return fail(EXIT_ERROR, &message),
    };
    let mut counted = Counted::default();
    for (number, line) in text
        .lines()
        .enumerate()
        .filter(|(_, line)| !line.trim().is_empty())
    {
        let Ok(mut result) = serde_json::from_str::<Value>(line) else {
            let message = format!(
                "{} line {} is not JSON: a batch's output?",
                input.display(),
                number + 1
            );
            return fail(EXIT_ERROR, &message);
        };
        let Some(id) = result.get("id").and_then(Value::as_str).map(str::to_owned) else {
            let message = format!(
                "{} line {} has no \"id\": a batch's output?",
                input.display(),
                number + 1
            );
            return fail(EXIT_ERROR, &message);
        };
        if done.contains(&id) {
            continue;
        }
        if let Some(item) = result.pointer("/review/id").and_then(Value::as_str) {
            let reviewed = match client.review_item(scope, item) {
                Ok(found) => found.and_then(|item| item.reviewed_result()),
                Err(error) => return fail(EXIT_ERROR, &error.to_string()),
            };
            let Some(reviewed) = reviewed else {
                counted.waiting += 1;
                continue;
            };
            result = reviewed;
            counted.reviewed += 1;
        }
        if let Err(message) = out.write(&id, result) {
            return fail(EXIT_ERROR, &message);
        }
        counted.written += 1;
    }
    eprintln!(
        "structure: {} written ({} of them reviewed), {} still waiting for review",
        counted.written, counted.reviewed, counted.waiting
    );
    ExitCode::from(EXIT_OK)
}
