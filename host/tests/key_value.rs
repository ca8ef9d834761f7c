//! The host's key-value backends (the interface as the component sees it is tested in
//! `src/key_value.rs`).

use structure_host::{KeyValueStore, MemoryStore, RedbStore};

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
}

#[test]
fn the_memory_store_behaves_like_a_map() {
    exercise(&MemoryStore::default());
}

#[test]
fn the_redb_store_keeps_entries_across_reopening() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("nested/store.redb");
    let store = RedbStore::new(&path);
    assert!(!path.exists(), "nothing is created before first use");
    exercise(&store);
    drop(store);
    let reopened = RedbStore::new(&path);
    assert_eq!(reopened.get("a").unwrap(), Some(b"2".to_vec()));
    assert_eq!(reopened.keys_after(None, 10).unwrap(), ["a", "c/d"]);
}

#[test]
fn an_unusable_redb_path_is_an_error_not_a_panic() {
    let dir = tempfile::tempdir().unwrap();
    let blocker = dir.path().join("file");
    std::fs::write(&blocker, b"x").unwrap();
    let store = RedbStore::new(blocker.join("store.redb"));
    let error = store.get("a").unwrap_err();
    assert!(error.contains("cannot open the key-value store"), "{error}");
}

/// The child half of the crash test: writes entries until killed, saying each one it committed.
/// It runs only when the parent starts it (see below).
#[test]
fn crash_test_writer() {
    let Ok(path) = std::env::var("STRUCTURE_CRASH_TEST_DB") else {
        return;
    };
    let store = RedbStore::new(path);
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
fn the_redb_store_survives_kill_9_during_writes() {
    use std::io::{BufRead, BufReader};
    use std::process::{Command, Stdio};

    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("crash.redb");
    for round in 0..3 {
        let mut child = Command::new(std::env::current_exe().unwrap())
            .args([
                "crash_test_writer",
                "--exact",
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

        let store = RedbStore::new(&path);
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
