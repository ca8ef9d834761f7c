//! Builds the component (the workspace's root crate) for `wasm32-wasip2` with the size-optimised
//! `component` profile, so that a fresh checkout needs no manual wasm step. The host embeds the
//! result. Set `STRUCTURE_COMPONENT=<path to .wasm>` to embed a prebuilt component instead.

use std::env;
use std::path::PathBuf;
use std::process::Command;

fn main() {
    println!("cargo:rerun-if-env-changed=STRUCTURE_COMPONENT");
    if let Ok(prebuilt) = env::var("STRUCTURE_COMPONENT") {
        println!("cargo:rustc-env=STRUCTURE_COMPONENT_WASM={prebuilt}");
        println!("cargo:rerun-if-changed={prebuilt}");
        return;
    }
    let host_dir =
        PathBuf::from(env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"));
    let root = host_dir
        .parent()
        .expect("the host crate lives inside the workspace")
        .to_path_buf();
    for input in ["src", "wit", "schemas", "Cargo.toml", "Cargo.lock"] {
        println!("cargo:rerun-if-changed={}", root.join(input).display());
    }
    // A target directory of its own: the outer build holds the lock on the workspace's.
    let target_dir = env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| root.join("target"))
        .join("component");
    let cargo = env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
    let status = Command::new(cargo)
        .current_dir(&root)
        .args([
            "build",
            "--package",
            "structure",
            "--lib",
            "--target",
            "wasm32-wasip2",
            "--profile",
            "component",
        ])
        .arg("--target-dir")
        .arg(&target_dir)
        // Flags meant for the host build (and clippy's wrapper) must not leak into the wasm build.
        .env_remove("CARGO_ENCODED_RUSTFLAGS")
        .env_remove("RUSTFLAGS")
        .env_remove("RUSTC_WORKSPACE_WRAPPER")
        .env_remove("CARGO_BUILD_TARGET")
        .status()
        .expect("cannot run cargo to build the component");
    if !status.success() {
        panic!(
            "building the component failed: cargo build --package structure --target wasm32-wasip2 --profile component"
        );
    }
    let wasm = target_dir
        .join("wasm32-wasip2")
        .join("component")
        .join("structure.wasm");
    println!(
        "cargo:rustc-env=STRUCTURE_COMPONENT_WASM={}",
        wasm.display()
    );
}
