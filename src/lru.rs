//! A few values kept per instance, the most recently used last: the compiled schemas, the
//! answer envelopes and their schemas written out, which a reused instance would build again
//! and again; and how their JSON keys are compared. A leaf module.

use serde_json::Value;

/// At most `capacity` entries; using one moves it to the back, a new one past the capacity
/// pushes out the front (the least recently used).
#[derive(Debug)]
pub struct Recent<K, V> {
    entries: Vec<(K, V)>,
    capacity: usize,
}

impl<K, V> Recent<K, V> {
    /// An empty cache (a `const fn`, for `thread_local!`).
    pub const fn new(capacity: usize) -> Self {
        Self {
            entries: Vec::new(),
            capacity,
        }
    }

    /// The value of the first entry whose key `matches`, now the most recently used.
    pub fn find(&mut self, matches: impl Fn(&K) -> bool) -> Option<&V> {
        let position = self.entries.iter().position(|(key, _)| matches(key))?;
        let entry = self.entries.remove(position);
        self.entries.push(entry);
        self.entries.last().map(|(_, value)| value)
    }

    /// Keeps `value` under `key` as the most recently used.
    pub fn insert(&mut self, key: K, value: V) {
        if self.entries.len() >= self.capacity {
            self.entries.remove(0);
        }
        self.entries.push((key, value));
    }
}

impl<K: ?Sized, V: Clone> Recent<std::sync::Arc<K>, V> {
    /// The value kept for `key`'s allocation, else `make`'s. Found by the allocation, not by
    /// comparing values: nothing can change a value while it is shared, and the entry holds the
    /// allocation, so its address cannot pass to another value. Kept only when someone else
    /// holds `key` too: a value the caller alone holds cannot be passed again, and would only
    /// push out those that can.
    pub fn of_shared(&mut self, key: &std::sync::Arc<K>, make: impl FnOnce() -> V) -> V {
        if let Some(kept) = self.find(|seen| std::sync::Arc::ptr_eq(seen, key)) {
            return kept.clone();
        }
        let made = make();
        if std::sync::Arc::strong_count(key) > 1 {
            self.insert(std::sync::Arc::clone(key), made.clone());
        }
        made
    }
}

/// Whether two JSON values are equal, as `==` says (an object's keys in any order), but
/// without hashing every key: a cache's key is usually the same document, its keys in the
/// same order, and comparing them side by side costs a fraction of a lookup per key (JSON
/// maps hash with SipHash). Only an object whose keys come in another order is compared as a
/// map.
pub fn same_json(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Object(a), Value::Object(b)) => {
            if a.len() != b.len() {
                return false;
            }
            for ((key_a, value_a), (key_b, value_b)) in a.iter().zip(b) {
                if key_a != key_b {
                    return a == b;
                }
                // A key appears once in each: the same key with another value is another map.
                if !same_json(value_a, value_b) {
                    return false;
                }
            }
            true
        }
        (Value::Array(a), Value::Array(b)) => {
            a.len() == b.len() && a.iter().zip(b).all(|(a, b)| same_json(a, b))
        }
        _ => a == b,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn json_is_the_same_as_equality_says_whatever_the_order_of_its_keys() {
        let cases = [
            (
                json!({"a": 1, "b": [1, {"c": null}]}),
                json!({"a": 1, "b": [1, {"c": null}]}),
            ),
            (json!({"a": 1, "b": 2}), json!({"b": 2, "a": 1})),
            (
                json!({"x": {"a": 1, "b": 2}, "y": 3}),
                json!({"x": {"b": 2, "a": 1}, "y": 3}),
            ),
            (json!({"a": 1, "b": 2}), json!({"a": 1, "b": 3})),
            (json!({"a": 1, "b": 2}), json!({"b": 3, "a": 1})),
            (json!({"a": 1}), json!({"a": 1, "b": 2})),
            (json!({"a": 1, "b": 2}), json!({"a": 1, "c": 2})),
            (json!([1, 2]), json!([2, 1])),
            (json!([1.0]), json!([1])),
            (json!("1"), json!(1)),
        ];
        for (a, b) in cases {
            assert_eq!(same_json(&a, &b), a == b, "{a} and {b}");
            assert_eq!(same_json(&b, &a), a == b, "{b} and {a}");
        }
    }

    #[test]
    fn a_shared_value_is_found_by_its_allocation_and_one_held_alone_is_not_kept() {
        let mut recent = Recent::new(2);
        let shared = std::sync::Arc::new(json!({"a": 1}));
        let holder = std::sync::Arc::clone(&shared);
        assert_eq!(recent.of_shared(&shared, || 1), 1);
        assert_eq!(recent.of_shared(&shared, || 2), 1, "found again");
        let equal = std::sync::Arc::new(json!({"a": 1}));
        assert_eq!(
            recent.of_shared(&equal, || 3),
            3,
            "an equal value elsewhere"
        );
        assert_eq!(recent.of_shared(&equal, || 4), 4, "held alone: not kept");
        drop(holder);
        let mut shared = shared;
        assert!(
            std::sync::Arc::get_mut(&mut shared).is_none(),
            "kept: unchangeable"
        );
    }

    #[test]
    fn the_least_recently_used_entry_goes_first() {
        let mut recent = Recent::new(2);
        recent.insert("a", 1);
        recent.insert("b", 2);
        assert_eq!(recent.find(|key| *key == "a"), Some(&1));
        recent.insert("c", 3);
        assert_eq!(
            recent.find(|key| *key == "b"),
            None,
            "b was the least recent"
        );
        assert_eq!(recent.find(|key| *key == "a"), Some(&1));
        assert_eq!(recent.find(|key| *key == "c"), Some(&3));
    }
}
