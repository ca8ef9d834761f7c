//! Entries in a SQLite file, in the table Spin's own key-value store uses
//! (`spin_key_value (store, key, value)`, the store named `default`), so a Spin user knows the
//! file. Many processes read and write it at once: WAL journaling, and a busy timeout instead of
//! an error when another process holds the write lock. A commit survives the process being
//! killed (`kill -9`) the moment after. Calls made at once use connections of their own from a
//! small pool (WAL lets them read while one writes).

use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

use rusqlite::{Connection, OptionalExtension, params};

use super::backend::KeyValueStore;

/// The store label of every entry: the one store the host offers.
const STORE: &str = "default";
/// How long a write waits for another process's write to finish.
const BUSY_TIMEOUT: Duration = Duration::from_secs(10);
/// Idle connections kept for the next calls (more are opened while more calls run at once).
const IDLE_CONNECTIONS: usize = 8;

/// A SQLite file, opened on first use (a run that never touches the store never creates it).
pub struct SqliteStore {
    path: PathBuf,
    idle: Mutex<Vec<Connection>>,
}

impl SqliteStore {
    /// The store at `path`; the file (and its folder) is created on first use.
    ///
    /// ```
    /// use structure_host::{KeyValueStore, SqliteStore};
    ///
    /// let dir = tempfile::tempdir().unwrap();
    /// let store = SqliteStore::new(dir.path().join("store.db"));
    /// store.set("a", b"1").unwrap();
    /// assert_eq!(store.get("a").unwrap(), Some(b"1".to_vec()));
    /// ```
    pub fn new(path: impl Into<PathBuf>) -> Self {
        Self {
            path: path.into(),
            idle: Mutex::new(Vec::new()),
        }
    }

    fn with<T>(&self, run: impl FnOnce(&Connection) -> rusqlite::Result<T>) -> Result<T, String> {
        let idle = self.idle_connections().pop();
        let connection = match idle {
            Some(connection) => connection,
            None => open(&self.path)?,
        };
        let answer = run(&connection);
        let mut idle = self.idle_connections();
        if idle.len() < IDLE_CONNECTIONS {
            idle.push(connection);
        }
        answer.map_err(|error| format!("the SQLite store {} failed: {error}", self.path.display()))
    }

    fn idle_connections(&self) -> MutexGuard<'_, Vec<Connection>> {
        self.idle
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

fn open(path: &Path) -> Result<Connection, String> {
    let failed = |error: &dyn std::fmt::Display| {
        format!(
            "cannot open the key-value store {}: {error}",
            path.display()
        )
    };
    if let Some(folder) = path
        .parent()
        .filter(|folder| !folder.as_os_str().is_empty())
    {
        std::fs::create_dir_all(folder).map_err(|error| failed(&error))?;
    }
    let connection = Connection::open(path).map_err(|error| failed(&error))?;
    connection
        .busy_timeout(BUSY_TIMEOUT)
        .map_err(|error| failed(&error))?;
    let setup = while_busy(|| set_up(&connection));
    match setup {
        Ok(_) => Ok(connection),
        Err(rusqlite::Error::SqliteFailure(code, _))
            if code.code == rusqlite::ErrorCode::NotADatabase =>
        {
            Err(failed(
                &"it is not a SQLite database (a store an older version wrote with redb cannot be \
                  read: give a new path, and register the schemas and settings again)",
            ))
        }
        Err(error) => Err(failed(&error)),
    }
}

/// WAL journaling (kept in the file, so only the first process switches it) and the table.
fn set_up(connection: &Connection) -> rusqlite::Result<()> {
    let journal: String = connection.pragma_query_value(None, "journal_mode", |row| row.get(0))?;
    if !journal.eq_ignore_ascii_case("wal") {
        connection.pragma_update(None, "journal_mode", "WAL")?;
    }
    connection.execute(
        "CREATE TABLE IF NOT EXISTS spin_key_value (
            store TEXT NOT NULL,
            key   TEXT NOT NULL,
            value BLOB NOT NULL,
            PRIMARY KEY (store, key)
        )",
        [],
    )?;
    Ok(())
}

/// Runs `step` again while another process holds a lock SQLite does not wait for itself:
/// switching to WAL and a first schema change answer `database is locked` at once, whatever
/// the busy timeout, when processes open a new file together.
fn while_busy<T>(mut step: impl FnMut() -> rusqlite::Result<T>) -> rusqlite::Result<T> {
    let deadline = Instant::now() + BUSY_TIMEOUT;
    let mut pause = Duration::from_millis(5);
    loop {
        match step() {
            Err(rusqlite::Error::SqliteFailure(code, _))
                if matches!(
                    code.code,
                    rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked
                ) && Instant::now() < deadline =>
            {
                std::thread::sleep(pause);
                pause = (pause * 2).min(Duration::from_millis(100));
            }
            answer => return answer,
        }
    }
}

impl KeyValueStore for SqliteStore {
    fn get(&self, key: &str) -> Result<Option<Vec<u8>>, String> {
        self.with(|connection| {
            connection
                .query_row(
                    "SELECT value FROM spin_key_value WHERE store = ?1 AND key = ?2",
                    params![STORE, key],
                    |row| row.get(0),
                )
                .optional()
        })
    }

    fn set(&self, key: &str, value: &[u8]) -> Result<(), String> {
        self.with(|connection| {
            connection.execute(
                "INSERT INTO spin_key_value (store, key, value) VALUES (?1, ?2, ?3)
                 ON CONFLICT (store, key) DO UPDATE SET value = excluded.value",
                params![STORE, key, value],
            )
        })
        .map(drop)
    }

    fn delete(&self, key: &str) -> Result<(), String> {
        self.with(|connection| {
            connection.execute(
                "DELETE FROM spin_key_value WHERE store = ?1 AND key = ?2",
                params![STORE, key],
            )
        })
        .map(drop)
    }

    /// In a write transaction: no other writer comes between the read and the write.
    fn compare_and_swap(
        &self,
        key: &str,
        expected: Option<&[u8]>,
        value: &[u8],
    ) -> Result<bool, String> {
        self.with(|connection| {
            let transaction = rusqlite::Transaction::new_unchecked(
                connection,
                rusqlite::TransactionBehavior::Immediate,
            )?;
            let current: Option<Vec<u8>> = transaction
                .query_row(
                    "SELECT value FROM spin_key_value WHERE store = ?1 AND key = ?2",
                    params![STORE, key],
                    |row| row.get(0),
                )
                .optional()?;
            if current.as_deref() != expected {
                return Ok(false);
            }
            transaction.execute(
                "INSERT INTO spin_key_value (store, key, value) VALUES (?1, ?2, ?3)
                 ON CONFLICT (store, key) DO UPDATE SET value = excluded.value",
                params![STORE, key, value],
            )?;
            transaction.commit()?;
            Ok(true)
        })
    }

    fn keys_after(&self, after: Option<&str>, limit: usize) -> Result<Vec<String>, String> {
        self.with(|connection| {
            let mut statement = connection.prepare(
                "SELECT key FROM spin_key_value WHERE store = ?1 AND key > ?2 ORDER BY key LIMIT ?3",
            )?;
            let limit = i64::try_from(limit).unwrap_or(i64::MAX);
            let keys = statement.query_map(params![STORE, after.unwrap_or(""), limit], |row| {
                row.get(0)
            })?;
            keys.collect()
        })
    }
}
