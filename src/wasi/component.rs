//! The component itself: the type every export is implemented on ([`super::structuring`],
//! [`super::incoming`]), and its initialiser.

use crate::wasi::bindings::Guest;

pub(crate) struct Component;

crate::wasi::bindings::export!(Component with_types_in crate::wasi::bindings);

impl Guest for Component {
    /// Run once by `wasmtime-wizer` before the component ships: every fresh instance starts
    /// with what this builds in its memory.
    fn wizer_initialize() {
        crate::api::prepare();
    }
}
