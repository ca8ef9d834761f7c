//! What every key-value backend is: the [`KeyValueStore`] trait, and the component's handle on
//! one.

use std::sync::Arc;

/// The component's handle on the store (its `wasi:keyvalue` bucket): the backend it reads
/// and writes.
pub struct Bucket {
    pub(crate) store: Arc<dyn KeyValueStore>,
}

/// The component's handle on one compare-and-swap (`wasi:keyvalue/atomics`): the key, and the
/// value it was seen to hold, which a swap must still find there.
pub struct Cas {
    pub(crate) store: Arc<dyn KeyValueStore>,
    pub(crate) key: String,
    pub(crate) seen: Option<Vec<u8>>,
}

/// A key-value backend. Errors are messages; the component sees them as `error::other`.
///
/// ```
/// use structure_host::{KeyValueStore, MemoryStore};
///
/// let store = MemoryStore::default();
/// store.set("t/acme/schemas/lead", b"{}").unwrap();
/// assert_eq!(store.get("t/acme/schemas/lead").unwrap(), Some(b"{}".to_vec()));
/// assert_eq!(store.keys_after(None, 10).unwrap(), ["t/acme/schemas/lead"]);
/// store.delete("t/acme/schemas/lead").unwrap();
/// assert_eq!(store.get("t/acme/schemas/lead").unwrap(), None);
/// assert!(store.compare_and_swap("counter", None, b"1").unwrap());
/// assert!(!store.compare_and_swap("counter", None, b"2").unwrap(), "someone wrote it first");
/// assert!(store.compare_and_swap("counter", Some(b"1"), b"2").unwrap());
/// ```
pub trait KeyValueStore: Send + Sync {
    /// The value at `key`, `None` when there is none.
    fn get(&self, key: &str) -> Result<Option<Vec<u8>>, String>;
    /// Stores `value` at `key`, replacing any value.
    fn set(&self, key: &str, value: &[u8]) -> Result<(), String>;
    /// Removes `key`; removing a key that is not there is no error.
    fn delete(&self, key: &str) -> Result<(), String>;
    /// Up to `limit` keys after `after` (exclusive), in order.
    fn keys_after(&self, after: Option<&str>, limit: usize) -> Result<Vec<String>, String>;
    /// Stores `value` at `key` only if the value there is still `expected` (`None`: no value),
    /// in one indivisible step; whether it did.
    fn compare_and_swap(
        &self,
        key: &str,
        expected: Option<&[u8]>,
        value: &[u8],
    ) -> Result<bool, String>;

    /// A page of about `limit` keys from `cursor` (what the page before gave; `None`: the
    /// start) and the next page's cursor (`None`: this was the last). The cursor's form and
    /// the keys' order are the backend's, and a key may come twice; by default, the pages of
    /// [`keys_after`](Self::keys_after) with the last key as the cursor.
    fn keys_page(
        &self,
        cursor: Option<&str>,
        limit: usize,
    ) -> Result<(Vec<String>, Option<String>), String> {
        let keys = self.keys_after(cursor, limit)?;
        let next = (keys.len() == limit).then(|| keys[limit - 1].clone());
        Ok((keys, next))
    }

    /// Whether a call may wait (on a file, the network): the host then makes it on a thread
    /// of its own rather than on one that runs requests.
    fn waits(&self) -> bool {
        true
    }
}
