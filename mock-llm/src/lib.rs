//! A scriptable mock LLM server for tests, speaking the wire formats of OpenAI (Chat Completions
//! and Responses), Anthropic and Gemini (see [`wire`]).
//!
//! Replies are queued per test and served in order; every request is recorded for assertions.
//! Faults are replies too: error statuses and bodies, delays, malformed JSON.
//!
//! ```no_run
//! use mock_llm::{MockLlm, Reply};
//!
//! let mock = MockLlm::start();
//! mock.push(Reply::answer(serde_json::json!({ "name": "Ada" })));
//! // point the client at mock.base_url() ... then:
//! assert_eq!(mock.requests().len(), 1);
//! ```
//!
//! The same server runs as a binary (`mock-llm --port 8089`) for tests in other languages,
//! scripted over HTTP: `POST /_mock/replies` queues a reply (the JSON form of [`Reply`]),
//! `POST /_mock/always` sets a reply served whenever the queue is empty (`null` clears it),
//! `GET /_mock/requests` lists the recorded requests, `POST /_mock/reset` clears all of it.
//! `POST /_mock/document` (`{"latencyMs"}`) makes it a model that reads a contract's terms
//! ([`document::Reader`]), and `POST /_mock/document/text` (`{"chars", "terms"}`) returns
//! such a contract and its schema; `POST /_mock/pdf` (`{"pages": [...]}`) a PDF of those pages
//! ([`pdf`]), `POST /_mock/docx` (the same body) a Word document of those paragraphs ([`docx`]),
//! `POST /_mock/xlsx` (the same body) a spreadsheet whose rows are the first page's lines, its
//! cells parted by tabs ([`xlsx`]). `POST /_mock/server` (the JSON form of [`servers::Server`]) makes it stand for llama.cpp,
//! llama-cpp-python, Ollama or vLLM, or an OpenAI endpoint with a context limit: what it says
//! of itself when asked, and the refusal of a request over its window, in that server's words.
//! `POST /_mock/orders` (`{"form": "records" | "langextract", "latencyMs", "varied"}`) makes it
//! a model that reads the orders of each text ([`orders::Reader`]), and `POST
//! /_mock/orders/text` (`{"chars", "orders"}`) returns a text with orders planted in it.

pub mod batches;
pub mod document;
pub mod docx;
pub mod orders;
pub mod pdf;
mod reply;
pub mod servers;
pub mod table;
pub mod wire;
pub mod xlsx;

use std::collections::VecDeque;
use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::body::Frame;
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Request, Response};
use hyper_util::rt::TokioIo;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use tokio::net::TcpListener;
use tokio::sync::oneshot;

pub use reply::{Fault, Reply};

/// A request the server received.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Recorded {
    pub method: String,
    pub path: String,
    pub headers: Vec<(String, String)>,
    pub body: String,
}

impl Recorded {
    /// The body as JSON (`Value::Null` if it is not JSON).
    pub fn json(&self) -> Value {
        serde_json::from_str(&self.body).unwrap_or(Value::Null)
    }

    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(key, _)| key.eq_ignore_ascii_case(name))
            .map(|(_, value)| value.as_str())
    }
}

/// Makes the reply to a request from the request itself.
pub type Responder = Arc<dyn Fn(&Recorded) -> Reply + Send + Sync>;

#[derive(Default)]
struct Script {
    replies: VecDeque<Reply>,
    /// Answers whenever the queue is empty, before `always`.
    responder: Option<Responder>,
    /// Served whenever the queue is empty (benchmarks and load tests repeat one reply).
    always: Option<Reply>,
    /// Model requests being answered now, and the most there were at once.
    in_flight: usize,
    max_in_flight: usize,
    requests: Vec<Recorded>,
    /// Requests that asked what the server is (its model list, `/props`, ...), not a model.
    probes: Vec<Recorded>,
    /// The server the mock stands for (what it says of itself, and its context window).
    server: servers::Server,
    /// TCP connections accepted (clients that keep connections alive open few).
    connections: usize,
    /// The batches created through the providers' batch APIs, and how the next ones go.
    batches: batches::Batches,
}

/// A running mock server; it stops when dropped.
pub struct MockLlm {
    address: SocketAddr,
    script: Arc<Mutex<Script>>,
    stop: Option<oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl MockLlm {
    /// Starts a server on a free port of 127.0.0.1, on a thread of its own.
    pub fn start() -> MockLlm {
        MockLlm::start_on("127.0.0.1:0".parse().expect("a valid address"))
            .expect("the mock LLM server starts")
    }

    pub fn start_on(address: SocketAddr) -> std::io::Result<MockLlm> {
        let listener = std::net::TcpListener::bind(address)?;
        listener.set_nonblocking(true)?;
        let address = listener.local_addr()?;
        let script = Arc::new(Mutex::new(Script::default()));
        let (stop, stopped) = oneshot::channel();
        let served = script.clone();
        let thread = std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .expect("a tokio runtime for the mock");
            runtime.block_on(serve(listener, served, stopped));
        });
        Ok(MockLlm {
            address,
            script,
            stop: Some(stop),
            thread: Some(thread),
        })
    }

    pub fn address(&self) -> SocketAddr {
        self.address
    }

    /// The CPU time the server's thread has used so far (benchmarks in the same process take it
    /// out of the process's CPU time); `None` where the thread's CPU clock cannot be read.
    pub fn server_cpu(&self) -> Option<std::time::Duration> {
        use std::os::unix::thread::JoinHandleExt;
        let thread = self.thread.as_ref()?.as_pthread_t();
        let mut clock: libc::clockid_t = 0;
        let mut time = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        // SAFETY: `thread` is a live thread (its handle is joined only on drop); both calls write
        // only to the locals they are given.
        let read = unsafe {
            libc::pthread_getcpuclockid(thread, &mut clock) == 0
                && libc::clock_gettime(clock, &mut time) == 0
        };
        read.then(|| std::time::Duration::new(time.tv_sec as u64, time.tv_nsec as u32))
    }

    /// The OpenAI-style base URL: `http://127.0.0.1:PORT/v1`.
    pub fn base_url(&self) -> String {
        format!("http://{}/v1", self.address)
    }

    /// Queues a reply; replies are served in the order they were pushed.
    pub fn push(&self, reply: Reply) {
        self.lock().replies.push_back(reply);
    }

    /// Forgets the queued replies, the standing reply and the recorded requests.
    pub fn reset(&self) {
        *self.lock() = Script::default();
    }

    /// Serves `reply` whenever no queued reply is left (`None`: answer 500 again).
    pub fn always(&self, reply: Option<Reply>) {
        self.lock().always = reply;
    }

    /// Answers every request the queue has no reply for with `responder`'s reply to it (in
    /// this process only: a closure does not travel over the control API).
    pub fn respond_with(&self, responder: impl Fn(&Recorded) -> Reply + Send + Sync + 'static) {
        self.lock().responder = Some(Arc::new(responder));
    }

    /// Answers every request the queue has no reply for as `reader`, a model reading orders.
    pub fn read_orders(&self, reader: orders::Reader) {
        self.lock().responder = Some(Arc::new(move |request| reader.reply(request)));
    }

    /// Answers every request the queue has no reply for as `reader`, a model reading contracts.
    pub fn read_document(&self, reader: document::Reader) {
        self.lock().responder = Some(Arc::new(move |request| reader.reply(request)));
    }

    /// Stands for `server`: answers what a client asks of its kind, and refuses requests over
    /// its context window in its words.
    pub fn serve_as(&self, server: servers::Server) {
        self.lock().server = server;
    }

    /// The requests that asked what the server is (not model requests), in order.
    pub fn probes(&self) -> Vec<Recorded> {
        self.lock().probes.clone()
    }

    /// The most model requests the server was answering at one time.
    pub fn max_in_flight(&self) -> usize {
        self.lock().max_in_flight
    }

    /// The requests received so far, excluding the control API's.
    pub fn requests(&self) -> Vec<Recorded> {
        self.lock().requests.clone()
    }

    /// TCP connections accepted since the start or the last reset.
    pub fn connections(&self) -> usize {
        self.lock().connections
    }

    /// Makes the next batch created through a provider's batch API go as `plan` says (plans
    /// are taken in order; a batch with none left runs and ends at its first poll).
    pub fn plan_batch(&self, plan: batches::Plan) {
        self.lock().batches.plan(plan);
    }

    /// Ends every batch created so far at its next poll.
    pub fn end_batches(&self) {
        self.lock().batches.end_all();
    }

    /// The batches created through the providers' batch APIs, in order.
    pub fn batches(&self) -> Vec<batches::Created> {
        self.lock().batches.created()
    }

    /// Replies queued but not served.
    pub fn pending(&self) -> usize {
        self.lock().replies.len()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Script> {
        self.script
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Serves until the process ends (for the binary).
    pub fn wait(mut self) {
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

impl Drop for MockLlm {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

async fn serve(
    listener: std::net::TcpListener,
    script: Arc<Mutex<Script>>,
    mut stopped: oneshot::Receiver<()>,
) {
    let listener = TcpListener::from_std(listener).expect("the listener joins the runtime");
    loop {
        let stream = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => stream,
                Err(_) => continue,
            },
            _ = &mut stopped => return,
        };
        script
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .connections += 1;
        let script = script.clone();
        tokio::spawn(async move {
            let service = service_fn(move |request| handle(request, script.clone()));
            let _ = http1::Builder::new()
                .serve_connection(TokioIo::new(stream), service)
                .await;
        });
    }
}

async fn handle(
    request: Request<Incoming>,
    script: Arc<Mutex<Script>>,
) -> Result<Response<ReplyBody>, Infallible> {
    let method = request.method().as_str().to_owned();
    let path = request.uri().path().to_owned();
    let headers: Vec<(String, String)> = request
        .headers()
        .iter()
        .map(|(name, value)| {
            (
                name.to_string(),
                String::from_utf8_lossy(value.as_bytes()).into_owned(),
            )
        })
        .collect();
    let body = match request.into_body().collect().await {
        Ok(collected) => collected.to_bytes(),
        Err(_) => Bytes::new(),
    };
    let lock = || {
        script
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    };
    if method == "OPTIONS" {
        return Ok(respond(&Reply {
            headers: Vec::new(),
            ..Reply::raw(204, "")
        }));
    }
    if let Some(reply) = scripting(&script, &method, &path, &body)
        .or_else(|| fixture(&method, &path, &body))
        .or_else(|| batches::route(&script, &method, &path, &body))
    {
        return Ok(respond(&reply));
    }
    let recorded = Recorded {
        method,
        path,
        headers,
        body: String::from_utf8_lossy(&body).into_owned(),
    };
    let server = lock().server;
    if let Some(reply) = server.answer(&recorded.method, &recorded.path, &recorded.body) {
        lock().probes.push(recorded);
        return Ok(respond(&reply));
    }
    let refusal = server.refusal(&recorded.json());
    let reply = match refusal {
        Some(refusal) => {
            let mut script = lock();
            script.requests.push(recorded);
            script.in_flight += 1;
            script.max_in_flight = script.max_in_flight.max(script.in_flight);
            refusal
        }
        None => next_reply(&script, recorded),
    };
    if reply.delay_ms > 0 {
        tokio::time::sleep(Duration::from_millis(reply.delay_ms)).await;
    }
    let mut script = lock();
    script.in_flight = script.in_flight.saturating_sub(1);
    drop(script);
    Ok(respond(&reply))
}

/// `body` read as a `T`, and what `then` makes of it; a 400 with `code` if it is not one.
fn with_body<T: serde::de::DeserializeOwned>(
    body: &[u8],
    code: &str,
    then: impl FnOnce(T) -> Reply,
) -> Reply {
    match serde_json::from_slice::<T>(body) {
        Ok(value) => then(value),
        Err(error) => Reply::error(400, code, &error.to_string()),
    }
}

/// The routes that script the mock (`/_mock/...`): the replies it gives next or always, who
/// answers model requests, which server it plays; the requests it recorded; a reset.
fn scripting(script: &Mutex<Script>, method: &str, path: &str, body: &[u8]) -> Option<Reply> {
    let lock = || {
        script
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    };
    Some(match (method, path) {
        ("POST", "/_mock/replies") => with_body(body, "invalid_reply", |reply: Reply| {
            lock().replies.push_back(reply);
            Reply::raw(200, "{\"queued\":true}")
        }),
        ("POST", "/_mock/always") => with_body(body, "invalid_reply", |reply: Option<Reply>| {
            lock().always = reply;
            Reply::raw(200, "{\"always\":true}")
        }),
        ("POST", "/_mock/orders") => with_body(body, "invalid_reader", |reader: orders::Reader| {
            lock().responder = Some(Arc::new(move |request: &Recorded| reader.reply(request)));
            Reply::raw(200, "{\"orders\":true}")
        }),
        ("POST", "/_mock/document") => {
            with_body(body, "invalid_reader", |reader: document::Reader| {
                lock().responder = Some(Arc::new(move |request: &Recorded| reader.reply(request)));
                Reply::raw(200, "{\"document\":true}")
            })
        }
        ("POST", "/_mock/server") => {
            with_body(body, "invalid_server", |server: servers::Server| {
                lock().server = server;
                Reply::raw(200, "{\"server\":true}")
            })
        }
        ("GET", "/_mock/requests") => {
            let requests = serde_json::to_string(&lock().requests).unwrap_or_default();
            Reply::raw(200, &requests)
        }
        ("POST", "/_mock/reset") => {
            *lock() = Script::default();
            Reply::raw(200, "{\"reset\":true}")
        }
        _ => return None,
    })
}

/// The routes that make a scenario's inputs (`/_mock/.../text`, `/_mock/pdf`, `/_mock/docx`): a
/// long text with orders or terms planted in it, and its schema; a PDF of given pages; a Word
/// document of given paragraphs (`{"pages": [...]}` too).
fn fixture(method: &str, path: &str, body: &[u8]) -> Option<Reply> {
    #[derive(Deserialize)]
    struct Orders {
        chars: usize,
        orders: usize,
    }
    #[derive(Deserialize)]
    struct Terms {
        chars: usize,
        #[serde(default)]
        terms: document::Terms,
    }
    #[derive(Deserialize)]
    struct Pages {
        pages: Vec<String>,
    }
    Some(match (method, path) {
        ("POST", "/_mock/orders/text") => with_body(body, "invalid_request", |wanted: Orders| {
            let (text, planted) = orders::planted_text(wanted.chars, wanted.orders);
            let planted: Vec<&String> = planted.iter().map(|(order, _)| order).collect();
            let reply = json!({
                "text": text,
                "planted": planted,
                "schema": orders::order_schema(),
            });
            Reply::raw(200, &reply.to_string())
        }),
        ("POST", "/_mock/document/text") => with_body(body, "invalid_request", |wanted: Terms| {
            let reply = json!({
                "text": document::planted_document(wanted.chars, &wanted.terms),
                "schema": document::terms_schema(),
            });
            Reply::raw(200, &reply.to_string())
        }),
        ("POST", "/_mock/pdf") => with_body(body, "invalid_request", |wanted: Pages| {
            let pages: Vec<&str> = wanted.pages.iter().map(String::as_str).collect();
            let mut reply = Reply::bytes(200, pdf::with_pages(&pages));
            reply.headers = vec![("content-type".into(), "application/pdf".into())];
            reply
        }),
        ("POST", "/_mock/docx") => with_body(body, "invalid_request", |wanted: Pages| {
            let paragraphs: Vec<&str> = wanted.pages.iter().map(String::as_str).collect();
            let mut reply = Reply::bytes(200, docx::with_paragraphs(&paragraphs));
            let word = "application/vnd.openxmlformats-officedocument.wordprocessingml.document";
            reply.headers = vec![("content-type".into(), word.into())];
            reply
        }),
        ("POST", "/_mock/xlsx") => with_body(body, "invalid_request", |wanted: Pages| {
            // One sheet, a row per line of the first page, its cells parted by tabs.
            let lines = wanted.pages.first().map(String::as_str).unwrap_or_default();
            let rows: Vec<Vec<&str>> = lines
                .lines()
                .map(|line| line.split('\t').collect())
                .collect();
            let rows: Vec<&[&str]> = rows.iter().map(Vec::as_slice).collect();
            let mut reply = Reply::bytes(200, xlsx::workbook(&[("Sheet1", &rows)]));
            let sheet = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet";
            reply.headers = vec![("content-type".into(), sheet.into())];
            reply
        }),
        _ => return None,
    })
}

/// The reply to a model request (recorded, and counted in flight until it is answered): the
/// next queued one, else the responder's, else the standing one, else a 500.
fn next_reply(script: &Mutex<Script>, recorded: Recorded) -> Reply {
    let lock = || {
        script
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    };
    let (reply, responder) = {
        let mut script = lock();
        script.requests.push(recorded.clone());
        script.in_flight += 1;
        script.max_in_flight = script.max_in_flight.max(script.in_flight);
        (script.replies.pop_front(), script.responder.clone())
    };
    reply
        .or_else(|| responder.map(|respond| respond(&recorded)))
        .or_else(|| lock().always.clone())
        .unwrap_or_else(|| {
            Reply::error(
                500,
                "mock_script_empty",
                "the mock LLM has no scripted reply left",
            )
        })
}

type ReplyBody = http_body_util::combinators::BoxBody<Bytes, std::io::Error>;

fn respond(reply: &Reply) -> Response<ReplyBody> {
    let mut response = Response::builder().status(reply.status);
    for (name, value) in &reply.headers {
        response = response.header(name, value);
    }
    // Browsers call the mock directly in the demo's tests.
    response = response
        .header("access-control-allow-origin", "*")
        .header("access-control-allow-headers", "*")
        .header("access-control-allow-methods", "GET, POST, OPTIONS");
    let body = Bytes::from(
        reply
            .body_bytes
            .clone()
            .unwrap_or_else(|| reply.body.clone().into_bytes()),
    );
    let body = match &reply.fault {
        None => Full::new(body).map_err(|never| match never {}).boxed(),
        Some(fault) => {
            if !matches!(fault, Fault::Chunked { .. }) {
                response = response.header("content-length", body.len().to_string());
            }
            faulty(body, fault.clone())
        }
    };
    response.body(body).unwrap_or_else(|_| {
        Response::new(
            Full::new(Bytes::from_static(b"invalid scripted reply"))
                .map_err(|never| match never {})
                .boxed(),
        )
    })
}

/// A body that a task feeds as `fault` says: in drips, in chunks, or cut off by an error (which
/// makes the server drop the connection).
fn faulty(body: Bytes, fault: Fault) -> ReplyBody {
    let (sender, receiver) = tokio::sync::mpsc::channel::<Result<Frame<Bytes>, std::io::Error>>(4);
    tokio::spawn(async move {
        let (chunk_bytes, every, cut_at) = match fault {
            Fault::Reset { after_bytes } => (after_bytes.max(1), Duration::ZERO, Some(after_bytes)),
            Fault::Drip {
                chunk_bytes,
                every_ms,
            } => (chunk_bytes.max(1), Duration::from_millis(every_ms), None),
            Fault::Chunked { chunk_bytes } => (chunk_bytes.max(1), Duration::ZERO, None),
        };
        let end = cut_at.unwrap_or(body.len()).min(body.len());
        let mut sent = 0;
        while sent < end {
            let next = (sent + chunk_bytes).min(end);
            if sender
                .send(Ok(Frame::data(body.slice(sent..next))))
                .await
                .is_err()
            {
                return;
            }
            sent = next;
            if !every.is_zero() {
                tokio::time::sleep(every).await;
            }
        }
        if cut_at.is_some() {
            let _ = sender
                .send(Err(std::io::Error::new(
                    std::io::ErrorKind::ConnectionReset,
                    "scripted reset",
                )))
                .await;
        }
    });
    http_body_util::StreamBody::new(ChannelStream(receiver)).boxed()
}

struct ChannelStream(tokio::sync::mpsc::Receiver<Result<Frame<Bytes>, std::io::Error>>);

impl futures_core::Stream for ChannelStream {
    type Item = Result<Frame<Bytes>, std::io::Error>;

    fn poll_next(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Self::Item>> {
        self.0.poll_recv(cx)
    }
}
