//! A runtime for profilers (`Runtime::profiled`, which `bench/stages.py` runs through
//! `structure-bench --perf-map`): it runs calls as any runtime does, and names each function it
//! compiles in Linux perf's map for this process.

#![cfg(target_os = "linux")]

use std::sync::Arc;

use structure_host::{Runtime, Structure};

#[tokio::test]
async fn a_profiled_runtime_runs_calls_and_names_its_code_for_perf() {
    // The component the host embeds, as cargo built it.
    let wasm = include_bytes!(env!("STRUCTURE_COMPONENT_WASM"));
    let runtime = Arc::new(Runtime::profiled(wasm).unwrap());
    let client = Structure::builder().runtime(runtime).build().unwrap();
    let definition = client.tool_definition().await.unwrap();
    assert_eq!(definition["name"], "structure");
    let path = format!("/tmp/perf-{}.map", std::process::id());
    let map = std::fs::read_to_string(&path).unwrap();
    let _ = std::fs::remove_file(&path);
    // One line a function: its address, size and name.
    assert!(map.lines().count() > 1_000, "{} lines", map.lines().count());
}
