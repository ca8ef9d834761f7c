//! The data of one store: what the component's imports act on.

use std::sync::Arc;

use wasmtime::component::ResourceTable;
use wasmtime::{Engine, Store, StoreLimits, StoreLimitsBuilder};
use wasmtime_wasi::{WasiCtx, WasiCtxView, WasiView};
use wasmtime_wasi_http::{WasiHttpCtx, WasiHttpCtxView, WasiHttpView};

use crate::config::{ConfigView, Settings};
use crate::egress::{ConnectionPool, Egress};
use crate::key_value::KeyValueView;
use crate::relay::{Frozen, Relay};
use crate::store::KeyValueStore;

/// What one store's instance acts on: WASI, outgoing HTTP, the settings and the key-value store.
pub(crate) struct HostState {
    pub(crate) table: ResourceTable,
    pub(crate) wasi: WasiCtx,
    pub(crate) http: WasiHttpCtx,
    pub(crate) egress: Egress,
    pub(crate) settings: Arc<Settings>,
    pub(crate) key_value: Arc<dyn KeyValueStore>,
    limits: StoreLimits,
}

/// The most memory one instance may take: a call that needs more (a PDF whose streams inflate
/// without end, say) stops with a trap, and its instance is dropped, instead of taking the
/// machine's memory.
pub const MAX_INSTANCE_MEMORY: usize = 1 << 30;

impl HostState {
    pub(crate) fn new(
        settings: Arc<Settings>,
        key_value: Arc<dyn KeyValueStore>,
        connections: Arc<ConnectionPool>,
    ) -> Self {
        Self {
            table: ResourceTable::new(),
            // No environment, arguments, files or sockets: the component reaches the world only
            // through its declared imports.
            wasi: WasiCtx::builder().build(),
            http: WasiHttpCtx::new(),
            egress: Egress::new(connections, &settings),
            settings,
            key_value,
            limits: StoreLimitsBuilder::new()
                .memory_size(MAX_INSTANCE_MEMORY)
                .trap_on_grow_failure(true)
                .build(),
        }
    }

    /// A store of `engine` with this state, its memory bounded by [`MAX_INSTANCE_MEMORY`].
    pub(crate) fn into_store(self, engine: &Engine) -> Store<HostState> {
        let mut store = Store::new(engine, self);
        store.limiter(|state| &mut state.limits);
        store
    }
}

impl HostState {
    /// A state with no settings, an empty store in memory and no connections: for running the
    /// component's initialiser, which reaches none of them.
    pub(crate) fn idle() -> Self {
        Self::new(
            Arc::new(Settings::new()),
            Arc::new(crate::store::MemoryStore::default()),
            Arc::default(),
        )
    }

    /// The same state with the LLM requests `relay` takes answered by it, and the wall clock
    /// standing at its instant, if it stops it.
    pub(crate) fn relaying(mut self, relay: Arc<dyn Relay>) -> Self {
        if let Some(instant) = relay.clock() {
            self.wasi = WasiCtx::builder().wall_clock(Frozen(instant)).build();
        }
        self.egress = self.egress.relaying(relay);
        self
    }

    /// The same state, noting each request the component sends in `calls`.
    pub(crate) fn recording_calls(mut self, calls: crate::egress::Calls) -> Self {
        self.egress = self.egress.recording(calls);
        self
    }
}

impl HostState {
    /// What `wasi:keyvalue/store` acts on.
    pub(crate) fn key_value(&mut self) -> KeyValueView<'_> {
        KeyValueView {
            store: &self.key_value,
            table: &mut self.table,
        }
    }

    /// What `wasi:config/store` acts on.
    pub(crate) fn config(&mut self) -> ConfigView<'_> {
        ConfigView(&self.settings)
    }
}

impl WasiView for HostState {
    fn ctx(&mut self) -> WasiCtxView<'_> {
        WasiCtxView {
            ctx: &mut self.wasi,
            table: &mut self.table,
        }
    }
}

impl WasiHttpView for HostState {
    fn http(&mut self) -> WasiHttpCtxView<'_> {
        WasiHttpCtxView {
            ctx: &mut self.http,
            table: &mut self.table,
            hooks: &mut self.egress,
        }
    }
}
