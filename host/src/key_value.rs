//! `wasi:keyvalue/store@0.2.0-draft2` and its `atomics` for the component, over a
//! [`KeyValueStore`] backend (see [`crate::store`]). Like Spin, the host offers one store, named
//! `default`. A compare-and-swap remembers the value it saw; the swap succeeds only if the
//! backend still holds it (each backend checks and writes in one step).

use std::sync::Arc;

use wasmtime::component::Resource;

use wasmtime::component::{HasData, ResourceTable};

use crate::bindings::atomics::wasi::keyvalue::atomics::{self, CasError};
use crate::bindings::wasi::keyvalue::store::{self as wit, KeyResponse};
use crate::store::{Bucket, Cas, KeyValueStore};

/// The name of the one store the host offers.
const STORE_NAME: &str = "default";
/// Keys per `list-keys` page.
const PAGE_SIZE: usize = 1000;

/// What the interface acts on: the backend, and the table the component's handles live in (as
/// wasmtime's `wasi-keyvalue` does with `WasiKeyValue<'a>`).
pub(crate) struct KeyValueView<'a> {
    pub(crate) store: &'a Arc<dyn KeyValueStore>,
    pub(crate) table: &'a mut ResourceTable,
}

/// The interface's [`HasData`]: its host functions see a [`KeyValueView`].
pub(crate) struct WasiKeyValue;

impl HasData for WasiKeyValue {
    type Data<'a> = KeyValueView<'a>;
}

impl wit::Host for KeyValueView<'_> {
    async fn open(
        &mut self,
        identifier: String,
    ) -> wasmtime::Result<Result<Resource<Bucket>, wit::Error>> {
        if identifier != STORE_NAME {
            return Ok(Err(wit::Error::NoSuchStore));
        }
        let bucket = Bucket {
            store: self.store.clone(),
        };
        Ok(Ok(self.table.push(bucket)?))
    }
}

impl wit::HostBucket for KeyValueView<'_> {
    async fn get(
        &mut self,
        bucket: Resource<Bucket>,
        key: String,
    ) -> wasmtime::Result<Result<Option<Vec<u8>>, wit::Error>> {
        let store = self.store_of(&bucket)?;
        Ok(off_the_workers(store, move |store| store.get(&key)).await)
    }

    async fn set(
        &mut self,
        bucket: Resource<Bucket>,
        key: String,
        value: Vec<u8>,
    ) -> wasmtime::Result<Result<(), wit::Error>> {
        let store = self.store_of(&bucket)?;
        Ok(off_the_workers(store, move |store| store.set(&key, &value)).await)
    }

    async fn delete(
        &mut self,
        bucket: Resource<Bucket>,
        key: String,
    ) -> wasmtime::Result<Result<(), wit::Error>> {
        let store = self.store_of(&bucket)?;
        Ok(off_the_workers(store, move |store| store.delete(&key)).await)
    }

    async fn exists(
        &mut self,
        bucket: Resource<Bucket>,
        key: String,
    ) -> wasmtime::Result<Result<bool, wit::Error>> {
        let store = self.store_of(&bucket)?;
        Ok(off_the_workers(store, move |store| {
            store.get(&key).map(|value| value.is_some())
        })
        .await)
    }

    async fn list_keys(
        &mut self,
        bucket: Resource<Bucket>,
        cursor: Option<String>,
    ) -> wasmtime::Result<Result<KeyResponse, wit::Error>> {
        let store = self.store_of(&bucket)?;
        Ok(off_the_workers(store, move |store| {
            store
                .keys_page(cursor.as_deref(), PAGE_SIZE)
                .map(|(keys, cursor)| KeyResponse { keys, cursor })
        })
        .await)
    }

    async fn drop(&mut self, bucket: Resource<Bucket>) -> wasmtime::Result<()> {
        self.table.delete(bucket)?;
        Ok(())
    }
}

impl atomics::HostCas for KeyValueView<'_> {
    async fn new(
        &mut self,
        bucket: Resource<Bucket>,
        key: String,
    ) -> wasmtime::Result<Result<Resource<Cas>, wit::Error>> {
        let store = self.store_of(&bucket)?;
        Ok(match cas_on(store, key).await {
            Ok(cas) => Ok(self.table.push(cas)?),
            Err(error) => Err(error),
        })
    }

    async fn current(
        &mut self,
        cas: Resource<Cas>,
    ) -> wasmtime::Result<Result<Option<Vec<u8>>, wit::Error>> {
        Ok(Ok(self.table.get(&cas)?.seen.clone()))
    }

    async fn drop(&mut self, cas: Resource<Cas>) -> wasmtime::Result<()> {
        self.table.delete(cas)?;
        Ok(())
    }
}

impl atomics::Host for KeyValueView<'_> {
    /// The value as decimal text (as Redis's `INCRBY` keeps it), swapped in until no other
    /// writer came between.
    async fn increment(
        &mut self,
        bucket: Resource<Bucket>,
        key: String,
        delta: i64,
    ) -> wasmtime::Result<Result<i64, wit::Error>> {
        let store = self.store_of(&bucket)?;
        Ok(off_the_workers(store, move |store| {
            loop {
                let seen = store.get(&key)?;
                let now = match &seen {
                    None => 0,
                    Some(bytes) => std::str::from_utf8(bytes)
                        .ok()
                        .and_then(|text| text.trim().parse::<i64>().ok())
                        .ok_or_else(|| format!("the value at {key:?} is not a whole number"))?,
                };
                let next = now
                    .checked_add(delta)
                    .ok_or_else(|| format!("incrementing {key:?} by {delta} overflows"))?;
                if store.compare_and_swap(&key, seen.as_deref(), next.to_string().as_bytes())? {
                    return Ok(next);
                }
            }
        })
        .await)
    }

    async fn swap(
        &mut self,
        cas: Resource<Cas>,
        value: Vec<u8>,
    ) -> wasmtime::Result<Result<(), CasError>> {
        let Cas { store, key, seen } = self.table.delete(cas)?;
        let swapped = off_the_workers(store.clone(), {
            let key = key.clone();
            move |store| store.compare_and_swap(&key, seen.as_deref(), &value)
        })
        .await;
        match swapped {
            Ok(true) => Ok(Ok(())),
            // Someone wrote first: a handle on what is there now, for the retry.
            Ok(false) => match cas_on(store, key).await {
                Ok(cas) => Ok(Err(CasError::CasFailed(self.table.push(cas)?))),
                Err(error) => Ok(Err(CasError::StoreError(error))),
            },
            Err(error) => Ok(Err(CasError::StoreError(error))),
        }
    }
}

/// A compare-and-swap on `key` that has seen what `store` holds there now.
async fn cas_on(store: Arc<dyn KeyValueStore>, key: String) -> Result<Cas, wit::Error> {
    let read = {
        let key = key.clone();
        move |store: &dyn KeyValueStore| store.get(&key)
    };
    let seen = off_the_workers(store.clone(), read).await?;
    Ok(Cas { store, key, seen })
}

impl KeyValueView<'_> {
    fn store_of(&self, bucket: &Resource<Bucket>) -> wasmtime::Result<Arc<dyn KeyValueStore>> {
        Ok(self.table.get(bucket)?.store.clone())
    }
}

/// Runs `call` on `store`: a backend that waits on a file or the network on tokio's blocking
/// threads, so that one request's store traffic never holds up a worker the other requests'
/// calls need; the in-memory one at once.
async fn off_the_workers<T: Send + 'static>(
    store: Arc<dyn KeyValueStore>,
    call: impl FnOnce(&dyn KeyValueStore) -> Result<T, String> + Send + 'static,
) -> Result<T, wit::Error> {
    let answer = if store.waits() {
        tokio::task::spawn_blocking(move || call(&*store))
            .await
            .unwrap_or_else(|error| Err(format!("the key-value call did not finish: {error}")))
    } else {
        call(&*store)
    };
    answer.map_err(wit::Error::Other)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bindings::wasi::keyvalue::store::{Error, Host, HostBucket};
    use crate::store::MemoryStore;
    use std::sync::{Mutex, mpsc};
    use std::time::{Duration, Instant};

    #[tokio::test]
    async fn the_component_sees_one_store_named_default_with_paged_keys() {
        let backend: Arc<dyn KeyValueStore> = Arc::new(MemoryStore::default());
        let mut table = ResourceTable::new();
        let mut view = KeyValueView {
            store: &backend,
            table: &mut table,
        };
        assert!(matches!(
            Host::open(&mut view, "other".into()).await.unwrap(),
            Err(Error::NoSuchStore)
        ));
        let bucket = Host::open(&mut view, "default".into())
            .await
            .unwrap()
            .unwrap();
        let handle = || wasmtime::component::Resource::<Bucket>::new_borrow(bucket.rep());
        for index in 0..1500 {
            HostBucket::set(&mut view, handle(), format!("key-{index:04}"), vec![1])
                .await
                .unwrap()
                .unwrap();
        }
        assert_eq!(
            HostBucket::get(&mut view, handle(), "key-0001".into())
                .await
                .unwrap()
                .unwrap(),
            Some(vec![1])
        );
        assert!(
            HostBucket::exists(&mut view, handle(), "key-1499".into())
                .await
                .unwrap()
                .unwrap()
        );
        assert!(
            !HostBucket::exists(&mut view, handle(), "key-1500".into())
                .await
                .unwrap()
                .unwrap()
        );
        let first = HostBucket::list_keys(&mut view, handle(), None)
            .await
            .unwrap()
            .unwrap();
        assert_eq!(first.keys.len(), 1000);
        let second = HostBucket::list_keys(&mut view, handle(), first.cursor.clone())
            .await
            .unwrap()
            .unwrap();
        assert_eq!((second.keys.len(), second.cursor), (500, None));
        assert_eq!(second.keys[0], "key-1000");
        HostBucket::delete(&mut view, handle(), "key-0000".into())
            .await
            .unwrap()
            .unwrap();
        assert_eq!(backend.get("key-0000").unwrap(), None);
        HostBucket::drop(&mut view, bucket).await.unwrap();
    }

    #[tokio::test]
    async fn a_swap_writes_only_over_what_its_handle_saw_and_hands_back_a_fresh_one() {
        use crate::bindings::atomics::wasi::keyvalue::atomics::{Host as _, HostCas};
        let backend: Arc<dyn KeyValueStore> = Arc::new(MemoryStore::default());
        let mut table = ResourceTable::new();
        let mut view = KeyValueView {
            store: &backend,
            table: &mut table,
        };
        let bucket = Host::open(&mut view, "default".into())
            .await
            .unwrap()
            .unwrap();
        let handle = || wasmtime::component::Resource::<Bucket>::new_borrow(bucket.rep());
        let first = HostCas::new(&mut view, handle(), "n".into())
            .await
            .unwrap()
            .unwrap();
        let second = HostCas::new(&mut view, handle(), "n".into())
            .await
            .unwrap()
            .unwrap();
        let current = |cas: &Resource<Cas>| Resource::<Cas>::new_borrow(cas.rep());
        assert_eq!(
            HostCas::current(&mut view, current(&first)).await.unwrap(),
            Ok(None)
        );
        assert!(view.swap(first, b"1".to_vec()).await.unwrap().is_ok());
        let Err(CasError::CasFailed(fresh)) = view.swap(second, b"9".to_vec()).await.unwrap()
        else {
            panic!("the second swap saw nothing there, and found 1");
        };
        assert_eq!(
            HostCas::current(&mut view, current(&fresh)).await.unwrap(),
            Ok(Some(b"1".to_vec()))
        );
        assert!(view.swap(fresh, b"2".to_vec()).await.unwrap().is_ok());
        assert_eq!(backend.get("n").unwrap(), Some(b"2".to_vec()));
        assert_eq!(
            view.increment(handle(), "count".into(), 5).await.unwrap(),
            Ok(5)
        );
        assert_eq!(
            view.increment(handle(), "count".into(), -2).await.unwrap(),
            Ok(3)
        );
        assert!(
            view.increment(handle(), "n".into(), i64::MAX)
                .await
                .unwrap()
                .is_err(),
            "2 + max overflows"
        );
        backend.set("text", b"ten").unwrap();
        assert!(
            view.increment(handle(), "text".into(), 1)
                .await
                .unwrap()
                .is_err()
        );
    }

    /// A store whose `get` waits, up to five seconds, for a release.
    struct Gate(Mutex<mpsc::Receiver<()>>);

    impl KeyValueStore for Gate {
        fn get(&self, _: &str) -> Result<Option<Vec<u8>>, String> {
            let release = self.0.lock().unwrap();
            release
                .recv_timeout(Duration::from_secs(5))
                .map(|()| None)
                .map_err(|_| "no release came".to_owned())
        }
        fn set(&self, _: &str, _: &[u8]) -> Result<(), String> {
            Ok(())
        }
        fn delete(&self, _: &str) -> Result<(), String> {
            Ok(())
        }
        fn keys_after(&self, _: Option<&str>, _: usize) -> Result<Vec<String>, String> {
            Ok(Vec::new())
        }
        fn compare_and_swap(&self, _: &str, _: Option<&[u8]>, _: &[u8]) -> Result<bool, String> {
            Ok(false)
        }
    }

    /// On a runtime of one thread, a task released the waiting call: the wait did not hold the
    /// thread.
    #[tokio::test(flavor = "current_thread")]
    async fn a_waiting_store_call_leaves_the_runtime_to_other_tasks() {
        let (release, received) = mpsc::channel();
        let backend: Arc<dyn KeyValueStore> = Arc::new(Gate(Mutex::new(received)));
        let mut table = ResourceTable::new();
        let mut view = KeyValueView {
            store: &backend,
            table: &mut table,
        };
        let bucket = Host::open(&mut view, "default".into())
            .await
            .unwrap()
            .unwrap();
        let releaser = tokio::spawn(async move { release.send(()).unwrap() });
        let started = Instant::now();
        let answer = HostBucket::get(&mut view, bucket, "key".into())
            .await
            .unwrap();
        assert_eq!(answer, Ok(None));
        assert!(started.elapsed() < Duration::from_secs(4));
        releaser.await.unwrap();
    }
}
