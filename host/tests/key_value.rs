//! The host's key-value backends (the interface as the component sees it is tested in
//! `src/key_value.rs`).

mod support;

use structure_host::{KeyValueStore, MemoryStore, SqliteStore};

fn exercise(store: &dyn KeyValueStore) {
    assert_eq!(store.get("a").unwrap(), None);
    store.set("a", b"1").unwrap();
    store.set("b", b"").unwrap();
    store.set("c/d", "ü".as_bytes()).unwrap();
    store.set("a", b"2").unwrap();
    assert_eq!(store.get("a").unwrap(), Some(b"2".to_vec()));
    assert_eq!(store.get("b").unwrap(), Some(Vec::new()));
    assert_eq!(store.keys_after(None, 10).unwrap(), ["a", "b", "c/d"]);
    assert_eq!(store.keys_after(Some("a"), 1).unwrap(), ["b"]);
    store.delete("b").unwrap();
    store.delete("never-set").unwrap();
    assert_eq!(store.keys_after(None, 10).unwrap(), ["a", "c/d"]);
    // Compare-and-swap: written only over the value expected (none, or the one seen).
    assert!(store.compare_and_swap("n", None, b"1").unwrap());
    assert!(!store.compare_and_swap("n", None, b"9").unwrap());
    assert!(!store.compare_and_swap("n", Some(b"0"), b"9").unwrap());
    assert!(store.compare_and_swap("n", Some(b"1"), b"").unwrap());
    assert!(
        store.compare_and_swap("n", Some(b""), b"2").unwrap(),
        "an empty value is a value"
    );
    assert_eq!(store.get("n").unwrap(), Some(b"2".to_vec()));
    store.delete("n").unwrap();
}

/// Eight writers, each with a store of its own from `open`, each adding 1 to one counter 100
/// times by compare-and-swap (reading again when another came first): the count at the end.
fn count_at_once(open: impl Fn() -> Box<dyn KeyValueStore> + Sync) -> u64 {
    std::thread::scope(|scope| {
        for _ in 0..8 {
            scope.spawn(|| {
                let store = open();
                for _ in 0..100 {
                    loop {
                        let seen = store.get("counter").unwrap();
                        let count: u64 = seen.as_deref().map_or(0, |bytes| {
                            std::str::from_utf8(bytes).unwrap().parse().unwrap()
                        });
                        if store
                            .compare_and_swap(
                                "counter",
                                seen.as_deref(),
                                (count + 1).to_string().as_bytes(),
                            )
                            .unwrap()
                        {
                            break;
                        }
                    }
                }
            });
        }
    });
    let count = open().get("counter").unwrap().unwrap();
    std::str::from_utf8(&count).unwrap().parse().unwrap()
}

#[test]
fn compare_and_swap_loses_no_update_among_writers_at_once() {
    let memory = std::sync::Arc::new(MemoryStore::default());
    assert_eq!(count_at_once(|| Box::new(Shared(memory.clone()))), 800);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("store.db");
    assert_eq!(
        count_at_once(|| Box::new(SqliteStore::new(&path))),
        800,
        "SQLite, one store a writer"
    );
    let redis = support::Redis::start();
    let url = redis.url();
    assert_eq!(
        count_at_once(|| Box::new(structure_host::RedisStore::new(&url).unwrap())),
        800,
        "Redis"
    );
}

/// One memory store shared by the writers.
struct Shared(std::sync::Arc<MemoryStore>);

impl KeyValueStore for Shared {
    fn get(&self, key: &str) -> Result<Option<Vec<u8>>, String> {
        self.0.get(key)
    }
    fn set(&self, key: &str, value: &[u8]) -> Result<(), String> {
        self.0.set(key, value)
    }
    fn delete(&self, key: &str) -> Result<(), String> {
        self.0.delete(key)
    }
    fn keys_after(&self, after: Option<&str>, limit: usize) -> Result<Vec<String>, String> {
        self.0.keys_after(after, limit)
    }
    fn compare_and_swap(
        &self,
        key: &str,
        expected: Option<&[u8]>,
        value: &[u8],
    ) -> Result<bool, String> {
        self.0.compare_and_swap(key, expected, value)
    }
}

#[test]
fn the_memory_store_behaves_like_a_map() {
    exercise(&MemoryStore::default());
}

#[test]
fn the_sqlite_store_keeps_entries_across_reopening() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("nested/store.db");
    let store = SqliteStore::new(&path);
    assert!(!path.exists(), "nothing is created before first use");
    exercise(&store);
    drop(store);
    let reopened = SqliteStore::new(&path);
    assert_eq!(reopened.get("a").unwrap(), Some(b"2".to_vec()));
    assert_eq!(reopened.keys_after(None, 10).unwrap(), ["a", "c/d"]);
}

#[test]
fn an_unusable_sqlite_path_is_an_error_not_a_panic() {
    let dir = tempfile::tempdir().unwrap();
    let blocker = dir.path().join("file");
    std::fs::write(&blocker, b"x").unwrap();
    let store = SqliteStore::new(blocker.join("store.db"));
    let error = store.get("a").unwrap_err();
    assert!(error.contains("cannot open the key-value store"), "{error}");
}

#[test]
fn stores_opening_one_new_file_at_once_all_get_in() {
    // As eight processes starting together on a fresh machine: each opens the file, switches
    // it to WAL and creates the table, racing the others; none may answer "database is locked".
    for round in 0..20 {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("store.db");
        let start = std::sync::Barrier::new(8);
        std::thread::scope(|scope| {
            for writer in 0..8 {
                let (path, start) = (&path, &start);
                scope.spawn(move || {
                    let store = SqliteStore::new(path);
                    start.wait();
                    store
                        .set(&format!("k{writer}"), b"v")
                        .unwrap_or_else(|error| panic!("round {round}, writer {writer}: {error}"));
                });
            }
        });
        assert_eq!(
            SqliteStore::new(&path).keys_after(None, 10).unwrap().len(),
            8
        );
    }
}

/// The child half of the crash test: writes entries until killed, saying each one it committed.
/// It runs only when the parent starts it (see below), never by itself.
#[test]
#[ignore = "the child half of the_sqlite_store_survives_kill_9_during_writes, which runs it"]
fn crash_test_writer() {
    let path = std::env::var("STRUCTURE_CRASH_TEST_DB")
        .expect("started by the_sqlite_store_survives_kill_9_during_writes with the database path");
    let store = SqliteStore::new(path);
    let value = vec![b'v'; 4096];
    let mut n = 0u64;
    loop {
        store.set(&format!("key-{n:08}"), &value).unwrap();
        // Only after `set` returned is the entry committed.
        println!("committed {n}");
        n += 1;
    }
}

#[test]
fn the_sqlite_store_survives_kill_9_during_writes() {
    use std::io::{BufRead, BufReader};
    use std::process::{Command, Stdio};

    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("crash.db");
    for round in 0..3 {
        let mut child = Command::new(std::env::current_exe().unwrap())
            .args([
                "crash_test_writer",
                "--exact",
                "--ignored",
                "--nocapture",
                "--test-threads=1",
            ])
            .env("STRUCTURE_CRASH_TEST_DB", &path)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let mut last = None;
        let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
        // Let it write for a while, then kill it in the middle of whatever it is doing.
        while let Some(Ok(line)) = lines.next() {
            if let Some(n) = line.strip_prefix("committed ") {
                last = Some(n.parse::<u64>().unwrap());
                if last >= Some(200 * (round + 1)) {
                    break;
                }
            }
        }
        child.kill().unwrap(); // SIGKILL
        child.wait().unwrap();
        let last = last.expect("the writer committed something");

        let store = SqliteStore::new(&path);
        for n in 0..=last {
            let value = store
                .get(&format!("key-{n:08}"))
                .unwrap_or_else(|error| panic!("round {round}: reading entry {n}: {error}"))
                .unwrap_or_else(|| panic!("round {round}: committed entry {n} is lost"));
            assert_eq!(value.len(), 4096, "round {round}: entry {n} is intact");
        }
        drop(store);
    }
}

#[test]
fn the_sqlite_file_has_spins_table_layout() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("sqlite_key_value.db");
    let store = SqliteStore::new(&path);
    store.set("t/acme/settings", b"{\"maxLoops\":4}").unwrap();
    drop(store);
    // What a Spin app's own store holds: one row per key, under the store label `default`.
    let connection = rusqlite::Connection::open(&path).unwrap();
    let columns: Vec<String> = connection
        .prepare("SELECT name FROM pragma_table_info('spin_key_value') ORDER BY cid")
        .unwrap()
        .query_map([], |row| row.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(columns, ["store", "key", "value"]);
    let (store, value): (String, Vec<u8>) = connection
        .query_row(
            "SELECT store, value FROM spin_key_value WHERE key = 't/acme/settings'",
            [],
            |row| Ok((row.get(0)?, row.get(1)?)),
        )
        .unwrap();
    assert_eq!(
        (store.as_str(), value.as_slice()),
        ("default", &b"{\"maxLoops\":4}"[..])
    );
    let journal: String = connection
        .query_row("PRAGMA journal_mode", [], |row| row.get(0))
        .unwrap();
    assert_eq!(journal, "wal", "many processes share the file");
}

#[test]
fn a_file_that_is_not_sqlite_is_refused_with_what_to_do() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("store.redb");
    std::fs::write(&path, b"redb\x1a\x0a\xa9\x0d\x0a".repeat(512)).unwrap();
    let error = SqliteStore::new(&path).get("a").unwrap_err();
    assert!(error.contains("not a SQLite database"), "{error}");
    assert_eq!(
        std::fs::read(&path).unwrap().len(),
        9 * 512,
        "the file is left as it was"
    );
}

#[test]
fn the_redis_store_behaves_like_a_map_and_comes_back_after_an_outage() {
    let mut redis = support::Redis::start();
    let store = structure_host::RedisStore::new(&redis.url()).unwrap();
    exercise(&store);
    redis.stop();
    let error = store.get("a").unwrap_err();
    assert!(error.contains("Redis"), "{error}");
    redis.restart();
    assert_eq!(
        store.get("a").unwrap(),
        Some(b"2".to_vec()),
        "reconnected, nothing lost"
    );
}

#[test]
fn listing_10000_redis_keys_reads_the_database_about_once() {
    let redis = support::Redis::start();
    let store = structure_host::RedisStore::new(&redis.url()).unwrap();
    let client = redis::Client::open(redis.url()).unwrap();
    let mut connection = client.get_connection().unwrap();
    let mut pipe = redis::pipe();
    for n in 0..10_000 {
        pipe.set(format!("t/acme/schemas/s{n:05}"), "{}").ignore();
    }
    pipe.query::<()>(&mut connection).unwrap();
    let scans = |connection: &mut redis::Connection| -> u64 {
        let info: String = redis::cmd("INFO")
            .arg("commandstats")
            .query(connection)
            .unwrap();
        info.lines()
            .find_map(|line| line.strip_prefix("cmdstat_scan:calls="))
            .map_or(0, |rest| rest.split(',').next().unwrap().parse().unwrap())
    };
    let before = scans(&mut connection);
    // Paged as the component pages: 1,000 keys a page, the cursor handed back each time.
    let mut keys = std::collections::BTreeSet::new();
    let (mut cursor, mut pages) = (None, 0);
    loop {
        let (page, next) = store.keys_page(cursor.as_deref(), 1000).unwrap();
        keys.extend(page);
        pages += 1;
        match next {
            Some(next) => cursor = Some(next),
            None => break,
        }
    }
    let calls = scans(&mut connection) - before;
    assert_eq!(keys.len(), 10_000);
    assert!(
        calls <= 15,
        "{calls} SCAN calls for {pages} pages: more than one pass"
    );
    assert!(
        store
            .keys_page(Some("not-a-cursor"), 10)
            .unwrap_err()
            .contains("not a cursor")
    );
}

#[test]
fn redis_calls_made_at_once_each_have_a_connection_and_sixteen_are_kept() {
    let redis = support::Redis::start();
    let store = structure_host::RedisStore::new(&redis.url()).unwrap();
    let client = redis::Client::open(redis.url()).unwrap();
    let mut connection = client.get_connection().unwrap();
    let connected = |connection: &mut redis::Connection| -> usize {
        let info: String = redis::cmd("INFO").arg("clients").query(connection).unwrap();
        info.lines()
            .find_map(|line| line.strip_prefix("connected_clients:"))
            .unwrap()
            .trim()
            .parse()
            .unwrap()
    };
    // Every command waits for half a second, so twenty calls overlap.
    redis::cmd("CLIENT")
        .arg("PAUSE")
        .arg(500)
        .query::<()>(&mut connection)
        .unwrap();
    std::thread::scope(|scope| {
        for _ in 0..20 {
            scope.spawn(|| assert_eq!(store.get("a").unwrap(), None));
        }
    });
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(3);
    let mut now = connected(&mut connection);
    while now != 17 && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(20));
        now = connected(&mut connection);
    }
    assert_eq!(now, 17, "sixteen idle connections and this test's own");
}
