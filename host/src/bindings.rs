//! Typed bindings for the `structure:tool/structure` world (`wit/structure.wit`).

wasmtime::component::bindgen!({
    path: "../wit",
    world: "structure",
    imports: { default: trappable },
    exports: { default: async },
    with: {
        "wasi:keyvalue/store.bucket": crate::key_value::Bucket,
    },
    require_store_data_send: true,
});

pub use exports::structure::tool::structuring::{
    Error, ErrorKind, NotFound, Outcome, ProviderFailure, Request, SchemaInfo, SchemaInput, Status,
    Trace, Usage,
};
