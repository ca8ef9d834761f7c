//! Batches: many texts from one command (`structure batch`), one process and one compiled
//! component for all, `jobs` calls in flight, each result a line of the output file as soon as
//! its call ends. The same command run again skips what is written ([`output`]); a stop (Ctrl-C)
//! lets the calls in flight finish and write their lines.
//!
//! ```no_run
//! use std::sync::Arc;
//! use std::sync::atomic::AtomicBool;
//! use structure_host::batch::{Batch, Defaults};
//! use structure_host::{Scope, Settings, Structure};
//!
//! # async fn example() -> Result<(), String> {
//! let client = Arc::new(Structure::builder().settings(Settings::from_env()).build().map_err(|e| e.to_string())?);
//! let batch = Batch {
//!     input: "emails.jsonl".into(),
//!     output: "results.jsonl".into(),
//!     defaults: Defaults { schema: Some(("contact".into(), "named")), ..Defaults::default() },
//!     jobs: 16,
//!     provider_batch: None,
//! };
//! let stop = Arc::new(AtomicBool::new(false));
//! let summary = batch
//!     .run(client, Scope::default(), stop, &mut |done, _| println!("{}: {}", done.id, done.result["status"]))
//!     .await?;
//! println!("{} written, {} left", summary.written, summary.left);
//! # Ok(())
//! # }
//! ```

pub mod input;
mod lines;
pub mod output;
mod provider;
mod tally;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use serde_json::json;
use tokio::task::JoinSet;

use crate::bindings::Scope;
use crate::client::{CallError, Structure};
pub use input::{Defaults, Item};
use output::Output;
pub use provider::ProviderBatch;
use provider::{Http, Journal, Rounds};
pub use tally::{Done, Tally};

/// One batch: where its lines come from and go, what they default to, how many calls at once.
#[derive(Debug, Clone)]
pub struct Batch {
    /// The input file (JSON Lines, or plain text lines).
    pub input: PathBuf,
    /// The output file, appended to.
    pub output: PathBuf,
    /// What a line that leaves them out gets.
    pub defaults: Defaults,
    /// Calls in flight at once (at least 1; 1 with the embedded engine, which answers one
    /// request at a time).
    pub jobs: usize,
    /// Through the providers' batch APIs, polled so, when set.
    pub provider_batch: Option<ProviderBatch>,
}

impl Batch {
    /// Runs every item of the input not yet in the output, `jobs` at a time, writing each line
    /// as its call ends and handing it to `progress` with the tally so far (results stream out
    /// as they come, in the order the calls end). Once `stop` is set no item starts;
    /// those in flight finish. Duplicate ids are refused before any call.
    pub async fn run(
        &self,
        client: Arc<Structure>,
        scope: Scope,
        stop: Arc<AtomicBool>,
        progress: &mut dyn FnMut(&Done, &Tally),
    ) -> Result<Tally, String> {
        let text = std::fs::read_to_string(&self.input)
            .map_err(|error| format!("cannot read {}: {error}", self.input.display()))?;
        let ids = input::ids(&text).map_err(|twice| {
            format!(
                "{} gives these ids more than once: {}; every line needs an id of its own \
                 (nothing was sent)",
                self.input.display(),
                twice.join(", ")
            )
        })?;
        let (mut output, done) = Output::open(&self.output)?;
        let mut tally = Tally::new(
            ids.len(),
            ids.iter().filter(|id| done.contains(*id)).count(),
        );
        let folder = self.input.parent().unwrap_or(Path::new("."));
        let items =
            input::items(&text, folder, &self.defaults).filter(|item| !done.contains(&item.id));
        let mut running = JoinSet::new();
        // Each result's line, written whole, then counted and handed on.
        let mut keep = |finished: Result<Done, tokio::task::JoinError>| {
            let done = finished.map_err(|error| format!("a call of the batch failed: {error}"))?;
            output.write(&done.id, done.result.clone())?;
            tally.add(&done);
            progress(&done, &tally);
            Ok::<(), String>(())
        };
        // The embedded engine answers one request at a time: more in flight would only queue,
        // their time running against the calls' limits.
        let jobs = if client.local_model().is_some() {
            1
        } else {
            self.jobs.max(1)
        };
        let Some(options) = &self.provider_batch else {
            let mut items = items;
            loop {
                while running.len() < jobs && !stop.load(Ordering::SeqCst) {
                    let Some(item) = items.next() else { break };
                    let (client, scope) = (client.clone(), scope.clone());
                    running.spawn(run_item(item, async move |arguments| {
                        client.call_tool(&scope, &arguments).await
                    }));
                }
                let Some(finished) = running.join_next().await else {
                    break;
                };
                keep(finished)?;
            }
            return Ok(tally);
        };
        let (journal, restored) = Journal::open(&provider::beside(&self.output))?;
        let http = Http::new(client.connections());
        let rounds = Rounds::new(journal, restored, http, options.clone(), self.jobs);
        let items: Vec<Item> = items.collect();
        // Counted before any runs: a round leaves only when every item has parked or ended.
        rounds.expect(items.iter().filter(|item| item.arguments.is_ok()).count());
        for item in items {
            let (rounds, client, scope, id) = (
                rounds.clone(),
                client.clone(),
                scope.clone(),
                item.id.clone(),
            );
            running.spawn(run_item(item, async move |arguments| {
                rounds.run(client, scope, id, arguments).await
            }));
        }
        while let Some(finished) = next_unless_stopped(&mut running, &stop).await {
            if let Some(broken) = rounds.broken() {
                return Err(broken);
            }
            keep(finished)?;
        }
        running.abort_all();
        rounds.stop();
        if tally.left == 0 {
            rounds.finish()?;
        }
        Ok(tally)
    }
}

/// The next item to end, or none once every item has ended or `stop` is set (the items then
/// waiting on a provider's batch are left to a rerun, which polls the same batches).
async fn next_unless_stopped(
    running: &mut JoinSet<Done>,
    stop: &AtomicBool,
) -> Option<Result<Done, tokio::task::JoinError>> {
    loop {
        if stop.load(Ordering::SeqCst) {
            return None;
        }
        tokio::select! {
            finished = running.join_next() => return finished,
            () = tokio::time::sleep(Duration::from_millis(100)) => {}
        }
    }
}

/// Runs `item` with `run` (an item whose line gave no arguments comes back as its error at
/// once), timed.
async fn run_item<F>(item: Item, run: impl FnOnce(serde_json::Value) -> F) -> Done
where
    F: Future<Output = Result<serde_json::Value, CallError>>,
{
    let started = Instant::now();
    let result = match item.arguments {
        Err(message) => invalid_line(&message),
        Ok(arguments) => result(run(arguments).await),
    };
    Done {
        id: item.id,
        result,
        seconds: started.elapsed().as_secs_f64(),
    }
}

/// The error of a line that gives no arguments.
fn invalid_line(message: &str) -> serde_json::Value {
    json!({ "error": {
        "kind": "invalid-request", "field": "line", "message": message,
        "usage": { "llmCalls": 0, "promptTokens": 0, "completionTokens": 0, "cachedPromptTokens": 0 },
    } })
}

/// A call's line: its outcome, or its error.
fn result(called: Result<serde_json::Value, CallError>) -> serde_json::Value {
    match called {
        Ok(outcome) => outcome,
        Err(CallError::Structure(error)) => error.to_json(),
        Err(CallError::Host(error)) => {
            json!({ "error": { "kind": "host", "message": format!("the structure component could not run: {error:#}") } })
        }
    }
}
