//! What each item of a batch came to, and the batch so far: items by status, calls, tokens,
//! time, the slowest items.

use std::collections::BTreeMap;
use std::time::Instant;

use serde_json::Value;

/// What one item came to.
#[derive(Debug, Clone)]
pub struct Done {
    /// The item's id.
    pub id: String,
    /// The outcome, or `{"error": …}`, as the tool form returns them.
    pub result: Value,
    /// How long its call took.
    pub seconds: f64,
}

/// How many slowest items the summary names.
const SLOWEST: usize = 3;

/// A batch's counts so far.
#[derive(Debug, Clone)]
pub struct Tally {
    /// Items in the input.
    pub total: usize,
    /// Items the output held already when the run began.
    pub skipped: usize,
    /// Items this run wrote.
    pub written: usize,
    /// Items not written when the run ended (a stop).
    pub left: usize,
    /// Written items by status: `ok`, `need-more-input`, `stale`, `error`.
    pub statuses: BTreeMap<String, usize>,
    /// LLM calls of the written items.
    pub llm_calls: u64,
    /// Prompt and completion tokens of the written items.
    pub tokens: u64,
    /// When the run began.
    pub started: Instant,
    /// The slowest items written: id and seconds, slowest first.
    pub slowest: Vec<(String, f64)>,
}

impl Tally {
    /// The tally of a run over `total` items, `skipped` of them written before.
    pub fn new(total: usize, skipped: usize) -> Self {
        Self {
            total,
            skipped,
            written: 0,
            left: total - skipped,
            statuses: BTreeMap::new(),
            llm_calls: 0,
            tokens: 0,
            started: Instant::now(),
            slowest: Vec::new(),
        }
    }

    /// Counts an item written.
    pub fn add(&mut self, done: &Done) {
        self.written += 1;
        self.left = self.left.saturating_sub(1);
        let status = (done.result.get("status").and_then(Value::as_str)).unwrap_or("error");
        *self.statuses.entry(status.to_owned()).or_default() += 1;
        let usage = structure::outcome::usage_in(&done.result);
        self.llm_calls += u64::from(usage.llm_calls);
        self.tokens += usage.prompt_tokens + usage.completion_tokens;
        self.slowest.push((done.id.clone(), done.seconds));
        self.slowest.sort_by(|a, b| b.1.total_cmp(&a.1));
        self.slowest.truncate(SLOWEST);
    }

    /// Items per second this run.
    pub fn rate(&self) -> f64 {
        self.written as f64 / self.started.elapsed().as_secs_f64().max(1e-3)
    }

    /// The counts in one line: `ok 9 · need-more-input 1 · error 0 · 1,234 tokens · 3.2/s`.
    pub fn counts(&self) -> String {
        let mut parts: Vec<String> = (self.statuses.iter())
            .map(|(status, count)| format!("{status} {count}"))
            .collect();
        parts.push(format!("{} tokens", self.tokens));
        parts.push(format!("{:.1}/s", self.rate()));
        parts.join(" · ")
    }

    /// The summary printed at the end.
    pub fn summary(&self) -> String {
        let mut lines = vec![format!(
            "{} of {} items written this run ({} were already), {} left",
            self.written, self.total, self.skipped, self.left
        )];
        lines.push(format!(
            "  {} · {} LLM calls · {:.1} s",
            self.counts(),
            self.llm_calls,
            self.started.elapsed().as_secs_f64()
        ));
        if !self.slowest.is_empty() {
            let slowest: Vec<String> = (self.slowest.iter())
                .map(|(id, seconds)| format!("{id} ({seconds:.1} s)"))
                .collect();
            lines.push(format!("  slowest: {}", slowest.join(", ")));
        }
        lines.join("\n")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn statuses_usage_and_the_slowest_are_counted() {
        let mut tally = Tally::new(5, 1);
        let usage = json!({ "llmCalls": 2, "promptTokens": 100, "completionTokens": 20 });
        let done = |id: &str, result: Value, seconds: f64| Done {
            id: id.to_owned(),
            result,
            seconds,
        };
        tally.add(&done("a", json!({ "status": "ok", "usage": usage }), 1.0));
        tally.add(&done(
            "b",
            json!({ "error": { "kind": "transport", "usage": usage } }),
            3.0,
        ));
        tally.add(&done("c", json!({ "status": "ok", "usage": usage }), 2.0));
        assert_eq!(tally.statuses["ok"], 2);
        assert_eq!(tally.statuses["error"], 1);
        assert_eq!((tally.llm_calls, tally.tokens, tally.left), (6, 360, 1));
        assert_eq!(tally.slowest[0].0, "b");
        assert!(
            tally
                .summary()
                .contains("3 of 5 items written this run (1 were already), 1 left")
        );
    }
}
