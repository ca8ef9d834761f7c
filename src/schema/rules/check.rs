//! Rules checked at registration: every rule list of a schema read, each rule parsed, held to
//! `self`, to the properties a closed object has and to the types the schema gives, and its estimated cost held under the ceiling — each problem at its pointer, so a
//! schema with a broken rule is refused before any call, never at one.

use serde_json::Value;

use crate::error::StructureError;
use crate::schema::rules::compile::rules;
use crate::schema::rules::cost::{CEILING, bounds, estimate};
use crate::schema::rules::fields::undefined;
use crate::schema::rules::keyword::KEYWORDS;
use crate::schema::rules::types;
use crate::schema::walk::{self, Next};

/// Every problem with the rules of `schema`: the pointer into the schema and what is wrong.
pub fn problems(schema: &Value) -> Vec<(String, String)> {
    let mut found = Vec::new();
    walk::schemas(schema, &mut |map, at| {
        for keyword in KEYWORDS {
            let Some(value) = map.get(keyword) else {
                continue;
            };
            let here = format!("{at}/{keyword}");
            match rules(value) {
                Err(problems) => found.extend(
                    (problems.into_iter())
                        .map(|(below, problem)| (format!("{here}{below}"), problem)),
                ),
                Ok(rules) => {
                    let bounds = bounds(schema, &Value::Object(map.clone()));
                    for (index, rule) in rules.iter().enumerate() {
                        let typed = (types::problems(&rule.expr, map).into_iter())
                            .map(|problem| format!("the rule does not type-check: {problem}"));
                        found.extend(
                            (undefined(&rule.expr, map).into_iter())
                                .chain(typed)
                                .map(|problem| (format!("{here}/{index}/rule"), problem)),
                        );
                        let cost = estimate(&rule.expr, bounds);
                        if cost > CEILING {
                            found.push((
                                format!("{here}/{index}/rule"),
                                format!(
                                    "the rule's estimated cost {cost} is over the ceiling of \
                                     {CEILING} (lists assumed {} items long, strings {} \
                                     characters): bound the lists and strings it reads with \
                                     maxItems and maxLength, or loop less",
                                    bounds.items, bounds.chars
                                ),
                            ));
                        }
                    }
                }
            }
        }
        Next::Descend
    });
    found
}

/// Refuses a schema whose rules have a problem, naming the first at its pointer.
pub fn check(schema: &Value) -> Result<(), StructureError> {
    match problems(schema).into_iter().next() {
        None => Ok(()),
        Some((at, problem)) => Err(StructureError::invalid_schema_at(
            &at,
            format!("a rule at {at}: {problem}"),
        )),
    }
}
