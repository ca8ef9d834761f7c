//! `validation-bench [ITERATIONS]`: validates the benchmark fixtures (benches/fixtures.json)
//! against the bundled schemas with the core's validator and prints one JSON line per case with
//! nanoseconds per validation. The same program runs natively and, built for wasm32-wasip2, in
//! wasmtime (`structure-bench --wasm-validation FILE`), so the two can be compared.

use std::time::Instant;

use serde_json::{Value, json};
use structure::ports::MemoryKeyValue;
use structure::schema::registry::Registry;
use structure::schema::validator::CompiledSchema;

fn main() {
    let iterations: u32 = std::env::args()
        .nth(1)
        .map_or(Ok(20_000), |text| text.parse())
        .unwrap_or_else(|_| {
            eprintln!("usage: validation-bench [ITERATIONS]");
            std::process::exit(2)
        });
    let fixtures: Value = serde_json::from_str(include_str!("../../../benches/fixtures.json"))
        .expect("benches/fixtures.json is JSON");
    let key_value = MemoryKeyValue::default();
    let scope = structure::Scope::default();
    let registry = Registry::new(&key_value, &scope);
    let Value::Object(cases) = fixtures else {
        unreachable!("the fixtures are an object of schema names")
    };
    for (name, instances) in cases {
        let schema = Value::clone(&registry.find(&name).expect("a bundled schema").schema);
        // A fresh `$comment` each time: the instance's cache of compiled schemas must not answer.
        let mut variant = 0u64;
        let compile_ns = per_iteration(iterations / 20, || {
            let mut schema = schema.clone();
            variant += 1;
            schema["$comment"] = json!(format!("variant {variant}"));
            CompiledSchema::compile(&schema).expect("compiles");
        });
        let compile_checked_ns = per_iteration(iterations / 20, || {
            let mut schema = schema.clone();
            variant += 1;
            schema["$comment"] = json!(format!("variant {variant}"));
            CompiledSchema::compile_checked(&schema).expect("compiles");
        });
        let compiled = CompiledSchema::compile(&schema).expect("compiles");
        let valid = &instances["valid"];
        let invalid = &instances["invalid"];
        let valid_ns = per_iteration(iterations, || assert!(compiled.is_valid(valid)));
        let invalid_ns = per_iteration(iterations / 10, || {
            assert!(!compiled.violations(invalid).is_empty());
        });
        let line = json!({ "schema": name, "compileNs": compile_ns, "compileCheckedNs": compile_checked_ns, "validNs": valid_ns, "invalidWithViolationsNs": invalid_ns });
        println!("{line}");
    }
}

fn per_iteration(iterations: u32, mut work: impl FnMut()) -> f64 {
    let iterations = iterations.max(1);
    for _ in 0..iterations / 10 {
        work();
    }
    let started = Instant::now();
    for _ in 0..iterations {
        work();
    }
    started.elapsed().as_nanos() as f64 / f64::from(iterations)
}
