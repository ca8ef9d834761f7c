//! Leaving values out of an answer when it is better off without them: a value the model is
//! unsure of (`structure_min_confidence`, [`super::confidence::hold`]), or one that stayed
//! invalid after every reason message ([`without_invalid`]) — never a value the answer needs.
//! A value goes with the nearest optional object or array item that holds it when it cannot go
//! alone (an unsure `count` with the optional `term` that requires it).

use std::cmp::Ordering;

use serde_json::Value;

use crate::outcome::Source;
use crate::schema::violation::Violation;
use crate::schema::walk;

/// The nearest of `pointer` and the objects and arrays holding it whose removal leaves `data`
/// as `keeps` wants it, and `data` without it; `None` when the answer needs every one of them.
pub(super) fn droppable(
    data: &Value,
    pointer: &str,
    keeps: impl Fn(&Value) -> bool,
) -> Option<(String, Value)> {
    let mut at = pointer;
    while !at.is_empty() {
        let mut without = data.clone();
        if remove(&mut without, at) && keeps(&without) {
            return Some((at.to_owned(), without));
        }
        at = at.rsplit_once('/').map_or("", |(parent, _)| parent);
    }
    None
}

/// `data` without the values its `violations` are at — each with the nearest optional value
/// holding it, when it cannot go alone — provided what is left breaks nothing (`check` gives
/// what a value breaks); `None` when the answer needs one of them, or breaks a rule across
/// fields that no single value's absence mends.
pub fn without_invalid(
    data: &Value,
    violations: &[Violation],
    check: impl Fn(&Value) -> Vec<Violation>,
) -> Option<(Value, Dropped)> {
    let mut pointers: Vec<&str> = violations
        .iter()
        .map(|violation| violation.pointer.as_str())
        .filter(|pointer| !pointer.is_empty() && *pointer != "/")
        .collect();
    if pointers.len() < violations.len() {
        return None; // a violation of the whole answer: nothing to leave out
    }
    // Last first: leaving an array's later item out keeps its earlier ones where they are.
    pointers.sort_by(|a, b| by_segments(b, a));
    pointers.dedup();
    let mut data = data.clone();
    let mut dropped = Dropped::default();
    for pointer in pointers {
        if data.pointer(pointer).is_none() {
            continue; // gone with a value that held it
        }
        // The value may go when its absence adds no violation outside it: no required
        // property, no array's least length.
        let before = check(&data);
        let (at, without) = droppable(&data, pointer, |without| {
            check(without).iter().all(|found| {
                before.iter().any(|known| {
                    known.pointer == found.pointer && known.constraint == found.constraint
                })
            })
        })?;
        dropped.push(&data, at);
        data = without;
    }
    check(&data).is_empty().then_some((data, dropped))
}

/// A line for each value `dropped` left out: what it broke (`violations`, at or under it).
pub fn reasons(dropped: &Dropped, violations: &[Violation]) -> Vec<String> {
    let mut lines = Vec::new();
    for pointer in dropped.pointers() {
        lines.extend(
            (violations.iter())
                .filter(|violation| within(&violation.pointer, &pointer))
                .map(|violation| format!("left out {violation}")),
        );
    }
    lines
}

/// What was left out of an answer, in the order it was, and so where the answer's values are
/// now: those left out are gone, later items of the same arrays moved up.
#[derive(Debug, Default, PartialEq)]
pub struct Dropped {
    /// Each pointer dropped, with the array and index it named, if an array's item.
    steps: Vec<(String, Option<(String, usize)>)>,
}

impl Dropped {
    /// Notes that the value at `at` of `data` (before it went) was left out.
    pub(super) fn push(&mut self, data: &Value, at: String) {
        let item = array_item(data, &at);
        self.steps.push((at, item));
    }

    /// The pointers dropped, in the order they were.
    pub fn pointers(&self) -> Vec<String> {
        self.steps
            .iter()
            .map(|(pointer, _)| pointer.clone())
            .collect()
    }

    /// `sources` where their values are now, those of dropped values gone.
    pub fn sources(&self, sources: Vec<Source>) -> Vec<Source> {
        (sources.into_iter())
            .filter_map(|source| {
                let pointer = self.moved(&source.pointer)?;
                Some(Source { pointer, ..source })
            })
            .collect()
    }

    /// Where the value at `pointer` is now; `None` when it was dropped.
    pub fn moved(&self, pointer: &str) -> Option<String> {
        let mut pointer = pointer.to_owned();
        for (dropped, item) in &self.steps {
            if within(&pointer, dropped) {
                return None;
            }
            if let Some((parent, index)) = item {
                pointer = moved_up(&pointer, parent, *index);
            }
        }
        Some(pointer)
    }
}

/// Whether `pointer` is `ancestor` or a value within it.
pub(super) fn within(pointer: &str, ancestor: &str) -> bool {
    pointer == ancestor || pointer.starts_with(&format!("{ancestor}/"))
}

/// The array and index `pointer` names in `data`, when it names an array's item.
fn array_item(data: &Value, pointer: &str) -> Option<(String, usize)> {
    let (parent, last) = pointer.rsplit_once('/')?;
    data.pointer(parent)?.as_array()?;
    Some((parent.to_owned(), last.parse().ok()?))
}

/// `pointer` after item `index` of the array at `parent` was removed.
fn moved_up(pointer: &str, parent: &str, index: usize) -> String {
    let Some(rest) = pointer.strip_prefix(&format!("{parent}/")) else {
        return pointer.to_owned();
    };
    let (segment, tail) = rest
        .split_once('/')
        .map_or((rest, None), |(a, b)| (a, Some(b)));
    match segment.parse::<usize>() {
        Ok(at) if at > index => match tail {
            Some(tail) => format!("{parent}/{}/{tail}", at - 1),
            None => format!("{parent}/{}", at - 1),
        },
        _ => pointer.to_owned(),
    }
}

/// Removes the value at `pointer` from `data` (a property, or an array's item).
pub(super) fn remove(data: &mut Value, pointer: &str) -> bool {
    let Some((parent, last)) = pointer.rsplit_once('/') else {
        return false;
    };
    let name = walk::unescape(last);
    match data.pointer_mut(parent) {
        Some(Value::Object(object)) => object.remove(&name).is_some(),
        Some(Value::Array(items)) => match name.parse::<usize>() {
            Ok(index) if index < items.len() => {
                items.remove(index);
                true
            }
            _ => false,
        },
        _ => false,
    }
}

/// Pointers in document order: segment by segment, array indices as numbers.
pub(super) fn by_segments(a: &str, b: &str) -> Ordering {
    let mut left = a.split('/');
    let mut right = b.split('/');
    loop {
        match (left.next(), right.next()) {
            (None, None) => return Ordering::Equal,
            (None, Some(_)) => return Ordering::Less,
            (Some(_), None) => return Ordering::Greater,
            (Some(x), Some(y)) => {
                let order = match (x.parse::<usize>(), y.parse::<usize>()) {
                    (Ok(x), Ok(y)) => x.cmp(&y),
                    _ => x.cmp(y),
                };
                if order != Ordering::Equal {
                    return order;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::schema::validator::CompiledSchema;

    #[test]
    fn pointers_sort_in_document_order_with_numeric_indices() {
        let mut pointers = vec!["/a/10", "/a/9", "/a/9/x", "/b", "/a"];
        pointers.sort_by(|a, b| by_segments(a, b));
        assert_eq!(pointers, ["/a", "/a/9", "/a/9/x", "/a/10", "/b"]);
    }

    fn schema() -> CompiledSchema {
        CompiledSchema::compile_checked(&json!({
            "type": "object",
            "properties": {
                "name": { "type": "string" },
                "term": { "type": "string", "pattern": "^[0-9]+ (years|months)$" },
                "limit": {
                    "type": "object",
                    "properties": { "count": { "type": "integer", "minimum": 1 } },
                    "required": ["count"],
                },
                "tags": { "type": "array", "items": { "type": "string", "maxLength": 5 } },
            },
            "required": ["name"],
        }))
        .unwrap()
    }

    #[test]
    fn values_that_stay_invalid_are_left_out_with_what_needs_them() {
        let schema = schema();
        let data = json!({
            "name": "Ada",
            "term": "12 months after termination",
            "limit": { "count": 0 },
            "tags": ["ok", "far too long", "fine"],
        });
        let violations = schema.violations(&data);
        let (kept, dropped) =
            without_invalid(&data, &violations, |value| schema.violations(value)).unwrap();
        assert_eq!(kept, json!({ "name": "Ada", "tags": ["ok", "fine"] }));
        assert_eq!(dropped.pointers(), ["/term", "/tags/1", "/limit"]);
        assert_eq!(dropped.moved("/tags/2"), Some("/tags/1".to_owned()));
    }

    #[test]
    fn a_value_the_answer_needs_is_never_left_out() {
        let schema = schema();
        let data = json!({ "name": 7, "term": "3 years" });
        let violations = schema.violations(&data);
        assert!(without_invalid(&data, &violations, |value| schema.violations(value)).is_none());
    }
}
