//! A validation error in words a model can act on: where (JSON pointer), which constraint, and
//! the offending value.

use std::fmt;

use jsonschema::ValidationError;
use jsonschema::error::{TypeKind, ValidationErrorKind};
use serde_json::Value;

pub use crate::outcome::Category;

use crate::schema::walk::escape;

/// The category of a validator error.
fn category(kind: &ValidationErrorKind) -> Category {
    use ValidationErrorKind as Kind;
    match kind {
        Kind::Type { .. } => Category::Type,
        Kind::Required { .. } => Category::Required,
        Kind::AdditionalProperties { .. } | Kind::UnevaluatedProperties { .. } => {
            Category::AdditionalProperty
        }
        Kind::Enum { .. } | Kind::Constant { .. } => Category::Enum,
        Kind::Pattern { .. } | Kind::BacktrackLimitExceeded { .. } => Category::Pattern,
        Kind::Format { .. } => Category::Format,
        Kind::Minimum { .. }
        | Kind::Maximum { .. }
        | Kind::ExclusiveMinimum { .. }
        | Kind::ExclusiveMaximum { .. }
        | Kind::MultipleOf { .. } => Category::Range,
        Kind::MinLength { .. } | Kind::MaxLength { .. } => Category::Length,
        Kind::MinItems { .. }
        | Kind::MaxItems { .. }
        | Kind::UniqueItems
        | Kind::Contains
        | Kind::AdditionalItems { .. }
        | Kind::UnevaluatedItems { .. } => Category::Items,
        Kind::MinProperties { .. } | Kind::MaxProperties { .. } | Kind::PropertyNames { .. } => {
            Category::Properties
        }
        Kind::AnyOf { .. }
        | Kind::OneOfNotValid { .. }
        | Kind::OneOfMultipleValid { .. }
        | Kind::Not { .. }
        | Kind::FalseSchema => Category::Combination,
        _ => Category::Other,
    }
}

/// One violated constraint of an answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Violation {
    /// What kind of constraint.
    pub category: Category,
    /// JSON pointer to the offending value in the answer (`/` for the root).
    pub pointer: String,
    /// The constraint, in words: `value must be ≤ 5`.
    pub constraint: String,
    /// The offending value, as short JSON, when showing it helps.
    pub actual: Option<String>,
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.pointer, self.constraint)?;
        if let Some(actual) = &self.actual {
            write!(f, " (was {actual})")?;
        }
        Ok(())
    }
}

/// Values longer than this are cut in messages: the model needs to recognise them, not reread them.
const SHOWN_VALUE_CHARS: usize = 80;

/// The violations one validator error stands for (an `additionalProperties` error names each
/// unexpected property separately).
pub fn describe(error: &ValidationError<'_>) -> Vec<Violation> {
    let pointer = error.instance_path().as_str();
    let at = |pointer: &str| {
        if pointer.is_empty() {
            "/".to_owned()
        } else {
            pointer.to_owned()
        }
    };
    match error.kind() {
        ValidationErrorKind::Required { property } => {
            let name = property
                .as_str()
                .map_or_else(|| property.to_string(), str::to_owned);
            vec![Violation {
                category: Category::Required,
                pointer: format!("{pointer}/{}", escape(&name)),
                constraint: "required property is missing".to_owned(),
                actual: None,
            }]
        }
        ValidationErrorKind::AdditionalProperties { unexpected }
        | ValidationErrorKind::UnevaluatedProperties { unexpected } => unexpected
            .iter()
            .map(|name| Violation {
                category: Category::AdditionalProperty,
                pointer: format!("{pointer}/{}", escape(name)),
                constraint: "property is not allowed here: remove it".to_owned(),
                actual: None,
            })
            .collect(),
        _ => {
            let (constraint, actual) = constraint(error);
            vec![Violation {
                category: category(error.kind()),
                pointer: at(pointer),
                constraint,
                actual,
            }]
        }
    }
}

/// The constraint a single-value error names, in words, and the offending value as shown: the
/// value itself, an array's length, or nothing for an object.
fn constraint(error: &ValidationError<'_>) -> (String, Option<String>) {
    let instance = error.instance();
    let kind = error.kind();
    if let Some(words) = number_or_text_constraint(kind).or_else(|| any_value_constraint(kind)) {
        return (words, Some(show(instance)));
    }
    match kind {
        ValidationErrorKind::MinItems { limit } => (
            format!("array must have at least {limit} items"),
            Some(count(instance)),
        ),
        ValidationErrorKind::MaxItems { limit } => (
            format!("array must have at most {limit} items"),
            Some(count(instance)),
        ),
        ValidationErrorKind::MinProperties { limit } => (
            format!("object must have at least {limit} properties"),
            None,
        ),
        ValidationErrorKind::MaxProperties { limit } => {
            (format!("object must have at most {limit} properties"), None)
        }
        ValidationErrorKind::PropertyNames { error } => {
            (format!("property name is not allowed: {error}"), None)
        }
        // Everything else (content encoding, references): the validator's own sentence says it
        // best.
        _ => (error.to_string(), None),
    }
}

/// What a number or a string must be, in words: its bounds, its length, its pattern, its format.
fn number_or_text_constraint(kind: &ValidationErrorKind) -> Option<String> {
    Some(match kind {
        ValidationErrorKind::Minimum { limit } => format!("value must be ≥ {limit}"),
        ValidationErrorKind::Maximum { limit } => format!("value must be ≤ {limit}"),
        ValidationErrorKind::ExclusiveMinimum { limit } => format!("value must be > {limit}"),
        ValidationErrorKind::ExclusiveMaximum { limit } => format!("value must be < {limit}"),
        ValidationErrorKind::MultipleOf { multiple_of } => {
            format!("value must be a multiple of {multiple_of}")
        }
        ValidationErrorKind::MinLength { limit } => {
            format!("value must be at least {limit} characters long")
        }
        ValidationErrorKind::MaxLength { limit } => {
            format!("value must be at most {limit} characters long")
        }
        ValidationErrorKind::Pattern { pattern } => format!(
            "value must match pattern {}",
            show(&Value::from(pattern.as_str()))
        ),
        ValidationErrorKind::Format { format } => match format_example(format) {
            Some(example) => format!("value must match format \"{format}\", e.g. {example}"),
            None => format!("value must match format \"{format}\""),
        },
        // A regex engine's limit, said so that the schema's author can act on it.
        ValidationErrorKind::BacktrackLimitExceeded { .. } => {
            "value could not be checked against the pattern: matching it backtracks too much \
             (simplify the pattern: avoid nested quantifiers with back-references or look-around)"
                .to_owned()
        }
        _ => return None,
    })
}

/// What any value must be, in words: its type, one of the values listed, one of the
/// alternatives, not what `not` or `false` rules out; unique or containing items for an array.
fn any_value_constraint(kind: &ValidationErrorKind) -> Option<String> {
    Some(match kind {
        ValidationErrorKind::Type { kind } => format!("value must be {}", type_words(kind)),
        ValidationErrorKind::Enum { options } => format!("value must be one of {}", list(options)),
        ValidationErrorKind::Constant { expected_value } => {
            format!("value must be exactly {}", show(expected_value))
        }
        ValidationErrorKind::UniqueItems => "array items must be unique".to_owned(),
        ValidationErrorKind::AnyOf { .. } | ValidationErrorKind::OneOfNotValid { .. } => {
            "value must match one of the allowed alternatives".to_owned()
        }
        ValidationErrorKind::OneOfMultipleValid { .. } => {
            "value must match exactly one of the alternatives, but matches several".to_owned()
        }
        ValidationErrorKind::Contains => {
            "array must contain at least one item of the required kind".to_owned()
        }
        ValidationErrorKind::Not { .. } | ValidationErrorKind::FalseSchema => {
            "value is not allowed here".to_owned()
        }
        _ => return None,
    })
}

fn type_words(kind: &TypeKind) -> String {
    let name = |ty: jsonschema::JsonType| match ty {
        jsonschema::JsonType::Integer => "an integer".to_owned(),
        jsonschema::JsonType::Array | jsonschema::JsonType::Object => format!("an {ty}"),
        jsonschema::JsonType::Null => "null".to_owned(),
        other => format!("a {other}"),
    };
    match kind {
        TypeKind::Single(ty) => name(*ty),
        TypeKind::Multiple(types) => types.iter().map(name).collect::<Vec<_>>().join(" or "),
    }
}

fn format_example(format: &str) -> Option<&'static str> {
    Some(match format {
        "date-time" => "\"2026-05-06T14:30:00Z\"",
        "date" => "\"2026-05-06\"",
        "time" => "\"14:30:00Z\"",
        "email" => "\"ada@example.com\"",
        "uri" => "\"https://example.com/page\"",
        "uuid" => "\"3f2504e0-4f89-41d3-9a0c-0305e82c3301\"",
        "duration" => "\"P3DT4H\"",
        "ipv4" => "\"192.0.2.1\"",
        "ipv6" => "\"2001:db8::1\"",
        "hostname" => "\"example.com\"",
        _ => return None,
    })
}

fn list(options: &Value) -> String {
    match options {
        Value::Array(items) => items.iter().map(show).collect::<Vec<_>>().join(", "),
        other => show(other),
    }
}

fn count(instance: &Value) -> String {
    match instance {
        Value::Array(items) => format!("{} items", items.len()),
        other => show(other),
    }
}

/// Compact JSON, cut to a readable length on a character boundary.
pub fn show(value: &Value) -> String {
    let text = value.to_string();
    if text.chars().count() <= SHOWN_VALUE_CHARS {
        return text;
    }
    let cut: String = text.chars().take(SHOWN_VALUE_CHARS).collect();
    format!("{cut}…")
}
