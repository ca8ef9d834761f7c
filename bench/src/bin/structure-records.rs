//! `structure-records`: what records mode costs. For texts of 10k, 100k and 1M characters with
//! orders planted through them (40 per 100k), a mock model that reads the orders of each chunk
//! it is sent and answers after a fixed latency: chunks, LLM calls, tokens (the mock counts a
//! token per four bytes, as English text runs), wall time with the calls sent together and one
//! at a time, and whether every planted order came back once.
//!
//! ```text
//! cargo run --release -p structure-bench --bin structure-records -- [--latency-ms 500] [--json FILE]
//! ```

use std::path::PathBuf;
use std::time::{Duration, Instant};

use mock_llm::MockLlm;
use mock_llm::orders::{Form, Reader, order_schema, planted_text};
use serde_json::{Value, json};
use structure_host::{Request, SchemaInput, Scope, Settings, Status, Structure};

/// What records mode costs (see the crate docs and BENCHMARKS.md).
#[derive(clap::Parser)]
struct Args {
    /// The mock model's time per answer.
    #[arg(long, default_value_t = 500)]
    latency_ms: u64,
    /// Vary the latency per call: 0.5×, 1× or 2× `--latency-ms`, by the request's bytes.
    #[arg(long)]
    varied: bool,
    /// Text lengths, in characters.
    #[arg(long, value_delimiter = ',', default_value = "10000,100000,1000000")]
    sizes: Vec<usize>,
    /// Also write the figures here, as JSON.
    #[arg(long)]
    json: Option<PathBuf>,
}

fn main() -> anyhow::Result<()> {
    let args = <Args as clap::Parser>::parse();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    let reader = Reader {
        form: Form::Records,
        latency_ms: args.latency_ms,
        varied: args.varied,
    };
    let mock = MockLlm::start();
    mock.read_orders(reader);
    print_header(args.latency_ms, args.varied);
    let mut rows = Vec::new();
    for &chars in &args.sizes {
        let (text, planted) = planted_text(chars, (chars / 2_500).max(1));
        let together = runtime.block_on(measure(&mock, &text, 4))?;
        let alone = runtime.block_on(measure(&mock, &text, 1))?;
        let found = together.orders.len();
        let once = together
            .orders
            .iter()
            .zip(&planted)
            .all(|(order, (planted, _))| order == planted);
        anyhow::ensure!(
            found == planted.len() && once,
            "{chars} characters: {found} of {} orders came back: {:?}",
            planted.len(),
            together.orders
        );
        print_row(chars, planted.len(), &together, &alone);
        rows.push(json!({
            "chars": chars,
            "planted": planted.len(),
            "found": found,
            "chunks": together.chunks,
            "calls": together.calls,
            "promptTokens": together.prompt_tokens,
            "completionTokens": together.completion_tokens,
            "wallSeconds4": together.wall.as_secs_f64(),
            "wallSeconds1": alone.wall.as_secs_f64(),
        }));
    }
    if let Some(path) = args.json {
        let report = json!({ "latencyMs": args.latency_ms, "varied": args.varied, "rows": rows });
        std::fs::write(path, serde_json::to_string_pretty(&report)?)?;
    }
    Ok(())
}

fn print_header(latency_ms: u64, varied: bool) {
    let varied = if varied { " (0.5×, 1× or 2×)" } else { "" };
    println!(
        "records mode, mock latency {latency_ms} ms{varied} per call, default chunk (6000 tokens) and overlap"
    );
    println!(
        "{:>9}  {:>7}  {:>6}  {:>5}  {:>13}  {:>17}  {:>11}  {:>11}  {:>9}",
        "chars",
        "planted",
        "found",
        "calls",
        "prompt tokens",
        "completion tokens",
        "wall (4 at once)",
        "wall (1 at once)",
        "speed-up"
    );
}

fn print_row(chars: usize, planted: usize, together: &Measured, alone: &Measured) {
    println!(
        "{:>9}  {:>7}  {:>6}  {:>5}  {:>13}  {:>17}  {:>14.2} s  {:>14.2} s  {:>8.1}×",
        chars,
        planted,
        together.orders.len(),
        together.calls,
        together.prompt_tokens,
        together.completion_tokens,
        together.wall.as_secs_f64(),
        alone.wall.as_secs_f64(),
        alone.wall.as_secs_f64() / together.wall.as_secs_f64()
    );
}

struct Measured {
    orders: Vec<String>,
    chunks: u32,
    calls: u32,
    prompt_tokens: u64,
    completion_tokens: u64,
    wall: Duration,
}

async fn measure(mock: &MockLlm, text: &str, concurrent: u32) -> anyhow::Result<Measured> {
    let settings = Settings::new()
        .set("structure_model", "openai/gpt-4.1-mini")
        .set("openai_base_url", mock.base_url())
        .set("openai_api_key", "sk-bench")
        .set("structure_provider_profile", "openai")
        .set("structure_max_prompt_bytes", (8u64 << 20).to_string())
        .set("structure_max_concurrent_calls", concurrent.to_string());
    let client = Structure::builder().settings(settings).build()?;
    let request = Request {
        records: true,
        ..Request::new(text, SchemaInput::Inline(order_schema().to_string()))
    };
    let started = Instant::now();
    let outcome = client
        .structure(&Scope::default(), &request)
        .await
        .map_err(|error| anyhow::anyhow!("{error:?}"))?;
    let wall = started.elapsed();
    anyhow::ensure!(outcome.status == Status::Ok, "{:?}", outcome.errors);
    let data: Value = serde_json::from_str(outcome.data.as_deref().unwrap_or("[]"))?;
    let orders = data
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|record| record["order"].as_str().map(str::to_owned))
        .collect();
    Ok(Measured {
        orders,
        chunks: outcome.trace.chunks,
        calls: outcome.usage.llm_calls,
        prompt_tokens: outcome.usage.prompt_tokens,
        completion_tokens: outcome.usage.completion_tokens,
        wall,
    })
}
