//! The host's modules import one way, as the core's do: every `crate::` path in `host/src/`
//! points down the module map at the top of `host/src/lib.rs`, and the files inside each module
//! import each other without a cycle.

#[path = "../../tests/support/layering.rs"]
mod layering;

use std::path::PathBuf;

fn src() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("src")
}

#[test]
fn every_import_points_down_the_module_map() {
    layering::imports_point_down_the_module_map(&src());
}

#[test]
fn the_files_of_each_module_import_each_other_without_a_cycle() {
    layering::files_import_without_a_cycle(&src());
}

#[test]
fn no_file_takes_anything_from_its_folders_mod_rs() {
    layering::nothing_is_taken_from_mod_rs(&src());
}
