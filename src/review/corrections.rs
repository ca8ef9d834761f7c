//! What reviewers corrected, per schema and field: how often each value was changed, and from
//! what to what (the latest few), over the tenant's reviewed items. A field corrected often is
//! where the schema's descriptions, an example, or another model would help.

use std::collections::BTreeMap;

use serde::Serialize;
use serde_json::Value;

use super::queue::Item;

/// The most changes kept as examples per field.
const EXAMPLES: usize = 3;

/// One schema's reviews.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Corrections {
    pub schema: String,
    /// Items reviewed.
    pub reviewed: usize,
    /// Of them, those the reviewer changed.
    pub corrected: usize,
    /// Each field changed, most often first.
    pub fields: Vec<FieldCorrections>,
}

/// How often a field was corrected, and the latest changes.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct FieldCorrections {
    /// The field's pointer, a record's or an array item's index as `*` (`/*/total`).
    pub pointer: String,
    pub corrected: usize,
    /// The latest changes: what the model gave, what the reviewer made it (`null`: none).
    pub changes: Vec<Change>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Change {
    pub from: Value,
    pub to: Value,
}

/// The corrections of `reviewed` items (oldest first), per schema by name.
pub fn of(reviewed: &[Item]) -> Vec<Corrections> {
    let mut schemas: BTreeMap<&str, (Corrections, BTreeMap<String, FieldCorrections>)> =
        BTreeMap::new();
    for item in reviewed {
        let Some(review) = &item.reviewed else {
            continue;
        };
        let (summary, fields) = schemas.entry(&item.schema_name).or_insert_with(|| {
            let summary = Corrections {
                schema: item.schema_name.clone(),
                reviewed: 0,
                corrected: 0,
                fields: Vec::new(),
            };
            (summary, BTreeMap::new())
        });
        summary.reviewed += 1;
        summary.corrected += usize::from(!review.corrected.is_empty());
        for pointer in &review.corrected {
            let field = fields
                .entry(any_index(pointer))
                .or_insert_with(|| FieldCorrections {
                    pointer: any_index(pointer),
                    corrected: 0,
                    changes: Vec::new(),
                });
            field.corrected += 1;
            let at = |value: &Value| value.pointer(pointer).cloned().unwrap_or(Value::Null);
            field.changes.push(Change {
                from: at(item.data()),
                to: at(&review.data),
            });
            if field.changes.len() > EXAMPLES {
                field.changes.remove(0);
            }
        }
    }
    (schemas.into_values())
        .map(|(mut summary, fields)| {
            summary.fields = fields.into_values().collect();
            summary
                .fields
                .sort_by_key(|field| std::cmp::Reverse(field.corrected));
            summary
        })
        .collect()
}

/// `pointer` with each index as `*`: the corrections of one field over records.
fn any_index(pointer: &str) -> String {
    (pointer.split('/'))
        .map(
            |segment| match !segment.is_empty() && segment.bytes().all(|b| b.is_ascii_digit()) {
                true => "*",
                false => segment,
            },
        )
        .collect::<Vec<_>>()
        .join("/")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_records_index_is_any_record() {
        assert_eq!(any_index("/3/total"), "/*/total");
        assert_eq!(any_index("/total"), "/total");
        assert_eq!(any_index(""), "");
    }
}
