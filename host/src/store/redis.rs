//! Entries in a Redis database, laid out as Spin's Redis key-value store lays them out: each key
//! a plain Redis key holding its value as a string, no prefix, so one database is one store. A
//! Spin app whose `runtime-config.toml` backs its `default` store with the same database, and
//! any number of `structure serve` instances, share one registry, settings and builder cache.
//!
//! Calls made at once use connections of their own from a small pool, so one slow call does not
//! hold up the others. A call while Redis is unreachable fails with the reason (the component
//! reports it as a `storage` error); the next call connects again.

use std::sync::Mutex;
use std::time::Duration;

use redis::{Client, Connection, RedisResult};

use super::backend::KeyValueStore;

/// How long connecting, and each command, may take before the call fails.
const TIMEOUT: Duration = Duration::from_secs(2);
/// Keys asked for per `SCAN` step.
const SCAN_COUNT: usize = 1000;
/// Idle connections kept for the next calls (more are opened while more calls run at once).
const IDLE_CONNECTIONS: usize = 16;

/// A Redis database, connected on first use, with a connection for each call running at once.
pub struct RedisStore {
    client: Client,
    /// `host:port/db`, for messages (without a password).
    shown: String,
    idle: Mutex<Vec<Connection>>,
}

impl RedisStore {
    /// The database at `url` (`redis://host:port/N`, `rediss://…` for TLS); nothing is connected
    /// yet.
    ///
    /// ```
    /// use structure_host::RedisStore;
    ///
    /// let store = RedisStore::new("redis://127.0.0.1:6379/0").unwrap();
    /// assert!(RedisStore::new("redis://[bad").is_err());
    /// ```
    pub fn new(url: &str) -> Result<Self, String> {
        let client = Client::open(url)
            .map_err(|error| format!("the Redis store URL {url:?} is not usable: {error}"))?;
        let info = client.get_connection_info();
        let shown = format!("{}/{}", info.addr(), info.redis_settings().db());
        Ok(Self {
            client,
            shown,
            idle: Mutex::new(Vec::new()),
        })
    }

    fn with<T>(&self, run: impl FnOnce(&mut Connection) -> RedisResult<T>) -> Result<T, String> {
        let idle = self.idle_connections().pop();
        let mut connection = match idle {
            Some(connection) => connection,
            None => self.connect()?,
        };
        let answer = run(&mut connection);
        let mut idle = self.idle_connections();
        match &answer {
            // The connection, and likely the idle ones (a restarted server), are broken: later
            // calls connect again.
            Err(error) if error.is_io_error() || error.is_connection_dropped() => idle.clear(),
            _ if idle.len() < IDLE_CONNECTIONS => idle.push(connection),
            _ => {}
        }
        answer.map_err(|error| format!("Redis at {} failed: {error}", self.shown))
    }

    fn idle_connections(&self) -> std::sync::MutexGuard<'_, Vec<Connection>> {
        self.idle
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    fn connect(&self) -> Result<Connection, String> {
        self.client
            .get_connection_with_timeout(TIMEOUT)
            .and_then(|connection| {
                connection.set_read_timeout(Some(TIMEOUT))?;
                connection.set_write_timeout(Some(TIMEOUT))?;
                Ok(connection)
            })
            .map_err(|error| format!("cannot reach Redis at {}: {error}", self.shown))
    }
}

/// Compare-and-swap in one step on the server: `ARGV[1]` says whether a value is expected
/// (`1`) or none (`0`), `ARGV[2]` the expected value, `ARGV[3]` the new one.
const COMPARE_AND_SWAP: &str = r"
local current = redis.call('GET', KEYS[1])
local matches = (ARGV[1] == '0' and current == false) or (ARGV[1] == '1' and current == ARGV[2])
if matches then
  redis.call('SET', KEYS[1], ARGV[3])
  return 1
end
return 0
";

impl KeyValueStore for RedisStore {
    fn get(&self, key: &str) -> Result<Option<Vec<u8>>, String> {
        self.with(|connection| redis::cmd("GET").arg(key).query(connection))
    }

    fn set(&self, key: &str, value: &[u8]) -> Result<(), String> {
        self.with(|connection| redis::cmd("SET").arg(key).arg(value).query(connection))
    }

    fn delete(&self, key: &str) -> Result<(), String> {
        self.with(|connection| redis::cmd("DEL").arg(key).query::<i64>(connection))
            .map(drop)
    }

    fn compare_and_swap(
        &self,
        key: &str,
        expected: Option<&[u8]>,
        value: &[u8],
    ) -> Result<bool, String> {
        let swapped: i64 = self.with(|connection| {
            redis::cmd("EVAL")
                .arg(COMPARE_AND_SWAP)
                .arg(1)
                .arg(key)
                .arg(if expected.is_some() { "1" } else { "0" })
                .arg(expected.unwrap_or_default())
                .arg(value)
                .query(connection)
        })?;
        Ok(swapped == 1)
    }

    /// In order, so every key of the database is read: for tests and tools. The component
    /// pages with [`keys_page`](Self::keys_page).
    fn keys_after(&self, after: Option<&str>, limit: usize) -> Result<Vec<String>, String> {
        let mut keys = Vec::new();
        let mut cursor = None;
        loop {
            let (page, next) = self.keys_page(cursor.as_deref(), SCAN_COUNT)?;
            keys.extend(page);
            match next {
                Some(next) => cursor = Some(next),
                None => break,
            }
        }
        keys.retain(|key| after.is_none_or(|after| key.as_str() > after));
        keys.sort_unstable();
        keys.dedup();
        keys.truncate(limit);
        Ok(keys)
    }

    /// Redis's own cursor: each page is `SCAN` steps from where the last left off until it holds
    /// `limit` keys, so listing a database reads each key about once (not once a page).
    fn keys_page(
        &self,
        cursor: Option<&str>,
        limit: usize,
    ) -> Result<(Vec<String>, Option<String>), String> {
        let mut cursor: u64 = match cursor {
            None => 0,
            Some(text) => text
                .parse()
                .map_err(|_| format!("{text:?} is not a cursor this Redis store gave"))?,
        };
        self.with(|connection| {
            let mut keys = Vec::new();
            loop {
                let (next, page): (u64, Vec<String>) = redis::cmd("SCAN")
                    .arg(cursor)
                    .arg("COUNT")
                    .arg(limit)
                    .query(connection)?;
                keys.extend(page);
                cursor = next;
                if cursor == 0 {
                    return Ok((keys, None));
                }
                if keys.len() >= limit {
                    return Ok((keys, Some(cursor.to_string())));
                }
            }
        })
    }
}
