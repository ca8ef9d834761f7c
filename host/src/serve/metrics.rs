//! The service's metrics, computed from each request's [`Record`] and written in Prometheus'
//! text format (`GET /metrics`).

use std::collections::BTreeMap;
use std::fmt::Write;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use super::record::Record;

/// Upper bounds of the latency histogram, in seconds.
const LATENCY_BUCKETS: [f64; 12] = [
    0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0,
];
/// Upper bounds of the iterations histogram.
const ITERATION_BUCKETS: [f64; 6] = [0.0, 1.0, 2.0, 3.0, 5.0, 10.0];

#[derive(Default)]
struct Histogram {
    /// One count per bucket of the bounds it was made for, cumulative when written.
    counts: Vec<u64>,
    sum: f64,
    count: u64,
}

impl Histogram {
    fn observe(&mut self, bounds: &[f64], value: f64) {
        if self.counts.is_empty() {
            self.counts = vec![0; bounds.len()];
        }
        if let Some(index) = bounds.iter().position(|bound| value <= *bound) {
            self.counts[index] += 1;
        }
        self.sum += value;
        self.count += 1;
    }

    fn write(&self, out: &mut String, name: &str, bounds: &[f64]) {
        let mut cumulative = 0;
        for (bound, count) in bounds
            .iter()
            .zip(self.counts.iter().chain(std::iter::repeat(&0)))
        {
            cumulative += count;
            let _ = writeln!(out, "{name}_bucket{{le=\"{bound}\"}} {cumulative}");
        }
        let _ = writeln!(out, "{name}_bucket{{le=\"+Inf\"}} {}", self.count);
        let _ = writeln!(out, "{name}_sum {}", self.sum);
        let _ = writeln!(out, "{name}_count {}", self.count);
    }
}

#[derive(Default)]
struct Counts {
    /// By tenant, schema and status (an outcome's status, `error`, or the HTTP code's class).
    requests: BTreeMap<(String, String, String), u64>,
    latency: Histogram,
    iterations: Histogram,
    llm_calls: u64,
    /// By kind: `prompt`, `completion`, `cached`.
    tokens: BTreeMap<&'static str, u64>,
    /// By error kind.
    errors: BTreeMap<String, u64>,
    /// Reasons fed back, by category.
    reasons: BTreeMap<String, u64>,
}

/// The counters of one process, shared by every request.
#[derive(Default)]
pub struct Metrics {
    counts: Mutex<Counts>,
    /// Spans the trace exporter dropped, when traces are on.
    spans_dropped: Option<Arc<AtomicU64>>,
}

impl Metrics {
    /// Counters that also report the spans the trace exporter dropped.
    pub fn with_spans_dropped(spans_dropped: Option<Arc<AtomicU64>>) -> Self {
        Self {
            spans_dropped,
            ..Self::default()
        }
    }

    /// Counts one request.
    pub fn observe(&self, record: &Record) {
        let mut counts = self
            .counts
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        let key = (
            record.tenant.clone().unwrap_or_default(),
            record.schema.clone().unwrap_or_default(),
            record.status_label(),
        );
        *counts.requests.entry(key).or_default() += 1;
        counts
            .latency
            .observe(&LATENCY_BUCKETS, record.latency.as_secs_f64());
        if let Some(iterations) = record.iterations {
            counts
                .iterations
                .observe(&ITERATION_BUCKETS, f64::from(iterations));
        }
        counts.llm_calls += u64::from(record.usage.llm_calls);
        for (kind, tokens) in [
            ("prompt", record.usage.prompt_tokens),
            ("completion", record.usage.completion_tokens),
            ("cached", record.usage.cached_prompt_tokens),
        ] {
            *counts.tokens.entry(kind).or_default() += tokens;
        }
        if let Some(kind) = &record.error_kind {
            *counts.errors.entry(kind.clone()).or_default() += 1;
        }
        for category in &record.reasons {
            *counts.reasons.entry(category.clone()).or_default() += 1;
        }
    }

    /// Every metric, in Prometheus' text exposition format.
    pub fn render(&self) -> String {
        let counts = self
            .counts
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        let mut out = String::new();
        counts.write_requests(&mut out);
        counts.write_spend(&mut out);
        counts.write_trouble(&mut out);
        if let Some(dropped) = &self.spans_dropped {
            header(
                &mut out,
                "structure_otlp_spans_dropped_total",
                "counter",
                "Spans not exported: the queue was full or the collector did not take them.",
            );
            let _ = writeln!(
                out,
                "structure_otlp_spans_dropped_total {}",
                dropped.load(Ordering::Relaxed)
            );
        }
        out
    }
}

impl Counts {
    /// The requests: how many by tenant, schema and status, how long they took, and how many
    /// content-stage iterations their results took.
    fn write_requests(&self, out: &mut String) {
        header(
            out,
            "structure_requests_total",
            "counter",
            "Requests by tenant, schema and status.",
        );
        for ((tenant, schema, status), count) in &self.requests {
            let _ = writeln!(
                out,
                "structure_requests_total{{tenant=\"{}\",schema=\"{}\",status=\"{}\"}} {count}",
                escape(tenant),
                escape(schema),
                escape(status)
            );
        }
        header(
            out,
            "structure_request_duration_seconds",
            "histogram",
            "Request latency.",
        );
        self.latency
            .write(out, "structure_request_duration_seconds", &LATENCY_BUCKETS);
        header(
            out,
            "structure_iterations",
            "histogram",
            "Content-stage iterations per result.",
        );
        self.iterations
            .write(out, "structure_iterations", &ITERATION_BUCKETS);
    }

    /// What the requests spent: LLM calls and tokens.
    fn write_spend(&self, out: &mut String) {
        header(
            out,
            "structure_llm_calls_total",
            "counter",
            "LLM requests, retries included.",
        );
        let _ = writeln!(out, "structure_llm_calls_total {}", self.llm_calls);
        by_label(
            out,
            ("structure_tokens_total", "Tokens spent, by kind."),
            "kind",
            &self.tokens,
        );
    }

    /// What went wrong: typed errors, and the violations fed back to the model.
    fn write_trouble(&self, out: &mut String) {
        by_label(
            out,
            ("structure_errors_total", "Typed errors, by kind."),
            "kind",
            &self.errors,
        );
        by_label(
            out,
            (
                "structure_reasons_total",
                "Violations fed back to the model, by category.",
            ),
            "category",
            &self.reasons,
        );
    }
}

/// A counter with one label: its header, then a line per label value.
fn by_label<K: AsRef<str>>(
    out: &mut String,
    (name, help): (&str, &str),
    label: &str,
    counts: &std::collections::BTreeMap<K, u64>,
) {
    header(out, name, "counter", help);
    for (value, count) in counts {
        let _ = writeln!(
            out,
            "{name}{{{label}=\"{}\"}} {count}",
            escape(value.as_ref())
        );
    }
}

fn header(out: &mut String, name: &str, kind: &str, help: &str) {
    let _ = writeln!(out, "# HELP {name} {help}");
    let _ = writeln!(out, "# TYPE {name} {kind}");
}

/// A label value as the format writes it.
fn escape(value: &str) -> String {
    value
        .replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}
