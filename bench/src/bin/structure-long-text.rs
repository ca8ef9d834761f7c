//! `structure-long-text`: what one object from a long text costs. For contracts of 10k, 100k
//! and 1M characters with their terms planted through them, a mock model with an 8,192-token
//! window that reads the terms of each part it is sent and answers after a fixed latency:
//! chunks, LLM calls, tokens (the mock counts a token per four bytes), wall time with the
//! parts' calls sent together and one at a time, and whether the object came back whole. The
//! window is set (`structure_context_tokens`); the mock refuses, in OpenAI's words, any request
//! that would not fit it.
//!
//! ```text
//! cargo run --release -p structure-bench --bin structure-long-text -- [--latency-ms 200] [--json FILE]
//! ```

use std::path::PathBuf;
use std::time::{Duration, Instant};

use mock_llm::MockLlm;
use mock_llm::document::{Reader, Terms, planted_document, read_terms, terms_schema};
use mock_llm::servers::Server;
use serde_json::{Value, json};
use structure_host::{Request, SchemaInput, Scope, Settings, Status, Structure};

/// The mock model's window, in tokens.
const WINDOW: u32 = 8_192;

/// What one object from a long text costs (see the crate docs and BENCHMARKS.md).
#[derive(clap::Parser)]
struct Args {
    /// The mock model's time per answer.
    #[arg(long, default_value_t = 200)]
    latency_ms: u64,
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
    let mock = MockLlm::start();
    mock.read_document(Reader::new(Duration::from_millis(args.latency_ms)));
    mock.serve_as(Server::OpenAi {
        context_limit: Some(WINDOW),
    });
    println!(
        "one object from a long text, mock latency {} ms per call, a {WINDOW}-token window",
        args.latency_ms
    );
    println!(
        "{:>9}  {:>6}  {:>5}  {:>13}  {:>17}  {:>16}  {:>16}  {:>18}",
        "chars",
        "chunks",
        "calls",
        "prompt tokens",
        "completion tokens",
        "wall (4 at once)",
        "wall (1 at once)",
        "calls ≤ chunks + 2"
    );
    let mut rows = Vec::new();
    for &chars in &args.sizes {
        let text = planted_document(chars, &Terms::default());
        let expected = read_terms(&text);
        let together = runtime.block_on(measure(&mock, &text, 4))?;
        let alone = runtime.block_on(measure(&mock, &text, 1))?;
        anyhow::ensure!(
            together.data == expected && alone.data == expected,
            "{chars} characters: {} instead of {expected}",
            together.data
        );
        let bounded = together.calls <= together.chunks + 2;
        println!(
            "{:>9}  {:>6}  {:>5}  {:>13}  {:>17}  {:>14.2} s  {:>14.2} s  {:>18}",
            chars,
            together.chunks,
            together.calls,
            together.prompt_tokens,
            together.completion_tokens,
            together.wall.as_secs_f64(),
            alone.wall.as_secs_f64(),
            bounded
        );
        rows.push(json!({
            "chars": chars,
            "chunks": together.chunks,
            "calls": together.calls,
            "promptTokens": together.prompt_tokens,
            "completionTokens": together.completion_tokens,
            "wallSeconds4": together.wall.as_secs_f64(),
            "wallSeconds1": alone.wall.as_secs_f64(),
            "whole": true,
        }));
    }
    if let Some(path) = args.json {
        let report = json!({ "latencyMs": args.latency_ms, "window": WINDOW, "rows": rows });
        std::fs::write(path, serde_json::to_string_pretty(&report)?)?;
    }
    Ok(())
}

struct Measured {
    data: Value,
    chunks: u32,
    calls: u32,
    prompt_tokens: u64,
    completion_tokens: u64,
    wall: Duration,
}

async fn measure(mock: &MockLlm, text: &str, concurrent: u32) -> anyhow::Result<Measured> {
    let settings = Settings::new()
        .set("structure_model", "openai/contract-reader")
        .set("openai_base_url", mock.base_url())
        .set("openai_api_key", "sk-bench")
        .set("structure_provider_profile", "openai-compatible")
        .set("structure_max_prompt_bytes", (8u64 << 20).to_string())
        .set("structure_max_concurrent_calls", concurrent.to_string())
        .set("structure_context_tokens", WINDOW.to_string());
    let client = Structure::builder().settings(settings).build()?;
    let request = Request::new(
        text.to_owned(),
        SchemaInput::Inline(terms_schema().to_string()),
    );
    let started = Instant::now();
    let outcome = client
        .structure(&Scope::default(), &request)
        .await
        .map_err(|error| anyhow::anyhow!("{error:?}"))?;
    let wall = started.elapsed();
    anyhow::ensure!(
        outcome.status == Status::Ok,
        "{:?} {:?}",
        outcome.errors,
        outcome.need
    );
    Ok(Measured {
        data: serde_json::from_str(outcome.data.as_deref().unwrap_or("null"))?,
        chunks: outcome.trace.chunks,
        calls: outcome.usage.llm_calls,
        prompt_tokens: outcome.usage.prompt_tokens,
        completion_tokens: outcome.usage.completion_tokens,
        wall,
    })
}
