//! Builds the component (the workspace's root crate, see `component-build`) so that a fresh
//! checkout needs no manual wasm step; the host embeds the result. Set
//! `STRUCTURE_COMPONENT=<path to .wasm>` to embed a prebuilt component instead.

use std::env;
use std::path::PathBuf;

fn main() {
    println!("cargo:rerun-if-env-changed=STRUCTURE_COMPONENT");
    if let Ok(prebuilt) = env::var("STRUCTURE_COMPONENT") {
        println!("cargo:rustc-env=STRUCTURE_COMPONENT_WASM={prebuilt}");
        println!("cargo:rerun-if-changed={prebuilt}");
        return;
    }
    let host_dir =
        PathBuf::from(env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"));
    let workspace = host_dir
        .parent()
        .expect("the host crate lives inside the workspace")
        .to_path_buf();
    for input in [
        "src",
        "wit",
        "schemas",
        "console",
        "Cargo.toml",
        "Cargo.lock",
        // The component's link flags (its stack size).
        ".cargo/config.toml",
    ] {
        println!("cargo:rerun-if-changed={}", workspace.join(input).display());
    }
    let target_dir =
        env::var_os("CARGO_TARGET_DIR").map_or_else(|| workspace.join("target"), PathBuf::from);
    match component_build::build(&workspace, &target_dir) {
        Ok(component) => println!(
            "cargo:rustc-env=STRUCTURE_COMPONENT_WASM={}",
            component.display()
        ),
        Err(message) => panic!("building the component failed: {message}"),
    }
}
