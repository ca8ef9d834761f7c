//! JSON documents in the key-value store. A store that fails is a typed `storage` error: the
//! registry never silently falls back to another level because a read failed. (The schema
//! builder's cache, where a failure is only a miss, reads through [`read_lenient`].)

use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::error::{ErrorKind, StructureError};
use crate::ports::KeyValue;

/// The document at `key`; `Ok(None)` when there is none.
pub fn read<T: DeserializeOwned>(
    store: &dyn KeyValue,
    key: &str,
) -> Result<Option<T>, StructureError> {
    let Some(bytes) = store
        .get(key)
        .map_err(|message| failed("read", key, &message))?
    else {
        return Ok(None);
    };
    serde_json::from_slice(&bytes).map(Some).map_err(|error| {
        StructureError::new(
            ErrorKind::Storage,
            format!(
                "the stored entry {key:?} is corrupt ({error}); delete it and register it again"
            ),
        )
    })
}

/// The document at `key`, or `None` when it is missing, unreadable or corrupt.
pub fn read_lenient<T: DeserializeOwned>(store: &dyn KeyValue, key: &str) -> Option<T> {
    let bytes = store.get(key).ok()??;
    serde_json::from_slice(&bytes).ok()
}

pub fn write<T: Serialize>(
    store: &dyn KeyValue,
    key: &str,
    value: &T,
) -> Result<(), StructureError> {
    let bytes = serde_json::to_vec(value).expect("stored documents always serialise");
    store
        .set(key, &bytes)
        .map_err(|message| failed("write", key, &message))
}

/// Replaces the document at `key` with `change(the document there)` as one step (see
/// [`KeyValue::update`]: `change` may run more than once). A document that is not JSON of the
/// type counts as none, and is replaced.
pub fn update<T: Serialize + DeserializeOwned>(
    store: &dyn KeyValue,
    key: &str,
    mut change: impl FnMut(Option<T>) -> T,
) -> Result<(), StructureError> {
    store
        .update(key, &mut |bytes| {
            let current = bytes.and_then(|bytes| serde_json::from_slice(&bytes).ok());
            serde_json::to_vec(&change(current)).expect("stored documents always serialise")
        })
        .map_err(|message| failed("update", key, &message))
}

/// Every key that starts with `prefix`.
pub fn keys(store: &dyn KeyValue, prefix: &str) -> Result<Vec<String>, StructureError> {
    store
        .keys(prefix)
        .map_err(|message| failed("list", prefix, &message))
}

pub fn delete(store: &dyn KeyValue, key: &str) -> Result<(), StructureError> {
    store
        .delete(key)
        .map_err(|message| failed("delete", key, &message))
}

fn failed(action: &str, key: &str, message: &str) -> StructureError {
    StructureError::new(
        ErrorKind::Storage,
        format!("the key-value store could not {action} {key:?}: {message}"),
    )
}
