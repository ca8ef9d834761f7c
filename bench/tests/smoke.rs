//! The end-to-end benchmark runs (with a tiny N) and its counts hold: exactly one LLM call for a
//! valid first answer, two after one violation, none for the builder on a cache hit. Timings are
//! not checked here (see BENCHMARKS.md).

use serde_json::Value;

#[test]
fn the_benchmark_runs_and_counts_llm_calls_exactly() {
    let out = tempfile_path("structure-bench.json");
    let status = std::process::Command::new(env!("CARGO_BIN_EXE_structure-bench"))
        .args(["--calls", "2", "--warmup", "1", "--json"])
        .arg(&out)
        .status()
        .unwrap();
    assert!(status.success());
    let report: Value = serde_json::from_slice(&std::fs::read(&out).unwrap()).unwrap();
    let rows = report["rows"].as_array().unwrap();
    let calls = |scenario: &str, mode: &str| {
        rows.iter()
            .find(|row| row["scenario"] == scenario && row["mode"] == mode)
            .unwrap_or_else(|| panic!("no row {scenario} / {mode}"))["llmCallsPerCall"]
            .as_f64()
            .unwrap()
    };
    for mode in ["fresh instance", "reused instance"] {
        assert_eq!(calls("valid", mode), 1.0);
        assert_eq!(calls("one violation", mode), 2.0);
        assert_eq!(calls("need", mode), 1.0);
        assert_eq!(
            calls("builder cache hit", mode),
            1.0,
            "no builder call on a hit"
        );
    }
    assert!(report["instantiateAndCall"]["wallP50Ms"].as_f64().unwrap() > 0.0);
    let _ = std::fs::remove_file(out);
}

fn tempfile_path(name: &str) -> std::path::PathBuf {
    std::env::temp_dir().join(format!("{}-{name}", std::process::id()))
}

#[test]
fn the_load_test_runs_without_errors() {
    let out = tempfile_path("structure-load.json");
    let status = std::process::Command::new(env!("CARGO_BIN_EXE_structure-load"))
        .args(["--requests", "40", "--clients", "8", "--json"])
        .arg(&out)
        .status()
        .unwrap();
    assert!(status.success(), "the load test reports failed requests");
    let report: Value = serde_json::from_slice(&std::fs::read(&out).unwrap()).unwrap();
    assert_eq!(report["errors"], 0);
    assert_eq!(report["llmRequestsAtTheMock"], 40);
    let _ = std::fs::remove_file(out);
}

#[test]
fn the_records_benchmark_finds_every_order_once() {
    let out = tempfile_path("structure-records.json");
    // The bench itself fails unless every planted order came back once, in order.
    let status = std::process::Command::new(env!("CARGO_BIN_EXE_structure-records"))
        .args(["--latency-ms", "5", "--sizes", "10000,60000", "--json"])
        .arg(&out)
        .status()
        .unwrap();
    assert!(status.success());
    let report: Value = serde_json::from_slice(&std::fs::read(&out).unwrap()).unwrap();
    let rows = report["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 2);
    for row in rows {
        assert_eq!(row["found"], row["planted"]);
        assert_eq!(row["calls"], row["chunks"], "one call a chunk");
    }
    assert!(rows[1]["chunks"].as_u64().unwrap() > 1);
    let _ = std::fs::remove_file(out);
}
