//! The key-value port over `wasi:keyvalue/store` and `atomics`: the host's store named
//! `default`, as Spin provides it.

use std::cell::OnceCell;

use crate::ports::KeyValue;
use crate::wasi::bindings::wasi;

/// How many times an update reads and swaps before it gives up on a key that keeps changing.
const MAX_SWAPS: usize = 32;

/// The host's `wasi:keyvalue` store named `default` (as Spin provides it), opened on first use.
#[derive(Default)]
pub(super) struct WasiKeyValue {
    bucket: OnceCell<Result<wasi::keyvalue::store::Bucket, String>>,
}

impl WasiKeyValue {
    fn bucket(&self) -> Result<&wasi::keyvalue::store::Bucket, String> {
        self.bucket
            .get_or_init(|| {
                wasi::keyvalue::store::open("default").map_err(|error| describe_store(&error))
            })
            .as_ref()
            .map_err(Clone::clone)
    }
}

impl KeyValue for WasiKeyValue {
    fn get(&self, key: &str) -> Result<Option<Vec<u8>>, String> {
        self.bucket()?
            .get(key)
            .map_err(|error| describe_store(&error))
    }

    fn set(&self, key: &str, value: &[u8]) -> Result<(), String> {
        self.bucket()?
            .set(key, value)
            .map_err(|error| describe_store(&error))
    }

    fn delete(&self, key: &str) -> Result<(), String> {
        self.bucket()?
            .delete(key)
            .map_err(|error| describe_store(&error))
    }

    /// A compare-and-swap, read and swapped again from the value a failed swap hands back.
    fn update(
        &self,
        key: &str,
        change: &mut dyn FnMut(Option<Vec<u8>>) -> Vec<u8>,
    ) -> Result<(), String> {
        use wasi::keyvalue::atomics::{Cas, CasError, swap};
        let mut cas = Cas::new(self.bucket()?, key).map_err(|error| describe_store(&error))?;
        for _ in 0..MAX_SWAPS {
            let seen = cas.current().map_err(|error| describe_store(&error))?;
            match swap(cas, &change(seen)) {
                Ok(()) => return Ok(()),
                Err(CasError::CasFailed(fresh)) => cas = fresh,
                Err(CasError::StoreError(error)) => return Err(describe_store(&error)),
            }
        }
        Err(format!(
            "{key:?} changed under each of {MAX_SWAPS} attempts to update it"
        ))
    }

    /// Pages through every key of the store (Spin's stores take no prefix).
    fn keys(&self, prefix: &str) -> Result<Vec<String>, String> {
        let bucket = self.bucket()?;
        let mut keys = Vec::new();
        let mut cursor = None;
        loop {
            let page = bucket
                .list_keys(cursor.as_deref())
                .map_err(|error| describe_store(&error))?;
            keys.extend(page.keys.into_iter().filter(|key| key.starts_with(prefix)));
            match page.cursor {
                Some(next) if Some(&next) != cursor.as_ref() => cursor = Some(next),
                // A store may give a key twice (Redis's SCAN) and in its own order.
                _ => {
                    keys.sort_unstable();
                    keys.dedup();
                    return Ok(keys);
                }
            }
        }
    }
}

fn describe_store(error: &wasi::keyvalue::store::Error) -> String {
    match error {
        wasi::keyvalue::store::Error::NoSuchStore => {
            "the host has no key-value store named \"default\"".to_owned()
        }
        wasi::keyvalue::store::Error::AccessDenied => {
            "access to the key-value store was denied".to_owned()
        }
        wasi::keyvalue::store::Error::Other(message) => message.clone(),
    }
}
