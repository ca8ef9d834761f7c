//! The console as a `wasi:http/incoming-handler` component of its own (world `console` in
//! `wit/structure.wit`), for hosts that route `/console/...` to it, as Spin's manifest does:
//! the request's method and path to [`crate::serve`], its answer sent.

use crate::{ConsoleResponse, serve};

wit_bindgen::generate!({
    world: "console",
    path: "../wit",
    generate_all,
});

use wasi::http::types as http;
use wasi::io::streams::StreamError;

/// `blocking-write-and-flush` takes at most 4096 bytes a call.
const WRITE_CHUNK: usize = 4096;

struct Console;

impl exports::wasi::http::incoming_handler::Guest for Console {
    fn handle(request: http::IncomingRequest, response_out: http::ResponseOutparam) {
        let method = match request.method() {
            http::Method::Get => "GET".to_owned(),
            http::Method::Other(other) => other,
            other => format!("{other:?}").to_uppercase(),
        };
        let path = request.path_with_query().unwrap_or_else(|| "/".to_owned());
        send(serve(&method, &path), response_out);
    }
}

fn send(response: ConsoleResponse, out: http::ResponseOutparam) {
    let headers = http::Fields::new();
    for (name, value) in &response.headers {
        let _ = headers.append(name, value.as_bytes());
    }
    let _ = headers.append("content-length", response.body.len().to_string().as_bytes());
    let outgoing = http::OutgoingResponse::new(headers);
    let _ = outgoing.set_status_code(response.status);
    let Ok(body) = outgoing.body() else {
        return;
    };
    http::ResponseOutparam::set(out, Ok(outgoing));
    let Ok(stream) = body.write() else {
        return;
    };
    // A client gone mid-body closes the stream: nothing is left to send it.
    let written = response.body.chunks(WRITE_CHUNK).try_for_each(|chunk| {
        match stream.blocking_write_and_flush(chunk) {
            Ok(()) => Ok(()),
            Err(StreamError::Closed | StreamError::LastOperationFailed(_)) => Err(()),
        }
    });
    drop(stream);
    if written.is_ok() {
        let _ = http::OutgoingBody::finish(body, None);
    }
}

export!(Console);
