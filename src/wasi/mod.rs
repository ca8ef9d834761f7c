//! The WebAssembly component: the only place that knows WASI and wit-bindgen. One file a
//! concern: [`structuring`] (the exported `structure:tool/structuring` interface), [`incoming`] (the HTTP API
//! as `wasi:http/incoming-handler`), and the ports over WASI: [`transport`]
//! (`wasi:http/outgoing-handler`), [`config`] (`wasi:config/store`), [`key_value`]
//! (`wasi:keyvalue/store`), gathered for a call in [`ports`]; the bindings in [`bindings`], the
//! component and its initialiser in [`component`]; [`pages`] leaves the memory so that the
//! host's reset for the next instance is cheap.

mod bindings;
mod component;
mod config;
mod incoming;
mod key_value;
mod pages;
mod ports;
mod streams;
mod structuring;
mod transport;
