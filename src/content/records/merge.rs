//! Merging the records found chunk by chunk: in document order, a record that another chunk
//! already gave — the same value, found at the same place of the text (its sources' spans meet)
//! — is the overlap seen twice and is dropped. The same value at another place is another record
//! (an order listed twice is two mentions; telling them apart is the schema's job, by its keys).

use std::ops::Range;

use serde_json::Value;

/// A record one chunk gave, with the spans (byte ranges in the whole text) its values came from.
#[derive(Debug, Clone, PartialEq)]
pub struct Found {
    pub record: Value,
    pub spans: Vec<Range<usize>>,
}

impl Found {
    /// Where the record starts in the text (its first span), for document order.
    fn position(&self) -> usize {
        self.spans
            .iter()
            .map(|span| span.start)
            .min()
            .unwrap_or(usize::MAX)
    }

    fn meets(&self, other: &Found) -> bool {
        self.spans.iter().any(|a| {
            other
                .spans
                .iter()
                .any(|b| a.start < b.end && b.start < a.end || a == b)
        })
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
                        || (seen.spans.is_empty()
                            && found.spans.is_empty()
                            && chunk - seen_in == 1))
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
    use serde_json::json;

    fn found(id: u32, spans: &[(usize, usize)]) -> Found {
        Found {
            record: json!({ "id": id }),
            spans: spans.iter().map(|&(start, end)| start..end).collect(),
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
