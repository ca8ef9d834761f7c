//! Insights kept in the key-value store, so that they survive a restart and every instance of
//! a deployment adds to the same counts: one document per schema at the caller's own level
//! (`{tenant or project prefix}insights/{schema}`), holding a ring of 24 hourly and 7 daily
//! tallies. A document stays the same size however many calls it counts, and a level keeps at
//! most [`MAX_SCHEMAS`] of them (the calls of any schema beyond count as `other`).
//!
//! Two instances recording the same schema at the same moment may each overwrite the other's
//! count (the store has no increment), and at an hour's turn one may move the hour into the
//! history twice: insights are for seeing at a glance, metrics for exact counts.

use std::collections::BTreeMap;

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
/// The documents a schema's counts are spread over.
pub const SHARDS: u64 = 64;

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

/// A schema's current hour and day: the small document every call rewrites.
#[derive(Debug, Default, Serialize, Deserialize)]
struct Current {
    hour: Slot,
    day: Slot,
}

/// A schema's earlier hours (within 24 hours) and days (within 7 days): rewritten only when an
/// hour or a day turns, so a call reads and writes a few hundred bytes, not the week.
#[derive(Debug, Default, Serialize, Deserialize)]
struct History {
    hours: Vec<Slot>,
    days: Vec<Slot>,
}

impl Window {
    /// The current period of this window's slots at `now_ms`.
    fn period(self, now_ms: u64) -> u64 {
        now_ms / self.periods().0
    }

    /// Whether `slot` is within the window at `now_ms`.
    fn holds(self, slot: &Slot, now_ms: u64) -> bool {
        let now = self.period(now_ms);
        slot.period <= now && slot.period + self.periods().1 > now
    }
}

/// `slot` made a fresh one for `period` if its period is over; the slot it was, if that one
/// counted anything (for the history).
fn turn(slot: &mut Slot, period: u64) -> Option<Slot> {
    if slot.period == period {
        return None;
    }
    let over = std::mem::replace(
        slot,
        Slot {
            period,
            tally: Tally::default(),
        },
    );
    (over.tally.calls > 0).then_some(over)
}

/// What counting a call in a current document did besides: the hour and day it turned over
/// (for the history), whether the call came late (for a period already over: it is counted in
/// the history instead), and whether the document was new.
#[derive(Default)]
struct Counted {
    hour_over: Option<Slot>,
    day_over: Option<Slot>,
    late_hour: bool,
    late_day: bool,
    new: bool,
}

/// Counts `call` of `hour` and `day` in the current document at `key`, as one step.
fn count_current(
    store: &dyn KeyValue,
    key: &str,
    call: &Call,
    (hour, day): (u64, u64),
) -> Result<Counted, StructureError> {
    let mut counted = Counted::default();
    store::update(store, key, |current: Option<Current>| {
        let new = current.is_none();
        let mut current = current.unwrap_or_default();
        // A call that ends after another that already turned the hour (an instant earlier on
        // another instance) belongs to the hour before.
        let (late_hour, late_day) = (current.hour.period > hour, current.day.period > day);
        counted = Counted {
            late_hour,
            late_day,
            new,
            ..Counted::default()
        };
        if !late_hour {
            counted.hour_over = turn(&mut current.hour, hour);
            current.hour.tally.add(call);
        }
        if !late_day {
            counted.day_over = turn(&mut current.day, day);
            current.day.tally.add(call);
        }
        current
    })?;
    Ok(counted)
}

/// Files what `counted` left for the history at `key`: the periods turned over, and `call`
/// when it came late.
fn file_history(
    store: &dyn KeyValue,
    key: &str,
    counted: &Counted,
    call: &Call,
    now_ms: u64,
) -> Result<(), StructureError> {
    if counted.hour_over.is_none()
        && counted.day_over.is_none()
        && !counted.late_hour
        && !counted.late_day
    {
        return Ok(());
    }
    store::update(store, key, |history: Option<History>| {
        let mut history = history.unwrap_or_default();
        history.hours.extend(counted.hour_over.clone());
        history.days.extend(counted.day_over.clone());
        for (late, slots, window) in [
            (counted.late_hour, &mut history.hours, Window::Day),
            (counted.late_day, &mut history.days, Window::Week),
        ] {
            if !late {
                continue;
            }
            let period = window.period(now_ms);
            match slots.iter_mut().find(|slot| slot.period == period) {
                Some(slot) => slot.tally.add(call),
                None => {
                    let mut slot = Slot {
                        period,
                        tally: Tally::default(),
                    };
                    slot.tally.add(call);
                    slots.push(slot);
                }
            }
        }
        history.hours.retain(|slot| Window::Day.holds(slot, now_ms));
        history.days.retain(|slot| Window::Week.holds(slot, now_ms));
        history
    })
}

fn prefix(scope: &Scope) -> String {
    format!("{}insights/", scope.own_prefix())
}

fn history_key(scope: &Scope, schema_and_shard: &str) -> String {
    format!("{}insights-history/{schema_and_shard}", scope.own_prefix())
}

/// The schemas that have counts at a level, each with its shards' names (`schema/shard`, the
/// keys after `prefix`).
fn shards_by_schema<'k>(keys: &'k [String], prefix: &str) -> BTreeMap<&'k str, Vec<&'k str>> {
    let mut schemas: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for name in keys.iter().filter_map(|key| key.strip_prefix(prefix)) {
        let schema = name.split('/').next().unwrap_or(name);
        schemas.entry(schema).or_default().push(name);
    }
    schemas
}

/// Counts `call` for `schema` at `scope`'s own level, in shard `shard` (any number: it is
/// taken modulo [`SHARDS`]). Each document changes as one step (a compare-and-swap, tried
/// again when another call wrote in between), so no count is lost to a call at the same time.
pub fn record(
    store: &dyn KeyValue,
    scope: &Scope,
    schema: &str,
    call: &Call,
    now_ms: u64,
    shard: u64,
) -> Result<(), StructureError> {
    let prefix = prefix(scope);
    let shard = shard % SHARDS;
    let periods = (Window::Day.period(now_ms), Window::Week.period(now_ms));
    let mut name = format!("{schema}/{shard}");
    let mut counted = count_current(store, &format!("{prefix}{name}"), call, periods)?;
    // A shard's first count: if it is also the schema's first at this level, within the bound
    // or counted as `other`.
    if counted.new && schema != OTHER {
        let keys = store::keys(store, &prefix)?;
        let by_schema = shards_by_schema(&keys, &prefix);
        let shards = by_schema.get(schema).map_or(0, Vec::len);
        let schemas = by_schema.keys().filter(|name| **name != OTHER).count();
        if shards == 1 && schemas > MAX_SCHEMAS {
            store::delete(store, &format!("{prefix}{name}"))?;
            name = format!("{OTHER}/{shard}");
            counted = count_current(store, &format!("{prefix}{name}"), call, periods)?;
        }
    }
    file_history(store, &history_key(scope, &name), &counted, call, now_ms)
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
    let keys = store::keys(store, &prefix)?;
    let mut tallies = Vec::new();
    for (schema, shards) in shards_by_schema(&keys, &prefix) {
        let mut tally = Tally::default();
        for name in shards {
            let Some(current) = store::read::<Current>(store, &format!("{prefix}{name}"))? else {
                continue;
            };
            let history =
                store::read::<History>(store, &history_key(scope, name))?.unwrap_or_default();
            let (now, earlier) = match window {
                Window::Day => (&current.hour, &history.hours),
                Window::Week => (&current.day, &history.days),
            };
            for slot in std::iter::once(now)
                .chain(earlier)
                .filter(|slot| window.holds(slot, now_ms))
            {
                tally.merge(&slot.tally);
            }
        }
        if tally.calls > 0 {
            tallies.push((schema.to_owned(), tally));
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
        // The same shard, so that its hour turns into its history; and another shard.
        record(&store, &scope, "contact", &call("ok"), start, 0).unwrap();
        record(
            &store,
            &scope,
            "contact",
            &call("stale"),
            start + HOUR_MS,
            0,
        )
        .unwrap();
        record(
            &store,
            &scope,
            "inline",
            &call("ok"),
            start + 2 * HOUR_MS,
            21,
        )
        .unwrap();
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
            7,
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
            record(
                &store,
                &scope,
                &format!("schema-{n}"),
                &call("ok"),
                0,
                n as u64,
            )
            .unwrap();
        }
        // A known schema's calls still count under its name, in any shard.
        record(&store, &scope, "schema-0", &call("ok"), 0, 9).unwrap();
        let kept = read(&store, &scope, Window::Day, 0).unwrap();
        assert_eq!(kept.len(), MAX_SCHEMAS + 1);
        assert_eq!(
            kept.iter()
                .find(|(name, _)| name == "schema-0")
                .unwrap()
                .1
                .calls,
            2
        );
        assert_eq!(
            kept.iter().find(|(name, _)| name == OTHER).unwrap().1.calls,
            5
        );
    }

    #[test]
    fn calls_at_once_across_an_hours_turn_are_each_counted_once() {
        let store = MemoryKeyValue::default();
        let scope = Scope::new("acme", None).unwrap();
        let start = 1_800_000_000_000 - 1_000; // a second before an hour turns
        std::thread::scope(|threads| {
            for thread in 0..8u64 {
                let (store, scope) = (&store, &scope);
                threads.spawn(move || {
                    for n in 0..100u64 {
                        // Half of each thread's calls before the turn, half after, in few shards.
                        let now = start + n * 20;
                        record(store, scope, "contact", &call("ok"), now, thread % 3).unwrap();
                    }
                });
            }
        });
        let now = start + 2_000;
        assert_eq!(
            read(&store, &scope, Window::Day, now).unwrap()[0].1.calls,
            800
        );
        assert_eq!(
            read(&store, &scope, Window::Week, now).unwrap()[0].1.calls,
            800
        );
    }
}
