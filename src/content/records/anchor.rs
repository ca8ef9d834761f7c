//! A record's values placed at the record: a chunk that holds several records often writes the
//! same value more than once ("Zoë Kim" ordered twice), and provenance, which knows one value at
//! a time, finds its first occurrence — another record's. A value the chunk writes once anchors
//! the record; a value it writes more than once is placed at its occurrence in an anchor's
//! sentence, else at the one nearest the anchors.

use std::ops::Range;

use crate::content::chunked::split::sentence_of;
use crate::content::grounding::provenance::span_at;
use crate::outcome::Source;

/// `sources` (spans in code points of `text`) with every span whose text `text` holds more than
/// once moved to the occurrence nearest the spans it holds once. Unchanged without such a span.
pub fn anchored(mut sources: Vec<Source>, text: &str) -> Vec<Source> {
    let occurrences: Vec<Vec<usize>> = sources
        .iter()
        .map(|source| match &source.span {
            Some(span) if !span.text.is_empty() => text
                .match_indices(span.text.as_str())
                .map(|(at, _)| at)
                .filter(|&at| standalone(text, at, span.text.len()))
                .collect(),
            _ => Vec::new(),
        })
        .collect();
    let unique: Vec<usize> = occurrences
        .iter()
        .filter(|found| found.len() == 1)
        .map(|found| found[0])
        .collect();
    if unique.is_empty() || !occurrences.iter().any(|found| found.len() > 1) {
        return sources;
    }
    let anchor = unique.iter().sum::<usize>() / unique.len();
    let sentences: Vec<Range<usize>> = unique.iter().map(|&at| sentence_of(text, at)).collect();
    for (source, found) in sources.iter_mut().zip(occurrences) {
        let Some(span) = source.span.as_mut() else {
            continue;
        };
        if found.len() < 2 {
            continue;
        }
        let placed = found.into_iter().min_by_key(|&at| {
            let elsewhere = !sentences.iter().any(|sentence| sentence.contains(&at));
            (elsewhere, at.abs_diff(anchor))
        });
        if let Some(at) = placed {
            *span = span_at(text, at..at + span.text.len());
        }
    }
    sources
}

/// Whether `text[at..at + len]` is not part of a longer word or number (`3` in `ORD-0003`).
fn standalone(text: &str, at: usize, len: usize) -> bool {
    let inside = |c: char| c.is_alphanumeric();
    let found = &text[at..at + len];
    let before = text[..at].chars().next_back();
    let after = text[at + len..].chars().next();
    !(found.starts_with(inside) && before.is_some_and(inside))
        && !(found.ends_with(inside) && after.is_some_and(inside))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::content::grounding::provenance::exact_source as source;

    #[test]
    fn a_value_written_twice_is_placed_at_its_record() {
        let text = "ORD-1 for Zoë Kim. ORD-2 for Łukasz. ORD-3 for Zoë Kim.";
        // As provenance finds them for ORD-3's record: the name at its first occurrence.
        let sources = vec![
            source("/order", text, "ORD-3"),
            source("/customer", text, "Zoë Kim"),
        ];
        let placed = anchored(sources, text);
        let customer = placed[1].span.as_ref().unwrap();
        let second = text.rfind("Zoë Kim").unwrap();
        assert_eq!(customer.start, text[..second].chars().count());
        assert_eq!(customer.utf16_start, text[..second].encode_utf16().count());
        assert_eq!(customer.end - customer.start, 7);
        assert_eq!(
            placed[0],
            source("/order", text, "ORD-3"),
            "the anchor stays"
        );
    }

    #[test]
    fn a_number_inside_another_is_no_occurrence() {
        let text = "ORD-0003 for 3 units. ORD-0004 for 3 units.";
        let sources = vec![
            source("/order", text, "ORD-0004"),
            source("/quantity", text, "3"),
        ];
        let placed = anchored(sources, text);
        let quantity = placed[1].span.as_ref().unwrap();
        // In the anchor's sentence, though the previous order's quantity is nearer.
        assert_eq!(quantity.start, text.rfind(" 3 ").unwrap() + 1);
    }

    #[test]
    fn without_an_anchor_nothing_moves() {
        let text = "Zoë Kim, Zoë Kim";
        let sources = vec![source("/customer", text, "Zoë Kim")];
        assert_eq!(anchored(sources.clone(), text), sources);
    }
}
