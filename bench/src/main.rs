//! `structure-bench`: the host end to end against the mock LLM (in this process, on its own
//! thread), per scenario and instance mode: wall time (median, p99), CPU per call of the calling
//! thread, LLM calls and bytes sent per call, peak RSS; plus the raw-HTTP floor, the cost of
//! instantiate-and-call, and the `structure` command's start to its first request.
//!
//! ```text
//! cargo run --release -p structure-bench -- [--calls 500] [--warmup 20] [--json FILE] [--cli PATH]
//! valgrind --tool=callgrind target/release/structure-bench --callgrind --calls N   (instructions, see bench/run)
//! python3 bench/stages.py   (a fresh call's CPU by stage: perf, an unstripped component, --perf-map)
//! target/release/structure-bench --wasm-validation target/wasm32-wasip2/release/validation-bench.wasm
//! ```
//!
//! See BENCHMARKS.md for the figures and how the side-by-side with other libraries uses this.

mod dirty;
mod floor;
mod measure;
mod wasm_validation;

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use measure::{Samples, Summary, ms};
use mock_llm::{MockLlm, Reply};
use serde_json::{Value, json};
use structure_host::{
    MemoryStore, Request, Runtime, SchemaInput, Scope, Settings, Status, Structure,
    default_cache_dir,
};

const PROMPT: &str = "mike_42 broke the build on 30 November 2026 at 14:30 UTC (tags: ci, build).";
const DESCRIPTION: &str = "An audit record of one user action: the user id, the action, when it happened and whether it succeeded.";

/// The host end to end against the mock LLM (see the crate docs and BENCHMARKS.md).
#[derive(clap::Parser)]
struct Args {
    /// Measured calls per scenario.
    #[arg(long, default_value_t = 500)]
    calls: usize,
    /// Unmeasured calls first.
    #[arg(long, default_value_t = 20)]
    warmup: usize,
    /// Also write the figures here, as JSON.
    #[arg(long)]
    json: Option<PathBuf>,
    /// The `structure` command, to time its start to its first request.
    #[arg(long)]
    cli: Option<PathBuf>,
    /// Only make --calls valid calls, for valgrind to count instructions.
    #[arg(long)]
    callgrind: bool,
    /// Run validation-bench built for wasm32-wasip2 (this file) instead.
    #[arg(long)]
    wasm_validation: Option<PathBuf>,
    /// Another build of the component instead of the embedded one.
    #[arg(long)]
    component: Option<PathBuf>,
    /// With --component (an unstripped build): name its compiled functions for Linux `perf`
    /// (see `bench/stages.py`).
    #[arg(long, requires = "component")]
    perf_map: bool,
    /// With --callgrind: after the calls, count the pages of the slot's memory the pooling
    /// allocator resets for the next instance, by MiB (Linux 6.7 or later; see src/dirty.rs).
    #[arg(long, requires = "callgrind")]
    dirty_pages: bool,
    /// With --callgrind: the scenario of the calls (valid, inline, violation, need).
    #[arg(long, default_value = "valid")]
    scenario: String,
    /// With --callgrind: after the warm-up calls, write `enable` to this `perf record --control`
    /// FIFO, so that only the measured calls are sampled.
    #[arg(long)]
    perf_control: Option<PathBuf>,
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Scenario {
    /// The first answer is valid: one LLM call.
    Valid,
    /// The first answer breaks the schema, the second is valid: two LLM calls.
    Violation,
    /// The model says the text lacks a value: one LLM call.
    Need,
    /// Text mode with the built schema in the cache: no builder call, one LLM call.
    CacheHit,
    /// The bundled schema given inline (checked against its meta-schema and compiled in the
    /// call), the first answer valid: one LLM call.
    Inline,
}

impl Scenario {
    const ALL: [Scenario; 5] = [
        Scenario::Valid,
        Scenario::Violation,
        Scenario::Need,
        Scenario::CacheHit,
        Scenario::Inline,
    ];

    fn name(self) -> &'static str {
        match self {
            Scenario::Valid => "valid",
            Scenario::Violation => "one violation",
            Scenario::Need => "need",
            Scenario::CacheHit => "builder cache hit",
            Scenario::Inline => "inline schema",
        }
    }

    fn request(self) -> Request {
        let schema = match self {
            Scenario::CacheHit => SchemaInput::Described(DESCRIPTION.into()),
            Scenario::Inline => {
                SchemaInput::Inline(include_str!("../../schemas/user-action-record.json").into())
            }
            _ => SchemaInput::Named("user-action-record".into()),
        };
        Request::new(PROMPT, schema)
    }

    fn expected(self) -> Status {
        match self {
            Scenario::Need => Status::NeedMoreInput,
            _ => Status::Ok,
        }
    }

    /// Scripts the mock for the next call (outside the measured window).
    fn script(self, mock: &MockLlm) {
        match self {
            Scenario::Valid | Scenario::CacheHit | Scenario::Inline => {
                mock.always(Some(Reply::answer(valid())))
            }
            Scenario::Need => mock.always(Some(Reply::need("the time of the action"))),
            Scenario::Violation => {
                mock.always(None);
                mock.push(Reply::answer(invalid()));
                mock.push(Reply::answer(valid()));
            }
        }
    }
}

fn valid() -> Value {
    json!({ "userId": "mike_42", "action": "broke_build", "timestamp": "2026-11-30T14:30:00Z", "status": "failure", "tags": ["ci", "build"] })
}

fn invalid() -> Value {
    json!({ "userId": "mike_42", "action": "broke_build", "timestamp": "today at 2:30 pm", "status": "failure", "tags": ["ci", "build"] })
}

/// The schema builder's answer for DESCRIPTION, in its strict form (properties as key/value pairs).
fn built_schema() -> Reply {
    let property = |key: &str, value: Value| json!({ "key": key, "value": value });
    let schema = json!({
        "type": "object", "description": null, "required": ["userId", "action", "timestamp", "status"], "additionalProperties": false,
        "properties": [
            property("userId", json!({ "type": "string", "description": "The user id." })),
            property("action", json!({ "type": "string", "description": "What the user did, snake_case." })),
            property("timestamp", json!({ "type": "string", "format": "date-time", "description": "When." })),
            property("status", json!({ "type": "string", "enum": ["success", "failure"], "description": "The result." })),
            property("tags", json!({ "type": "array", "items": { "type": "string" }, "description": "Labels." })),
        ]
    });
    Reply::text(
        &json!({ "schema": schema, "confidence": 0.95, "clarifyingQuestions": [] }).to_string(),
    )
}

struct Row {
    scenario: &'static str,
    mode: &'static str,
    summary: Summary,
    llm_calls: f64,
    bytes_sent: f64,
}

/// Another build of the component (say, with symbols for a profiler) instead of the embedded one.
fn component_runtime(args: &Args) -> anyhow::Result<Option<Arc<Runtime>>> {
    let Some(path) = &args.component else {
        return Ok(None);
    };
    let wasm = std::fs::read(path)?;
    let runtime = if args.perf_map {
        Runtime::profiled(&wasm)?
    } else {
        // Cached as the embedded one is: valgrind's runs would otherwise each compile it anew.
        Runtime::new(&wasm, default_cache_dir().as_deref())?
    };
    Ok(Some(Arc::new(runtime)))
}

fn main() -> anyhow::Result<()> {
    let args = <Args as clap::Parser>::parse();
    if let Some(wasm) = &args.wasm_validation {
        return wasm_validation::run(wasm, &(args.calls * 40).to_string());
    }
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let mock = MockLlm::start();
    let settings = settings(&mock);
    let store = Arc::new(MemoryStore::default());
    let component_runtime = component_runtime(&args)?;
    let client = |reuse: bool| {
        let builder = Structure::builder()
            .settings(settings.clone())
            .key_value(store.clone())
            .reuse_instance(reuse);
        match &component_runtime {
            Some(runtime) => builder.runtime(runtime.clone()),
            None => builder,
        }
        .build()
    };

    if args.callgrind {
        // Valgrind counts the whole process: bench/run runs this twice with different --calls
        // and takes the difference per call, so start-up and warm-up cancel out.
        // STRUCTURE_BENCH_REUSE=1 keeps one instance instead of a fresh one per call.
        let client =
            client(std::env::var("STRUCTURE_BENCH_REUSE").is_ok_and(|reuse| !reuse.is_empty()))?;
        let scenario = (Scenario::ALL.into_iter())
            .find(|scenario| scenario.name().starts_with(args.scenario.as_str()))
            .ok_or_else(|| anyhow::anyhow!("no scenario {:?}", args.scenario))?;
        for _ in 0..3 {
            runtime.block_on(call(&client, &mock, scenario))?;
        }
        if let Some(control) = &args.perf_control {
            std::fs::write(control, "enable\n")?;
        }
        for _ in 0..args.calls {
            runtime.block_on(call(&client, &mock, scenario))?;
        }
        return if args.dirty_pages {
            dirty::report()
        } else {
            Ok(())
        };
    }

    // The builder's cache entry for the cache-hit scenario.
    mock.push(built_schema());
    mock.push(Reply::answer(valid()));
    runtime.block_on(client(false)?.structure(&Scope::default(), &Scenario::CacheHit.request()))?;

    let mut rows = Vec::new();
    rows.push(runtime.block_on(floor(&mock, &settings, args.calls, args.warmup))?);
    for scenario in Scenario::ALL {
        for (mode, reuse) in [("fresh instance", false), ("reused instance", true)] {
            let client = client(reuse)?;
            rows.push(runtime.block_on(run(
                &client,
                &mock,
                scenario,
                mode,
                args.calls,
                args.warmup,
            ))?);
        }
    }
    let instantiate = runtime.block_on(instantiate_and_call(&client(false)?, args.calls))?;
    let cli = match &args.cli {
        Some(path) => Some(cli_start(path, &mock)?),
        None => None,
    };
    let peak_rss = measure::peak_rss();
    report(&rows, instantiate, cli, peak_rss);
    if let Some(path) = &args.json {
        std::fs::write(
            path,
            serde_json::to_string_pretty(&to_json(&rows, instantiate, cli, peak_rss))?,
        )?;
    }
    Ok(())
}

/// The settings of every call: the mock stands in for api.openai.com, so requests are shaped as
/// for OpenAI itself; and what the host tells the component of its memory, when the run says
/// (`STRUCTURE_MEMORY_KEPT_RESIDENT=off` to see a call in a host that does not keep memory
/// resident; see src/dirty.rs).
fn settings(mock: &MockLlm) -> Settings {
    let settings = Settings::new()
        .set("structure_model", "openai/gpt-4.1-mini")
        .set("openai_base_url", mock.base_url())
        .set("openai_api_key", "sk-bench")
        .set("structure_provider_profile", "openai");
    match std::env::var("STRUCTURE_MEMORY_KEPT_RESIDENT") {
        Ok(value) => settings.set(structure::keys::MEMORY_KEPT_RESIDENT, value),
        Err(_) => settings,
    }
}

async fn call(client: &Structure, mock: &MockLlm, scenario: Scenario) -> anyhow::Result<()> {
    scenario.script(mock);
    let outcome = client
        .structure(&Scope::default(), &scenario.request())
        .await?;
    anyhow::ensure!(
        outcome.status == scenario.expected(),
        "{scenario:?} gave {:?}",
        outcome.status
    );
    Ok(())
}

async fn run(
    client: &Structure,
    mock: &MockLlm,
    scenario: Scenario,
    mode: &'static str,
    calls: usize,
    warmup: usize,
) -> anyhow::Result<Row> {
    for _ in 0..warmup {
        call(client, mock, scenario).await?;
    }
    mock.reset();
    let server_cpu = || mock.server_cpu().unwrap_or_default();
    let mut samples = Samples::excluding(&server_cpu);
    let request = scenario.request();
    for _ in 0..calls {
        scenario.script(mock);
        let outcome = samples
            .time(async || client.structure(&Scope::default(), &request).await)
            .await?;
        anyhow::ensure!(
            outcome.status == scenario.expected(),
            "{scenario:?} gave {:?}",
            outcome.status
        );
    }
    let (llm_calls, bytes_sent) = traffic(mock, calls);
    Ok(Row {
        scenario: scenario.name(),
        mode,
        summary: samples.summary(),
        llm_calls,
        bytes_sent,
    })
}

/// LLM requests and bytes sent (request line, headers and body) per call since the last reset.
fn traffic(mock: &MockLlm, calls: usize) -> (f64, f64) {
    let requests = mock.requests();
    let bytes: usize = requests
        .iter()
        .map(|request| {
            request.method.len()
                + request.path.len()
                + 11
                + request
                    .headers
                    .iter()
                    .map(|(name, value)| name.len() + value.len() + 4)
                    .sum::<usize>()
                + 2
                + request.body.len()
        })
        .sum();
    (
        requests.len() as f64 / calls as f64,
        bytes as f64 / calls as f64,
    )
}

/// The same request as the valid scenario's, sent by a raw HTTP client.
async fn floor(
    mock: &MockLlm,
    settings: &Settings,
    calls: usize,
    warmup: usize,
) -> anyhow::Result<Row> {
    let probe = Structure::builder().settings(settings.clone()).build()?;
    call(&probe, mock, Scenario::Valid).await?;
    let sent = mock
        .requests()
        .pop()
        .ok_or_else(|| anyhow::anyhow!("the probe call sent nothing"))?;
    let body = Bytes::from(sent.body);
    let mut raw = floor::RawClient::connect(mock.address()).await?;
    for _ in 0..warmup {
        raw.post(&sent.path, &body).await?;
    }
    mock.reset();
    mock.always(Some(Reply::answer(valid())));
    let server_cpu = || mock.server_cpu().unwrap_or_default();
    let mut samples = Samples::excluding(&server_cpu);
    for _ in 0..calls {
        samples
            .time(async || raw.post(&sent.path, &body).await)
            .await?;
    }
    let (llm_calls, bytes_sent) = traffic(mock, calls);
    Ok(Row {
        scenario: "floor (raw HTTP)",
        mode: "-",
        summary: samples.summary(),
        llm_calls,
        bytes_sent,
    })
}

/// A fresh instance and a call that does no I/O (the tool definition): the per-call price of
/// isolation.
async fn instantiate_and_call(client: &Structure, calls: usize) -> anyhow::Result<Summary> {
    for _ in 0..20 {
        client.tool_definition().await?;
    }
    let nothing = Duration::default;
    let mut samples = Samples::excluding(&nothing);
    for _ in 0..calls {
        samples
            .time(async || client.tool_definition().await)
            .await?;
    }
    Ok(samples.summary())
}

/// The `structure` command: from process start to the mock seeing its request (warm cache).
fn cli_start(path: &PathBuf, mock: &MockLlm) -> anyhow::Result<Duration> {
    mock.reset();
    mock.always(Some(Reply::answer(valid())));
    let mut runs = Vec::new();
    for attempt in 0..11 {
        let before = mock.requests().len();
        let started = Instant::now();
        let mut child = std::process::Command::new(path)
            .args(["run", "--schema", "user-action-record", PROMPT])
            .env("STRUCTURE_MODEL", "openai/gpt-4.1-mini")
            .env("OPENAI_BASE_URL", mock.base_url())
            .env("OPENAI_API_KEY", "sk-bench")
            .env("STRUCTURE_PROVIDER_PROFILE", "openai")
            .stdout(std::process::Stdio::null())
            .spawn()?;
        while mock.requests().len() == before {
            anyhow::ensure!(
                started.elapsed() < Duration::from_secs(60),
                "the command sent no request"
            );
            std::thread::sleep(Duration::from_micros(200));
        }
        let first_request = started.elapsed();
        anyhow::ensure!(child.wait()?.success(), "the structure command failed");
        if attempt > 0 {
            runs.push(first_request); // the first run may fill the compiled-component cache
        }
    }
    Ok(measure::percentile(&runs, 50.0))
}

fn report(rows: &[Row], instantiate: Summary, cli: Option<Duration>, peak_rss: u64) {
    let floor = rows[0].summary;
    println!(
        "{:<18} {:<16} {:>6} {:>9} {:>9} {:>9} {:>10} {:>10} {:>9} {:>10}",
        "scenario",
        "mode",
        "calls",
        "wall p50",
        "wall p99",
        "cpu/call",
        "above floor",
        "process above",
        "LLM calls",
        "bytes sent"
    );
    for row in rows {
        let above = row.summary.cpu_mean.saturating_sub(floor.cpu_mean);
        let process_above = row
            .summary
            .process_cpu_mean
            .saturating_sub(floor.process_cpu_mean);
        println!(
            "{:<18} {:<16} {:>6} {:>7.3}ms {:>7.3}ms {:>7.3}ms {:>9.3}ms {:>11.3}ms {:>9.2} {:>10.0}",
            row.scenario,
            row.mode,
            row.summary.calls,
            ms(row.summary.wall_p50),
            ms(row.summary.wall_p99),
            ms(row.summary.cpu_mean),
            ms(above),
            ms(process_above),
            row.llm_calls,
            row.bytes_sent
        );
    }
    println!(
        "instantiate and call (fresh instance, no I/O): wall p50 {:.3} ms, p99 {:.3} ms, cpu {:.3} ms",
        ms(instantiate.wall_p50),
        ms(instantiate.wall_p99),
        ms(instantiate.cpu_mean)
    );
    if let Some(cli) = cli {
        println!(
            "structure command, start to first request (warm cache): {:.1} ms",
            ms(cli)
        );
    }
    println!("peak RSS: {:.1} MiB", peak_rss as f64 / (1 << 20) as f64);
}

fn to_json(rows: &[Row], instantiate: Summary, cli: Option<Duration>, peak_rss: u64) -> Value {
    json!({
        "rows": rows.iter().map(|row| json!({
            "scenario": row.scenario,
            "mode": row.mode,
            "calls": row.summary.calls,
            "wallP50Ms": ms(row.summary.wall_p50),
            "wallP99Ms": ms(row.summary.wall_p99),
            "cpuMeanMs": ms(row.summary.cpu_mean),
            "cpuP50Ms": ms(row.summary.cpu_p50),
            "processCpuMeanMs": ms(row.summary.process_cpu_mean),
            "llmCallsPerCall": row.llm_calls,
            "bytesSentPerCall": row.bytes_sent,
        })).collect::<Vec<_>>(),
        "instantiateAndCall": { "wallP50Ms": ms(instantiate.wall_p50), "wallP99Ms": ms(instantiate.wall_p99), "cpuMeanMs": ms(instantiate.cpu_mean), "processCpuMeanMs": ms(instantiate.process_cpu_mean) },
        "cliStartToFirstRequestMs": cli.map(ms),
        "peakRssBytes": peak_rss,
    })
}
