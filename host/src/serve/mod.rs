//! `structure serve`: the component's HTTP API (`wasi:http/incoming-handler`) on a socket, like
//! `wasmtime serve` but with the key-value store and the settings wired in. Every request runs
//! in a fresh instance (as on an edge platform); requests are served concurrently. The web
//! console's files (`/console`) the host serves itself, from `structure-console`.
//!
//! Around each request the host keeps what an operator needs, read from the exchange
//! ([`record`]): one JSON line per request on stderr, Prometheus metrics ([`metrics`], `GET
//! /metrics` with an admin token or on a listener of its own), and OTLP traces ([`otlp`]). On
//! shutdown it stops accepting, lets the requests in flight finish (up to a drain timeout), and
//! returns.

mod metrics;
mod otlp;
mod record;

use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime};

use anyhow::Context;
use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper_util::server::graceful::GracefulShutdown;
use tokio::net::TcpListener;
use wasmtime_wasi_http::WasiHttpView;
use wasmtime_wasi_http::io::TokioIo;
use wasmtime_wasi_http::p2::bindings::ProxyPre;
use wasmtime_wasi_http::p2::bindings::http::types::Scheme;
use wasmtime_wasi_http::p2::body::HyperOutgoingBody;

use crate::config::Settings;
use crate::egress::ConnectionPool;
use crate::relay::Relay;
use crate::state::HostState;
use crate::store::KeyValueStore;
pub use metrics::Metrics;
pub use otlp::Exporter;
use record::{Exchange, Record};

/// How `structure serve` runs besides its listener.
///
/// ```
/// use std::time::Duration;
/// use structure_host::ServeOptions;
///
/// let options = ServeOptions::default()
///     .drain_timeout(Duration::from_secs(10))
///     .access_log(false);
/// ```
pub struct ServeOptions {
    metrics_listener: Option<TcpListener>,
    drain_timeout: Duration,
    access_log: bool,
    exporter: Option<Exporter>,
    shutdown: Pin<Box<dyn Future<Output = ()> + Send>>,
}

impl Default for ServeOptions {
    /// The access log on stderr, metrics at `GET /metrics` for admin tokens, no traces, a
    /// 30-second drain, and no shutdown signal (the server runs until dropped).
    fn default() -> Self {
        Self {
            metrics_listener: None,
            drain_timeout: Duration::from_secs(30),
            access_log: true,
            exporter: None,
            shutdown: Box::pin(std::future::pending()),
        }
    }
}

impl ServeOptions {
    /// Serves `GET /metrics` on `listener`, to anyone who reaches it (keep it internal), instead
    /// of on the API's listener to admin tokens.
    ///
    /// ```no_run
    /// # async fn example() -> std::io::Result<()> {
    /// let metrics = tokio::net::TcpListener::bind("127.0.0.1:9464").await?;
    /// let options = structure_host::ServeOptions::default().metrics_listener(metrics);
    /// # Ok(())
    /// # }
    /// ```
    pub fn metrics_listener(mut self, listener: TcpListener) -> Self {
        self.metrics_listener = Some(listener);
        self
    }

    /// How long requests in flight may take to finish after the shutdown signal.
    ///
    /// ```
    /// let options = structure_host::ServeOptions::default().drain_timeout(std::time::Duration::from_secs(5));
    /// ```
    pub fn drain_timeout(mut self, timeout: Duration) -> Self {
        self.drain_timeout = timeout;
        self
    }

    /// Whether each request writes a JSON line to stderr (default: yes).
    ///
    /// ```
    /// let quiet = structure_host::ServeOptions::default().access_log(false);
    /// ```
    pub fn access_log(mut self, on: bool) -> Self {
        self.access_log = on;
        self
    }

    /// Sends a trace of each request to an OTLP/HTTP collector at `url` (`http://…/v1/traces`
    /// or `https://…`); see [`ServeOptions::traces_from_env`] for the standard variables.
    ///
    /// ```
    /// let options = structure_host::ServeOptions::default().traces("http://localhost:4318/v1/traces")?;
    /// # Ok::<(), String>(())
    /// ```
    pub fn traces(mut self, url: &str) -> Result<Self, String> {
        self.exporter = Some(Exporter::new(url)?);
        Ok(self)
    }

    /// Sends traces where `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` or `OTEL_EXPORTER_OTLP_ENDPOINT`
    /// say, when one is set, with the headers and protocol the standard variables give.
    ///
    /// ```
    /// let options = structure_host::ServeOptions::default().traces_from_env()?;
    /// # Ok::<(), String>(())
    /// ```
    pub fn traces_from_env(mut self) -> Result<Self, String> {
        self.exporter = Exporter::from_env()?;
        Ok(self)
    }

    /// Stops accepting when `signal` completes, then drains (see
    /// [`ServeOptions::drain_timeout`]) and returns.
    ///
    /// ```no_run
    /// let options = structure_host::ServeOptions::default().shutdown(async {
    ///     let _ = tokio::signal::ctrl_c().await;
    /// });
    /// ```
    pub fn shutdown(mut self, signal: impl Future<Output = ()> + Send + 'static) -> Self {
        self.shutdown = Box::pin(signal);
        self
    }
}

/// What every request's instance gets.
#[derive(Clone)]
pub(crate) struct Server {
    pub(crate) proxy: ProxyPre<HostState>,
    pub(crate) connections: Arc<ConnectionPool>,
    pub(crate) settings: Arc<Settings>,
    pub(crate) key_value: Arc<dyn KeyValueStore>,
    /// Who answers the instances' LLM requests instead of the network, if anyone (the
    /// embedded engine).
    pub(crate) relay: Option<Arc<dyn Relay>>,
}

/// What the request handler shares across requests.
#[derive(Clone)]
struct Shared {
    server: Server,
    metrics: Arc<Metrics>,
    exporter: Option<Exporter>,
    access_log: bool,
    /// Whether `GET /metrics` is served on the API's listener (to admin tokens).
    metrics_on_api: bool,
}

type Response = hyper::Response<HyperOutgoingBody>;

impl Server {
    /// Serves `listener` until the shutdown signal, then drains.
    pub(crate) async fn run(
        self,
        listener: TcpListener,
        options: ServeOptions,
    ) -> anyhow::Result<()> {
        let ServeOptions {
            metrics_listener,
            drain_timeout,
            access_log,
            exporter,
            mut shutdown,
        } = options;
        if let Some(exporter) = &exporter {
            exporter.start();
        }
        let shared = Shared {
            server: self,
            metrics: Arc::new(Metrics::with_spans_dropped(
                exporter.as_ref().map(Exporter::dropped),
            )),
            exporter,
            access_log,
            metrics_on_api: metrics_listener.is_none(),
        };
        if let Some(listener) = metrics_listener {
            tokio::spawn(serve_metrics(listener, shared.metrics.clone()));
        }
        let graceful = GracefulShutdown::new();
        loop {
            let (stream, _) = tokio::select! {
                accepted = listener.accept() => accepted.context("accepting a connection")?,
                () = &mut shutdown => break,
            };
            let _ = stream.set_nodelay(true);
            let shared = shared.clone();
            let service = hyper::service::service_fn(move |request| {
                let shared = shared.clone();
                async move { shared.handle(request).await }
            });
            let connection = http1::Builder::new()
                .keep_alive(true)
                .serve_connection(TokioIo::new(stream), service);
            // A client that goes away mid-request is its own business.
            let watched = graceful.watch(connection);
            tokio::spawn(async move {
                let _ = watched.await;
            });
        }
        drop(listener);
        if tokio::time::timeout(drain_timeout, graceful.shutdown())
            .await
            .is_err()
        {
            eprintln!(
                "structure: requests still in flight after the drain timeout ({} s) were cut off",
                drain_timeout.as_secs()
            );
        }
        Ok(())
    }
}

impl Shared {
    async fn handle(&self, request: hyper::Request<Incoming>) -> anyhow::Result<Response> {
        let started = (SystemTime::now(), Instant::now());
        let (parts, body) = request.into_parts();
        let path = parts
            .uri
            .path_and_query()
            .map_or("/", |path| path.as_str())
            .to_owned();
        let authorization = parts
            .headers
            .get("authorization")
            .and_then(|value| value.to_str().ok())
            .map(str::to_owned);
        if self.metrics_on_api && parts.method == hyper::Method::GET && path == "/metrics" {
            return Ok(self.metrics_for(authorization.as_deref()));
        }
        let request_body = read_limited(body, self.max_body_bytes() + 1).await?;
        let calls = Arc::new(Mutex::new(Vec::new()));
        let (response_parts, response_body) = if structure_console::is_console_path(&path) {
            console_response(structure_console::serve(parts.method.as_str(), &path))
        } else {
            let request = hyper::Request::from_parts(parts.clone(), full(request_body.clone()));
            let response = self.server.call(request, calls.clone()).await?;
            let (response_parts, response_body) = response.into_parts();
            let response_body = response_body
                .collect()
                .await
                .map_err(|code| anyhow::anyhow!("the component's response failed: {code:?}"))?
                .to_bytes();
            (response_parts, response_body)
        };
        let exchange = Exchange {
            method: parts.method.as_str(),
            path: &path,
            authorization: authorization.as_deref(),
            traceparent: parts
                .headers
                .get("traceparent")
                .and_then(|value| value.to_str().ok()),
            request_body: &request_body,
            code: response_parts.status.as_u16(),
            response_body: &response_body,
        };
        let record = Record::new(
            &exchange,
            &self.server.settings,
            started.0,
            started.1.elapsed(),
        );
        self.metrics.observe(&record);
        if self.access_log {
            eprintln!("{}", record.log_line());
        }
        if let Some(exporter) = &self.exporter {
            let calls = calls
                .lock()
                .unwrap_or_else(|poisoned| poisoned.into_inner());
            exporter.export(&record, &calls);
        }
        Ok(hyper::Response::from_parts(
            response_parts,
            full(response_body)
                .map_err(|never| match never {})
                .boxed_unsync(),
        ))
    }

    /// `GET /metrics` on the API's listener: for admin tokens only.
    fn metrics_for(&self, authorization: Option<&str>) -> Response {
        let config = record::HostConfig(&self.server.settings);
        let denied = match structure::authenticate(authorization, &config) {
            Ok(caller) if caller.role >= structure::Role::Admin => None,
            Ok(_) => Some((403, "the metrics take an admin token")),
            Err(_) => Some((
                401,
                "the metrics take an admin token (or serve them on --metrics-listen)",
            )),
        };
        match denied {
            None => text_response(200, self.metrics.render()),
            Some((status, message)) => text_response(status, format!("{message}\n")),
        }
    }

    /// The largest body the component accepts, read from the settings as it reads them.
    fn max_body_bytes(&self) -> usize {
        structure::max_body_bytes(&record::HostConfig(&self.server.settings))
    }
}

impl Server {
    /// Runs `request` in a fresh instance, noting its outgoing requests in `calls`.
    async fn call(
        &self,
        request: hyper::Request<Full<Bytes>>,
        calls: crate::egress::Calls,
    ) -> anyhow::Result<Response> {
        let mut state = HostState::new(
            self.settings.clone(),
            self.key_value.clone(),
            self.connections.clone(),
        )
        .recording_calls(calls);
        if let Some(relay) = &self.relay {
            state = state.relaying(relay.clone());
        }
        let mut store = state.into_store(self.proxy.engine());
        let (sender, receiver) = tokio::sync::oneshot::channel();
        let request = request.map(|body| body.map_err(|never| -> hyper::Error { match never {} }));
        let request = store
            .data_mut()
            .http()
            .new_incoming_request(Scheme::Http, request)?;
        let out = store.data_mut().http().new_response_outparam(sender)?;
        let proxy = self.proxy.clone();
        let task = tokio::spawn(async move {
            let instance = proxy.instantiate_async(&mut store).await?;
            instance
                .wasi_http_incoming_handler()
                .call_handle(store, request, out)
                .await
        });
        match receiver.await {
            Ok(Ok(response)) => Ok(response),
            Ok(Err(code)) => Err(anyhow::anyhow!(
                "the component failed the request: {code:?}"
            )),
            Err(_) => {
                let failure = match task.await {
                    Ok(Ok(())) => anyhow::anyhow!("the component sent no response"),
                    Ok(Err(error)) => anyhow::Error::from(error),
                    Err(error) => error.into(),
                };
                Err(failure.context("the component sent no response"))
            }
        }
    }
}

/// The body, up to `limit` bytes (the component answers a larger one with 413 by itself).
async fn read_limited(mut body: Incoming, limit: usize) -> anyhow::Result<Bytes> {
    let mut bytes = Vec::new();
    while let Some(frame) = body.frame().await {
        if let Ok(data) = frame.context("reading the request body")?.into_data() {
            bytes.extend_from_slice(&data);
            if bytes.len() >= limit {
                bytes.truncate(limit);
                break;
            }
        }
    }
    Ok(Bytes::from(bytes))
}

fn full(bytes: Bytes) -> Full<Bytes> {
    Full::new(bytes)
}

/// The console's answer (`structure-console`, which Spin runs as a component of its own), served
/// by the host itself: no instance of the API carries the console's files.
fn console_response(
    console: structure_console::ConsoleResponse,
) -> (hyper::http::response::Parts, Bytes) {
    let mut response = hyper::Response::new(());
    *response.status_mut() = hyper::StatusCode::from_u16(console.status).unwrap_or_default();
    for (name, value) in console.headers {
        if let Ok(value) = hyper::header::HeaderValue::from_str(&value) {
            response.headers_mut().append(name, value);
        }
    }
    let body = match console.body {
        std::borrow::Cow::Borrowed(file) => Bytes::from_static(file),
        std::borrow::Cow::Owned(error) => Bytes::from(error),
    };
    (response.into_parts().0, body)
}

fn text_response(status: u16, text: String) -> Response {
    let mut response = hyper::Response::new(
        full(Bytes::from(text))
            .map_err(|never| -> wasmtime_wasi_http::Error { match never {} })
            .boxed_unsync(),
    );
    *response.status_mut() = hyper::StatusCode::from_u16(status).unwrap_or_default();
    response.headers_mut().insert(
        "content-type",
        hyper::header::HeaderValue::from_static("text/plain; version=0.0.4"),
    );
    response
}

/// `GET /metrics` (and nothing else) on a listener of its own.
async fn serve_metrics(listener: TcpListener, metrics: Arc<Metrics>) {
    while let Ok((stream, _)) = listener.accept().await {
        let metrics = metrics.clone();
        let service = hyper::service::service_fn(move |request: hyper::Request<Incoming>| {
            let metrics = metrics.clone();
            async move {
                Ok::<_, std::convert::Infallible>(if request.uri().path() == "/metrics" {
                    text_response(200, metrics.render())
                } else {
                    text_response(404, "only /metrics here\n".to_owned())
                })
            }
        });
        tokio::spawn(async move {
            let _ = http1::Builder::new()
                .serve_connection(TokioIo::new(stream), service)
                .await;
        });
    }
}
