//! `structure batch`: the library's [`Batch`] with a progress bar on a terminal (plain lines
//! every ten seconds otherwise), a summary at the end, and Ctrl-C letting the calls in flight
//! finish.

use std::io::IsTerminal;
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressStyle};
use structure_host::batch::{Batch, Done, ProviderBatch, Tally};
use structure_host::{Scope, Structure};

/// The exit status of a batch stopped before every item had its line.
const EXIT_STOPPED: u8 = 130;
/// How often a batch whose stderr is no terminal says how far it is.
const PLAIN_EVERY: Duration = Duration::from_secs(10);

/// The provider-batch options of `--provider-batch` and `--poll-seconds`, or why they are not
/// usable.
pub fn provider_batch(enabled: bool, poll_seconds: f64) -> Result<Option<ProviderBatch>, String> {
    if !enabled {
        return Ok(None);
    }
    let first_poll = Duration::try_from_secs_f64(poll_seconds)
        .map_err(|_| "--poll-seconds must be a number of seconds, 0 or more".to_owned())?;
    Ok(Some(ProviderBatch {
        first_poll,
        ..ProviderBatch::default()
    }))
}

pub async fn run(client: Structure, scope: Scope, batch: Batch) -> ExitCode {
    let stop = Arc::new(AtomicBool::new(false));
    let stopping = stop.clone();
    // Listening from here on, before the first call: a Ctrl-C never ends the process midway.
    let interrupt = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::interrupt());
    tokio::spawn(async move {
        let stopped = match interrupt {
            Ok(mut interrupt) => interrupt.recv().await.is_some(),
            Err(_) => tokio::signal::ctrl_c().await.is_ok(),
        };
        if stopped {
            stopping.store(true, Ordering::SeqCst);
            eprintln!("stopping: the calls in flight finish and are written");
        }
    });
    let bar = std::io::stderr().is_terminal().then(|| {
        let bar = ProgressBar::new(0);
        let style = ProgressStyle::with_template("{bar:30} {pos}/{len} {msg} · ETA {eta}")
            .expect("the template is valid");
        bar.set_style(style);
        bar
    });
    let mut said = Instant::now();
    let mut progress = |_: &Done, tally: &Tally| {
        let done = (tally.skipped + tally.written) as u64;
        match &bar {
            Some(bar) => {
                bar.set_length(tally.total as u64);
                bar.set_position(done);
                bar.set_message(tally.counts());
            }
            None if said.elapsed() >= PLAIN_EVERY => {
                eprintln!("{done}/{} {}", tally.total, tally.counts());
                said = Instant::now();
            }
            None => {}
        }
    };
    let result = batch
        .run(Arc::new(client), scope, stop, &mut progress)
        .await;
    if let Some(bar) = &bar {
        bar.finish_and_clear();
    }
    match result {
        Ok(tally) if tally.left > 0 => {
            eprintln!("{}", tally.summary());
            crate::cli::output::fail(
                EXIT_STOPPED,
                &format!(
                    "stopped with {} items left: run the same command again to go on",
                    tally.left
                ),
            )
        }
        Ok(tally) => {
            eprintln!("{}", tally.summary());
            ExitCode::from(crate::cli::output::EXIT_OK)
        }
        Err(message) => crate::cli::output::fail(crate::cli::output::EXIT_ERROR, &message),
    }
}
