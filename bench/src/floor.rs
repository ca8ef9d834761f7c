//! The raw-HTTP floor: what any client pays to send the same request and read the answer — one
//! kept-alive HTTP/1.1 connection, the body posted as is, the response and the answer inside it
//! parsed as JSON. Overheads are reported above this.

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::client::conn::http1::SendRequest;
use hyper_util::rt::TokioIo;
use serde_json::Value;

pub struct RawClient {
    sender: SendRequest<Full<Bytes>>,
    authority: String,
}

impl RawClient {
    pub async fn connect(address: std::net::SocketAddr) -> anyhow::Result<Self> {
        let stream = tokio::net::TcpStream::connect(address).await?;
        stream.set_nodelay(true)?;
        let (sender, connection) =
            hyper::client::conn::http1::handshake(TokioIo::new(stream)).await?;
        tokio::spawn(connection);
        Ok(Self {
            sender,
            authority: address.to_string(),
        })
    }

    /// Posts `body` to `path` and returns the answer object the completion carries.
    pub async fn post(&mut self, path: &str, body: &Bytes) -> anyhow::Result<Value> {
        self.sender.ready().await?;
        let request = hyper::Request::post(path)
            .header("host", &self.authority)
            .header("content-type", "application/json")
            .header("authorization", "Bearer sk-bench")
            .body(Full::new(body.clone()))?;
        let response = self.sender.send_request(request).await?;
        let bytes = response.into_body().collect().await?.to_bytes();
        let completion: Value = serde_json::from_slice(&bytes)?;
        let content = completion["choices"][0]["message"]["content"]
            .as_str()
            .ok_or_else(|| anyhow::anyhow!("no message content in {completion}"))?;
        Ok(serde_json::from_str(content)?)
    }
}
