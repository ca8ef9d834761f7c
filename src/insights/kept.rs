//! Insights kept in the key-value store, so that they survive a restart and every instance of
//! a deployment adds to the same counts: one document per schema at the caller's own level
//! (`{tenant or project prefix}insights/{schema}`), holding a ring of 24 hourly and 7 daily
//! tallies. A document stays the same size however many calls it counts, and a level keeps at
//! most [`MAX_SCHEMAS`] of them (the calls of any schema beyond count as `other`).
//!
//! Two instances recording the same schema at the same moment may each overwrite the other's
//! count (the store has no increment): insights are for seeing at a glance, metrics for exact
//! counts.

use serde::{Deserialize, Serialize};

use super::tally::{Call, Tally};
use crate::error::StructureError;
use crate::ports::KeyValue;
use crate::scope::Scope;
use crate::store;

/// Schemas with insights at one level, at most.
pub const MAX_SCHEMAS: usize = 200;
/// Where the calls of schemas beyond [`MAX_SCHEMAS`] are counted.
pub const OTHER: &str = "other";

const HOUR_MS: u64 = 3_600_000;
const DAY_MS: u64 = 24 * HOUR_MS;

/// The period a report covers: the last 24 hours (by hour), or the last 7 days (by day).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Window {
    Day,
    Week,
}

impl Window {
    /// `24h` or `7d`.
    pub fn parse(text: &str) -> Result<Self, StructureError> {
        match text {
            "24h" => Ok(Window::Day),
            "7d" => Ok(Window::Week),
            other => Err(StructureError::invalid_request(
                "window",
                format!("window {other:?} is not one of 24h, 7d"),
            )),
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Window::Day => "24h",
            Window::Week => "7d",
        }
    }

    /// The length of a period and how many make the window.
    fn periods(self) -> (u64, u64) {
        match self {
            Window::Day => (HOUR_MS, 24),
            Window::Week => (DAY_MS, 7),
        }
    }
}

/// One period's tally: which period (its index since the epoch) and its counts.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct Slot {
    period: u64,
    tally: Tally,
}

/// The hours and days of one schema.
#[derive(Debug, Default, Serialize, Deserialize)]
struct Rings {
    hours: Vec<Slot>,
    days: Vec<Slot>,
}

impl Rings {
    fn add(&mut self, call: &Call, now_ms: u64) {
        for (ring, window) in [
            (&mut self.hours, Window::Day),
            (&mut self.days, Window::Week),
        ] {
            let (length, count) = window.periods();
            let period = now_ms / length;
            ring.resize(count as usize, Slot::default());
            let slot = &mut ring[(period % count) as usize];
            if slot.period != period {
                *slot = Slot {
                    period,
                    tally: Tally::default(),
                };
            }
            slot.tally.add(call);
        }
    }

    fn within(&self, window: Window, now_ms: u64) -> Tally {
        let (length, count) = window.periods();
        let now = now_ms / length;
        let ring = match window {
            Window::Day => &self.hours,
            Window::Week => &self.days,
        };
        let mut tally = Tally::default();
        for slot in ring
            .iter()
            .filter(|slot| slot.period + count > now && slot.period <= now)
        {
            tally.merge(&slot.tally);
        }
        tally
    }
}

fn prefix(scope: &Scope) -> String {
    format!("{}insights/", scope.own_prefix())
}

/// Counts `call` for `schema` at `scope`'s own level.
pub fn record(
    store: &dyn KeyValue,
    scope: &Scope,
    schema: &str,
    call: &Call,
    now_ms: u64,
) -> Result<(), StructureError> {
    let prefix = prefix(scope);
    let mut key = format!("{prefix}{schema}");
    let mut rings = store::read::<Rings>(store, &key)?;
    if rings.is_none() && store::keys(store, &prefix)?.len() >= MAX_SCHEMAS {
        key = format!("{prefix}{OTHER}");
        rings = store::read(store, &key)?;
    }
    let mut rings = rings.unwrap_or_default();
    rings.add(call, now_ms);
    store::write(store, &key, &rings)
}

/// Each schema's tally over `window` at `scope`'s own level, the most called first (schemas
/// with no call in the window left out).
pub fn read(
    store: &dyn KeyValue,
    scope: &Scope,
    window: Window,
    now_ms: u64,
) -> Result<Vec<(String, Tally)>, StructureError> {
    let prefix = prefix(scope);
    let mut tallies = Vec::new();
    for key in store::keys(store, &prefix)? {
        let Some(rings) = store::read::<Rings>(store, &key)? else {
            continue;
        };
        let tally = rings.within(window, now_ms);
        if tally.calls > 0 {
            tallies.push((key[prefix.len()..].to_owned(), tally));
        }
    }
    tallies.sort_by(|(a_name, a), (b_name, b)| b.calls.cmp(&a.calls).then(a_name.cmp(b_name)));
    Ok(tallies)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ports::MemoryKeyValue;

    fn call(status: &str) -> Call {
        Call {
            status: status.into(),
            iterations: 1,
            reasons: Vec::new(),
            prompt_tokens: 1,
            completion_tokens: 1,
            latency_ms: 10,
        }
    }

    #[test]
    fn calls_count_in_their_hour_and_day_and_age_out_of_the_window() {
        let store = MemoryKeyValue::default();
        let scope = Scope::new("acme", None).unwrap();
        let other = Scope::new("globex", None).unwrap();
        let start = 1_800_000_000_000;
        record(&store, &scope, "contact", &call("ok"), start).unwrap();
        record(&store, &scope, "contact", &call("stale"), start + HOUR_MS).unwrap();
        record(&store, &scope, "inline", &call("ok"), start + 2 * HOUR_MS).unwrap();
        let now = start + 2 * HOUR_MS;
        let day = read(&store, &scope, Window::Day, now).unwrap();
        assert_eq!(
            day.iter()
                .map(|(name, tally)| (name.as_str(), tally.calls))
                .collect::<Vec<_>>(),
            [("contact", 2), ("inline", 1)]
        );
        assert!(
            read(&store, &other, Window::Day, now).unwrap().is_empty(),
            "another tenant sees none"
        );
        // A day later the hours have left the 24-hour window; the week still has them.
        let later = start + 25 * HOUR_MS;
        let day = read(&store, &scope, Window::Day, later).unwrap();
        assert_eq!(
            day.iter()
                .map(|(name, tally)| (name.as_str(), tally.calls))
                .collect::<Vec<_>>(),
            [("inline", 1)]
        );
        assert_eq!(
            read(&store, &scope, Window::Week, later).unwrap()[0]
                .1
                .calls,
            2
        );
        assert!(
            read(&store, &scope, Window::Week, start + 8 * DAY_MS)
                .unwrap()
                .is_empty()
        );
        // The first hour's slot, reused a day later, starts afresh: its "ok" is gone, the
        // second hour's "stale" is still within the 24 hours.
        record(
            &store,
            &scope,
            "contact",
            &call("need-more-input"),
            start + DAY_MS,
        )
        .unwrap();
        let day = read(&store, &scope, Window::Day, start + DAY_MS).unwrap();
        let statuses = &day
            .iter()
            .find(|(name, _)| name == "contact")
            .unwrap()
            .1
            .statuses;
        let expected = [("need-more-input".to_owned(), 1), ("stale".to_owned(), 1)];
        assert_eq!(statuses, &expected.into());
    }

    #[test]
    fn a_level_keeps_at_most_max_schemas_and_counts_the_rest_as_other() {
        let store = MemoryKeyValue::default();
        let scope = Scope::new("acme", None).unwrap();
        for n in 0..MAX_SCHEMAS + 5 {
            record(&store, &scope, &format!("schema-{n}"), &call("ok"), 0).unwrap();
        }
        let kept = read(&store, &scope, Window::Day, 0).unwrap();
        assert_eq!(kept.len(), MAX_SCHEMAS + 1);
        assert_eq!(
            kept.iter().find(|(name, _)| name == OTHER).unwrap().1.calls,
            5
        );
    }
}
