//! `structure serve`: the component's HTTP API (`wasi:http/incoming-handler`) on a socket, like
//! `wasmtime serve` but with the key-value store and the settings wired in. Every request runs
//! in a fresh instance (as on an edge platform); requests are served concurrently.

use std::sync::Arc;

use anyhow::Context;
use hyper::server::conn::http1;
use tokio::net::TcpListener;
use wasmtime::Store;
use wasmtime_wasi_http::WasiHttpView;
use wasmtime_wasi_http::io::TokioIo;
use wasmtime_wasi_http::p2::bindings::ProxyPre;
use wasmtime_wasi_http::p2::bindings::http::types::Scheme;
use wasmtime_wasi_http::p2::body::HyperOutgoingBody;

use crate::config::Settings;
use crate::state::HostState;
use crate::store::KeyValueStore;

/// What every request's instance gets.
#[derive(Clone)]
pub(crate) struct Server {
    pub(crate) proxy: ProxyPre<HostState>,
    pub(crate) connections: Arc<crate::egress::ConnectionPool>,
    pub(crate) settings: Arc<Settings>,
    pub(crate) key_value: Arc<dyn KeyValueStore>,
}

impl Server {
    /// Accepts connections on `listener` until the future is dropped.
    pub(crate) async fn run(self, listener: TcpListener) -> anyhow::Result<()> {
        loop {
            let (stream, _) = listener.accept().await.context("accepting a connection")?;
            let _ = stream.set_nodelay(true);
            let server = self.clone();
            tokio::spawn(async move {
                let service = hyper::service::service_fn(move |request| {
                    let server = server.clone();
                    async move { server.handle(request).await }
                });
                // A client that goes away mid-request is its own business.
                let _ = http1::Builder::new()
                    .keep_alive(true)
                    .serve_connection(TokioIo::new(stream), service)
                    .await;
            });
        }
    }

    async fn handle(
        &self,
        request: hyper::Request<hyper::body::Incoming>,
    ) -> anyhow::Result<hyper::Response<HyperOutgoingBody>> {
        let mut store = Store::new(
            self.proxy.engine(),
            HostState::new(
                self.settings.clone(),
                self.key_value.clone(),
                self.connections.clone(),
            ),
        );
        let (sender, receiver) = tokio::sync::oneshot::channel();
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
