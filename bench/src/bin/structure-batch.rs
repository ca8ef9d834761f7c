//! `structure-batch`: what one `structure batch` process costs against a process per text
//! (`xargs -P N structure run`), for the same texts against the same mock model (a fixed
//! latency per answer): CPU time (user + system of the processes, from `getrusage`), wall time
//! and peak memory of the batch process, and whether every text got its line.
//!
//! ```text
//! cargo run --release -p structure-bench --bin structure-batch -- \
//!     [--items 1000] [--jobs 16] [--latency-ms 200] [--cli target/release/structure] [--provider-batch]
//! ```
//!
//! With `--provider-batch` it measures `structure batch --provider-batch` instead (the mock's
//! OpenAI Batch API answering each batch at its first poll), against the same batch sent as
//! direct calls: what the rounds cost the host.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use mock_llm::{MockLlm, Reply};
use serde_json::json;

/// What a batch costs (see the crate docs and BENCHMARKS.md).
#[derive(clap::Parser)]
struct Args {
    /// Texts to structure.
    #[arg(long, default_value_t = 1_000)]
    items: usize,
    /// Calls (or processes) at once.
    #[arg(long, default_value_t = 16)]
    jobs: usize,
    /// The mock model's time per answer.
    #[arg(long, default_value_t = 200)]
    latency_ms: u64,
    /// The `structure` command measured.
    #[arg(long, default_value = "target/release/structure")]
    cli: PathBuf,
    /// Measure `structure batch --provider-batch` against a batch of direct calls.
    #[arg(long)]
    provider_batch: bool,
}

const SCHEMA: &str =
    r#"{"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}"#;

/// What the finished children of this process have used so far: CPU seconds (user + system),
/// and the largest resident set of any of them, in MiB (Linux reports KiB).
fn children() -> (f64, f64) {
    // SAFETY: an all-zero rusage is a valid value of the plain C struct.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: getrusage writes only the struct it is given.
    unsafe { libc::getrusage(libc::RUSAGE_CHILDREN, &mut usage) };
    let seconds = |time: libc::timeval| time.tv_sec as f64 + time.tv_usec as f64 / 1e6;
    let cpu = seconds(usage.ru_utime) + seconds(usage.ru_stime);
    (cpu, usage.ru_maxrss as f64 / 1024.0)
}

fn command(cli: &Path, mock: &MockLlm) -> Command {
    let mut command = Command::new(cli);
    command
        .env("STRUCTURE_MODEL", "openai/gpt-4.1-mini")
        .env("OPENAI_BASE_URL", mock.base_url())
        .args(["--store", "memory"])
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    command
}

/// Prints `--provider-batch`'s CPU, wall time, peak memory and batches beside direct calls'.
/// (It runs first, so that the peak resident set is its own.)
fn report_rounds(
    args: &Args,
    ((cpu, wall), peak, batches): ((f64, f64), f64, Vec<mock_llm::batches::Created>),
    direct: (f64, f64),
) {
    println!("{} texts, {} running at once", args.items, args.jobs);
    println!("| | CPU s | CPU ms/item | wall s |");
    println!("|---|---|---|---|");
    for (name, (cpu, wall)) in [("--provider-batch", (cpu, wall)), ("direct calls", direct)] {
        println!(
            "| {name} | {cpu:.1} | {:.2} | {wall:.1} |",
            cpu * 1000.0 / args.items as f64
        );
    }
    let sizes: Vec<usize> = batches.iter().map(|batch| batch.ids.len()).collect();
    println!(
        "{} batch(es) of {sizes:?} requests; --provider-batch peak memory {peak:.0} MiB",
        batches.len()
    );
}

fn main() -> anyhow::Result<()> {
    let args = <Args as clap::Parser>::parse();
    let mock = MockLlm::start();
    let latency = Duration::from_millis(args.latency_ms);
    mock.always(Some(
        Reply::answer(json!({ "name": "Ada" })).with_delay(latency),
    ));
    let dir = std::env::temp_dir().join(format!("structure-batch-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    let input = dir.join("in.jsonl");
    let mut file = std::fs::File::create(&input)?;
    for n in 0..args.items {
        writeln!(file, "Ada Lovelace wrote note number {n}.")?;
    }
    drop(file);

    let run_batch =
        |extra: &[&str], output: &str| batch(&args, &mock, &input, extra, &dir.join(output));
    if args.provider_batch {
        let measured = (
            run_batch(
                &["--provider-batch", "--poll-seconds", "0.05"],
                "rounds.jsonl",
            )?,
            children().1,
            mock.batches(),
        );
        let direct = run_batch(&[], "direct.jsonl")?;
        std::fs::remove_dir_all(&dir)?;
        report_rounds(&args, measured, direct);
        return Ok(());
    }
    let batch = run_batch(&[], "out.jsonl")?;
    let peak = children().1;
    let processes = a_process_per_text(&args, &mock)?;
    std::fs::remove_dir_all(&dir)?;
    report(&args, batch, processes, peak);
    Ok(())
}

/// Runs `structure batch` (with `extra` arguments) on `input` into `output`: its CPU and wall
/// seconds, once every text got an `ok` line.
fn batch(
    args: &Args,
    mock: &MockLlm,
    input: &Path,
    extra: &[&str],
    output: &Path,
) -> anyhow::Result<(f64, f64)> {
    let (cpu, started) = (children().0, Instant::now());
    let status = command(&args.cli, mock)
        .args([
            "batch",
            "--schema",
            SCHEMA,
            "--jobs",
            &args.jobs.to_string(),
        ])
        .args(extra)
        .arg(input)
        .arg("-o")
        .arg(output)
        .status()?;
    let measured = (children().0 - cpu, started.elapsed().as_secs_f64());
    let text = std::fs::read_to_string(output)?;
    let ok = text
        .lines()
        .filter(|line| line.contains("\"status\":\"ok\""))
        .count();
    anyhow::ensure!(
        status.success() && ok == args.items,
        "the batch wrote {ok} ok lines"
    );
    Ok(measured)
}

/// A process per text, `jobs` at a time, as `xargs -P` runs them: their CPU and wall seconds.
fn a_process_per_text(args: &Args, mock: &MockLlm) -> anyhow::Result<(f64, f64)> {
    let (cpu, started) = (children().0, Instant::now());
    let mut running = Vec::new();
    for n in 0..args.items {
        if running.len() == args.jobs {
            let child: std::process::Child = running.remove(0);
            let output = child.wait_with_output()?;
            anyhow::ensure!(output.status.success(), "a run failed");
        }
        running.push(
            command(&args.cli, mock)
                .args(["run", "--schema", SCHEMA])
                .arg(format!("Ada Lovelace wrote note number {n}."))
                .spawn()?,
        );
    }
    for child in running {
        anyhow::ensure!(child.wait_with_output()?.status.success(), "a run failed");
    }
    Ok((children().0 - cpu, started.elapsed().as_secs_f64()))
}

/// Prints the batch's CPU and wall time beside a process per text's, and the batch's peak
/// memory.
fn report(args: &Args, batch: (f64, f64), processes: (f64, f64), peak: f64) {
    println!(
        "{} texts, {} at once, the mock answering after {} ms",
        args.items, args.jobs, args.latency_ms
    );
    println!("| | CPU s | CPU ms/item | wall s |");
    println!("|---|---|---|---|");
    let row = |name: &str, (cpu, wall): (f64, f64)| {
        println!(
            "| {name} | {cpu:.1} | {:.1} | {wall:.1} |",
            cpu * 1000.0 / args.items as f64
        )
    };
    row("structure batch", batch);
    row("a process per text", processes);
    println!(
        "CPU ratio {:.2}, wall ratio {:.2}; batch peak memory {peak:.0} MiB (the largest child)",
        batch.0 / processes.0,
        batch.1 / processes.1
    );
}
