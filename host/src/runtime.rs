//! The engine and the compiled, linked component, shared by every call.
//!
//! The component is pre-initialised (see `preinit`) and compiled, which takes seconds; the
//! compiled form is cached on disk, keyed by the component's bytes and the engine's settings, and
//! loaded in about a millisecond afterwards.

use std::hash::{Hash, Hasher};
use std::path::Path;
use std::sync::{Arc, Mutex};

use anyhow::Context;
use sha2::{Digest, Sha256};
use structure::keys;
use wasmtime::component::{Component, Linker};
use wasmtime::{Config, Engine, InstanceAllocationStrategy, PoolingAllocationConfig};
use wasmtime_wasi_http::p2::bindings::ProxyPre;

use crate::artifact::{COMPONENT, default_cache_dir, hex, write_atomically};
use crate::bindings::{StructurePre, wasi};
use crate::config::{Settings, WasiConfig};
use crate::egress::ConnectionPool;
use crate::key_value::WasiKeyValue;
use crate::preinit;
use crate::state::HostState;

/// An engine with the component compiled and linked, ready to instantiate.
pub struct Runtime {
    pub(crate) pre: StructurePre<HostState>,
    /// The same instance, seen as an HTTP proxy (its `wasi:http/incoming-handler` export).
    pub(crate) proxy: ProxyPre<HostState>,
    /// Kept-alive connections to the LLM providers, shared by every instance.
    pub(crate) connections: Arc<ConnectionPool>,
    /// Whether an instance's memory stays resident for the next instance (the pooling
    /// allocator), which the component is told (see [`Runtime::settings_for`]).
    memory_kept_resident: bool,
}

impl Runtime {
    /// The runtime for the embedded component, created once per process (concurrent first
    /// callers wait for one compile instead of each compiling).
    ///
    /// ```no_run
    /// # fn example() -> anyhow::Result<()> {
    /// let runtime = structure_host::Runtime::shared()?;
    /// # Ok(())
    /// # }
    /// ```
    pub fn shared() -> anyhow::Result<Arc<Runtime>> {
        static SHARED: Mutex<Option<Arc<Runtime>>> = Mutex::new(None);
        let mut shared = SHARED
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        if let Some(runtime) = shared.as_ref() {
            return Ok(runtime.clone());
        }
        let runtime = Arc::new(Runtime::new(COMPONENT, default_cache_dir().as_deref())?);
        *shared = Some(runtime.clone());
        Ok(runtime)
    }

    /// A runtime for the component in `wasm`, caching its compiled form in `cache_dir`.
    ///
    /// ```no_run
    /// # fn example() -> anyhow::Result<()> {
    /// let wasm = std::fs::read("target/component/structure.wasm")?;
    /// let runtime = structure_host::Runtime::new(&wasm, structure_host::default_cache_dir().as_deref())?;
    /// # Ok(())
    /// # }
    /// ```
    pub fn new(wasm: &[u8], cache_dir: Option<&Path>) -> anyhow::Result<Runtime> {
        let (engine, pooled) = pooled_or_on_demand(engine_config)?;
        Self::compiled(&engine, pooled, wasm, cache_dir)
    }

    /// The runtime of `engine` (`pooled`: with the pooling allocator) for `wasm`, its compiled
    /// form cached in `cache_dir`.
    fn compiled(
        engine: &Engine,
        pooled: bool,
        wasm: &[u8],
        cache_dir: Option<&Path>,
    ) -> anyhow::Result<Runtime> {
        let linker = linker(engine)?;
        let component = load_component(&linker, wasm, cache_dir)?;
        let instance_pre = linker.instantiate_pre(&component)?;
        let proxy = ProxyPre::new(instance_pre.clone())?;
        let pre = StructurePre::new(instance_pre)?;
        Ok(Runtime {
            pre,
            proxy,
            connections: Arc::default(),
            memory_kept_resident: pooled,
        })
    }

    /// `settings` with what this runtime tells the component of itself: that it keeps an
    /// instance's memory resident for the next one, where it does and `settings` do not say
    /// otherwise (`structure_memory_kept_resident`).
    pub(crate) fn settings_for(&self, settings: Settings) -> Settings {
        match settings.get(keys::MEMORY_KEPT_RESIDENT) {
            None if self.memory_kept_resident => settings.set(keys::MEMORY_KEPT_RESIDENT, "on"),
            _ => settings,
        }
    }
}

impl Runtime {
    /// A runtime for the component in `wasm` whose compiled code Linux `perf` can name: each
    /// function is written to `/tmp/perf-<pid>.map` as it is compiled (wasmtime's perf map), by
    /// the names of `wasm`'s name section (an unstripped build). Nothing is cached: the map is
    /// written when the code is compiled. `bench/stages.py` runs `structure-bench` with it.
    ///
    /// ```no_run
    /// # fn example() -> anyhow::Result<()> {
    /// let wasm = std::fs::read("structure.wasm")?;
    /// let runtime = structure_host::Runtime::profiled(&wasm)?;
    /// # Ok(())
    /// # }
    /// ```
    pub fn profiled(wasm: &[u8]) -> anyhow::Result<Runtime> {
        let (engine, pooled) = pooled_or_on_demand(|pooling| {
            let mut config = engine_config(pooling);
            config.profiler(wasmtime::ProfilingStrategy::PerfMap);
            config
        })?;
        Self::compiled(&engine, pooled, wasm, None)
    }

    /// The component as a runtime runs it: `wasm` pre-initialised when it still has its
    /// initialiser (as cargo builds it), else `wasm` itself. `structure component` writes this
    /// for Spin and the npm package.
    ///
    /// ```no_run
    /// # fn example(wasm: &[u8]) -> anyhow::Result<()> {
    /// let ready = structure_host::Runtime::component_bytes(wasm)?;
    /// std::fs::write("structure.wasm", ready)?;
    /// # Ok(())
    /// # }
    /// ```
    pub fn component_bytes(wasm: &[u8]) -> anyhow::Result<Vec<u8>> {
        let engine = Engine::new(&engine_config(false))?;
        ready(&linker(&engine)?, wasm)
    }
}

/// Writes the embedded component, pre-initialised, to `output` (atomically: a half-written file is
/// never left where a build would pick it up), unless `output` already holds one pre-initialised
/// from the same component (pre-initialising twice gives different bytes: the hash keys the
/// initialiser draws differ, and builds that see a new file redo their work). The size written,
/// or `None` when `output` was up to date.
///
/// ```no_run
/// # fn example() -> anyhow::Result<()> {
/// structure_host::write_ready_component(std::path::Path::new("structure.ready.wasm"))?;
/// # Ok(())
/// # }
/// ```
pub fn write_ready_component(output: &std::path::Path) -> anyhow::Result<Option<usize>> {
    let embedded = COMPONENT;
    if let Ok(existing) = std::fs::read(output)
        && preinit::marked_source(&existing).ok().flatten()
            == Some(preinit::source_digest(embedded))
    {
        return Ok(None);
    }
    let ready = Runtime::component_bytes(embedded)?;
    write_atomically(output, &ready)?;
    Ok(Some(ready.len()))
}

/// Every import the component has, over this host's state.
fn linker(engine: &Engine) -> anyhow::Result<Linker<HostState>> {
    let mut linker: Linker<HostState> = Linker::new(engine);
    wasmtime_wasi::p2::add_to_linker_async(&mut linker)?;
    wasmtime_wasi_http::p2::add_only_http_to_linker_async(&mut linker)?;
    wasi::keyvalue::store::add_to_linker::<_, WasiKeyValue>(&mut linker, HostState::key_value)?;
    wasi::keyvalue::atomics::add_to_linker::<_, WasiKeyValue>(&mut linker, HostState::key_value)?;
    wasi::config::store::add_to_linker::<_, WasiConfig>(&mut linker, HostState::config)?;
    Ok(linker)
}

/// `wasm` pre-initialised if it still has its initialiser.
fn ready(linker: &Linker<HostState>, wasm: &[u8]) -> anyhow::Result<Vec<u8>> {
    if preinit::is_initialisable(wasm)? {
        preinit::preinitialise(linker, wasm)
    } else {
        Ok(wasm.to_vec())
    }
}

/// Instances alive at once with the pooling allocator (`structure serve` runs one per request).
const MAX_INSTANCES: u32 = 256;
/// The bytes of each memory (and table) a slot keeps resident between instances: reset in
/// place instead of handed back to the kernel, so the next instance in the slot takes no page
/// faults there (a fifth of a fresh call's CPU went to faults, `bench/stages.py`). Where Linux
/// has `PAGEMAP_SCAN` (6.7 and later), only the pages an instance touched are reset.
const KEEP_RESIDENT: usize = 8 << 20;

/// An engine of `config(true)`, with the pooling allocator, and `true`; where that fails (the
/// pool reserves address space for every slot up front: a small address space, a ulimit), one
/// of `config(false)`, allocating instances on demand, and `false`.
fn pooled_or_on_demand(config: impl Fn(bool) -> Config) -> anyhow::Result<(Engine, bool)> {
    match Engine::new(&config(true)) {
        Ok(engine) => Ok((engine, true)),
        Err(_) => Ok((Engine::new(&config(false))?, false)),
    }
}

fn engine_config(pooling: bool) -> Config {
    let mut config = Config::new();
    config.wasm_component_model(true);
    // The component exports and imports no async functions, streams or futures (WASI 0.2):
    // without the state concurrent calls need, a store is cheaper to make and to drop, and a
    // call into the host starts no task. (Dropping a store with it made an error, with a
    // backtrace where RUST_BACKTRACE is set: 1 % of a fresh call's CPU.)
    config.concurrency_support(false);
    if pooling {
        // Slots are reused warm: a new instance costs microseconds, and its memory is a
        // copy-on-write view of the component's initial image.
        let mut pool = PoolingAllocationConfig::new();
        pool.total_component_instances(MAX_INSTANCES)
            .total_core_instances(MAX_INSTANCES * 8)
            .total_memories(MAX_INSTANCES * 2)
            .total_tables(MAX_INSTANCES * 8)
            .total_stacks(MAX_INSTANCES)
            .linear_memory_keep_resident(KEEP_RESIDENT)
            .table_keep_resident(KEEP_RESIDENT)
            .pagemap_scan(wasmtime::Enabled::Auto);
        config.allocation_strategy(InstanceAllocationStrategy::Pooling(pool));
    }
    config
}

/// The compiled form of `wasm` (pre-initialised first, see [`ready`]), from the cache when it
/// holds it; the cache is keyed by `wasm` as given, so a hit skips pre-initialising too.
fn load_component(
    linker: &Linker<HostState>,
    wasm: &[u8],
    cache_dir: Option<&Path>,
) -> anyhow::Result<Component> {
    let engine = linker.engine();
    let Some(cache_dir) = cache_dir else {
        return compile(engine, &ready(linker, wasm)?);
    };
    let mut key = Sha256::new();
    key.update(wasm);
    let mut engine_settings = std::collections::hash_map::DefaultHasher::new();
    engine
        .precompile_compatibility_hash()
        .hash(&mut engine_settings);
    key.update(engine_settings.finish().to_le_bytes());
    let digest = key.finalize();
    let path = cache_dir.join(format!("structure-{}.cwasm", hex(&digest[..16])));
    if path.exists() {
        // SAFETY: the file was written by `Component::serialize` for an engine with the same
        // compatibility hash (it is part of the name), and cache files are never rewritten in
        // place: a new one is renamed over an old one atomically.
        if let Ok(component) = unsafe { Component::deserialize_file(engine, &path) } {
            return Ok(component);
        }
    }
    let component = compile(engine, &ready(linker, wasm)?)?;
    // The cache is an optimisation: a read-only or full disk only costs the next start time.
    let _ = write_atomically(&path, &component.serialize()?);
    Ok(component)
}

fn compile(engine: &Engine, wasm: &[u8]) -> anyhow::Result<Component> {
    Component::new(engine, wasm)
        .map_err(anyhow::Error::from)
        .context("compiling the component")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_component_written_is_the_embedded_one_pre_initialised_and_written_once() {
        let embedded = COMPONENT;
        assert!(preinit::is_initialisable(embedded).unwrap());
        assert_eq!(preinit::marked_source(embedded).unwrap(), None);

        let folder = std::env::temp_dir().join(format!("structure-preinit-{}", std::process::id()));
        std::fs::create_dir_all(&folder).unwrap();
        let output = folder.join("structure.ready.wasm");
        let size = write_ready_component(&output).unwrap().expect("written");
        let ready = std::fs::read(&output).unwrap();
        assert_eq!(ready.len(), size);
        assert!(!preinit::is_initialisable(&ready).unwrap());
        assert_eq!(
            preinit::marked_source(&ready).unwrap(),
            Some(preinit::source_digest(embedded))
        );
        // It asks its host for exactly what the built one does (what Spin provides).
        assert_eq!(imports(&ready), imports(embedded));
        assert_eq!(write_ready_component(&output).unwrap(), None, "up to date");
        // A pre-initialised component is taken as it is.
        assert_eq!(Runtime::component_bytes(&ready).unwrap(), ready);
        std::fs::remove_dir_all(&folder).unwrap();
    }

    /// The component's own imports, by name.
    fn imports(wasm: &[u8]) -> Vec<String> {
        use wasmparser::{Parser, Payload};
        let mut names = Vec::new();
        let mut depth = 0usize;
        for payload in Parser::new(0).parse_all(wasm) {
            match payload.unwrap() {
                Payload::ModuleSection { .. } | Payload::ComponentSection { .. } => depth += 1,
                Payload::End(_) => depth = depth.saturating_sub(1),
                Payload::ComponentImportSection(imports) if depth == 0 => {
                    names.extend(
                        imports
                            .into_iter()
                            .map(|import| import.unwrap().name.name.to_owned()),
                    );
                }
                _ => {}
            }
        }
        assert!(!names.is_empty());
        names
    }
}
