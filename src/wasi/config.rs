//! Settings and secrets from `wasi:config/store` (Spin variables, the host's settings).

use crate::ports::Config;
use crate::wasi::bindings::wasi;

/// Settings and secrets from `wasi:config/store` (Spin variables, the host's settings).
pub(super) struct WasiConfig;

impl Config for WasiConfig {
    fn get(&self, key: &str) -> Result<Option<String>, String> {
        wasi::config::store::get(key).map_err(|error| match error {
            wasi::config::store::Error::Upstream(message)
            | wasi::config::store::Error::Io(message) => message,
        })
    }
}
