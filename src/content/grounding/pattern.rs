//! A regular expression with its search cache kept beside it. The regex engine builds the
//! states of its lazy DFA as the input it meets needs them, into a cache; `regex::Regex` keeps
//! its caches in a pool that a pre-initialised component does not start with, so every fresh
//! instance built them again — a quarter of a fresh call's CPU (`bench/stages.py`). Kept here, in
//! the pattern's own static, the states built when the component is pre-initialised
//! ([`super::prepare`]) are in every instance's memory from the start.

use std::ops::Range;
use std::sync::{Mutex, PoisonError};

use regex_automata::Input;
use regex_automata::meta::{Cache, Regex};
use regex_automata::util::captures::Captures;

/// A compiled pattern and its cache.
pub struct Pattern {
    regex: Regex,
    cache: Mutex<Cache>,
}

/// One match: the text it was found in and its groups.
pub struct Found<'h> {
    haystack: &'h str,
    groups: Captures,
}

impl Pattern {
    /// `pattern` compiled; it is one of the crate's own, so a failure is a bug.
    pub fn new(pattern: &str) -> Self {
        let regex = Regex::new(pattern).expect("a valid pattern of the crate's own");
        let cache = Mutex::new(regex.create_cache());
        Self { regex, cache }
    }

    /// Every match in `haystack`, left to right, none overlapping.
    pub fn captures_all<'h>(&self, haystack: &'h str) -> Vec<Found<'h>> {
        let mut cache = self.cache.lock().unwrap_or_else(PoisonError::into_inner);
        let mut found = Vec::new();
        let mut at = 0;
        // Each match moves `at` on by at least one byte: the loop ends within the haystack's length.
        while at <= haystack.len() {
            let mut groups = self.regex.create_captures();
            let input = Input::new(haystack).range(at..);
            self.regex
                .search_captures_with(&mut cache, &input, &mut groups);
            let Some(whole) = groups.get_match() else {
                break;
            };
            at = if whole.is_empty() {
                next_char(haystack, whole.end())
            } else {
                whole.end()
            };
            found.push(Found { haystack, groups });
        }
        found
    }

    /// Where each match in `haystack` is.
    pub fn ranges(&self, haystack: &str) -> Vec<Range<usize>> {
        (self.captures_all(haystack).iter())
            .map(Found::range)
            .collect()
    }

    /// Whether `haystack` holds a match.
    pub fn is_match(&self, haystack: &str) -> bool {
        let mut cache = self.cache.lock().unwrap_or_else(PoisonError::into_inner);
        self.regex
            .search_with(&mut cache, &Input::new(haystack).earliest(true))
            .is_some()
    }
}

impl<'h> Found<'h> {
    /// The text of the group `name`, when it took part in the match.
    pub fn name(&self, name: &str) -> Option<&'h str> {
        let span = self.groups.get_group_by_name(name)?;
        Some(&self.haystack[span.range()])
    }

    /// The text of the group `name`, empty when it took no part in the match.
    pub fn group(&self, name: &str) -> &'h str {
        self.name(name).unwrap_or("")
    }

    /// Where the whole match is.
    pub fn range(&self) -> Range<usize> {
        self.groups.get_match().map_or(0..0, |whole| whole.range())
    }
}

/// The byte after the character at `at` (past the end when `at` is the end).
fn next_char(text: &str, at: usize) -> usize {
    text[at..]
        .chars()
        .next()
        .map_or(at + 1, |c| at + c.len_utf8())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_match_is_found_with_its_groups() {
        let pattern = Pattern::new(r"(?P<year>\d{4})-(?P<month>\d{2})(?:-(?P<day>\d{2}))?");
        let text = "from 2025-06-01 to 2026-01, née 1999-12-31";
        let found = pattern.captures_all(text);
        assert_eq!(found.len(), 3);
        assert_eq!(found[0].group("year"), "2025");
        assert_eq!(found[1].name("day"), None);
        assert_eq!(found[1].group("day"), "");
        assert_eq!(&text[found[2].range()], "1999-12-31");
        assert_eq!(pattern.ranges(text).len(), 3);
        assert!(pattern.is_match(text));
        assert!(!pattern.is_match("no date"));
        // A pattern that matches nothing moves on a character at a time.
        let empty = Pattern::new(r"x*");
        assert_eq!(empty.captures_all("aé").len(), 3);
    }
}
