//! What the calls of one schema in one hour or one day came to: counts that add up, small
//! whatever the number of calls (pointers are the only open-ended key, and only the most
//! frequent are kept).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// Upper bounds of the latency buckets, in milliseconds (the last is everything slower).
pub const LATENCY_BOUNDS_MS: [u64; 11] = [
    50,
    100,
    200,
    500,
    1_000,
    2_000,
    5_000,
    10_000,
    20_000,
    60_000,
    u64::MAX,
];

/// Pointers kept per tally: the most frequent.
pub const MAX_POINTERS: usize = 20;

/// One call, as the insights count it.
#[derive(Debug, Clone, PartialEq)]
pub struct Call {
    /// `ok`, `need-more-input`, `stale` or `error`.
    pub status: String,
    /// Content-stage iterations (0 for a call that ended before the model was asked).
    pub iterations: u32,
    /// The category and pointer of each reason fed back.
    pub reasons: Vec<(String, String)>,
    pub prompt_tokens: u64,
    pub completion_tokens: u64,
    pub latency_ms: u64,
}

/// The calls of one schema over one period.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct Tally {
    pub calls: u64,
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub statuses: BTreeMap<String, u64>,
    /// Calls by the iterations they took.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub iterations: BTreeMap<u32, u64>,
    /// Reasons fed back, by category.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub reasons: BTreeMap<String, u64>,
    /// Reasons fed back, by pointer (the [`MAX_POINTERS`] most frequent).
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub pointers: BTreeMap<String, u64>,
    pub prompt_tokens: u64,
    pub completion_tokens: u64,
    /// Calls by latency bucket ([`LATENCY_BOUNDS_MS`]).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub latency: Vec<u64>,
}

impl Tally {
    /// Counts `call`.
    pub fn add(&mut self, call: &Call) {
        self.calls += 1;
        *self.statuses.entry(call.status.clone()).or_default() += 1;
        *self.iterations.entry(call.iterations).or_default() += 1;
        for (category, pointer) in &call.reasons {
            *self.reasons.entry(category.clone()).or_default() += 1;
            *self.pointers.entry(pointer.clone()).or_default() += 1;
        }
        self.keep_frequent_pointers();
        self.prompt_tokens += call.prompt_tokens;
        self.completion_tokens += call.completion_tokens;
        self.latency.resize(LATENCY_BOUNDS_MS.len(), 0);
        let bucket = LATENCY_BOUNDS_MS
            .iter()
            .position(|bound| call.latency_ms <= *bound);
        self.latency[bucket.unwrap_or(LATENCY_BOUNDS_MS.len() - 1)] += 1;
    }

    /// Adds `other` to this tally.
    pub fn merge(&mut self, other: &Tally) {
        self.calls += other.calls;
        for (into, from) in [
            (&mut self.statuses, &other.statuses),
            (&mut self.reasons, &other.reasons),
            (&mut self.pointers, &other.pointers),
        ] {
            for (key, count) in from {
                *into.entry(key.clone()).or_default() += count;
            }
        }
        for (iterations, count) in &other.iterations {
            *self.iterations.entry(*iterations).or_default() += count;
        }
        self.keep_frequent_pointers();
        self.prompt_tokens += other.prompt_tokens;
        self.completion_tokens += other.completion_tokens;
        self.latency.resize(LATENCY_BOUNDS_MS.len(), 0);
        for (into, from) in self.latency.iter_mut().zip(&other.latency) {
            *into += from;
        }
    }

    /// The latency below which a share `quantile` of the calls fall: the upper bound of its
    /// bucket, in milliseconds (`None` with no calls, or in the open last bucket).
    pub fn latency_quantile(&self, quantile: f64) -> Option<u64> {
        let total: u64 = self.latency.iter().sum();
        if total == 0 {
            return None;
        }
        let wanted = (quantile * total as f64).ceil().max(1.0) as u64;
        let mut seen = 0;
        for (count, bound) in self.latency.iter().zip(LATENCY_BOUNDS_MS) {
            seen += count;
            if seen >= wanted {
                return (bound != u64::MAX).then_some(bound);
            }
        }
        None
    }

    /// The mean of the iterations the calls took.
    pub fn mean_iterations(&self) -> f64 {
        let total: u64 = self.iterations.values().sum();
        let sum: u64 = self
            .iterations
            .iter()
            .map(|(iterations, count)| u64::from(*iterations) * count)
            .sum();
        if total == 0 {
            0.0
        } else {
            sum as f64 / total as f64
        }
    }

    fn keep_frequent_pointers(&mut self) {
        while self.pointers.len() > MAX_POINTERS {
            let rarest = (self.pointers.iter())
                .min_by_key(|(pointer, count)| (**count, std::cmp::Reverse((*pointer).clone())))
                .map(|(pointer, _)| pointer.clone());
            match rarest {
                Some(rarest) => self.pointers.remove(&rarest),
                None => break,
            };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(status: &str, iterations: u32, latency_ms: u64, reasons: &[(&str, &str)]) -> Call {
        Call {
            status: status.into(),
            iterations,
            reasons: reasons
                .iter()
                .map(|(category, pointer)| (category.to_string(), pointer.to_string()))
                .collect(),
            prompt_tokens: 100,
            completion_tokens: 10,
            latency_ms,
        }
    }

    #[test]
    fn calls_add_up_and_merge() {
        let mut hour = Tally::default();
        hour.add(&call("ok", 1, 40, &[]));
        hour.add(&call("ok", 2, 150, &[("type", "/email")]));
        hour.add(&call(
            "stale",
            3,
            900,
            &[("type", "/email"), ("required", "/name")],
        ));
        assert_eq!(hour.calls, 3);
        assert_eq!(hour.statuses["ok"], 2);
        assert_eq!(hour.iterations, BTreeMap::from([(1, 1), (2, 1), (3, 1)]));
        assert_eq!(hour.reasons["type"], 2);
        assert_eq!(hour.pointers["/email"], 2);
        assert_eq!((hour.prompt_tokens, hour.completion_tokens), (300, 30));
        assert_eq!(hour.mean_iterations(), 2.0);
        assert_eq!(hour.latency_quantile(0.5), Some(200));
        assert_eq!(hour.latency_quantile(0.95), Some(1_000));
        let mut day = Tally::default();
        day.merge(&hour);
        day.merge(&hour);
        assert_eq!(
            (day.calls, day.statuses["stale"], day.pointers["/name"]),
            (6, 2, 2)
        );
        assert_eq!(Tally::default().latency_quantile(0.5), None);
    }

    #[test]
    fn only_the_most_frequent_pointers_are_kept() {
        let mut tally = Tally::default();
        tally.add(&call("ok", 2, 10, &[("type", "/often")]));
        tally.add(&call("ok", 2, 10, &[("type", "/often")]));
        for n in 0..100 {
            tally.add(&call("ok", 2, 10, &[("type", &format!("/made-up-{n}"))]));
        }
        assert_eq!(tally.pointers.len(), MAX_POINTERS);
        assert_eq!(tally.pointers["/often"], 2);
        assert_eq!(tally.reasons["type"], 102, "categories are all counted");
    }
}
