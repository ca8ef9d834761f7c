//! Typed bindings for the `structure:tool/structure` world (`wit/structure.wit`).

wasmtime::component::bindgen!({
    path: "../wit",
    world: "structure",
    imports: { default: trappable },
    exports: { default: async },
    with: {
        "wasi:keyvalue/store.bucket": crate::key_value::Bucket,
        // The WASI interfaces the world pulls in come from wasmtime's own crates.
        "wasi:io": wasmtime_wasi::p2::bindings::io,
        "wasi:clocks": wasmtime_wasi::p2::bindings::clocks,
        "wasi:http": wasmtime_wasi_http::p2::bindings::http,
    },
    require_store_data_send: true,
    additional_derives: [PartialEq, Eq],
});

pub use exports::structure::tool::structuring::{
    Error, ErrorKind, NotFound, Outcome, ProviderFailure, Request, SchemaInfo, SchemaInput, Status,
    Trace, Usage,
};
