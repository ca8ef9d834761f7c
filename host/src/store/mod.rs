//! The key-value backends behind the component's `wasi:keyvalue` store, chosen by a spec:
//!
//! | spec | backend |
//! |---|---|
//! | `memory` | [`MemoryStore`]: in this process, gone when it ends |
//! | a file path | [`SqliteStore`]: a SQLite file many processes share (WAL), Spin's layout |
//! | `redis://host:port/N` | [`RedisStore`]: a Redis database many instances share, Spin's layout |
//!
//! ```
//! use structure_host::{KeyValueStore, open_store};
//!
//! let dir = tempfile::tempdir().unwrap();
//! let store = open_store(dir.path().join("store.db").to_str().unwrap()).unwrap();
//! store.set("t/acme/settings", b"{}").unwrap();
//! assert_eq!(store.get("t/acme/settings").unwrap(), Some(b"{}".to_vec()));
//! ```

mod backend;
mod memory;
mod redis;
mod sqlite;

use std::path::PathBuf;
use std::sync::Arc;

pub use backend::{Bucket, Cas, KeyValueStore};
pub use memory::MemoryStore;
pub use redis::RedisStore;
pub use sqlite::SqliteStore;

/// The forms a store is named in, for the message that refuses another.
const STORE_FORMS: &str = "a SQLite file path (e.g. ./structure.db), redis://host:port/N, \
                           rediss://host:port/N or memory";

/// The store `spec` names: `memory`, `redis://…` (or `rediss://…`), else a SQLite file path.
/// What looks like a slip of one of the words (`memroy`, `Redis`) or another scheme
/// (`sqlite://…`, `redis:host`) is refused rather than made a file of that name.
pub fn open_store(spec: &str) -> Result<Arc<dyn KeyValueStore>, String> {
    if spec == "memory" {
        return Ok(Arc::new(MemoryStore::default()));
    }
    if spec.starts_with("redis://") || spec.starts_with("rediss://") {
        return Ok(Arc::new(RedisStore::new(spec)?));
    }
    if let Some(problem) = not_a_path(spec) {
        return Err(format!("--store {spec:?} {problem}; give {STORE_FORMS}"));
    }
    Ok(Arc::new(SqliteStore::new(spec)))
}

/// Why `spec`, which names neither memory nor Redis, is not taken as a file path.
fn not_a_path(spec: &str) -> Option<String> {
    if spec.trim().is_empty() {
        return Some("is empty".to_owned());
    }
    let scheme = spec
        .split_once(':')
        .map(|(scheme, _)| scheme)
        .filter(|scheme| {
            scheme.len() > 1
                && scheme
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || "+.-".contains(c))
        });
    if let Some(scheme) = scheme {
        return Some(format!(
            "names a {scheme}: store, which this command does not have"
        ));
    }
    let word = spec.to_ascii_lowercase();
    let bare = !spec.contains(['/', '.', '\\']);
    ["memory", "redis", "rediss"]
        .into_iter()
        .find(|known| {
            *known == word || (bare && strsim::osa_distance(known, &word) <= known.len() / 3)
        })
        .map(|known| format!("looks like a slip of {known:?}"))
}

/// The command's default store: `$XDG_DATA_HOME/structure/sqlite_key_value.db`, else
/// `~/.local/share/structure/sqlite_key_value.db` (the file name Spin gives its own).
pub fn default_store_path() -> Option<PathBuf> {
    data_dir().map(|dir| dir.join("sqlite_key_value.db"))
}

/// Where the command keeps its data.
fn data_dir() -> Option<PathBuf> {
    let base = std::env::var_os("XDG_DATA_HOME")
        .map(PathBuf::from)
        .or_else(|| {
            std::env::var_os("HOME").map(|home| PathBuf::from(home).join(".local/share"))
        })?;
    Some(base.join("structure"))
}

/// Refuses to start on a fresh default store while the redb store of an older version sits
/// beside it: its registry and settings would silently be gone.
pub fn check_no_old_store() -> Result<(), String> {
    let (Some(old), Some(new)) = (
        data_dir().map(|dir| dir.join("store.redb")),
        default_store_path(),
    ) else {
        return Ok(());
    };
    if old.exists() && !new.exists() {
        return Err(format!(
            "{} is the store of an older version (redb), which this version no longer reads; the \
             store is now SQLite ({}). Re-register your schemas and settings into the new store \
             (structure schemas register, structure settings set), then delete the old file; or \
             keep using it with --store {} on the older version",
            old.display(),
            new.display(),
            old.display()
        ));
    }
    Ok(())
}
