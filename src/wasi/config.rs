//! Settings and secrets from `wasi:config/store` (Spin variables, the host's settings).

use std::cell::OnceCell;
use std::collections::BTreeMap;

use crate::ports::Config;
use crate::wasi::bindings::wasi::config::store;

/// Settings and secrets from `wasi:config/store` for one call, all read with one `get-all` the
/// first time the call asks for one: a call reads about fifty keys, and each `get` is a crossing
/// into the host and back (docs/history/benchmarks.md, "Seventh turn"). Where the host cannot
/// list them (Spin's `get-all` fails when any one variable's provider does), each key is asked
/// for alone, so a call sees the same values and the same errors either way.
#[derive(Default)]
pub(super) struct WasiConfig {
    all: OnceCell<Option<BTreeMap<String, String>>>,
}

impl Config for WasiConfig {
    fn get(&self, key: &str) -> Result<Option<String>, String> {
        let all = self
            .all
            .get_or_init(|| store::get_all().ok().map(BTreeMap::from_iter));
        match all {
            Some(all) => Ok(all.get(key).cloned()),
            None => get(key),
        }
    }
}

/// The value of one key, asked for alone.
pub(super) fn get(key: &str) -> Result<Option<String>, String> {
    store::get(key).map_err(|error| match error {
        store::Error::Upstream(message) | store::Error::Io(message) => message,
    })
}
