//! The host's modules import one way, as the core's do (`tests/layering.rs`, whose reader this
//! shares): every path into the crate that a file of `host/src/` names points down the module
//! map at the top of `host/src/lib.rs`; the files import each other without a cycle, `mod.rs`
//! files among them; so do the files and folders inside each folder; none takes anything from
//! its folder's `mod.rs`.

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
fn the_files_import_each_other_without_a_cycle() {
    layering::files_import_without_a_cycle(&src());
}

#[test]
fn the_files_and_folders_of_each_folder_import_each_other_without_a_cycle() {
    layering::modules_import_without_a_cycle(&src());
}

#[test]
fn no_file_takes_anything_from_its_folders_mod_rs() {
    layering::nothing_is_taken_from_mod_rs(&src());
}

/// The host uses the core through what the core's `lib.rs` offers at its root (the library's
/// functions and types, and what a host serving the HTTP API shares with the component: token
/// authentication, the metrics' schema labels, the body limit, the PDF rule) and through the
/// core's foundation modules, those its module map lets use nothing (`keys`, `ports`,
/// `outcome`, `time`, ...): never a path into a module above them, such as `structure::http_api`.
#[test]
fn the_host_uses_the_core_through_what_its_lib_rs_offers() {
    let core_lib =
        std::fs::read_to_string(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../src/lib.rs"))
            .unwrap();
    let code = layering::code(&core_lib);
    let mut offered: Vec<String> = layering::paths_after(&code, "pub use ")
        .into_iter()
        .filter_map(|leaf| leaf.name)
        .collect();
    offered.extend(
        layering::module_map(&core_lib)
            .into_iter()
            .filter(|row| row.may_use.is_empty())
            .map(|row| row.module),
    );
    assert!(offered.iter().any(|name| name == "structure"));
    assert!(offered.iter().any(|name| name == "keys"));
    let mut files = Vec::new();
    layering::rust_files(&src(), &mut files);
    let mut wrong = Vec::new();
    for file in &files {
        let code = layering::code(&std::fs::read_to_string(file).unwrap());
        for leaf in layering::paths_after(&code, "structure::") {
            if !offered.contains(&leaf.segments[0]) {
                wrong.push(format!(
                    "{}:{} uses structure::{}: use what the core's lib.rs offers ({offered:?})",
                    file.display(),
                    leaf.line,
                    leaf.segments.join("::")
                ));
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}
