//! The core's ports over WASI, for one call.

use crate::ports::{Ports, SystemClock};
use crate::wasi::{config, key_value, transport};

/// The ports of one call, over WASI.
pub(crate) fn with_ports<R>(call: impl FnOnce(&Ports<'_>) -> R) -> R {
    let key_value = key_value::WasiKeyValue::default();
    let config = config::WasiConfig::default();
    call(&Ports {
        transport: &transport::WasiTransport,
        config: &config,
        key_value: &key_value,
        clock: &SystemClock,
    })
}
