//! `wasi:keyvalue/store@0.2.0-draft2` for the component, over a [`KeyValueStore`] backend (see
//! [`crate::store`]). Like Spin, the host offers one store, named `default`.

use std::sync::Arc;

use wasmtime::component::Resource;

use crate::bindings::wasi::keyvalue::store::{self as wit, KeyResponse};
use crate::state::HostState;
use crate::store::KeyValueStore;

/// The name of the one store the host offers.
const STORE_NAME: &str = "default";
/// Keys per `list-keys` page.
const PAGE_SIZE: usize = 1000;

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
            .keys_page(cursor.as_deref(), PAGE_SIZE)
            .map(|(keys, cursor)| KeyResponse { keys, cursor })
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
    use crate::store::MemoryStore;

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
