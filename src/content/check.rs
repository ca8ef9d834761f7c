//! What a candidate answer breaks: the target schema (formats asserted), then — only when that
//! holds and grounding is required — the text's support for each value. The one-object judge
//! takes a candidate whole; a part of a long text and a record take one that lacks required
//! values ([`partial`]).

use serde_json::Value;

use crate::answer::format::NEED_KEY;
use crate::content::chunked::required::missing;
use crate::content::grounding::provenance;
use crate::schema::TargetSchema;
use crate::schema::violation::{Category, Violation, show};
use crate::schema::walk::escape;
use crate::settings::Grounding;

/// What `candidate` breaks: `target`'s schema (but for the violations `excused` lets pass),
/// then — only when that holds and grounding is required — the support of `text`.
pub(super) fn violations(
    target: &TargetSchema,
    candidate: &Value,
    text: &str,
    grounding: Grounding,
    excused: impl Fn(&Violation) -> bool,
) -> Vec<Violation> {
    let mut violations: Vec<Violation> = target
        .compiled
        .violations(candidate)
        .into_iter()
        .filter(|violation| !excused(violation))
        .collect();
    if violations.is_empty() && grounding == Grounding::Require {
        violations = ungrounded(candidate, &target.schema, text);
    }
    violations
}

/// Whether an object is whole or lacks values its schema requires at the root.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Whole {
    Yes,
    /// It lacks a value required at the root (and what it has breaks nothing).
    Lacking,
}

/// What `candidate` breaks beyond the values required at the root that it lacks (a part of a
/// long text, or a record, may lack them): `Ok` says whether it is whole.
pub(super) fn partial(
    target: &TargetSchema,
    candidate: &Value,
    text: &str,
    grounding: Grounding,
) -> Result<Whole, Vec<Violation>> {
    let lacking: Vec<String> = missing(candidate, &target.schema)
        .into_iter()
        .map(|name| format!("/{}", escape(name)))
        .collect();
    let found = violations(target, candidate, text, grounding, |violation| {
        violation.category == Category::Required && lacking.contains(&violation.pointer)
    });
    match (found.is_empty(), lacking.is_empty()) {
        (false, _) => Err(found),
        (true, true) => Ok(Whole::Yes),
        (true, false) => Ok(Whole::Lacking),
    }
}

/// The violations of the values of a valid `candidate` that no span of `text` supports.
fn ungrounded(candidate: &Value, schema: &Value, text: &str) -> Vec<Violation> {
    provenance::ungrounded(candidate, schema, text)
        .into_iter()
        .map(|(pointer, value)| Violation {
            category: Category::Ungrounded,
            pointer,
            constraint: format!(
                "{} does not appear in the text; copy the value as the text writes it, or answer \
                 with {NEED_KEY} if the text does not give it",
                show(value)
            ),
            actual: None,
        })
        .collect()
}
