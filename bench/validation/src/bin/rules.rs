//! What a rule across fields costs (BENCHMARKS.md, "Rules across fields"): an order schema
//! with and without its rules, each answer validated many times, and a hostile rule that runs
//! until the budget stops it. `cargo run --release -p validation-bench --bin rules`.

use std::time::Instant;

use serde_json::{Value, json};
use structure::schema::validator::CompiledSchema;

fn order(rules: bool, items: usize) -> (Value, Value) {
    let mut schema = json!({
        "type": "object",
        "properties": {
            "items": { "type": "array", "maxItems": 100, "items": { "type": "object",
                "properties": { "sku": { "type": "string", "maxLength": 20 }, "price": { "type": "number" },
                                "quantity": { "type": "integer" } },
                "required": ["sku", "price", "quantity"] } },
            "total": { "type": "number" },
            "discount": { "type": "number" },
            "discountReason": { "type": "string", "maxLength": 200 },
            "start": { "type": "string", "format": "date-time" },
            "end": { "type": "string", "format": "date-time" }
        },
        "required": ["items", "total", "start", "end"]
    });
    if rules {
        schema["x-kubernetes-validations"] = json!([
            { "rule": "self.items.map(i, i.price * double(i.quantity)).sum() == self.total" },
            { "rule": "timestamp(self.end) > timestamp(self.start)" },
            { "rule": "!has(self.discount) || self.discount == 0.0 || has(self.discountReason)" }
        ]);
    }
    let lines: Vec<Value> = (0..items)
        .map(|at| json!({ "sku": format!("SKU-{at}"), "price": 2.5, "quantity": 2 }))
        .collect();
    #[allow(clippy::cast_precision_loss)]
    let total = 5.0 * items as f64;
    let answer = json!({ "items": lines, "total": total, "discount": 1.0, "discountReason": "loyal",
                         "start": "2026-05-08T09:00:00Z", "end": "2026-05-09T17:00:00Z" });
    (schema, answer)
}

/// Microseconds one validation of `answer` takes, over `rounds`.
fn per_validation(schema: &Value, answer: &Value, rounds: u32) -> f64 {
    let compiled = CompiledSchema::compile(schema).expect("the schema compiles");
    assert!(
        compiled.violations(answer).is_empty(),
        "{:?}",
        compiled.violations(answer)
    );
    let started = Instant::now();
    for _ in 0..rounds {
        assert!(compiled.is_valid(answer));
    }
    started.elapsed().as_secs_f64() * 1e6 / f64::from(rounds)
}

fn main() {
    println!("items  without rules µs  with 3 rules µs  per rule µs");
    for items in [2, 10, 100] {
        let (plain, answer) = order(false, items);
        let (ruled, _) = order(true, items);
        let without = per_validation(&plain, &answer, 20_000);
        let with = per_validation(&ruled, &answer, 20_000);
        println!(
            "{items:>5}  {without:>18.2}  {with:>15.2}  {:>11.2}",
            (with - without) / 3.0
        );
    }
    let started = Instant::now();
    let compiled = CompiledSchema::compile(&order(true, 2).0).expect("compiles");
    println!(
        "compile with 3 rules: {:.0} µs (first, env built)",
        started.elapsed().as_secs_f64() * 1e6
    );
    let _ = compiled;
    let hostile = json!({ "type": "object", "x-structure-rules": [{ "rule":
        "self.items.all(a, self.items.all(b, self.items.all(c, self.items.all(d, a + b + c + d >= 0))))" }] });
    let items: Vec<i64> = (0..400).collect();
    let compiled = CompiledSchema::compile_checked(&hostile).expect("compiles");
    let started = Instant::now();
    let found = compiled.violations(&json!({ "items": items }));
    println!(
        "hostile rule (4 nested loops over 400 items): stopped by the budget in {:.1} ms: {}",
        started.elapsed().as_secs_f64() * 1e3,
        found.first().map(ToString::to_string).unwrap_or_default()
    );
}
