//! The WebAssembly component: the only place that knows WASI and wit-bindgen. One file a
//! concern: [`structuring`] (the exported `structure:tool/structuring` interface), [`incoming`] (the HTTP API
//! as `wasi:http/incoming-handler`), and the ports over WASI: [`transport`]
//! (`wasi:http/outgoing-handler`), [`config`] (`wasi:config/store`), [`key_value`]
//! (`wasi:keyvalue/store`).

mod config;
mod incoming;
mod key_value;
mod structuring;
mod transport;

use crate::ports::{Ports, SystemClock};

wit_bindgen::generate!({
    world: "structure-initialisable",
    path: "wit",
    generate_all,
});

struct Component;

export!(Component);

impl Guest for Component {
    /// Run once by `wasmtime-wizer` before the component ships: every fresh instance starts
    /// with what this builds in its memory.
    fn wizer_initialize() {
        crate::api::prepare();
    }
}

/// The ports of one call, over WASI.
fn with_ports<R>(call: impl FnOnce(&Ports<'_>) -> R) -> R {
    let key_value = key_value::WasiKeyValue::default();
    call(&Ports {
        transport: &transport::WasiTransport,
        config: &config::WasiConfig,
        key_value: &key_value,
        clock: &SystemClock,
    })
}

/// Reads `stream` to its end, handing each chunk to `take` (which may stop the read with an
/// error); `failed` words a stream error.
fn read_stream<E>(
    stream: &wasi::io::streams::InputStream,
    mut take: impl FnMut(Vec<u8>) -> Result<(), E>,
    failed: impl Fn(String) -> E,
) -> Result<(), E> {
    loop {
        match stream.blocking_read(64 * 1024) {
            Ok(chunk) => take(chunk)?,
            Err(wasi::io::streams::StreamError::Closed) => return Ok(()),
            Err(wasi::io::streams::StreamError::LastOperationFailed(error)) => {
                return Err(failed(error.to_debug_string()));
            }
        }
    }
}
