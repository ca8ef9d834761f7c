//! Builds the `structure` component (and the console's small one beside it, see
//! [`build_console`]) and pins the WASI version they import.
//!
//! `cargo build --target wasm32-wasip2` links Rust's standard library, whose WASI bindings are
//! newer (0.2.12 with Rust 1.99) than what Spin ships (0.2.6); the component model then lifts
//! every `wasi:*@0.2.x` import of the component to the newest version seen. The interfaces the
//! component uses exist unchanged since 0.2.0, so [`pin_wasi_imports`] renames its top-level
//! imports to `@0.2.6` (a test checks every imported function exists in the vendored 0.2.6 WIT).
//! Then, with the `optimize` feature (the host's build turns it on), `optimize_core_modules`
//! runs Binaryen's size optimiser (`wasm-opt -Os`) over the core modules inside the component,
//! as `jco opt` does: rustc's LLVM leaves about 14 % that Binaryen removes, with fewer
//! instructions a call too (docs/history/benchmarks.md, "Sizes").
//!
//! ```text
//! cargo run -p component-build --features optimize   # prints the paths of the two components
//! ```

use std::path::{Path, PathBuf};
use std::process::Command;

use wasmparser::{Parser, Payload};

/// The WASI 0.2 version the component imports: what Spin 4 ships.
pub const WASI_VERSION: &str = "0.2.6";

/// Where the built component lands, relative to the target directory (with the `optimize`
/// feature, which the host's build turns on: what the host embeds and pre-initialises).
pub const COMPONENT_FILE: &str = "component/structure.wasm";
/// Where the component lands before Binaryen, relative to the target directory: what a build
/// without the `optimize` feature returns (the imports and exports are the same).
pub const UNOPTIMIZED_FILE: &str = "component/structure.unoptimized.wasm";
/// Where, under the target directory, the pre-initialised component goes (`structure component
/// --output`, see the host's `preinit`): what Spin runs and the npm package ships.
pub const READY_FILE: &str = "component/structure.ready.wasm";

/// Where the console's component lands, relative to the target directory: the `console/` crate
/// built for `wasm32-wasip2` with its WASI imports pinned (see [`build_console`]).
pub const CONSOLE_FILE: &str = "component/console.wasm";

/// Builds the root crate for `wasm32-wasip2` with the `component` profile into
/// `<target_dir>/component`, pins its WASI imports, optimises it with the `optimize` feature
/// ([`COMPONENT_FILE`], else [`UNOPTIMIZED_FILE`]), and returns the path of the result.
pub fn build(workspace: &Path, target_dir: &Path) -> Result<PathBuf, String> {
    let pinned = pinned_component(workspace, target_dir, "structure", "structure.wasm")?;
    let unoptimized = target_dir.join(UNOPTIMIZED_FILE);
    write(&unoptimized, &pinned)?;
    #[cfg(feature = "optimize")]
    {
        let build_dir = target_dir.join("component");
        optimized(&pinned, &build_dir, &target_dir.join(COMPONENT_FILE))
    }
    #[cfg(not(feature = "optimize"))]
    {
        Ok(unoptimized)
    }
}

/// Builds the console's component (the `structure-console` crate) as [`build`] builds the API's,
/// without Binaryen (its code is a few kilobytes beside its files), into [`CONSOLE_FILE`], and
/// returns its path.
pub fn build_console(workspace: &Path, target_dir: &Path) -> Result<PathBuf, String> {
    let pinned = pinned_component(
        workspace,
        target_dir,
        "structure-console",
        "structure_console.wasm",
    )?;
    let out = target_dir.join(CONSOLE_FILE);
    write(&out, &pinned)?;
    Ok(out)
}

/// `package`'s library built for `wasm32-wasip2` with the `component` profile into
/// `<target_dir>/component` (where cargo names it `built`), its WASI imports pinned.
fn pinned_component(
    workspace: &Path,
    target_dir: &Path,
    package: &str,
    built: &str,
) -> Result<Vec<u8>, String> {
    let build_dir = target_dir.join("component");
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
    let status = Command::new(cargo)
        .current_dir(workspace)
        .args(["build", "--package", package, "--lib"])
        .args(["--target", "wasm32-wasip2", "--profile", "component"])
        .arg("--target-dir")
        .arg(&build_dir)
        // Flags meant for a host build (and clippy's wrapper) must not leak into the wasm build.
        .env_remove("CARGO_ENCODED_RUSTFLAGS")
        .env_remove("RUSTFLAGS")
        .env_remove("RUSTC_WORKSPACE_WRAPPER")
        .env_remove("CARGO_BUILD_TARGET")
        .status()
        .map_err(|error| format!("cannot run cargo: {error}"))?;
    if !status.success() {
        return Err(format!(
            "cargo build --package {package} --target wasm32-wasip2 --profile component failed"
        ));
    }
    let built = build_dir.join("wasm32-wasip2/component").join(built);
    let bytes = std::fs::read(&built)
        .map_err(|error| format!("cannot read {}: {error}", built.display()))?;
    pin_wasi_imports(&bytes, WASI_VERSION)
}

/// `pinned` through [`optimize_core_modules`] into `out`, unless `out` was made from these very
/// bytes by this very optimiser: it takes seconds.
#[cfg(feature = "optimize")]
fn optimized(pinned: &[u8], build_dir: &Path, out: &Path) -> Result<PathBuf, String> {
    // Written after `out`, so a failed run leaves no false match.
    let stamp_file = build_dir.join("structure.optimized-from");
    let stamp = made_from(pinned);
    if out.exists() && std::fs::read(&stamp_file).ok().as_deref() == Some(stamp.as_slice()) {
        return Ok(out.to_path_buf());
    }
    write(out, &optimize_core_modules(pinned, build_dir)?)?;
    write(&stamp_file, &stamp)?;
    Ok(out.to_path_buf())
}

/// What an optimised component is made from: the optimiser (this program's own build, so that
/// other options or another Binaryen optimise again) and the pinned component's bytes.
#[cfg(feature = "optimize")]
fn made_from(pinned: &[u8]) -> Vec<u8> {
    let optimiser = std::env::current_exe()
        .and_then(std::fs::metadata)
        .map(|built| format!("{:?} {}", built.modified().ok(), built.len()))
        .unwrap_or_default();
    let mut stamp = optimiser.into_bytes();
    stamp.push(b'\n');
    stamp.extend_from_slice(pinned);
    stamp
}

/// Writes `bytes` to `path` unless it already holds them: an untouched file rebuilds no
/// dependant.
fn write(path: &Path, bytes: &[u8]) -> Result<(), String> {
    if std::fs::read(path).ok().as_deref() == Some(bytes) {
        return Ok(());
    }
    std::fs::write(path, bytes).map_err(|error| format!("cannot write {}: {error}", path.display()))
}

/// Runs Binaryen's `-Os` over each core module `component` embeds and returns the component
/// with the optimised modules in their places; every other section is copied as it is.
/// `scratch` holds the modules while Binaryen reads and writes them (it takes files).
///
/// The features enabled are those the component's code uses (rustc's default `wasm32` CPU, and
/// SIMD: `.cargo/config.toml` enables `simd128`), which every host it runs on supports: Binaryen
/// refuses a module that uses any other, and its passes introduce none.
#[cfg(feature = "optimize")]
pub fn optimize_core_modules(component: &[u8], scratch: &Path) -> Result<Vec<u8>, String> {
    let mut options = wasm_opt::OptimizationOptions::new_optimize_for_size();
    options.debug_info(false);
    for feature in [
        wasm_opt::Feature::MutableGlobals,
        wasm_opt::Feature::TruncSat,
        wasm_opt::Feature::BulkMemory,
        wasm_opt::Feature::SignExt,
        wasm_opt::Feature::ReferenceTypes,
        wasm_opt::Feature::Multivalue,
        wasm_opt::Feature::Simd,
    ] {
        options.enable_feature(feature);
    }
    std::fs::create_dir_all(scratch)
        .map_err(|error| format!("cannot create {}: {error}", scratch.display()))?;
    let input = scratch.join("core-module.wasm");
    let output = scratch.join("core-module.opt.wasm");
    let mut out = wasm_encoder::Component::new();
    for_each_top_level_payload(component, |payload| {
        let Some((id, range)) = payload.as_section() else {
            return Ok(());
        };
        let section = &component[range.start as usize..range.end as usize];
        if !matches!(payload, Payload::ModuleSection { .. }) {
            out.section(&wasm_encoder::RawSection { id, data: section });
            return Ok(());
        }
        write(&input, section)?;
        options
            .run(&input, &output)
            .map_err(|error| format!("wasm-opt -Os failed on a core module: {error}"))?;
        let optimized = std::fs::read(&output)
            .map_err(|error| format!("cannot read {}: {error}", output.display()))?;
        out.section(&wasm_encoder::RawSection {
            id,
            data: &optimized,
        });
        Ok(())
    })?;
    Ok(out.finish())
}

/// Renames every top-level `wasi:<package>/<interface>@0.2.N` import with N above `version`'s
/// patch to `@<version>`.
pub fn pin_wasi_imports(component: &[u8], version: &str) -> Result<Vec<u8>, String> {
    let mut out = wasm_encoder::Component::new();
    for_each_top_level_payload(component, |payload| {
        match payload {
            Payload::ComponentImportSection(reader) => {
                let mut imports = wasm_encoder::ComponentImportSection::new();
                for import in reader.clone() {
                    let import = import.map_err(text)?;
                    let name = pin_name(&import.name.full_name(), version);
                    imports.import(name.as_str(), import.ty.into());
                }
                out.section(&imports);
            }
            other => {
                if let Some((id, range)) = other.as_section() {
                    let range = range.start as usize..range.end as usize;
                    out.section(&wasm_encoder::RawSection {
                        id,
                        data: &component[range],
                    });
                }
            }
        }
        Ok(())
    })?;
    Ok(out.finish())
}

/// The component's top-level import names.
pub fn imports(component: &[u8]) -> Result<Vec<String>, String> {
    let mut names = Vec::new();
    for_each_top_level_payload(component, |payload| {
        if let Payload::ComponentImportSection(reader) = payload {
            for import in reader.clone() {
                names.push(import.map_err(text)?.name.full_name().into_owned());
            }
        }
        Ok(())
    })?;
    Ok(names)
}

/// Calls `visit` with each section of the outermost component, in order; nested modules and
/// components arrive as one payload each and are not entered.
fn for_each_top_level_payload(
    component: &[u8],
    mut visit: impl FnMut(&Payload<'_>) -> Result<(), String>,
) -> Result<(), String> {
    let mut parser = Parser::new(0);
    let mut offset = 0;
    loop {
        let (payload, consumed) = match parser.parse(&component[offset..], true).map_err(text)? {
            wasmparser::Chunk::Parsed { payload, consumed } => (payload, consumed),
            wasmparser::Chunk::NeedMoreData(_) => {
                return Err("the component is truncated".to_owned());
            }
        };
        match &payload {
            Payload::Version { encoding, .. } if *encoding != wasmparser::Encoding::Component => {
                return Err("not a component: a core module".to_owned());
            }
            Payload::Version { .. } => {}
            Payload::End(_) => return Ok(()),
            other => visit(other)?,
        }
        // The parser steps over a nested module or component's header only.
        offset += consumed + nested_size(&payload);
    }
}

fn nested_size(payload: &Payload<'_>) -> usize {
    match payload {
        Payload::ModuleSection {
            unchecked_range, ..
        }
        | Payload::ComponentSection {
            unchecked_range, ..
        } => (unchecked_range.end - unchecked_range.start) as usize,
        _ => 0,
    }
}

/// `wasi:io/streams@0.2.12` → `wasi:io/streams@0.2.6`; any other name is kept.
fn pin_name(name: &str, version: &str) -> String {
    let Some((interface, current)) = name.split_once('@') else {
        return name.to_owned();
    };
    let patch = |version: &str| {
        version
            .strip_prefix("0.2.")
            .and_then(|patch| patch.parse::<u32>().ok())
    };
    match (patch(current), patch(version)) {
        (Some(current), Some(pinned)) if interface.starts_with("wasi:") && current > pinned => {
            format!("{interface}@{version}")
        }
        _ => name.to_owned(),
    }
}

fn text(error: impl std::fmt::Display) -> String {
    error.to_string()
}

#[cfg(test)]
mod tests {
    use super::pin_name;

    #[test]
    fn only_newer_wasi_02_versions_are_pinned() {
        assert_eq!(
            pin_name("wasi:io/streams@0.2.12", "0.2.6"),
            "wasi:io/streams@0.2.6"
        );
        assert_eq!(
            pin_name("wasi:io/streams@0.2.3", "0.2.6"),
            "wasi:io/streams@0.2.3"
        );
        assert_eq!(
            pin_name("wasi:keyvalue/store@0.2.0-draft2", "0.2.6"),
            "wasi:keyvalue/store@0.2.0-draft2"
        );
        assert_eq!(
            pin_name("wasi:http/types@0.3.0", "0.2.6"),
            "wasi:http/types@0.3.0"
        );
        assert_eq!(
            pin_name("structure:tool/structuring@0.2.9", "0.2.6"),
            "structure:tool/structuring@0.2.9"
        );
        assert_eq!(pin_name("local-name", "0.2.6"), "local-name");
    }
}
