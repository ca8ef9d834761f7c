//! Merging what the parts of a long text gave into one object, field by field:
//!
//! - an array field is the union of every part's items, in the text's order, an item kept once
//!   when its value (case and spacing folded) or its span was already given, or when it is a
//!   short name the text defines for another item (`aliases.rs`); an item its part's text
//!   does not write (a guess: "Company A") is left out;
//! - any other field takes the value every part that gave one agrees on, when the text supports
//!   it (a span writes each of its values, or the field is a judgement: an enum, a boolean, a
//!   field marked derived); else the only value the text supports; else the parts disagree, or
//!   gave only values the text does not write: a [`Conflict`] for a call that sees the
//!   candidates with the lines around each (`choose.rs`) — never the first one silently.
//!
//! Each value keeps the sources its part found for it (spans in the whole text) and the chunk
//! it came from.

use std::collections::BTreeMap;

use serde_json::{Map, Value};

use super::aliases::{self, Definition, MAX_NAME_GAP_CHARS};
use crate::content::chunked::required::record_root;
use crate::outcome::Source;
use crate::schema::walk::escape;

/// What one part of the text gave: its object, the sources of its values (pointers into
/// `data`, spans in the whole text), and the values the part's text does not write although
/// their fields need it (pointers into `data`).
pub(super) struct Part {
    pub chunk: usize,
    pub data: Value,
    pub sources: Vec<Source>,
    pub unsupported: Vec<String>,
}

/// One value a part gave for a field.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Candidate {
    pub value: Value,
    /// Pointers relative to the value (`""`, `/0`), spans in the whole text.
    pub sources: Vec<Source>,
    pub chunk: usize,
    /// How many parts gave this value.
    pub support: usize,
    /// Whether the text supports it (see the module's doc).
    pub supported: bool,
    /// The values under it the part's text does not write although their fields need it
    /// (pointers relative to the value).
    pub unsupported: Vec<String>,
}

impl Candidate {
    /// The first span a source of this value has, if any: where the text supports it.
    pub fn first_span(&self) -> Option<&crate::outcome::Span> {
        self.sources.iter().find_map(|source| source.span.as_ref())
    }
}

/// A field the parts gave different values for, none of them settled by agreement or support.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Conflict {
    /// The property's name.
    pub name: String,
    /// The different values, the best supported first.
    pub candidates: Vec<Candidate>,
}

/// A list field whose items came from more than one part: which of them the document states
/// as that field is asked before they are placed (`members.rs`).
#[derive(Debug, Clone, PartialEq)]
pub(super) struct List {
    /// The property's name.
    pub name: String,
    /// The items, in the text's order.
    pub items: Vec<Candidate>,
}

/// The object the parts make, its sources, where each value came from, and what is left to
/// settle.
#[derive(Debug, Default, PartialEq)]
pub(super) struct Merged {
    pub data: Map<String, Value>,
    pub sources: Vec<Source>,
    pub chunk_of: BTreeMap<String, u32>,
    pub conflicts: Vec<Conflict>,
    /// Lists gathered from several parts, their items not yet placed (their fields hold `[]`).
    pub lists: Vec<List>,
}

impl Merged {
    /// Sets field `name` to `candidate`, with its sources and chunk.
    pub fn take(&mut self, name: &str, candidate: Candidate) {
        let at = format!("/{}", escape(name));
        self.chunk_of.insert(at.clone(), candidate.chunk as u32);
        self.sources
            .extend(candidate.sources.into_iter().map(|mut source| {
                source.pointer = format!("{at}{}", source.pointer);
                source
            }));
        self.data.insert(name.to_owned(), candidate.value);
    }

    /// Sets list field `name` to `items`, each with its sources and chunk.
    pub fn place(&mut self, name: &str, items: Vec<Candidate>) {
        let at = format!("/{}", escape(name));
        let mut values = Vec::with_capacity(items.len());
        for (index, item) in items.into_iter().enumerate() {
            let pointer = format!("{at}/{index}");
            self.chunk_of.insert(pointer.clone(), item.chunk as u32);
            self.sources
                .extend(item.sources.into_iter().map(|mut source| {
                    source.pointer = format!("{pointer}{}", source.pointer);
                    source
                }));
            values.push(item.value);
        }
        self.data.insert(name.to_owned(), Value::Array(values));
    }
}

/// The object `parts` (in chunk order) of `text` make for `schema`.
pub(super) fn merge(parts: Vec<Part>, schema: &Value, text: &str) -> Merged {
    let definitions = aliases::definitions(text);
    let mut merged = Merged::default();
    for name in field_names(&parts, schema) {
        let candidates = candidates(&parts, &name);
        if candidates.is_empty() {
            continue;
        }
        let tuple = record_root(schema)
            .pointer(&format!("/properties/{}/prefixItems", escape(&name)))
            .is_some();
        if !tuple
            && candidates
                .iter()
                .all(|candidate| candidate.value.is_array())
        {
            union(&mut merged, &name, candidates, &definitions);
            continue;
        }
        match decide(candidates) {
            Ok(chosen) => merged.take(&name, chosen),
            Err(candidates) => merged.conflicts.push(Conflict { name, candidates }),
        }
    }
    merged
}

/// The fields the parts gave, in the order the schema lists its properties, then any other in
/// the order the parts gave them.
fn field_names(parts: &[Part], schema: &Value) -> Vec<String> {
    let mut names: Vec<String> = record_root(schema)
        .get("properties")
        .and_then(Value::as_object)
        .map(|properties| properties.keys().cloned().collect())
        .unwrap_or_default();
    for part in parts {
        for name in part.data.as_object().into_iter().flat_map(Map::keys) {
            if !names.contains(name) {
                names.push(name.clone());
            }
        }
    }
    names
}

/// Every value the parts gave for `name` (nulls are no value), with their sources.
fn candidates(parts: &[Part], name: &str) -> Vec<Candidate> {
    let at = format!("/{}", escape(name));
    parts
        .iter()
        .filter_map(|part| {
            let value = part.data.get(name).filter(|value| !value.is_null())?;
            let unsupported: Vec<String> = (part.unsupported.iter())
                .filter_map(|pointer| pointer.strip_prefix(&at))
                .filter(|rest| rest.is_empty() || rest.starts_with('/'))
                .map(str::to_owned)
                .collect();
            Some(Candidate {
                value: value.clone(),
                sources: under(&part.sources, &at),
                chunk: part.chunk,
                support: 1,
                supported: unsupported.is_empty(),
                unsupported,
            })
        })
        .collect()
}

/// The sources under pointer `at`, their pointers made relative to it.
fn under(sources: &[Source], at: &str) -> Vec<Source> {
    sources
        .iter()
        .filter_map(|source| {
            let rest = source.pointer.strip_prefix(at)?;
            (rest.is_empty() || rest.starts_with('/')).then(|| Source {
                pointer: rest.to_owned(),
                ..source.clone()
            })
        })
        .collect()
}

/// The union of the arrays `candidates` hold, into field `name`, without the items that are a
/// short name `definitions` give another item; held in `merged.lists` when more than one part
/// gave its items.
fn union(merged: &mut Merged, name: &str, candidates: Vec<Candidate>, definitions: &[Definition]) {
    let mut items: Vec<Candidate> = Vec::new();
    for candidate in candidates {
        let Value::Array(values) = candidate.value else {
            continue;
        };
        for (index, value) in values.into_iter().enumerate() {
            let at = format!("/{index}");
            if candidate.unsupported.contains(&at) {
                // A value the part's text does not write: a guess, not what the text states.
                continue;
            }
            let item = Candidate {
                sources: under(&candidate.sources, &at),
                value,
                chunk: candidate.chunk,
                support: 1,
                supported: candidate.supported,
                unsupported: Vec::new(),
            };
            let seen = items.iter().any(|kept| {
                same(&kept.value, &item.value)
                    || matches!((kept.first_span(), item.first_span()), (Some(a), Some(b)) if a.start == b.start && a.end == b.end)
            });
            if !seen {
                items.push(item);
            }
        }
    }
    let items = without_short_names(items, definitions);
    // The text's order: by where each item is written; an item no span supports stays after
    // the one before it.
    let mut position = 0;
    let mut placed: Vec<(usize, usize, Candidate)> = Vec::with_capacity(items.len());
    for (index, item) in items.into_iter().enumerate() {
        if let Some(span) = item.first_span() {
            position = span.start;
        }
        placed.push((position, index, item));
    }
    placed.sort_by_key(|(position, index, _)| (*position, *index));
    let items: Vec<Candidate> = placed.into_iter().map(|(_, _, item)| item).collect();
    let first = items.first().map(|item| item.chunk);
    if items.iter().any(|item| Some(item.chunk) != first) {
        // Its place in the object kept; its items placed once confirmed.
        merged
            .data
            .insert(name.to_owned(), Value::Array(Vec::new()));
        merged.lists.push(List {
            name: name.to_owned(),
            items,
        });
    } else {
        merged.place(name, items);
    }
}

/// `items` without those that are a short name the text defines for another of them: the item
/// whose span ends nearest before the definition, at most [`MAX_NAME_GAP_CHARS`] before it.
fn without_short_names(items: Vec<Candidate>, definitions: &[Definition]) -> Vec<Candidate> {
    let spans: Vec<Option<(usize, usize)>> = (items.iter())
        .map(|item| item.first_span().map(|span| (span.start, span.end)))
        .collect();
    let named_before = |at: usize, not: usize| {
        (spans.iter().enumerate())
            .filter(|(index, _)| *index != not)
            .filter_map(|(index, span)| Some((index, (*span)?)))
            .filter(|(_, (_, end))| *end <= at && at - *end <= MAX_NAME_GAP_CHARS)
            .max_by_key(|(_, (_, end))| *end)
            .map(|(index, _)| index)
    };
    let short: Vec<bool> = (items.iter().enumerate())
        .map(|(index, item)| {
            let Some(value) = item.value.as_str() else {
                return false;
            };
            let folded = aliases::fold(value);
            (definitions.iter())
                .filter(|definition| definition.short == folded)
                .any(|definition| {
                    named_before(definition.at, index).is_some_and(|full| {
                        (items[full].value.as_str())
                            .is_some_and(|name| aliases::fold(name) != folded)
                    })
                })
        })
        .collect();
    (items.into_iter().zip(short))
        .filter(|(_, short)| !short)
        .map(|(item, _)| item)
        .collect()
}

/// The value a single-valued field takes: the only one the text supports; else the different
/// values (the supported ones if any, the best supported first), to choose among.
fn decide(candidates: Vec<Candidate>) -> Result<Candidate, Vec<Candidate>> {
    let mut distinct: Vec<Candidate> = Vec::new();
    for candidate in candidates {
        match distinct
            .iter_mut()
            .find(|kept| same(&kept.value, &candidate.value))
        {
            Some(kept) => {
                kept.support += 1;
                let better = (candidate.supported, candidate.first_span().is_some())
                    > (kept.supported, kept.first_span().is_some());
                if better {
                    kept.sources = candidate.sources;
                    kept.chunk = candidate.chunk;
                    kept.supported = candidate.supported;
                }
            }
            None => distinct.push(candidate),
        }
    }
    let supported: Vec<Candidate> = distinct
        .iter()
        .filter(|candidate| candidate.supported)
        .cloned()
        .collect();
    if let [only] = supported.as_slice() {
        return Ok(only.clone());
    }
    let mut left = if supported.is_empty() {
        distinct
    } else {
        supported
    };
    left.sort_by_key(|candidate| std::cmp::Reverse(candidate.support));
    Err(left)
}

/// Whether two values are the same value: strings with case and spacing folded, numbers by
/// value, arrays and objects member by member.
pub(super) fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::String(a), Value::String(b)) => folded(a) == folded(b),
        (Value::Number(a), Value::Number(b)) => a.as_f64() == b.as_f64(),
        (Value::Array(a), Value::Array(b)) => {
            a.len() == b.len() && a.iter().zip(b).all(|(a, b)| same(a, b))
        }
        (Value::Object(a), Value::Object(b)) => {
            a.len() == b.len()
                && a.iter()
                    .all(|(key, value)| b.get(key).is_some_and(|other| same(value, other)))
        }
        _ => a == b,
    }
}

fn folded(text: &str) -> String {
    text.split_whitespace()
        .map(str::to_lowercase)
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::outcome::{Match, Span};

    fn source(pointer: &str, start: usize, text: &str) -> Source {
        Source {
            pointer: pointer.to_owned(),
            span: Some(Span {
                start,
                end: start + text.chars().count(),
                text: text.to_owned(),
                utf16_start: start,
                utf16_end: start + text.encode_utf16().count(),
            }),
            matched: Match::Exact,
            page: None,
            boxes: Vec::new(),
            cell: None,
            confidence: None,
        }
    }

    fn derived(pointer: &str) -> Source {
        Source {
            pointer: pointer.to_owned(),
            span: None,
            matched: Match::Derived,
            page: None,
            boxes: Vec::new(),
            cell: None,
            confidence: None,
        }
    }

    /// A part whose values with no span are the ones its text does not write.
    fn part(chunk: usize, data: Value, sources: Vec<Source>) -> Part {
        let unsupported = sources
            .iter()
            .filter(|source| source.span.is_none())
            .map(|source| source.pointer.clone())
            .collect();
        Part {
            chunk,
            data,
            sources,
            unsupported,
        }
    }

    fn schema() -> Value {
        json!({
            "type": "object",
            "properties": {
                "date": { "type": "string" },
                "party": { "type": "array", "items": { "type": "string" } },
                "law": { "type": "string" },
            },
        })
    }

    #[test]
    fn agreement_takes_the_value_with_its_first_supported_source_and_chunk() {
        let parts = vec![
            part(0, json!({ "law": "Delaware" }), vec![derived("/law")]),
            part(
                2,
                json!({ "law": "delaware" }),
                vec![source("/law", 900, "Delaware")],
            ),
        ];
        let merged = merge(parts, &schema(), "");
        assert!(merged.conflicts.is_empty());
        assert_eq!(merged.data["law"], json!("Delaware"));
        assert_eq!(
            merged.chunk_of["/law"], 2,
            "the part that found it in the text"
        );
        assert_eq!(merged.sources[0].span.as_ref().unwrap().start, 900);
    }

    #[test]
    fn the_only_supported_value_wins_and_two_supported_ones_conflict() {
        let one = vec![
            part(
                0,
                json!({ "date": "2014-05-20" }),
                vec![source("/date", 10, "May 20, 2014")],
            ),
            part(1, json!({ "date": "2020-01-01" }), vec![derived("/date")]),
        ];
        let merged = merge(one, &schema(), "");
        assert_eq!(merged.data["date"], json!("2014-05-20"));
        let two = vec![
            part(
                0,
                json!({ "date": "2014-05-20" }),
                vec![source("/date", 10, "May 20, 2014")],
            ),
            part(
                1,
                json!({ "date": "2015-06-01" }),
                vec![source("/date", 700, "June 1, 2015")],
            ),
            part(
                3,
                json!({ "date": "2015-06-01" }),
                vec![source("/date", 700, "June 1, 2015")],
            ),
        ];
        let merged = merge(two, &schema(), "");
        assert!(
            merged.data.get("date").is_none(),
            "never the first silently"
        );
        let conflict = &merged.conflicts[0];
        assert_eq!(conflict.name, "date");
        assert_eq!(conflict.candidates.len(), 2);
        assert_eq!(
            conflict.candidates[0].value,
            json!("2015-06-01"),
            "the best supported first"
        );
        assert_eq!(conflict.candidates[0].support, 2);
    }

    #[test]
    fn arrays_are_the_union_in_the_texts_order_each_item_once() {
        let parts = vec![
            part(
                0,
                json!({ "party": ["Beta LLC", "Acme Inc."] }),
                vec![
                    source("/party/0", 50, "Beta LLC"),
                    source("/party/1", 5, "Acme Inc."),
                ],
            ),
            part(
                1,
                json!({ "party": ["ACME  Inc.", "Gamma Corp"] }),
                vec![
                    source("/party/0", 5, "Acme Inc."),
                    source("/party/1", 3000, "Gamma Corp"),
                ],
            ),
        ];
        let merged = placed(merge(parts, &schema(), ""));
        assert_eq!(
            merged.data["party"],
            json!(["Acme Inc.", "Beta LLC", "Gamma Corp"])
        );
        assert_eq!(merged.chunk_of["/party/2"], 1);
        let pointers: Vec<&str> = merged.sources.iter().map(|s| s.pointer.as_str()).collect();
        assert_eq!(pointers, ["/party/0", "/party/1", "/party/2"]);
        assert_eq!(merged.sources[2].span.as_ref().unwrap().start, 3000);
    }

    #[test]
    fn a_short_name_the_text_defines_for_another_item_is_that_item() {
        let text = "This agreement between Visser Precision Cast, LLC (\"Visser\") and the \
                    Company (as defined below) is made by ACME INC. (the \"Company\").";
        let at = |needle: &str| text[..text.find(needle).unwrap()].chars().count();
        let parts = vec![
            part(
                0,
                json!({ "party": ["Visser Precision Cast, LLC", "ACME INC."] }),
                vec![
                    source(
                        "/party/0",
                        at("Visser Precision"),
                        "Visser Precision Cast, LLC",
                    ),
                    source("/party/1", at("ACME"), "ACME INC."),
                ],
            ),
            part(
                1,
                json!({ "party": ["Visser", "the Company", "Gamma"] }),
                vec![
                    source("/party/0", at("\"Visser\")") + 1, "Visser"),
                    source("/party/1", at("Company (as"), "Company"),
                    derived("/party/2"),
                ],
            ),
        ];
        let merged = placed(merge(parts, &schema(), text));
        assert_eq!(
            merged.data["party"],
            json!(["Visser Precision Cast, LLC", "ACME INC."]),
            "Visser and the Company are those two; Gamma, which the text does not write, a guess"
        );
    }

    #[test]
    fn an_array_item_its_parts_text_does_not_write_is_a_guess_and_left_out() {
        let parts = vec![
            part(
                0,
                json!({ "party": ["Acme Inc."] }),
                vec![source("/party/0", 5, "Acme Inc.")],
            ),
            part(
                1,
                json!({ "party": ["Company A", "Beta LLC"] }),
                vec![derived("/party/0"), source("/party/1", 900, "Beta LLC")],
            ),
        ];
        let merged = placed(merge(parts, &schema(), ""));
        assert_eq!(merged.data["party"], json!(["Acme Inc.", "Beta LLC"]));
    }

    /// `merged` with its held lists placed whole.
    fn placed(mut merged: Merged) -> Merged {
        for list in std::mem::take(&mut merged.lists) {
            merged.place(&list.name, list.items);
        }
        merged
    }

    #[test]
    fn a_list_from_several_parts_is_held_for_confirmation_and_one_from_one_part_placed() {
        let one = vec![part(
            0,
            json!({ "party": ["Acme Inc.", "Beta LLC"] }),
            vec![
                source("/party/0", 5, "Acme Inc."),
                source("/party/1", 50, "Beta LLC"),
            ],
        )];
        let merged = merge(one, &schema(), "");
        assert!(merged.lists.is_empty());
        assert_eq!(merged.data["party"], json!(["Acme Inc.", "Beta LLC"]));
        let two = vec![
            part(
                0,
                json!({ "party": ["Acme Inc."] }),
                vec![source("/party/0", 5, "Acme Inc.")],
            ),
            part(
                1,
                json!({ "party": ["Beta LLC"] }),
                vec![source("/party/0", 900, "Beta LLC")],
            ),
        ];
        let merged = merge(two, &schema(), "");
        assert_eq!(merged.data["party"], json!([]), "its place kept");
        assert_eq!(merged.lists.len(), 1);
        let chunks: Vec<usize> = merged.lists[0]
            .items
            .iter()
            .map(|item| item.chunk)
            .collect();
        assert_eq!(
            (merged.lists[0].name.as_str(), chunks),
            ("party", vec![0, 1])
        );
    }

    #[test]
    fn a_field_no_part_gives_stays_out() {
        let parts = vec![part(0, json!({ "law": null }), vec![])];
        let merged = merge(parts, &schema(), "");
        assert!(merged.data.is_empty() && merged.conflicts.is_empty());
    }
}
