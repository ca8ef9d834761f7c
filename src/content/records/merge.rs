//! Merging the records found chunk by chunk: in document order, a record that another chunk
//! already gave — the same value, found at the same place of the text (its sources' spans meet)
//! — is the overlap seen twice and is dropped. The same value at another place is another record
//! (an order listed twice is two mentions; telling them apart is the schema's job, by its keys).

use std::ops::Range;

use serde_json::Value;

use crate::outcome::Source;

/// A record one chunk gave, with the sources of its values (spans in the whole text).
#[derive(Debug, Clone, PartialEq)]
pub struct Found {
    pub record: Value,
    /// Pointers into `record`, spans in code points of the whole text.
    pub sources: Vec<Source>,
    /// Where the chunk that found it starts (code points): its place when no value has a span.
    pub at: usize,
}

impl Found {
    fn spans(&self) -> impl Iterator<Item = Range<usize>> + '_ {
        self.sources
            .iter()
            .filter_map(|source| source.span.as_ref())
            .map(|span| span.start..span.end)
    }

    /// Where the record stands in the text, for document order: the middle of its spans' starts
    /// (the later of two), as a short value (a quantity of `1`) may be found anywhere before it.
    fn position(&self) -> usize {
        let mut starts: Vec<usize> = self.spans().map(|span| span.start).collect();
        starts.sort_unstable();
        starts.get(starts.len() / 2).copied().unwrap_or(self.at)
    }

    fn meets(&self, other: &Found) -> bool {
        self.spans().any(|a| {
            other
                .spans()
                .any(|b| a.start < b.end && b.start < a.end || a == b)
        })
    }

    fn spanless(&self) -> bool {
        self.spans().next().is_none()
    }
}

/// The records of every chunk (in chunk order), duplicates from the overlaps dropped, in the
/// order they appear in the text. A record without spans (every value derived) is compared by
/// value alone with the records of the neighbouring chunk only.
pub fn merge(per_chunk: Vec<Vec<Found>>) -> Vec<Found> {
    let mut kept: Vec<(usize, Found)> = Vec::new();
    for (chunk, records) in per_chunk.into_iter().enumerate() {
        for found in records {
            let duplicate = kept.iter().any(|(seen_in, seen)| {
                *seen_in != chunk
                    && seen.record == found.record
                    && (seen.meets(&found)
                        || (seen.spanless() && found.spanless() && chunk - seen_in == 1))
            });
            if !duplicate {
                kept.push((chunk, found));
            }
        }
    }
    let mut merged: Vec<Found> = kept.into_iter().map(|(_, found)| found).collect();
    merged.sort_by_key(Found::position);
    merged
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::outcome::{Match, Span};
    use serde_json::json;

    fn found(id: u32, spans: &[(usize, usize)]) -> Found {
        let source = |&(start, end): &(usize, usize)| Source {
            pointer: "/id".to_owned(),
            span: Some(Span {
                start,
                end,
                text: id.to_string(),
                utf16_start: start,
                utf16_end: end,
            }),
            matched: Match::Exact,
            page: None,
            boxes: Vec::new(),
            cell: None,
            confidence: None,
        };
        Found {
            record: json!({ "id": id }),
            sources: spans.iter().map(source).collect(),
            at: 0,
        }
    }

    #[test]
    fn the_overlap_seen_twice_is_one_record_and_repeats_elsewhere_stay() {
        let merged = merge(vec![
            vec![found(1, &[(0, 5)]), found(2, &[(90, 95)])],
            vec![found(2, &[(90, 95)]), found(3, &[(120, 125)])],
            vec![found(1, &[(300, 305)])],
        ]);
        let ids: Vec<&Value> = merged.iter().map(|f| &f.record["id"]).collect();
        assert_eq!(ids, [&json!(1), &json!(2), &json!(3), &json!(1)]);
    }

    #[test]
    fn a_different_value_at_the_same_place_is_kept_and_order_follows_the_text() {
        let merged = merge(vec![
            vec![found(5, &[(50, 60)])],
            vec![found(6, &[(50, 60)]), found(4, &[(10, 20)])],
        ]);
        let ids: Vec<&Value> = merged.iter().map(|f| &f.record["id"]).collect();
        assert_eq!(ids, [&json!(4), &json!(5), &json!(6)]);
    }

    #[test]
    fn a_short_value_found_early_does_not_move_its_record_forward() {
        // Record 9's quantity `1` was found in line 1's text; its other values stand after 8's.
        let merged = merge(vec![vec![
            found(8, &[(80, 85), (86, 90), (91, 92)]),
            found(9, &[(3, 4), (95, 100), (101, 105)]),
        ]]);
        let ids: Vec<&Value> = merged.iter().map(|f| &f.record["id"]).collect();
        assert_eq!(ids, [&json!(8), &json!(9)]);
    }

    #[test]
    fn derived_records_are_duplicates_only_next_door() {
        let merged = merge(vec![
            vec![found(7, &[])],
            vec![found(7, &[])],
            vec![],
            vec![found(7, &[])],
        ]);
        assert_eq!(merged.len(), 2);
    }
}
