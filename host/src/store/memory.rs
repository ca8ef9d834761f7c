//! Entries in memory.

use std::collections::BTreeMap;
use std::sync::RwLock;

use super::backend::KeyValueStore;

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

    fn compare_and_swap(
        &self,
        key: &str,
        expected: Option<&[u8]>,
        value: &[u8],
    ) -> Result<bool, String> {
        let mut entries = self.entries.write().map_err(poisoned)?;
        if entries.get(key).map(Vec::as_slice) != expected {
            return Ok(false);
        }
        entries.insert(key.to_owned(), value.to_vec());
        Ok(true)
    }

    fn waits(&self) -> bool {
        false
    }
}

fn poisoned<T>(_: T) -> String {
    "the in-memory store is unusable after a panic".to_owned()
}
