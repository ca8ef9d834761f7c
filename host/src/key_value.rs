//! `wasi:keyvalue/store@0.2.0-draft2` for the component, over a [`KeyValueStore`] backend: in
//! memory, or a redb file that survives restarts (and crashes: every write is a committed
//! transaction).
//!
//! Like Spin, the host offers one store, named `default`.

use std::collections::BTreeMap;
use std::ops::Bound;
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock, RwLock};

use redb::ReadableDatabase;
use wasmtime::component::Resource;

use crate::bindings::wasi::keyvalue::store::{self as wit, KeyResponse};
use crate::state::HostState;

/// The name of the one store the host offers.
const STORE_NAME: &str = "default";
/// Keys per `list-keys` page.
const PAGE_SIZE: usize = 1000;

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
}

/// Entries in memory, gone when the process ends.
#[derive(Default)]
pub struct MemoryStore {
    entries: RwLock<BTreeMap<String, Vec<u8>>>,
}

impl KeyValueStore for MemoryStore {
    fn get(&self, key: &str) -> Result<Option<Vec<u8>>, String> {
        Ok(self.entries.read().map_err(poisoned)?.get(key).cloned())
    }

    fn set(&self, key: &str, value: &[u8]) -> Result<(), String> {
        self.entries
            .write()
            .map_err(poisoned)?
            .insert(key.to_owned(), value.to_vec());
        Ok(())
    }

    fn delete(&self, key: &str) -> Result<(), String> {
        self.entries.write().map_err(poisoned)?.remove(key);
        Ok(())
    }

    fn keys_after(&self, after: Option<&str>, limit: usize) -> Result<Vec<String>, String> {
        let entries = self.entries.read().map_err(poisoned)?;
        let keys = entries
            .keys()
            .filter(|key| after.is_none_or(|after| key.as_str() > after));
        Ok(keys.take(limit).cloned().collect())
    }
}

fn poisoned<T>(_: T) -> String {
    "the in-memory store is unusable after a panic".to_owned()
}

const TABLE: redb::TableDefinition<&str, &[u8]> = redb::TableDefinition::new("default");

/// Entries in a redb file. redb commits are atomic and durable, so a crash (even `kill -9`)
/// loses at most the write in flight and never corrupts committed entries. The file is opened
/// on first use, so a run that never touches the store never creates it.
pub struct RedbStore {
    path: PathBuf,
    database: OnceLock<Result<redb::Database, String>>,
}

impl RedbStore {
    /// The store at `path`; the file (and its folder) is created on first use.
    ///
    /// ```
    /// use structure_host::{KeyValueStore, RedbStore};
    ///
    /// let dir = tempfile::tempdir().unwrap();
    /// let store = RedbStore::new(dir.path().join("store.redb"));
    /// store.set("a", b"1").unwrap();
    /// assert_eq!(store.get("a").unwrap(), Some(b"1".to_vec()));
    /// ```
    pub fn new(path: impl Into<PathBuf>) -> Self {
        Self {
            path: path.into(),
            database: OnceLock::new(),
        }
    }

    /// `$XDG_DATA_HOME/structure/store.redb`, else `~/.local/share/structure/store.redb`.
    ///
    /// ```
    /// if let Some(path) = structure_host::RedbStore::default_path() {
    ///     println!("the command keeps its store in {}", path.display());
    /// }
    /// ```
    pub fn default_path() -> Option<PathBuf> {
        let base = std::env::var_os("XDG_DATA_HOME")
            .map(PathBuf::from)
            .or_else(|| {
                std::env::var_os("HOME").map(|home| PathBuf::from(home).join(".local/share"))
            })?;
        Some(base.join("structure").join("store.redb"))
    }

    fn database(&self) -> Result<&redb::Database, String> {
        self.database
            .get_or_init(|| open(&self.path))
            .as_ref()
            .map_err(Clone::clone)
    }
}

fn open(path: &Path) -> Result<redb::Database, String> {
    let failed = |error: &dyn std::fmt::Display| {
        format!(
            "cannot open the key-value store {}: {error}",
            path.display()
        )
    };
    if let Some(folder) = path.parent() {
        std::fs::create_dir_all(folder).map_err(|error| failed(&error))?;
    }
    let database = redb::Database::create(path).map_err(|error| failed(&error))?;
    let write = database.begin_write().map_err(|error| failed(&error))?;
    write.open_table(TABLE).map_err(|error| failed(&error))?;
    write.commit().map_err(|error| failed(&error))?;
    Ok(database)
}

impl KeyValueStore for RedbStore {
    fn get(&self, key: &str) -> Result<Option<Vec<u8>>, String> {
        let read = self.database()?.begin_read().map_err(text)?;
        let table = read.open_table(TABLE).map_err(text)?;
        Ok(table
            .get(key)
            .map_err(text)?
            .map(|value| value.value().to_vec()))
    }

    fn set(&self, key: &str, value: &[u8]) -> Result<(), String> {
        let write = self.database()?.begin_write().map_err(text)?;
        write
            .open_table(TABLE)
            .map_err(text)?
            .insert(key, value)
            .map_err(text)?;
        write.commit().map_err(text)
    }

    fn delete(&self, key: &str) -> Result<(), String> {
        let write = self.database()?.begin_write().map_err(text)?;
        write
            .open_table(TABLE)
            .map_err(text)?
            .remove(key)
            .map_err(text)?;
        write.commit().map_err(text)
    }

    fn keys_after(&self, after: Option<&str>, limit: usize) -> Result<Vec<String>, String> {
        let read = self.database()?.begin_read().map_err(text)?;
        let table = read.open_table(TABLE).map_err(text)?;
        let range = match after {
            Some(after) => table.range::<&str>((Bound::Excluded(after), Bound::Unbounded)),
            None => table.range::<&str>(..),
        }
        .map_err(text)?;
        let mut keys = Vec::new();
        for entry in range.take(limit) {
            keys.push(entry.map_err(text)?.0.value().to_owned());
        }
        Ok(keys)
    }
}

fn text(error: impl std::fmt::Display) -> String {
    error.to_string()
}

/// The component's handle on the store.
pub struct Bucket {
    store: Arc<dyn KeyValueStore>,
}

impl wit::Host for HostState {
    fn open(
        &mut self,
        identifier: String,
    ) -> wasmtime::Result<Result<Resource<Bucket>, wit::Error>> {
        if identifier != STORE_NAME {
            return Ok(Err(wit::Error::NoSuchStore));
        }
        let bucket = Bucket {
            store: self.key_value.clone(),
        };
        Ok(Ok(self.table.push(bucket)?))
    }
}

impl wit::HostBucket for HostState {
    fn get(
        &mut self,
        bucket: Resource<Bucket>,
        key: String,
    ) -> wasmtime::Result<Result<Option<Vec<u8>>, wit::Error>> {
        Ok(self
            .table
            .get(&bucket)?
            .store
            .get(&key)
            .map_err(wit::Error::Other))
    }

    fn set(
        &mut self,
        bucket: Resource<Bucket>,
        key: String,
        value: Vec<u8>,
    ) -> wasmtime::Result<Result<(), wit::Error>> {
        Ok(self
            .table
            .get(&bucket)?
            .store
            .set(&key, &value)
            .map_err(wit::Error::Other))
    }

    fn delete(
        &mut self,
        bucket: Resource<Bucket>,
        key: String,
    ) -> wasmtime::Result<Result<(), wit::Error>> {
        Ok(self
            .table
            .get(&bucket)?
            .store
            .delete(&key)
            .map_err(wit::Error::Other))
    }

    fn exists(
        &mut self,
        bucket: Resource<Bucket>,
        key: String,
    ) -> wasmtime::Result<Result<bool, wit::Error>> {
        Ok(self
            .table
            .get(&bucket)?
            .store
            .get(&key)
            .map(|value| value.is_some())
            .map_err(wit::Error::Other))
    }

    fn list_keys(
        &mut self,
        bucket: Resource<Bucket>,
        cursor: Option<String>,
    ) -> wasmtime::Result<Result<KeyResponse, wit::Error>> {
        let store = &self.table.get(&bucket)?.store;
        Ok(store
            .keys_after(cursor.as_deref(), PAGE_SIZE)
            .map(|keys| {
                let cursor = (keys.len() == PAGE_SIZE).then(|| keys[PAGE_SIZE - 1].clone());
                KeyResponse { keys, cursor }
            })
            .map_err(wit::Error::Other))
    }

    fn drop(&mut self, bucket: Resource<Bucket>) -> wasmtime::Result<()> {
        self.table.delete(bucket)?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bindings::wasi::keyvalue::store::{Error, Host, HostBucket};
    use crate::config::Settings;

    #[test]
    fn the_component_sees_one_store_named_default_with_paged_keys() {
        let backend: Arc<dyn KeyValueStore> = Arc::new(MemoryStore::default());
        let mut state = HostState::new(Arc::new(Settings::new()), backend.clone(), Arc::default());
        assert!(matches!(
            Host::open(&mut state, "other".into()).unwrap(),
            Err(Error::NoSuchStore)
        ));
        let bucket = Host::open(&mut state, "default".into()).unwrap().unwrap();
        let handle = || wasmtime::component::Resource::<Bucket>::new_borrow(bucket.rep());
        for index in 0..1500 {
            HostBucket::set(&mut state, handle(), format!("key-{index:04}"), vec![1])
                .unwrap()
                .unwrap();
        }
        assert_eq!(
            HostBucket::get(&mut state, handle(), "key-0001".into())
                .unwrap()
                .unwrap(),
            Some(vec![1])
        );
        assert!(
            HostBucket::exists(&mut state, handle(), "key-1499".into())
                .unwrap()
                .unwrap()
        );
        assert!(
            !HostBucket::exists(&mut state, handle(), "key-1500".into())
                .unwrap()
                .unwrap()
        );
        let first = HostBucket::list_keys(&mut state, handle(), None)
            .unwrap()
            .unwrap();
        assert_eq!(first.keys.len(), 1000);
        let second = HostBucket::list_keys(&mut state, handle(), first.cursor.clone())
            .unwrap()
            .unwrap();
        assert_eq!((second.keys.len(), second.cursor), (500, None));
        assert_eq!(second.keys[0], "key-1000");
        HostBucket::delete(&mut state, handle(), "key-0000".into())
            .unwrap()
            .unwrap();
        assert_eq!(backend.get("key-0000").unwrap(), None);
        HostBucket::drop(&mut state, bucket).unwrap();
    }
}
