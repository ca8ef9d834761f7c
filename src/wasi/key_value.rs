//! The key-value port over `wasi:keyvalue/store`: the host's store named `default`, as Spin
//! provides it.

use std::cell::OnceCell;

use super::wasi;
use crate::ports::KeyValue;

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
