//! `structure-load`: `structure serve` under load. Starts the mock LLM (in this process), one
//! or more `structure serve` processes against it (sharing `--store`, e.g. one Redis), then N
//! POST /v1/structure requests from C concurrent clients on kept-alive connections, the clients
//! spread over the instances; reports errors, latency percentiles, throughput, and the servers'
//! resident memory sampled through the run.
//!
//! ```text
//! cargo run --release -p structure-bench --bin structure-load -- \
//!     [--requests 10000] [--clients 50] [--instances 2 --store redis://127.0.0.1:6379/0]
//!     [--cli target/release/structure] [--json FILE]
//! ```

use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper_util::rt::TokioIo;
use mock_llm::{MockLlm, Reply};
use serde_json::json;
use tokio::io::AsyncBufReadExt;

/// `structure serve` under load (see the crate docs and BENCHMARKS.md).
#[derive(clap::Parser)]
struct Args {
    /// Requests in all.
    #[arg(long, default_value_t = 10_000)]
    requests: usize,
    /// Concurrent clients.
    #[arg(long, default_value_t = 50)]
    clients: usize,
    /// The `structure` command (default: the one beside this program).
    #[arg(long)]
    cli: Option<PathBuf>,
    /// Also write the figures here, as JSON.
    #[arg(long)]
    json: Option<PathBuf>,
    /// The servers' key-value store (`memory`, a SQLite file, `redis://host:port/N`).
    #[arg(long, default_value = "memory")]
    store: String,
    /// `structure serve` processes, sharing the store; the clients are spread over them.
    #[arg(long, default_value_t = 1)]
    instances: usize,
}

/// The server process; killed when dropped.
struct Server(Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Resident memory of `pid` in bytes, from /proc.
fn rss(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|line| line.starts_with("VmRSS:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let args = <Args as clap::Parser>::parse();
    let cli = match args.cli.clone() {
        Some(cli) => cli,
        None => std::env::current_exe()?.with_file_name("structure"),
    };
    let mock = MockLlm::start();
    mock.always(Some(Reply::answer(json!({
        "userId": "mike_42", "action": "broke_build", "timestamp": "2026-11-30T14:30:00Z", "status": "failure"
    }))));
    let mut servers = Vec::new();
    for _ in 0..args.instances.max(1) {
        servers.push(start(&cli, &mock, &args.store).await?);
    }
    let pids: Vec<u32> = servers.iter().map(|(server, _)| server.0.id()).collect();
    let addresses: Vec<String> = servers.iter().map(|(_, address)| address.clone()).collect();

    let body = Bytes::from(
        json!({ "prompt": "mike_42 broke the build on 30 November 2026 at 14:30 UTC.", "schema": "user-action-record", "schemaMode": "named" })
            .to_string(),
    );
    let (samples, sampler) = sample_memory(pids);
    let (mut latencies, errors, elapsed) = load(&args, &addresses, &body).await?;
    sampler.abort();
    let samples = samples.lock().unwrap().clone();
    latencies.sort();
    let percentile = |p: f64| {
        latencies
            .get(((p / 100.0) * (latencies.len().max(1) - 1) as f64).round() as usize)
            .copied()
            .unwrap_or_default()
    };
    let counted = counted_by_insights(&addresses[0]).await?;
    let mib = |bytes: u64| bytes as f64 / (1 << 20) as f64;
    let warm = samples.get(samples.len() / 10).copied().unwrap_or_default();
    let report = json!({
        "requests": args.requests,
        "clients": args.clients,
        "instances": addresses.len(),
        "store": args.store,
        "errors": errors.len(),
        "firstErrors": errors.iter().take(5).collect::<Vec<_>>(),
        "seconds": elapsed.as_secs_f64(),
        "requestsPerSecond": args.requests as f64 / elapsed.as_secs_f64(),
        "latencyMs": { "p50": percentile(50.0).as_secs_f64() * 1e3, "p99": percentile(99.0).as_secs_f64() * 1e3, "max": percentile(100.0).as_secs_f64() * 1e3 },
        "serverRssMiB": {
            "samples": samples.len(),
            "afterWarmUp": mib(warm),
            "max": mib(samples.iter().copied().max().unwrap_or_default()),
            "last": mib(samples.last().copied().unwrap_or_default()),
        },
        "llmRequestsAtTheMock": mock.requests().len(),
        // What /v1/insights counted for the schema (0 with STRUCTURE_INSIGHTS=off); below the
        // requests when concurrent counts overwrote each other.
        "countedByInsights": counted,
    });
    println!("{}", serde_json::to_string_pretty(&report)?);
    if let Some(path) = &args.json {
        std::fs::write(path, serde_json::to_string_pretty(&report)?)?;
    }
    anyhow::ensure!(errors.is_empty(), "{} requests failed", errors.len());
    Ok(())
}

/// The servers' resident memory together (bytes), sampled every 200 ms until the task is aborted.
fn sample_memory(pids: Vec<u32>) -> (Arc<std::sync::Mutex<Vec<u64>>>, tokio::task::JoinHandle<()>) {
    let samples = Arc::new(std::sync::Mutex::new(Vec::new()));
    let sampler = {
        let samples = samples.clone();
        tokio::spawn(async move {
            loop {
                let bytes: u64 = pids.iter().filter_map(|pid| rss(*pid)).sum();
                samples.lock().unwrap().push(bytes);
                tokio::time::sleep(Duration::from_millis(200)).await;
            }
        })
    };
    (samples, sampler)
}

/// `args.requests` requests of `body` from `args.clients` clients spread over `addresses`: the
/// latency of each answered, the errors, and the time they all took.
async fn load(
    args: &Args,
    addresses: &[String],
    body: &Bytes,
) -> anyhow::Result<(Vec<Duration>, Vec<String>, Duration)> {
    let next = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let started = Instant::now();
    let mut workers = Vec::new();
    for index in 0..args.clients {
        let address = addresses[index % addresses.len()].clone();
        let (body, next, total) = (body.clone(), next.clone(), args.requests);
        workers.push(tokio::spawn(async move {
            client(&address, &body, &next, total).await
        }));
    }
    let mut latencies = Vec::new();
    let mut errors = Vec::new();
    for worker in workers {
        let (done, failed) = worker.await?;
        latencies.extend(done);
        errors.extend(failed);
    }
    Ok((latencies, errors, started.elapsed()))
}

/// A `structure serve` process on `store` against `mock`, and the address it listens on.
async fn start(cli: &PathBuf, mock: &MockLlm, store: &str) -> anyhow::Result<(Server, String)> {
    let mut child = Command::new(cli)
        .args(["serve", "--listen", "127.0.0.1:0", "--store", store])
        .env("STRUCTURE_MODEL", "openai/gpt-4.1-mini")
        .env("OPENAI_BASE_URL", mock.base_url())
        .env("OPENAI_API_KEY", "sk-load")
        .env("STRUCTURE_API_AUTH", "none")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|error| anyhow::anyhow!("cannot start {}: {error}", cli.display()))?;
    let stderr = child.stderr.take().expect("piped");
    let server = Server(child);
    let mut lines =
        tokio::io::BufReader::new(tokio::process::ChildStderr::from_std(stderr)?).lines();
    let address = loop {
        let line = tokio::time::timeout(Duration::from_secs(60), lines.next_line())
            .await??
            .ok_or_else(|| anyhow::anyhow!("structure serve exited"))?;
        if let Some(rest) = line.split("serving http://").nth(1) {
            break rest
                .split_whitespace()
                .next()
                .unwrap_or_default()
                .to_owned();
        }
    };
    // Drain the server's log (one line a request) so it never blocks on a full pipe.
    tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
    Ok((server, address))
}

/// One client: a kept-alive connection posting requests until `total` have been taken.
async fn client(
    address: &str,
    body: &Bytes,
    next: &std::sync::atomic::AtomicUsize,
    total: usize,
) -> (Vec<Duration>, Vec<String>) {
    let (mut latencies, mut errors) = (Vec::new(), Vec::new());
    let mut sender = None;
    while next.fetch_add(1, std::sync::atomic::Ordering::Relaxed) < total {
        let started = Instant::now();
        match post(address, body, &mut sender).await {
            Ok(200) => latencies.push(started.elapsed()),
            Ok(status) => errors.push(format!("status {status}")),
            Err(error) => {
                sender = None;
                errors.push(format!("{error:#}"));
            }
        }
    }
    (latencies, errors)
}

/// The calls `/v1/insights` counted for the bench's schema over the last 24 hours.
async fn counted_by_insights(address: &str) -> anyhow::Result<u64> {
    let stream = tokio::net::TcpStream::connect(address).await?;
    let (mut sender, connection) =
        hyper::client::conn::http1::handshake(TokioIo::new(stream)).await?;
    tokio::spawn(connection);
    let request = hyper::Request::get("/v1/insights?window=24h")
        .header("host", address)
        .body(Full::new(Bytes::new()))?;
    let answer = sender
        .send_request(request)
        .await?
        .into_body()
        .collect()
        .await?
        .to_bytes();
    let report: serde_json::Value = serde_json::from_slice(&answer)?;
    let schemas = report["schemas"].as_array().cloned().unwrap_or_default();
    Ok(schemas
        .iter()
        .find(|schema| schema["schema"] == "user-action-record")
        .and_then(|schema| schema["calls"].as_u64())
        .unwrap_or(0))
}

async fn post(
    address: &str,
    body: &Bytes,
    sender: &mut Option<hyper::client::conn::http1::SendRequest<Full<Bytes>>>,
) -> anyhow::Result<u16> {
    if sender.as_ref().is_none_or(|sender| sender.is_closed()) {
        let stream = tokio::net::TcpStream::connect(address).await?;
        stream.set_nodelay(true)?;
        let (new, connection) = hyper::client::conn::http1::handshake(TokioIo::new(stream)).await?;
        tokio::spawn(connection);
        *sender = Some(new);
    }
    let sender = sender.as_mut().expect("connected above");
    sender.ready().await?;
    let request = hyper::Request::post("/v1/structure")
        .header("host", address)
        .header("content-type", "application/json")
        .body(Full::new(body.clone()))?;
    let response = sender.send_request(request).await?;
    let status = response.status().as_u16();
    let answer = response.into_body().collect().await?.to_bytes();
    if status == 200 {
        let outcome: serde_json::Value = serde_json::from_slice(&answer)?;
        anyhow::ensure!(outcome["status"] == "ok", "outcome {outcome}");
    }
    Ok(status)
}
