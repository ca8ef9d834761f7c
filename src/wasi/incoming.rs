//! The HTTP API and MCP endpoint as `wasi:http/incoming-handler`: the request read (its body up
//! to the limit), handed to [`crate::http_api`], the response sent.

use crate::error::StructureError;
use crate::http_api::{self, ApiRequest, ApiResponse};
use crate::wasi::bindings::exports;
use crate::wasi::bindings::wasi::http::types as http;
use crate::wasi::component::Component;
use crate::wasi::pages::ReadEveryPageOnReturn;
use crate::wasi::ports::with_ports;
use crate::wasi::streams::read_stream;
use crate::wasi::transport::write_body;

impl exports::wasi::http::incoming_handler::Guest for Component {
    fn handle(request: http::IncomingRequest, response_out: http::ResponseOutparam) {
        let _pages = ReadEveryPageOnReturn;
        let response = with_ports(|ports| {
            let limit = http_api::max_body_bytes(ports.config);
            match read_request(request, limit) {
                Ok(request) => http_api::handle(&request, ports),
                Err(response) => response,
            }
        });
        send_response(response, response_out);
    }
}

/// The incoming request, its body read up to `limit` bytes (a larger one is a 413 at once).
fn read_request(request: http::IncomingRequest, limit: usize) -> Result<ApiRequest, ApiResponse> {
    let method = match request.method() {
        http::Method::Get => "GET".to_owned(),
        http::Method::Head => "HEAD".to_owned(),
        http::Method::Post => "POST".to_owned(),
        http::Method::Put => "PUT".to_owned(),
        http::Method::Delete => "DELETE".to_owned(),
        http::Method::Connect => "CONNECT".to_owned(),
        http::Method::Options => "OPTIONS".to_owned(),
        http::Method::Trace => "TRACE".to_owned(),
        http::Method::Patch => "PATCH".to_owned(),
        http::Method::Other(other) => other,
    };
    let path = request.path_with_query().unwrap_or_else(|| "/".to_owned());
    let headers = request
        .headers()
        .entries()
        .into_iter()
        .map(|(name, value)| (name, String::from_utf8_lossy(&value).into_owned()))
        .collect();
    let unreadable = |message: &str| {
        ApiResponse::from_error(&StructureError::invalid_request(
            "body",
            format!("the request body could not be read: {message}"),
        ))
    };
    let body = request
        .consume()
        .map_err(|()| unreadable("it was already taken"))?;
    let mut bytes = Vec::new();
    {
        let stream = body
            .stream()
            .map_err(|()| unreadable("its stream was already taken"))?;
        read_stream(
            &stream,
            |chunk| {
                bytes.extend_from_slice(&chunk);
                if bytes.len() > limit {
                    return Err(ApiResponse::too_large(limit));
                }
                Ok(())
            },
            |message| unreadable(&message),
        )?;
    }
    drop(http::IncomingBody::finish(body));
    Ok(ApiRequest {
        method,
        path,
        headers,
        body: bytes,
    })
}

fn send_response(response: ApiResponse, out: http::ResponseOutparam) {
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
    if write_body(&body, &response.body).is_ok() {
        let _ = http::OutgoingBody::finish(body, None);
    }
}
