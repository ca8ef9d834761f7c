//! The engine and the compiled, linked component, shared by every call.
//!
//! The component is pre-initialised (see `preinit`) and compiled, which takes seconds; the
//! compiled form is cached on disk, keyed by the component's bytes and the engine's settings, and
//! loaded in about a millisecond afterwards.

use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use anyhow::Context;
use sha2::{Digest, Sha256};
use wasmtime::component::{Component, HasSelf, Linker};
use wasmtime::{Config, Engine, InstanceAllocationStrategy, PoolingAllocationConfig};
use wasmtime_wasi_http::p2::bindings::ProxyPre;

use crate::bindings::{StructurePre, wasi};
use crate::egress::ConnectionPool;
use crate::preinit;
use crate::state::HostState;

/// The component this host was built with.
pub(crate) const COMPONENT: &[u8] = include_bytes!(env!("STRUCTURE_COMPONENT_WASM"));

/// An engine with the component compiled and linked, ready to instantiate.
pub struct Runtime {
    pub(crate) pre: StructurePre<HostState>,
    /// The same instance, seen as an HTTP proxy (its `wasi:http/incoming-handler` export).
    pub(crate) proxy: ProxyPre<HostState>,
    /// Kept-alive connections to the LLM providers, shared by every instance.
    pub(crate) connections: Arc<ConnectionPool>,
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
        // The pooling allocator reserves address space for every slot up front; where that
        // fails (a small address space, a ulimit), instances are allocated on demand.
        let engine =
            Engine::new(&engine_config(true)).or_else(|_| Engine::new(&engine_config(false)))?;
        let linker = linker(&engine)?;
        let component = load_component(&linker, wasm, cache_dir)?;
        let instance_pre = linker.instantiate_pre(&component)?;
        let proxy = ProxyPre::new(instance_pre.clone())?;
        let pre = StructurePre::new(instance_pre)?;
        Ok(Runtime {
            pre,
            proxy,
            connections: Arc::default(),
        })
    }
}

impl Runtime {
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

/// Every import the component has, over this host's state.
fn linker(engine: &Engine) -> anyhow::Result<Linker<HostState>> {
    let mut linker: Linker<HostState> = Linker::new(engine);
    wasmtime_wasi::p2::add_to_linker_async(&mut linker)?;
    wasmtime_wasi_http::p2::add_only_http_to_linker_async(&mut linker)?;
    wasi::keyvalue::store::add_to_linker::<_, HasSelf<_>>(&mut linker, |state| state)?;
    wasi::config::store::add_to_linker::<_, HasSelf<_>>(&mut linker, |state| state)?;
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

fn engine_config(pooling: bool) -> Config {
    let mut config = Config::new();
    config.wasm_component_model(true);
    if pooling {
        // Slots are reused warm: a new instance costs microseconds, and its memory is a
        // copy-on-write view of the component's initial image.
        let mut pool = PoolingAllocationConfig::new();
        pool.total_component_instances(MAX_INSTANCES)
            .total_core_instances(MAX_INSTANCES * 8)
            .total_memories(MAX_INSTANCES * 2)
            .total_tables(MAX_INSTANCES * 8)
            .total_stacks(MAX_INSTANCES);
        config.allocation_strategy(InstanceAllocationStrategy::Pooling(pool));
    }
    config
}

/// Where compiled components are cached: `$STRUCTURE_CACHE_DIR`, else
/// `$XDG_CACHE_HOME/structure`, else `~/.cache/structure`.
///
/// ```
/// if let Some(dir) = structure_host::default_cache_dir() {
///     println!("compiled components are cached in {}", dir.display());
/// }
/// ```
pub fn default_cache_dir() -> Option<PathBuf> {
    if let Some(dir) = std::env::var_os("STRUCTURE_CACHE_DIR") {
        return Some(PathBuf::from(dir));
    }
    let base = std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|home| PathBuf::from(home).join(".cache")))?;
    Some(base.join("structure"))
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

/// `bytes` in lowercase hex.
pub(crate) fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|byte| format!("{byte:02x}")).collect()
}

/// Writes `bytes` to `path` through a temporary file renamed over it, so a reader never sees a
/// half-written file; the folder is created when missing.
pub(crate) fn write_atomically(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    if let Some(folder) = path.parent() {
        std::fs::create_dir_all(folder)?;
    }
    let temporary = path.with_extension(format!("tmp{}", std::process::id()));
    std::fs::write(&temporary, bytes)?;
    std::fs::rename(&temporary, path)
}
