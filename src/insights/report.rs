//! What the insights say, as JSON for the console and as CSV for a spreadsheet.

use serde_json::{Value, json};

use super::kept::Window;
use super::tally::Tally;

/// The JSON report of `tallies` over `window`: per schema its calls, status mix, iterations
/// histogram and mean, the most frequent reason categories and pointers, tokens, and latency
/// p50 and p95 (the upper bound of the bucket, in milliseconds; `null` above a minute).
pub fn json(window: Window, tallies: &[(String, Tally)]) -> Value {
    let schemas: Vec<Value> = (tallies.iter())
        .map(|(schema, tally)| {
            json!({
                "schema": schema,
                "calls": tally.calls,
                "statuses": tally.statuses,
                "iterations": tally.iterations.iter().map(|(iterations, calls)| json!({ "iterations": iterations, "calls": calls })).collect::<Vec<_>>(),
                "meanIterations": (tally.mean_iterations() * 100.0).round() / 100.0,
                "reasons": most_frequent(&tally.reasons, "category"),
                "pointers": most_frequent(&tally.pointers, "pointer"),
                "promptTokens": tally.prompt_tokens,
                "completionTokens": tally.completion_tokens,
                "latencyMs": { "p50": tally.latency_quantile(0.5), "p95": tally.latency_quantile(0.95) },
            })
        })
        .collect();
    json!({ "window": window.name(), "schemas": schemas })
}

/// The counts of `counts`, the largest first (ties by name).
fn most_frequent(counts: &std::collections::BTreeMap<String, u64>, field: &str) -> Vec<Value> {
    let mut sorted: Vec<(&String, &u64)> = counts.iter().collect();
    sorted.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
    (sorted.into_iter().take(10))
        .map(|(name, count)| json!({ field: name, "count": count }))
        .collect()
}

/// The CSV columns, in order.
const COLUMNS: &str = "schema,calls,ok,need-more-input,stale,error,mean_iterations,prompt_tokens,completion_tokens,latency_p50_ms,latency_p95_ms,top_reason";

/// One CSV row per schema, with a header (RFC 4180: a field with a comma, quote or line break
/// is quoted; a field a spreadsheet would read as a formula is prefixed with `'`).
pub fn csv(tallies: &[(String, Tally)]) -> String {
    let mut text = format!("{COLUMNS}\r\n");
    for (schema, tally) in tallies {
        let status = |name: &str| tally.statuses.get(name).copied().unwrap_or(0).to_string();
        let quantile = |q: f64| {
            tally
                .latency_quantile(q)
                .map(|ms| ms.to_string())
                .unwrap_or_default()
        };
        let top_reason = most_frequent(&tally.reasons, "category")
            .first()
            .and_then(|top| top["category"].as_str().map(str::to_owned))
            .unwrap_or_default();
        let fields = [
            field(schema),
            tally.calls.to_string(),
            status("ok"),
            status("need-more-input"),
            status("stale"),
            status("error"),
            format!("{:.2}", tally.mean_iterations()),
            tally.prompt_tokens.to_string(),
            tally.completion_tokens.to_string(),
            quantile(0.5),
            quantile(0.95),
            field(&top_reason),
        ];
        text.push_str(&fields.join(","));
        text.push_str("\r\n");
    }
    text
}

fn field(text: &str) -> String {
    let text = if text.starts_with(['=', '+', '-', '@']) {
        format!("'{text}")
    } else {
        text.to_owned()
    };
    if text.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", text.replace('"', "\"\""))
    } else {
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::insights::tally::Call;

    #[test]
    fn the_report_and_the_csv_say_the_same_counts() {
        let mut tally = Tally::default();
        for (status, iterations, reasons) in [
            ("ok", 1, vec![]),
            ("ok", 2, vec![("type", "/email")]),
            ("stale", 3, vec![("type", "/email"), ("required", "/name")]),
        ] {
            tally.add(&Call {
                status: status.into(),
                iterations,
                reasons: reasons
                    .into_iter()
                    .map(|(c, p): (&str, &str)| (c.to_owned(), p.to_owned()))
                    .collect(),
                prompt_tokens: 10,
                completion_tokens: 2,
                latency_ms: 120,
            });
        }
        let tallies = vec![("contact".to_owned(), tally)];
        let report = json(Window::Day, &tallies);
        let contact = &report["schemas"][0];
        assert_eq!(report["window"], "24h");
        assert_eq!(contact["calls"], 3);
        assert_eq!(contact["statuses"], json!({ "ok": 2, "stale": 1 }));
        assert_eq!(
            contact["iterations"],
            json!([{ "iterations": 1, "calls": 1 }, { "iterations": 2, "calls": 1 }, { "iterations": 3, "calls": 1 }])
        );
        assert_eq!(contact["meanIterations"], 2.0);
        assert_eq!(
            contact["reasons"],
            json!([{ "category": "type", "count": 2 }, { "category": "required", "count": 1 }])
        );
        assert_eq!(
            contact["pointers"][0],
            json!({ "pointer": "/email", "count": 2 })
        );
        assert_eq!(contact["latencyMs"], json!({ "p50": 200, "p95": 200 }));
        let csv = csv(&tallies);
        assert_eq!(
            csv.lines().nth(1),
            Some("contact,3,2,0,1,0,2.00,30,6,200,200,type")
        );
        assert_eq!(field("=cmd()"), "'=cmd()");
        assert_eq!(field("a,\"b\""), "\"a,\"\"b\"\"\"");
    }
}
