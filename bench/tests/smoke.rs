//! The end-to-end benchmark runs (with a tiny N) and its counts hold: exactly one LLM call for a
//! valid first answer, two after one violation, none for the builder on a cache hit. Timings are
//! not checked here (see BENCHMARKS.md).

use serde_json::Value;

#[test]
fn the_benchmark_runs_and_counts_llm_calls_exactly() {
    let report = report_of(
        env!("CARGO_BIN_EXE_structure-bench"),
        &["--calls", "2", "--warmup", "1"],
        "the benchmark failed",
    );
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
}

#[test]
fn a_profilers_run_makes_calls_of_one_scenario_and_says_when_they_start() {
    // What `bench/stages.py` runs under `perf record`: the control file is written after the
    // warm-up calls, so only the measured calls are sampled.
    let control = std::env::temp_dir().join(format!("{}-perf-control", std::process::id()));
    let bench = env!("CARGO_BIN_EXE_structure-bench");
    let run = |scenario: &str| {
        std::process::Command::new(bench)
            .args([
                "--callgrind",
                "--calls",
                "2",
                "--scenario",
                scenario,
                "--perf-control",
            ])
            .arg(&control)
            .output()
            .unwrap()
    };
    assert!(run("inline").status.success());
    assert_eq!(std::fs::read_to_string(&control).unwrap(), "enable\n");
    std::fs::remove_file(&control).unwrap();
    let unknown = run("nonsense");
    assert!(!unknown.status.success());
    assert!(String::from_utf8_lossy(&unknown.stderr).contains("no scenario \"nonsense\""));
    assert!(!control.exists(), "nothing started");
}

#[test]
fn after_a_fresh_call_the_reset_goes_over_little_more_than_the_pages_it_wrote() {
    // wasmtime's reset of a pooled slot (with Linux's PAGEMAP_SCAN) also writes every page the
    // instance never touched, and the slot keeps those pages as its own from then on: 383 of
    // the 896 pages were reset after every valid call until the component read every page
    // before returning where the host keeps memory resident (src/wasi/pages.rs; the host says
    // so itself); now about 52, the pages a call writes.
    let Some((reset, all)) = pages_reset(None) else {
        return;
    };
    assert!(
        reset * 10 < all,
        "{reset} of {all} pages reset after a valid call: more than the call writes"
    );
    // Told otherwise, the component leaves the pages alone, and the reset writes the holes.
    let (off, _) = pages_reset(Some("off")).unwrap();
    assert!(
        off > reset * 2,
        "{off} pages reset when off, {reset} when on: does this kernel's PAGEMAP_SCAN no longer \
         report a page never touched as written? Then the reads are not needed \
         (docs/history/benchmarks.md, \"Fourth turn\")"
    );
}

/// The pages `structure-bench --dirty-pages` says the reset goes over after a valid call, and
/// the memory's pages; `None` (said) where the kernel has no PAGEMAP_SCAN.
fn pages_reset(kept_resident: Option<&str>) -> Option<(usize, usize)> {
    let mut bench = std::process::Command::new(env!("CARGO_BIN_EXE_structure-bench"));
    bench.args([
        "--callgrind",
        "--dirty-pages",
        "--scenario",
        "valid",
        "--calls",
        "2",
    ]);
    if let Some(value) = kept_resident {
        bench.env("STRUCTURE_MEMORY_KEPT_RESIDENT", value);
    }
    let run = bench.output().unwrap();
    let stderr = String::from_utf8_lossy(&run.stderr);
    if stderr.contains("PAGEMAP_SCAN failed") {
        eprintln!("not checked: this kernel has no PAGEMAP_SCAN, so wasmtime resets otherwise");
        return None;
    }
    assert!(run.status.success(), "{stderr}");
    let stdout = String::from_utf8_lossy(&run.stdout);
    let counts = (stdout.strip_prefix("pages reset a call: "))
        .and_then(|rest| rest.split_once(" ("))
        .and_then(|(counts, _)| counts.split_once(" of "))
        .and_then(|(reset, all)| Some((reset.parse().ok()?, all.parse().ok()?)));
    Some(counts.unwrap_or_else(|| panic!("unexpected report: {stdout}")))
}

/// Runs the bench `program` with `args` and `--json FILE`, and reads FILE; `failure` when the
/// program fails.
fn report_of(program: &str, args: &[&str], failure: &str) -> Value {
    let name = std::path::Path::new(program)
        .file_name()
        .unwrap()
        .to_string_lossy();
    let out = std::env::temp_dir().join(format!("{}-{name}.json", std::process::id()));
    let status = std::process::Command::new(program)
        .args(args)
        .arg("--json")
        .arg(&out)
        .status()
        .unwrap();
    assert!(status.success(), "{failure}");
    let report = serde_json::from_slice(&std::fs::read(&out).unwrap()).unwrap();
    let _ = std::fs::remove_file(out);
    report
}

#[test]
fn the_load_test_runs_without_errors() {
    let report = report_of(
        env!("CARGO_BIN_EXE_structure-load"),
        &["--requests", "40", "--clients", "8"],
        "the load test reports failed requests",
    );
    assert_eq!(report["errors"], 0);
    assert_eq!(report["llmRequestsAtTheMock"], 40);
}

#[test]
fn the_records_benchmark_finds_every_order_once() {
    // The bench itself fails unless every planted order came back once, in order.
    let report = report_of(
        env!("CARGO_BIN_EXE_structure-records"),
        &["--latency-ms", "5", "--sizes", "10000,60000"],
        "an order did not come back once",
    );
    let rows = report["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 2);
    for row in rows {
        assert_eq!(row["found"], row["planted"]);
        assert_eq!(row["calls"], row["chunks"], "one call a chunk");
    }
    assert!(rows[1]["chunks"].as_u64().unwrap() > 1);
}

#[test]
fn the_long_text_benchmark_gets_the_object_whole_within_chunks_and_two_calls() {
    // The bench itself fails unless the object came back whole.
    let report = report_of(
        env!("CARGO_BIN_EXE_structure-long-text"),
        &["--latency-ms", "5", "--sizes", "10000,60000"],
        "the object did not come back whole",
    );
    let rows = report["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 2);
    for row in rows {
        assert!(row["calls"].as_u64() <= row["chunks"].as_u64().map(|chunks| chunks.max(1) + 2));
    }
    assert!(rows[1]["chunks"].as_u64().unwrap() > 1);
}
