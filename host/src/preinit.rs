//! Pre-initialising the component with `wasmtime-wizer`: cargo builds it with a
//! `wizer-initialize` export (the `structure-initialisable` world), which builds what every call
//! needs (the meta-schema validators, the bundled schemas compiled, their answer envelopes; see
//! `structure::prepare`). Running it once and writing the memory it leaves into a new component
//! gives a component whose every fresh instance starts with them.
//!
//! The export stays (wasmtime-wizer 50 cannot drop it from a component whose core function is
//! lifted by the component: the result would not validate; calling it again is harmless), so a
//! pre-initialised component is told apart by the custom section [`MARK`] appended to it.
//!
//! The host does this before it compiles the component (the compiled result is cached on disk),
//! and `structure component --output FILE` writes the pre-initialised component for Spin and the
//! npm package.

use anyhow::Context;
use wasmtime::Store;
use wasmtime::component::Linker;
use wasmtime_wizer::Wizer;

use crate::state::HostState;

/// The initialiser's export name (wasmtime-wizer's default).
pub(crate) const INIT_EXPORT: &str = "wizer-initialize";

/// The custom section that marks a pre-initialised component.
pub(crate) const MARK: &str = "structure-preinitialised";

/// Whether `wasm` is a component that has its initialiser and was not pre-initialised yet.
pub(crate) fn is_initialisable(wasm: &[u8]) -> anyhow::Result<bool> {
    let found = inspect(wasm)?;
    Ok(found.initialiser && found.mark.is_none())
}

/// The digest in `wasm`'s [`MARK`] section: the component it was pre-initialised from.
pub(crate) fn marked_source(wasm: &[u8]) -> anyhow::Result<Option<String>> {
    Ok(inspect(wasm)?.mark)
}

/// What the component's own (outermost) sections say about pre-initialising.
struct Found {
    initialiser: bool,
    mark: Option<String>,
}

fn inspect(wasm: &[u8]) -> anyhow::Result<Found> {
    use wasmparser::{Parser, Payload};
    let mut found = Found {
        initialiser: false,
        mark: None,
    };
    let mut depth = 0usize;
    for payload in Parser::new(0).parse_all(wasm) {
        match payload.context("reading the component")? {
            Payload::ModuleSection { .. } | Payload::ComponentSection { .. } => depth += 1,
            Payload::End(_) => depth = depth.saturating_sub(1),
            Payload::ComponentExportSection(exports) if depth == 0 => {
                for export in exports {
                    let export = export.context("reading the component's exports")?;
                    found.initialiser |= export.name.name == INIT_EXPORT;
                }
            }
            Payload::CustomSection(section) if depth == 0 && section.name() == MARK => {
                found.mark = Some(String::from_utf8_lossy(section.data()).into_owned());
            }
            _ => {}
        }
    }
    Ok(found)
}

/// `snapshot` with the [`MARK`] section appended (a custom section may close a component),
/// holding the SHA-256 of the component it was made from, in hex: what shipped builds are
/// checked against (the npm package's build records it).
fn marked(mut snapshot: Vec<u8>, source: &[u8]) -> Vec<u8> {
    use wasm_encoder::{CustomSection, Section};
    CustomSection {
        name: MARK.into(),
        data: std::borrow::Cow::Owned(source_digest(source).into_bytes()),
    }
    .append_to(&mut snapshot);
    snapshot
}

/// The SHA-256 of `wasm`, in hex.
pub(crate) fn source_digest(wasm: &[u8]) -> String {
    use sha2::{Digest, Sha256};
    crate::artifact::hex(&Sha256::digest(wasm))
}

/// `wasm` pre-initialised: instantiated with `linker` (the initialiser reaches no import that
/// needs a live host), `wizer-initialize` run, its memory written back as data, marked.
pub(crate) fn preinitialise(linker: &Linker<HostState>, wasm: &[u8]) -> anyhow::Result<Vec<u8>> {
    let engine = linker.engine().clone();
    // Wizer is async; the caller may be inside a runtime already (a `serve` start-up), so it
    // runs on a thread of its own with a runtime of its own.
    std::thread::scope(|scope| {
        scope
            .spawn(|| {
                let runtime = tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()?;
                runtime.block_on(async {
                    let mut store = Store::new(&engine, HostState::idle());
                    let (snapshot, _) = Wizer::new()
                        .keep_init_func(true)
                        .run_component(&mut store, wasm, async |store, component| {
                            linker.instantiate_async(store, component).await
                        })
                        .await
                        .map_err(anyhow::Error::from)
                        .context("pre-initialising the component")?;
                    Ok(marked(snapshot, wasm))
                })
            })
            .join()
            .map_err(|_| anyhow::anyhow!("pre-initialising the component panicked"))?
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_module_or_garbage_is_no_initialisable_component() {
        assert!(is_initialisable(b"\0asm\x01\0\0\0").is_ok_and(|found| !found));
        assert!(is_initialisable(b"not wasm").is_err());
    }
}
