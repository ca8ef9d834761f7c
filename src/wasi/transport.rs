//! LLM requests through `wasi:http/outgoing-handler`: the request line and headers, the body
//! in chunks the host accepts, the response read up to its size limit and within its time.

use std::time::Duration;

use crate::keys;
use crate::ports::{HttpRequest, HttpResponse, Next, Pump, Transport, TransportError};
use crate::wasi::bindings::wasi;
use crate::wasi::bindings::wasi::http::types as http;
use crate::wasi::bindings::wasi::io::poll::Pollable;
use crate::wasi::bindings::wasi::io::streams::StreamError;
use crate::wasi::streams::read_stream;

/// `wasi:http` output streams accept at most this much per write.
const WRITE_CHUNK: usize = 4096;

/// LLM requests through `wasi:http/outgoing-handler`, blocking.
pub(super) struct WasiTransport;

impl Transport for WasiTransport {
    fn send(&self, request: &HttpRequest) -> Result<HttpResponse, TransportError> {
        let (future, started) = start(request)?;
        receive(request, &future, started)
    }

    /// Starts requests while fewer than `max_in_flight` are in flight, and waits on the
    /// pollables of those in flight together, with a timer when `work` waits to start one (a
    /// retry): each answer is read as it arrives.
    fn pump(&self, max_in_flight: usize, work: &mut dyn Pump) {
        let mut in_flight: Vec<InFlight> = Vec::new();
        loop {
            let mut wait = None;
            while in_flight.len() < max_in_flight.max(1) {
                match work.next() {
                    Next::Start(id, request) => match start(&request) {
                        Ok((future, started)) => in_flight.push(InFlight {
                            id,
                            request,
                            future,
                            started,
                        }),
                        Err(error) => work.done(id, Err(error)),
                    },
                    Next::Wait(duration) => {
                        wait = Some(duration);
                        break;
                    }
                    Next::Idle => break,
                }
            }
            if in_flight.is_empty() && wait.is_none() {
                return;
            }
            let mut ready = {
                // A pollable is its future's child: these go before the futures are read.
                let mut pollables: Vec<Pollable> = in_flight
                    .iter()
                    .map(|flight| flight.future.subscribe())
                    .collect();
                pollables.extend(wait.map(timer));
                let pollables: Vec<&Pollable> = pollables.iter().collect();
                wasi::io::poll::poll(&pollables)
            };
            // The timer is last: an index past the requests is the wait being over.
            ready.retain(|&index| (index as usize) < in_flight.len());
            ready.sort_unstable();
            for index in ready.into_iter().rev() {
                let flight = in_flight.swap_remove(index as usize);
                let result = receive(&flight.request, &flight.future, flight.started);
                drop(flight.future);
                work.done(flight.id, result);
            }
        }
    }
}

/// A pollable ready once `duration` is over.
fn timer(duration: Duration) -> Pollable {
    let nanos = u64::try_from(duration.as_nanos()).unwrap_or(u64::MAX);
    wasi::clocks::monotonic_clock::subscribe_duration(nanos)
}

/// A request sent, its answer still to come.
struct InFlight {
    id: usize,
    request: HttpRequest,
    future: http::FutureIncomingResponse,
    started: std::time::Instant,
}

/// Sends `request`'s head and body; the response is read by [`receive`].
fn start(
    request: &HttpRequest,
) -> Result<(http::FutureIncomingResponse, std::time::Instant), TransportError> {
    let started = std::time::Instant::now();
    let parts = request.url_parts().map_err(TransportError::new)?;
    let headers = http::Fields::new();
    for (name, value) in &request.headers {
        headers
            .append(name, value.as_bytes())
            .map_err(|error| TransportError::new(format!("header {name} refused: {error:?}")))?;
    }
    headers
        .append("content-length", request.body.len().to_string().as_bytes())
        .map_err(|error| {
            TransportError::new(format!("header content-length refused: {error:?}"))
        })?;
    let outgoing = http::OutgoingRequest::new(headers);
    let method = match request.method {
        "GET" => http::Method::Get,
        _ => http::Method::Post,
    };
    let scheme = if parts.https {
        http::Scheme::Https
    } else {
        http::Scheme::Http
    };
    let accepted = outgoing.set_method(&method).is_ok()
        && outgoing.set_scheme(Some(&scheme)).is_ok()
        && outgoing.set_authority(Some(&parts.authority)).is_ok()
        && outgoing
            .set_path_with_query(Some(&parts.path_and_query))
            .is_ok();
    if !accepted {
        return Err(TransportError::new(format!(
            "the host refused the request line for {}",
            request.url
        )));
    }
    let body = outgoing
        .body()
        .map_err(|()| TransportError::new("the request body was already taken"))?;
    let future = wasi::http::outgoing_handler::handle(outgoing, Some(options(request.timeout)))
        .map_err(|code| TransportError::new(describe(&code)))?;
    write_body(&body, &request.body)?;
    http::OutgoingBody::finish(body, None).map_err(|code| TransportError::new(describe(&code)))?;
    Ok((future, started))
}

/// Waits for the response of `request` (started at `started`) and reads it, up to its size and
/// within its time.
fn receive(
    request: &HttpRequest,
    future: &http::FutureIncomingResponse,
    started: std::time::Instant,
) -> Result<HttpResponse, TransportError> {
    let response = loop {
        match future.get() {
            Some(Ok(Ok(response))) => break response,
            Some(Ok(Err(code))) => return Err(TransportError::new(describe(&code))),
            Some(Err(())) => return Err(TransportError::new("the response was already taken")),
            None => future.subscribe().block(),
        }
    };
    let status = response.status();
    let headers: Vec<(String, String)> = response
        .headers()
        .entries()
        .into_iter()
        .map(|(name, value)| (name, String::from_utf8_lossy(&value).into_owned()))
        .collect();
    let declared = headers
        .iter()
        .find(|(name, _)| name.eq_ignore_ascii_case("content-length"))
        .and_then(|(_, value)| value.trim().parse::<u64>().ok());
    if declared.is_some_and(|length| length > request.max_response_bytes as u64) {
        return Err(TransportError::new(format!(
            "the response is longer than {} bytes ({})",
            request.max_response_bytes,
            keys::MAX_RESPONSE_BYTES
        )));
    }
    // A body that drips in just fast enough for the between-bytes timeout still has to
    // arrive within the request's time.
    let deadline = started + request.timeout;
    let body = read_body(response, request.max_response_bytes, deadline)?;
    Ok(HttpResponse {
        status,
        headers,
        body,
    })
}

/// Timeouts for one request; a host that does not support an option keeps its own.
fn options(timeout: Duration) -> http::RequestOptions {
    let options = http::RequestOptions::new();
    let nanos = u64::try_from(timeout.as_nanos()).unwrap_or(u64::MAX);
    let connect = nanos.min(30_000_000_000);
    let _ = options.set_connect_timeout(Some(connect));
    let _ = options.set_first_byte_timeout(Some(nanos));
    let _ = options.set_between_bytes_timeout(Some(nanos));
    options
}

pub(super) fn write_body(body: &http::OutgoingBody, bytes: &[u8]) -> Result<(), TransportError> {
    let stream = body
        .write()
        .map_err(|()| TransportError::new("the request body stream was already taken"))?;
    let chunks: Vec<&[u8]> = bytes.chunks(WRITE_CHUNK).collect();
    for (index, chunk) in chunks.iter().enumerate() {
        match stream.blocking_write_and_flush(chunk) {
            Ok(()) => {}
            // The host closes the stream once content-length bytes arrived.
            Err(StreamError::Closed) if index + 1 == chunks.len() => {}
            Err(StreamError::Closed) => {
                return Err(TransportError::new(
                    "the connection closed while sending the request",
                ));
            }
            Err(StreamError::LastOperationFailed(error)) => {
                return Err(TransportError::new(format!(
                    "sending the request failed: {}",
                    error.to_debug_string()
                )));
            }
        }
    }
    Ok(())
}

fn read_body(
    response: http::IncomingResponse,
    limit: usize,
    deadline: std::time::Instant,
) -> Result<Vec<u8>, TransportError> {
    let body = response
        .consume()
        .map_err(|()| TransportError::new("the response body was already taken"))?;
    let mut bytes = Vec::new();
    {
        let stream = body
            .stream()
            .map_err(|()| TransportError::new("the response body stream was already taken"))?;
        read_stream(
            &stream,
            |chunk| {
                if std::time::Instant::now() > deadline {
                    return Err(TransportError::new(
                        "the response did not arrive within the request timeout (structure_request_timeout_ms)",
                    ));
                }
                bytes.extend_from_slice(&chunk);
                if bytes.len() > limit {
                    return Err(TransportError::new(format!(
                        "the response is longer than {limit} bytes ({})",
                        keys::MAX_RESPONSE_BYTES
                    )));
                }
                Ok(())
            },
            |message| {
                TransportError::new(format!(
                    "the connection failed while reading the response: {message}"
                ))
            },
        )?;
    }
    let trailers = http::IncomingBody::finish(body);
    drop(trailers);
    Ok(bytes)
}

fn describe(code: &http::ErrorCode) -> String {
    match code {
        http::ErrorCode::DnsError(payload) => format!(
            "DNS lookup failed{}",
            payload.rcode.as_deref().map(|rcode| format!(" ({rcode})")).unwrap_or_default()
        ),
        http::ErrorCode::ConnectionRefused => "connection refused".to_owned(),
        http::ErrorCode::ConnectionTimeout => "connection timed out".to_owned(),
        http::ErrorCode::ConnectionReadTimeout | http::ErrorCode::HttpResponseTimeout => {
            "no answer within the request timeout (structure_request_timeout_ms)".to_owned()
        }
        http::ErrorCode::ConnectionTerminated => "the connection was closed before the answer was complete".to_owned(),
        http::ErrorCode::HttpRequestDenied => {
            "the host does not allow requests to this address (on Spin, add it to allowed_outbound_hosts)".to_owned()
        }
        http::ErrorCode::TlsCertificateError | http::ErrorCode::TlsAlertReceived(_) | http::ErrorCode::TlsProtocolError => {
            "the TLS handshake failed".to_owned()
        }
        other => format!("{other:?}"),
    }
}
