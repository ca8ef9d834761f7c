//! The component as built into this host, and the two ways bytes of it leave as text or files:
//! a digest in hex, a file written whole. Imports nothing of the host, so the runtime and
//! pre-initialising both take from it.

use std::path::{Path, PathBuf};

/// The component this host was built with.
pub(crate) const COMPONENT: &[u8] = include_bytes!(env!("STRUCTURE_COMPONENT_WASM"));

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

/// Where compiled components (and, under `models/`, the embedded engine's models) are cached:
/// `$STRUCTURE_CACHE_DIR`, else `$XDG_CACHE_HOME/structure`, else `~/.cache/structure`.
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
