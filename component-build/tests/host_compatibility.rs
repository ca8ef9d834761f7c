//! The built component imports nothing a Spin 4 host (WASI 0.2.6, keyvalue draft2 with its
//! atomics, config draft 2024-09-27) does not offer, at exactly those versions; the console's
//! component imports WASI 0.2.6 alone.

use std::path::PathBuf;

use component_build::{WASI_VERSION, build, build_console, imports};

fn workspace() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn target_world(name: &str) -> (wit_parser::Resolve, wit_parser::WorldId) {
    let mut resolve = wit_parser::Resolve::default();
    let (package, _) = resolve
        .push_dir(workspace().join("wit"))
        .expect("the WIT package parses");
    let world = resolve
        .select_world(&[package], Some(name))
        .expect("the world exists");
    (resolve, world)
}

#[test]
fn the_component_conforms_to_the_spin_compatible_host_world() {
    let target_dir = target_dir();
    let component = std::fs::read(build(&workspace(), &target_dir).unwrap()).unwrap();
    let names = imports(&component).unwrap();
    let allowed_prefixes = [
        "wasi:cli/",
        "wasi:clocks/",
        "wasi:io/",
        "wasi:random/",
        "wasi:http/",
    ];
    for name in &names {
        let versioned_wasi = allowed_prefixes
            .iter()
            .any(|prefix| name.starts_with(prefix));
        let extra = [
            "wasi:keyvalue/store@0.2.0-draft2",
            "wasi:keyvalue/atomics@0.2.0-draft2",
            "wasi:config/store@0.2.0-draft-2024-09-27",
        ]
        .contains(&name.as_str());
        assert!(
            extra || (versioned_wasi && name.ends_with(&format!("@{WASI_VERSION}"))),
            "unexpected import {name}"
        );
    }
    assert!(names.contains(&format!("wasi:http/outgoing-handler@{WASI_VERSION}")));
    assert!(names.contains(&"wasi:config/store@0.2.0-draft-2024-09-27".to_owned()));

    // Structural check, names matched exactly: every imported function and type exists, with
    // the same signature, in the 0.2.6 WIT, and the component exports `structuring`.
    let (resolve, world) = target_world("spin-compatible-host");
    wit_component::targets(&resolve, world, &component, false)
        .expect("the component targets the host world");

    // The same check fails for the unpinned build: the test can tell the difference.
    let unpinned =
        std::fs::read(target_dir.join("component/wasm32-wasip2/component/structure.wasm")).unwrap();
    assert!(wit_component::targets(&resolve, world, &unpinned, false).is_err());
}

#[test]
fn the_consoles_component_asks_for_wasi_alone() {
    let console = std::fs::read(build_console(&workspace(), &target_dir()).unwrap()).unwrap();
    for name in imports(&console).unwrap() {
        assert!(
            name.starts_with("wasi:") && name.ends_with(&format!("@{WASI_VERSION}")),
            "unexpected import {name}"
        );
        assert!(!name.starts_with("wasi:keyvalue") && !name.starts_with("wasi:config"));
    }
    let (resolve, world) = target_world("spin-compatible-console");
    wit_component::targets(&resolve, world, &console, false)
        .expect("the console targets WASI 0.2.6 and exports the incoming handler");
    // Nothing of the API: the console world's export is all it has.
    let (resolve, world) = target_world("spin-compatible-host");
    assert!(wit_component::targets(&resolve, world, &console, false).is_err());
}

fn target_dir() -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR").map_or_else(|| workspace().join("target"), PathBuf::from)
}
