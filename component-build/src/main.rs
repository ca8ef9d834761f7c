//! `build-component`: builds the API's component with pinned WASI imports, optimised, and the
//! console's, and prints their paths (`target/component/structure.wasm`, then
//! `target/component/console.wasm`), for Spin, jco and anyone who wants the .wasm alone.

use std::path::PathBuf;

fn main() {
    let workspace = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
    let target_dir = std::env::var_os("CARGO_TARGET_DIR")
        .map_or_else(|| workspace.join("target"), PathBuf::from);
    for build in [component_build::build, component_build::build_console] {
        match build(&workspace, &target_dir) {
            Ok(path) => println!("{}", path.display()),
            Err(message) => {
                eprintln!("build-component: {message}");
                std::process::exit(1);
            }
        }
    }
}
