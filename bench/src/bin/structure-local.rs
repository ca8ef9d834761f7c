//! `structure-local`: the embedded engine against llama-cpp-python's server on the same model,
//! window and requests, and what `structure` costs on it against one plain call.
//!
//! ```text
//! cargo run --release -p structure-bench --bin structure-local -- --model FILE.gguf \
//!     [--server http://127.0.0.1:8080] [--cases eval/cases/dev.jsonl] [--json FILE]
//! ```
//!
//! - **Prompt and generation speed**: a long prompt answered with one token (prompt tokens a
//!   second; each prompt made unique at its start, so no cache serves it), and a short prompt
//!   answered with 128 tokens (generated tokens a second), three times each.
//! - **The plain call**: each short case of the eval's set sent once as one chat completion
//!   with the case's schema as its grammar and log-probabilities on (what the eval's baseline
//!   sends, plus `logprobs`), to the engine and to the server: wall time.
//! - **structure on the engine**: each case through the library (`call_tool`, a fresh instance
//!   each, the same engine), its wall time over the plain call's.
//! - **Memory**: the process's peak resident set at the end (the engine, its context of
//!   `--context` tokens, wasmtime and the component).

use std::path::PathBuf;
use std::time::Instant;

use serde_json::{Value, json};
use structure_host::local::{LocalEngine, LocalModel, ModelSource};
use structure_host::{Scope, Settings, Structure};

#[derive(clap::Parser)]
struct Args {
    /// The GGUF both run.
    #[arg(long)]
    model: PathBuf,
    /// llama-cpp-python's server with the same model and window (`eval/server.py`), if any.
    #[arg(long)]
    server: Option<String>,
    /// The eval's cases; only short text cases are sent.
    #[arg(long, default_value = "eval/cases/dev.jsonl")]
    cases: PathBuf,
    #[arg(long, default_value = "eval/schemas")]
    schemas: PathBuf,
    #[arg(long, default_value_t = 8192)]
    context: u32,
    /// At most this many cases.
    #[arg(long)]
    limit: Option<usize>,
    #[arg(long)]
    json: Option<PathBuf>,
    /// Measure the speeds only (with and without log-probabilities), not the cases.
    #[arg(long)]
    speeds_only: bool,
}

/// The eval's baseline prompt (eval/structure_eval/runner.py `BASELINE_SYSTEM`).
const BASELINE_SYSTEM: &str = "Extract the information in the user's text as one JSON object that conforms to this JSON Schema:\n{schema}\nAnswer with the JSON object only.";

/// Where requests go: the embedded engine, or a server over HTTP.
enum Target<'a> {
    Engine(&'a LocalEngine),
    Server(&'a str),
}

impl Target<'_> {
    /// Sends a chat completion; its wall time in seconds and its usage.
    fn chat(&self, body: &Value) -> anyhow::Result<(f64, Value)> {
        let started = Instant::now();
        let answer: Value = match self {
            Target::Engine(engine) => {
                let (status, answer) =
                    engine.request("POST", "/v1/chat/completions", body.to_string().as_bytes())?;
                anyhow::ensure!(
                    status == 200,
                    "the engine answered {status}: {}",
                    String::from_utf8_lossy(&answer)
                );
                serde_json::from_slice(&answer)?
            }
            Target::Server(url) => {
                let mut response =
                    ureq::post(&format!("{url}/v1/chat/completions")).send_json(body)?;
                response.body_mut().read_json()?
            }
        };
        Ok((started.elapsed().as_secs_f64(), answer["usage"].clone()))
    }
}

fn chat_body(system: &str, user: &str, schema: Option<&Value>, max_tokens: u32) -> Value {
    with_logprobs(true, system, user, schema, max_tokens)
}

fn with_logprobs(
    logprobs: bool,
    system: &str,
    user: &str,
    schema: Option<&Value>,
    max_tokens: u32,
) -> Value {
    let mut body = json!({
        "model": "local",
        "messages": [{ "role": "system", "content": system }, { "role": "user", "content": user }],
        "temperature": 0, "max_tokens": max_tokens,
    });
    if logprobs {
        body["logprobs"] = json!(true);
        body["top_logprobs"] = json!(1);
    }
    if let Some(schema) = schema {
        body["response_format"] = json!({ "type": "json_object", "schema": schema });
    }
    body
}

/// Prompt tokens a second (a long prompt, one token answered) and generated tokens a second
/// (a short prompt, 128 tokens), the best of three each.
fn speeds(target: &Target<'_>, logprobs: bool) -> anyhow::Result<(f64, f64)> {
    let passage = "The supplier shall deliver the goods described in Schedule A to the premises of the buyer within thirty days of the order. ".repeat(60);
    let (mut prompt, mut generated) = (0f64, 0f64);
    for run in 0..3 {
        let system = format!(
            "Run {run} of {}. Summarise the user's text.",
            std::process::id()
        );
        let (seconds, usage) = target.chat(&with_logprobs(logprobs, &system, &passage, None, 1))?;
        prompt = prompt.max(usage["prompt_tokens"].as_f64().unwrap_or(0.0) / seconds);
        let counting = "Count from 1 to 300, the numbers separated by commas.";
        let (seconds, usage) =
            target.chat(&chat_body(&format!("Run {run}."), counting, None, 128))?;
        generated = generated.max(usage["completion_tokens"].as_f64().unwrap_or(0.0) / seconds);
    }
    Ok((prompt, generated))
}

/// The eval's short text cases: prompt and schema.
fn cases(args: &Args) -> anyhow::Result<Vec<(String, String, Value)>> {
    let mut cases = Vec::new();
    for line in std::fs::read_to_string(&args.cases)?
        .lines()
        .filter(|line| !line.trim().is_empty())
    {
        let case: Value = serde_json::from_str(line)?;
        if case.get("document").is_some() || case.get("records").is_some() {
            continue;
        }
        // The case set's own schema, else a bundled one (`user-action-record`).
        let name = format!("{}.json", case["schema"].as_str().unwrap_or_default());
        let path = [
            args.schemas.join(&name),
            PathBuf::from("schemas").join(&name),
        ]
        .into_iter()
        .find(|path| path.is_file())
        .ok_or_else(|| anyhow::anyhow!("no schema {name} in {}", args.schemas.display()))?;
        let schema: Value = serde_json::from_str(&std::fs::read_to_string(path)?)?;
        cases.push((
            case["id"].as_str().unwrap_or_default().to_owned(),
            case["prompt"].as_str().unwrap_or_default().to_owned(),
            schema,
        ));
    }
    cases.truncate(args.limit.unwrap_or(usize::MAX));
    Ok(cases)
}

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    if values.is_empty() {
        0.0
    } else {
        values[values.len() / 2]
    }
}

/// The process's peak resident set, MiB.
fn peak_rss_mib() -> f64 {
    // SAFETY: an all-zero rusage is a valid value of the plain C struct.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: getrusage writes only the struct it is given.
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut usage) };
    usage.ru_maxrss as f64 / 1024.0
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() -> anyhow::Result<()> {
    let args: Args = clap::Parser::parse();
    let settings = Settings::new()
        .set("structure_model_file", args.model.to_string_lossy())
        .set("structure_context_tokens", args.context.to_string())
        .set("structure_reference_time", "2025-06-01T12:00:00Z");
    let model = LocalModel::chosen(&settings)
        .map_err(anyhow::Error::msg)?
        .expect("a model file");
    assert!(matches!(model.source, ModelSource::File(_)));
    let engine = LocalEngine::shared(model);
    let client = Structure::builder().settings(settings).build()?;
    tokio::task::block_in_place(|| engine.ready())?;
    let cases = cases(&args)?;
    let mut report = json!({ "model": args.model, "context": args.context, "cases": cases.len() });
    for logprobs in [true, false] {
        let key = if logprobs {
            "with_logprobs"
        } else {
            "without_logprobs"
        };
        let (prompt, generated) =
            tokio::task::block_in_place(|| speeds(&Target::Engine(&engine), logprobs))?;
        report["engine"][key] =
            json!({ "prompt_tokens_per_second": prompt, "generated_tokens_per_second": generated });
        if let Some(server) = &args.server {
            let (prompt, generated) = speeds(&Target::Server(server), logprobs)?;
            report["server"][key] = json!({ "prompt_tokens_per_second": prompt, "generated_tokens_per_second": generated });
        }
    }
    if args.speeds_only {
        println!("{report:#}");
        return Ok(());
    }
    let (mut plain, mut served, mut structured) = (Vec::new(), Vec::new(), Vec::new());
    for (id, prompt, schema) in &cases {
        let system = BASELINE_SYSTEM.replace("{schema}", &schema.to_string());
        let body = chat_body(&system, prompt, Some(schema), 1024);
        let (seconds, _) = tokio::task::block_in_place(|| Target::Engine(&engine).chat(&body))?;
        plain.push(seconds);
        if let Some(server) = &args.server {
            served.push(Target::Server(server).chat(&body)?.0);
        }
        let started = Instant::now();
        let result = client
            .call_tool(
                &Scope::default(),
                &json!({ "prompt": prompt, "schema": schema }),
            )
            .await;
        structured.push(started.elapsed().as_secs_f64());
        let status = result.as_ref().map_or("error", |result| {
            result["status"].as_str().unwrap_or("error")
        });
        eprintln!(
            "{id:<28} plain {:>6.2} s  structure {:>6.2} s  {status}",
            plain.last().unwrap(),
            structured.last().unwrap()
        );
    }
    let ratios: Vec<f64> = structured
        .iter()
        .zip(&plain)
        .map(|(ours, plain)| ours / plain)
        .collect();
    report["plain_call_seconds_median"] = json!(median(plain.clone()));
    report["server_plain_call_seconds_median"] = json!(median(served));
    report["structure_seconds_median"] = json!(median(structured));
    report["structure_over_plain_median"] = json!(median(ratios));
    report["peak_rss_mib"] = json!(peak_rss_mib());
    println!("{report:#}");
    if let Some(path) = &args.json {
        std::fs::write(path, report.to_string())?;
    }
    Ok(())
}
