//! A few values kept per instance, the most recently used last: the compiled schemas and the
//! answer envelopes a reused instance builds again and again. A leaf module.

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

#[cfg(test)]
mod tests {
    use super::*;

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
