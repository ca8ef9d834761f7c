//! Builds the component (the workspace's root crate, see `component-build`) so that a fresh
//! checkout needs no manual wasm step; the host embeds the result. Set
//! `STRUCTURE_COMPONENT=<path to .wasm>` to embed a prebuilt component instead.
//!
//! Builds the console's component too (`console/`, which Spin runs for `/console`): the host
//! serves the console's files natively and does not embed it, but its tests run it, and Spin's
//! manifest finds it where this build leaves it.

use std::env;
use std::path::PathBuf;

fn main() {
    println!("cargo:rerun-if-env-changed=STRUCTURE_COMPONENT");
    let host_dir =
        PathBuf::from(env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"));
    let workspace = host_dir
        .parent()
        .expect("the host crate lives inside the workspace")
        .to_path_buf();
    let target_dir =
        env::var_os("CARGO_TARGET_DIR").map_or_else(|| workspace.join("target"), PathBuf::from);
    // What both components are built from; `.cargo/config.toml` holds their link flags (the
    // stack size).
    for input in ["console", "wit", "Cargo.lock", ".cargo/config.toml"] {
        println!("cargo:rerun-if-changed={}", workspace.join(input).display());
    }
    let console = component_build::build_console(&workspace, &target_dir);
    set_path("STRUCTURE_CONSOLE_WASM", "the console's component", console);
    if let Ok(prebuilt) = env::var("STRUCTURE_COMPONENT") {
        println!("cargo:rustc-env=STRUCTURE_COMPONENT_WASM={prebuilt}");
        println!("cargo:rerun-if-changed={prebuilt}");
        return;
    }
    for input in ["src", "schemas", "Cargo.toml"] {
        println!("cargo:rerun-if-changed={}", workspace.join(input).display());
    }
    let component = component_build::build(&workspace, &target_dir);
    set_path("STRUCTURE_COMPONENT_WASM", "the component", component);
}

/// Sets `variable` to the path of what was built, for the crate's `include_bytes!` and tests;
/// a build that failed fails the host's build, naming `what`.
fn set_path(variable: &str, what: &str, built: Result<PathBuf, String>) {
    match built {
        Ok(path) => println!("cargo:rustc-env={variable}={}", path.display()),
        Err(message) => panic!("building {what} failed: {message}"),
    }
}
