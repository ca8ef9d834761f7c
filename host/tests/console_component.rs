//! The console's component (`console/`, what Spin's manifest routes `/console/...` to) run as a
//! `wasi:http` proxy in wasmtime, with WASI and nothing else: it answers with the same files,
//! headers and errors as `structure serve`, which serves them natively.

use bytes::Bytes;
use http_body_util::{BodyExt, Empty};
use wasmtime::component::{Component, Linker, ResourceTable};
use wasmtime::{Config, Engine, Store};
use wasmtime_wasi::{WasiCtx, WasiCtxView, WasiView};
use wasmtime_wasi_http::p2::bindings::ProxyPre;
use wasmtime_wasi_http::p2::bindings::http::types::Scheme;
use wasmtime_wasi_http::{WasiHttpCtx, WasiHttpCtxView, WasiHttpView};

const CONSOLE: &str = env!("STRUCTURE_CONSOLE_WASM");

struct Wasi {
    table: ResourceTable,
    wasi: WasiCtx,
    http: WasiHttpCtx,
}

impl WasiView for Wasi {
    fn ctx(&mut self) -> WasiCtxView<'_> {
        WasiCtxView {
            ctx: &mut self.wasi,
            table: &mut self.table,
        }
    }
}

impl WasiHttpView for Wasi {
    fn http(&mut self) -> WasiHttpCtxView<'_> {
        WasiHttpCtxView {
            ctx: &mut self.http,
            table: &mut self.table,
            hooks: wasmtime_wasi_http::default_hooks(),
        }
    }
}

fn proxy() -> ProxyPre<Wasi> {
    let engine = Engine::new(&Config::new()).unwrap();
    let mut linker = Linker::new(&engine);
    wasmtime_wasi::p2::add_to_linker_async(&mut linker).unwrap();
    wasmtime_wasi_http::p2::add_only_http_to_linker_async(&mut linker).unwrap();
    let component = Component::from_file(&engine, CONSOLE).unwrap();
    ProxyPre::new(linker.instantiate_pre(&component).unwrap()).unwrap()
}

/// `method path` through a fresh instance: the status, the headers and the body.
async fn call(proxy: &ProxyPre<Wasi>, method: &str, path: &str) -> hyper::Response<Bytes> {
    let state = Wasi {
        table: ResourceTable::new(),
        wasi: WasiCtx::builder().build(),
        http: WasiHttpCtx::new(),
    };
    let mut store = Store::new(proxy.engine(), state);
    let request = hyper::Request::builder()
        .method(method)
        .uri(format!("http://localhost{path}"))
        .body(Empty::<Bytes>::new().map_err(|never| -> hyper::Error { match never {} }))
        .unwrap();
    let request = store
        .data_mut()
        .http()
        .new_incoming_request(Scheme::Http, request)
        .unwrap();
    let (sender, receiver) = tokio::sync::oneshot::channel();
    let out = store
        .data_mut()
        .http()
        .new_response_outparam(sender)
        .unwrap();
    let instance = proxy.instantiate_async(&mut store).await.unwrap();
    let handled = tokio::spawn(async move {
        instance
            .wasi_http_incoming_handler()
            .call_handle(store, request, out)
            .await
    });
    let response = receiver.await.unwrap().unwrap();
    let (parts, body) = response.into_parts();
    let body = body.collect().await.unwrap().to_bytes();
    handled.await.unwrap().unwrap();
    hyper::Response::from_parts(parts, body)
}

#[tokio::test]
async fn the_consoles_component_serves_what_the_host_serves() {
    let proxy = proxy();
    for path in [
        "/console",
        "/console/console.js",
        "/console/pdf.worker.min.mjs",
        "/console/nothing.js",
    ] {
        let native = structure_console::serve("GET", path);
        let served = call(&proxy, "GET", path).await;
        assert_eq!(served.status().as_u16(), native.status, "{path}");
        assert_eq!(served.body().as_ref(), native.body.as_ref(), "{path}");
        for (name, value) in &native.headers {
            assert_eq!(
                served.headers().get(*name).and_then(|v| v.to_str().ok()),
                Some(value.as_str()),
                "{path}: {name}"
            );
        }
    }
    let posted = call(&proxy, "POST", "/console").await;
    assert_eq!(posted.status().as_u16(), 405);
    assert_eq!(
        posted.headers().get("allow").and_then(|v| v.to_str().ok()),
        Some("GET")
    );
}
