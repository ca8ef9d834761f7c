//! Outgoing HTTP for the component's LLM calls, with connections kept alive and reused across
//! calls and instances: a TLS handshake costs more CPU than the rest of a call, and a fresh TCP
//! connection per call adds a round trip. Timeouts are the ones the component asks for.
//!
//! A connection returns to the pool when its response body has been read to the end; one whose
//! body was abandoned is closed. A request that a pooled connection could not send (the server
//! had closed it) is sent again on a new connection: hyper hands such a request back unsent.

use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex, OnceLock};
use std::task::{Context, Poll, ready};
use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body_util::BodyExt;
use hyper::body::{Body, Frame, Incoming, SizeHint};
use hyper::client::conn::http1::SendRequest;
use hyper::{Request, Response};
use hyper_util::rt::TokioIo;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::TcpStream;
use wasmtime_wasi_http::{Error, RequestOptions, WasiBody, WasiHttpHooks};

use structure::keys;

use crate::config::Settings;
use crate::relay::{Relay, Relayed};

/// Idle connections kept per origin.
const MAX_IDLE_PER_ORIGIN: usize = 32;
/// Servers close idle connections after a while (often 60 s or more); not reusing ours beyond
/// this avoids most sends on an already-closed connection.
const IDLE_TIMEOUT: Duration = Duration::from_secs(30);
/// What wasmtime uses when the component sets no timeout.
const DEFAULT_TIMEOUT: Duration = Duration::from_secs(600);

type IoFuture = Box<dyn Future<Output = Result<(), Error>> + Send>;

/// `https` or not, and `host:port`.
#[derive(Clone, PartialEq, Eq, Hash)]
struct Origin {
    tls: bool,
    authority: String,
}

struct Idle {
    sender: SendRequest<WasiBody>,
    since: Instant,
}

/// The connections of one host process, shared by every instance it runs.
#[derive(Default)]
pub struct ConnectionPool {
    idle: Mutex<HashMap<Origin, Vec<Idle>>>,
}

/// The `wasi:http` hooks of one store: requests go only to the configured providers, through
/// the pool.
#[derive(Clone)]
pub struct Egress {
    pool: Arc<ConnectionPool>,
    allowed: Arc<[Origin]>,
    /// Where each request sent is noted, when someone (the traces) wants to know.
    calls: Option<Calls>,
    /// Who answers the LLM requests instead of the network, if anyone (a provider batch).
    relay: Option<Arc<dyn Relay>>,
}

/// One request the component sent: when, where, and how it ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutgoingCall {
    pub started: std::time::SystemTime,
    pub ended: std::time::SystemTime,
    pub host: String,
    pub port: u16,
    /// The response's status, or none when no response came.
    pub status: Option<u16>,
}

/// The requests of one instance, in the order they were sent.
pub type Calls = Arc<Mutex<Vec<OutgoingCall>>>;

impl Egress {
    /// Hooks allowing the endpoints `settings` configure (the providers' base URLs and the
    /// review webhook reviewed results are sent to), and the component's defaults (the
    /// providers' own APIs and the local servers it has profiles for).
    pub fn new(pool: Arc<ConnectionPool>, settings: &Settings) -> Self {
        let configured = keys::base_url_keys().chain([keys::REVIEW_WEBHOOK]);
        let allowed = keys::DEFAULT_BASE_URLS
            .iter()
            .copied()
            .chain(configured.filter_map(|key| settings.get(key)))
            .filter_map(|url| url.parse::<hyper::Uri>().ok())
            .filter_map(|uri| origin(&uri).ok())
            .collect();
        Self {
            pool,
            allowed,
            calls: None,
            relay: None,
        }
    }

    /// The same hooks, with the requests `relay` takes answered by it.
    pub fn relaying(mut self, relay: Arc<dyn Relay>) -> Self {
        self.relay = Some(relay);
        self
    }

    /// The same hooks, noting every request sent in `calls`.
    pub fn recording(mut self, calls: Calls) -> Self {
        self.calls = Some(calls);
        self
    }
}

impl WasiHttpHooks for Egress {
    fn send_request(
        &mut self,
        request: Request<WasiBody>,
        options: Option<RequestOptions>,
        _response_errors: IoFuture,
    ) -> Box<dyn Future<Output = Result<(Response<WasiBody>, IoFuture), Error>> + Send> {
        let pool = self.pool.clone();
        // Defence in depth: the component only calls its configured providers; a request
        // anywhere else is refused here too, as Spin's allowed_outbound_hosts would.
        let allowed = origin(request.uri()).is_ok_and(|to| self.allowed.contains(&to));
        let calls = self.calls.clone();
        let host = request.uri().host().unwrap_or_default().to_owned();
        let port = request.uri().port_u16().unwrap_or_else(|| {
            if request.uri().scheme_str() == Some("https") {
                443
            } else {
                80
            }
        });
        let relay = (self.relay.clone())
            .filter(|relay| relay.takes(request.method().as_str(), &request.uri().to_string()));
        Box::new(async move {
            if !allowed {
                return Err(Error::HttpRequestDenied);
            }
            let started = std::time::SystemTime::now();
            let sent = match relay {
                Some(relay) => relayed(relay.as_ref(), request).await,
                None => pool.send(request, options).await,
            };
            if let Some(calls) = calls {
                let call = OutgoingCall {
                    started,
                    ended: std::time::SystemTime::now(),
                    host,
                    port,
                    status: sent
                        .as_ref()
                        .ok()
                        .map(|response| response.status().as_u16()),
                };
                calls
                    .lock()
                    .unwrap_or_else(|poisoned| poisoned.into_inner())
                    .push(call);
            }
            Ok((sent?, Box::new(async { Ok(()) }) as IoFuture))
        })
    }
}

/// The answer `relay` gives `request`, as a response.
async fn relayed(
    relay: &dyn Relay,
    request: Request<WasiBody>,
) -> Result<Response<WasiBody>, Error> {
    let (parts, body) = request.into_parts();
    let body = body.collect().await?.to_bytes();
    let headers = (parts.headers.iter())
        .map(|(name, value)| {
            (
                name.to_string(),
                String::from_utf8_lossy(value.as_bytes()).into_owned(),
            )
        })
        .collect();
    let request = Relayed {
        method: parts.method.to_string(),
        url: parts.uri.to_string(),
        headers,
        body,
    };
    let answer = relay.relay(request).await;
    let body = http_body_util::Full::new(answer.body)
        .map_err(|never| match never {})
        .boxed_unsync();
    Response::builder()
        .status(answer.status)
        .header("content-type", "application/json")
        .body(body)
        .map_err(|error| Error::InternalError(Some(error.to_string())))
}

struct Timeouts {
    connect: Duration,
    first_byte: Duration,
    between_bytes: Duration,
}

impl Timeouts {
    fn from(options: Option<RequestOptions>) -> Self {
        let or_default = |timeout: Option<Duration>| timeout.unwrap_or(DEFAULT_TIMEOUT);
        Self {
            connect: or_default(options.and_then(|options| options.connect_timeout)),
            first_byte: or_default(options.and_then(|options| options.first_byte_timeout)),
            // A zero interval would make tokio panic; 1 ns is as good as zero.
            between_bytes: or_default(options.and_then(|options| options.between_bytes_timeout))
                .max(Duration::from_nanos(1)),
        }
    }
}

impl ConnectionPool {
    /// Sends a request of the host's own (a provider batch's upload or poll) and reads its
    /// answer whole, within `timeout` in all.
    pub(crate) async fn exchange(
        self: Arc<Self>,
        request: Request<Bytes>,
        timeout: Duration,
    ) -> Result<(u16, Bytes), Error> {
        let request = request.map(|body| {
            http_body_util::Full::new(body)
                .map_err(|never| match never {})
                .boxed_unsync()
        });
        let options = RequestOptions {
            connect_timeout: Some(timeout),
            first_byte_timeout: Some(timeout),
            between_bytes_timeout: Some(timeout),
        };
        let exchanged = async {
            let response = self.send(request, Some(options)).await?;
            let status = response.status().as_u16();
            Ok((status, response.into_body().collect().await?.to_bytes()))
        };
        tokio::time::timeout(timeout, exchanged)
            .await
            .map_err(|_| Error::HttpResponseTimeout)?
    }

    async fn send(
        self: Arc<Self>,
        mut request: Request<WasiBody>,
        options: Option<RequestOptions>,
    ) -> Result<Response<WasiBody>, Error> {
        let origin = origin(request.uri())?;
        let timeouts = Timeouts::from(options);
        // The request line carries only the path; scheme and authority are for proxies.
        *request.uri_mut() = path_only(request.uri())?;
        let mut pooled = self.checkout(&origin);
        loop {
            let reused = pooled.is_some();
            let mut sender = match pooled.take() {
                Some(sender) => sender,
                None => self.connect(&origin, timeouts.connect).await?,
            };
            let sent = tokio::time::timeout(timeouts.first_byte, sender.try_send_request(request))
                .await
                .map_err(|_| Error::ConnectionReadTimeout)?;
            match sent {
                Ok(response) => {
                    let mut between_bytes = tokio::time::interval(timeouts.between_bytes);
                    between_bytes.reset();
                    let (parts, incoming) = response.into_parts();
                    let body = PooledBody {
                        incoming,
                        between_bytes,
                        sender: Some(sender),
                        pool: self.clone(),
                        origin,
                    };
                    return Ok(Response::from_parts(parts, body.boxed_unsync()));
                }
                Err(mut failed) => match failed.take_message() {
                    // Never written: the pooled connection was closed under us. Try a new one.
                    Some(unsent) if reused => request = unsent,
                    _ => return Err(Error::from(failed.into_error())),
                },
            }
        }
    }

    fn checkout(&self, origin: &Origin) -> Option<SendRequest<WasiBody>> {
        let mut idle = self
            .idle
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        let connections = idle.get_mut(origin)?;
        while let Some(Idle { sender, since }) = connections.pop() {
            if since.elapsed() < IDLE_TIMEOUT && sender.is_ready() {
                return Some(sender);
            }
        }
        None
    }

    fn checkin(&self, origin: Origin, sender: SendRequest<WasiBody>) {
        if !sender.is_ready() {
            return;
        }
        let mut idle = self
            .idle
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        let connections = idle.entry(origin).or_default();
        connections.retain(|idle| idle.since.elapsed() < IDLE_TIMEOUT && !idle.sender.is_closed());
        if connections.len() < MAX_IDLE_PER_ORIGIN {
            connections.push(Idle {
                sender,
                since: Instant::now(),
            });
        }
    }

    async fn connect(
        &self,
        origin: &Origin,
        timeout: Duration,
    ) -> Result<SendRequest<WasiBody>, Error> {
        let connecting = async {
            let tcp = TcpStream::connect(&origin.authority)
                .await
                .map_err(Error::Connect)?;
            // Requests are written whole; Nagle's delay would only hold back their last segment.
            let _ = tcp.set_nodelay(true);
            let stream: Box<dyn Stream> = if origin.tls {
                let name = server_name(&origin.authority)?;
                Box::new(tls().connect(name, tcp).await.map_err(Error::Tls)?)
            } else {
                Box::new(tcp)
            };
            let (sender, connection) =
                hyper::client::conn::http1::handshake(TokioIo::new(stream)).await?;
            tokio::spawn(async move {
                // The connection ends when the server or the pool drops it; either is fine.
                let _ = connection.await;
            });
            Ok(sender)
        };
        tokio::time::timeout(timeout, connecting)
            .await
            .map_err(|_| Error::ConnectionTimeout)?
    }
}

/// The process's TLS client (rustls with the Mozilla roots): for the LLM calls and the
/// traces alike, built once.
pub(crate) fn tls() -> &'static tokio_rustls::TlsConnector {
    static TLS: OnceLock<tokio_rustls::TlsConnector> = OnceLock::new();
    TLS.get_or_init(|| {
        let roots = rustls::RootCertStore {
            roots: webpki_roots::TLS_SERVER_ROOTS.into(),
        };
        let config = rustls::ClientConfig::builder()
            .with_root_certificates(roots)
            .with_no_client_auth();
        tokio_rustls::TlsConnector::from(Arc::new(config))
    })
}

trait Stream: AsyncRead + AsyncWrite + Send + Unpin + 'static {}
impl<T: AsyncRead + AsyncWrite + Send + Unpin + 'static> Stream for T {}

fn origin(uri: &hyper::Uri) -> Result<Origin, Error> {
    let authority = uri.authority().ok_or(Error::HttpRequestUriInvalid)?;
    let tls = uri.scheme() == Some(&hyper::http::uri::Scheme::HTTPS);
    let authority = match authority.port() {
        Some(_) => authority.to_string(),
        None => format!("{authority}:{}", if tls { 443 } else { 80 }),
    };
    Ok(Origin { tls, authority })
}

fn path_only(uri: &hyper::Uri) -> Result<hyper::Uri, Error> {
    let path = uri.path_and_query().map_or("/", |path| path.as_str());
    hyper::Uri::builder()
        .path_and_query(path)
        .build()
        .map_err(|_| Error::HttpRequestUriInvalid)
}

fn server_name(authority: &str) -> Result<rustls::pki_types::ServerName<'static>, Error> {
    use rustls::pki_types::ServerName;
    if let Ok(address) = authority.parse::<std::net::SocketAddr>() {
        return Ok(ServerName::from(address.ip()));
    }
    let host = authority
        .rsplit_once(':')
        .map_or(authority, |(host, _port)| host);
    ServerName::try_from(host)
        .map(|name| name.to_owned())
        .map_err(|_| Error::HttpRequestUriInvalid)
}

/// A response body that gives its connection back to the pool once read to the end, and fails
/// when the server goes quiet for longer than the between-bytes timeout.
struct PooledBody {
    incoming: Incoming,
    between_bytes: tokio::time::Interval,
    sender: Option<SendRequest<WasiBody>>,
    pool: Arc<ConnectionPool>,
    origin: Origin,
}

impl Body for PooledBody {
    type Data = Bytes;
    type Error = Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Error>>> {
        match Pin::new(&mut self.incoming).poll_frame(cx) {
            Poll::Ready(None) => {
                if let Some(sender) = self.sender.take() {
                    self.pool.checkin(self.origin.clone(), sender);
                }
                Poll::Ready(None)
            }
            Poll::Ready(Some(Err(error))) => {
                self.sender = None;
                Poll::Ready(Some(Err(if error.is_timeout() {
                    Error::HttpResponseTimeout
                } else {
                    Error::from(error)
                })))
            }
            Poll::Ready(Some(Ok(frame))) => {
                self.between_bytes.reset();
                Poll::Ready(Some(Ok(frame)))
            }
            Poll::Pending => {
                ready!(self.between_bytes.poll_tick(cx));
                self.sender = None;
                Poll::Ready(Some(Err(Error::ConnectionReadTimeout)))
            }
        }
    }

    fn is_end_stream(&self) -> bool {
        self.incoming.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.incoming.size_hint()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use http_body_util::{BodyExt, Empty};

    fn request(url: &str) -> Request<WasiBody> {
        let body = Empty::<Bytes>::new()
            .map_err(|never| match never {})
            .boxed_unsync();
        Request::post(url).body(body).unwrap()
    }

    #[tokio::test]
    async fn requests_go_only_to_configured_or_default_endpoints() {
        let settings = Settings::new()
            .set("openai_base_url", "http://127.0.0.1:9/v1")
            .set("structure_review_webhook", "http://127.0.0.1:11/reviewed");
        let mut egress = Egress::new(Arc::default(), &settings);
        let send = |egress: &mut Egress, url: &str| {
            Box::into_pin(egress.send_request(request(url), None, Box::new(async { Ok(()) })))
        };
        for elsewhere in [
            "http://127.0.0.1:10/v1/chat",
            "https://evil.example/v1",
            "http://localhost:9/x",
        ] {
            assert!(
                matches!(
                    send(&mut egress, elsewhere).await,
                    Err(Error::HttpRequestDenied)
                ),
                "{elsewhere}"
            );
        }
        // Allowed: the request goes out (and fails to connect, nothing listens there).
        for configured in [
            "http://127.0.0.1:9/v1/chat/completions",
            "http://127.0.0.1:11/reviewed",
        ] {
            assert!(
                matches!(
                    send(&mut egress, configured).await,
                    Err(Error::Connect(_) | Error::ConnectionTimeout)
                ),
                "{configured}"
            );
        }
    }
}
