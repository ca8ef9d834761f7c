//! The export task: the spans of every request wait in a bounded queue, and one task sends them
//! in batches (up to [`MAX_BATCH_SPANS`], or what came within [`BATCH_DELAY`]) over one
//! kept-alive connection, TLS for `https`. A request only ever puts its spans in the queue; a
//! full queue, or a batch the collector does not take in [`EXPORT_TIMEOUT`], is dropped and
//! counted, and stderr says so once per outage.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::client::conn::http1::SendRequest;
use hyper_util::rt::TokioIo;
use opentelemetry_proto::tonic::trace::v1::Span;
use prost::Message;
use tokio::sync::mpsc;

use super::spans::export;

/// Requests whose spans may wait at once.
const QUEUE_REQUESTS: usize = 4096;
/// The most spans one export carries.
const MAX_BATCH_SPANS: usize = 512;
/// How long the first spans of a batch wait for more.
const BATCH_DELAY: Duration = Duration::from_millis(500);
/// Connecting and one export, each.
const EXPORT_TIMEOUT: Duration = Duration::from_secs(10);

/// The collector.
pub(super) struct Target {
    pub url: hyper::Uri,
    pub headers: Vec<(String, String)>,
}

/// The queue to the export task, which starts with the first use inside the runtime.
#[derive(Clone, Default)]
pub(super) struct Queue {
    sender: Arc<OnceLock<mpsc::Sender<Vec<Span>>>>,
    pub dropped: Arc<AtomicU64>,
}

impl Queue {
    pub fn start(&self, target: &Arc<Target>) {
        self.sender(target);
    }

    pub fn push(&self, target: &Arc<Target>, spans: Vec<Span>) {
        let count = spans.len() as u64;
        if self.sender(target).try_send(spans).is_err() {
            self.dropped.fetch_add(count, Ordering::Relaxed);
        }
    }

    fn sender(&self, target: &Arc<Target>) -> &mpsc::Sender<Vec<Span>> {
        self.sender.get_or_init(|| {
            let (sender, receiver) = mpsc::channel(QUEUE_REQUESTS);
            tokio::spawn(run(receiver, target.clone(), self.dropped.clone()));
            sender
        })
    }
}

/// Sends what the queue holds, batch after batch, until every sender is gone.
async fn run(mut queue: mpsc::Receiver<Vec<Span>>, target: Arc<Target>, dropped: Arc<AtomicU64>) {
    let mut connection = None;
    let mut warned = false;
    match tokio::time::timeout(EXPORT_TIMEOUT, target.connect()).await {
        Ok(Ok(sender)) => connection = Some(sender),
        Ok(Err(error)) => warn(&mut warned, &target, &error.to_string()),
        Err(_) => warn(&mut warned, &target, "no answer in time"),
    }
    while let Some(mut spans) = queue.recv().await {
        let deadline = tokio::time::Instant::now() + BATCH_DELAY;
        while spans.len() < MAX_BATCH_SPANS {
            tokio::select! {
                more = queue.recv() => match more {
                    Some(more) => spans.extend(more),
                    None => break,
                },
                () = tokio::time::sleep_until(deadline) => break,
            }
        }
        let count = spans.len() as u64;
        let body = Bytes::from(export(spans).encode_to_vec());
        let sent = tokio::time::timeout(EXPORT_TIMEOUT, target.send(&mut connection, body)).await;
        let failure = match sent {
            Ok(Ok(())) => {
                warned = false;
                continue;
            }
            Ok(Err(error)) => error.to_string(),
            Err(_) => format!("no answer within {} s", EXPORT_TIMEOUT.as_secs()),
        };
        connection = None;
        dropped.fetch_add(count, Ordering::Relaxed);
        warn(&mut warned, &target, &failure);
    }
}

/// Says on stderr, once until an export succeeds again, that the collector is not taking spans.
fn warn(warned: &mut bool, target: &Target, error: &str) {
    if !std::mem::replace(warned, true) {
        eprintln!(
            "structure: the OTLP collector at {} does not take traces ({error}); requests go on, \
             their spans are dropped and counted in structure_otlp_spans_dropped_total",
            target.url
        );
    }
}

impl Target {
    /// A new connection to the collector.
    async fn connect(&self) -> anyhow::Result<SendRequest<Full<Bytes>>> {
        let host = self.url.host().unwrap_or("localhost");
        let tls = self.url.scheme_str() == Some("https");
        let port = self.url.port_u16().unwrap_or(if tls { 443 } else { 80 });
        let tcp = tokio::net::TcpStream::connect((host, port)).await?;
        let _ = tcp.set_nodelay(true);
        let sender = if tls {
            let name = rustls::pki_types::ServerName::try_from(host.to_owned())?;
            let stream = crate::egress::tls().connect(name, tcp).await?;
            let (sender, connection) =
                hyper::client::conn::http1::handshake(TokioIo::new(stream)).await?;
            tokio::spawn(connection);
            sender
        } else {
            let (sender, connection) =
                hyper::client::conn::http1::handshake(TokioIo::new(tcp)).await?;
            tokio::spawn(connection);
            sender
        };
        Ok(sender)
    }

    /// Posts one export on `connection` (a new one when there is none or it was closed; once
    /// more on a new one when a kept one fails).
    async fn send(
        &self,
        connection: &mut Option<SendRequest<Full<Bytes>>>,
        body: Bytes,
    ) -> anyhow::Result<()> {
        let reused = connection
            .as_ref()
            .is_some_and(|sender| !sender.is_closed());
        if reused
            && let Ok(()) = self
                .post(connection.as_mut().expect("kept"), body.clone())
                .await
        {
            return Ok(());
        }
        let mut sender = self.connect().await?;
        let posted = self.post(&mut sender, body).await;
        *connection = Some(sender);
        posted
    }

    async fn post(&self, sender: &mut SendRequest<Full<Bytes>>, body: Bytes) -> anyhow::Result<()> {
        sender.ready().await?;
        let authority = self
            .url
            .authority()
            .map_or("localhost", |authority| authority.as_str());
        let mut request = hyper::Request::post(self.url.path())
            .header("host", authority)
            .header("content-type", "application/x-protobuf");
        for (name, value) in &self.headers {
            request = request.header(name.as_str(), value.as_str());
        }
        let response = sender.send_request(request.body(Full::new(body))?).await?;
        let status = response.status();
        let _ = response.into_body().collect().await;
        anyhow::ensure!(status.is_success(), "the collector answered {status}");
        Ok(())
    }
}
