//! The rule keywords as `jsonschema` keywords: wherever `x-kubernetes-validations` or
//! `x-structure-rules` stands (any subschema, through `$ref`, `allOf`, `items`…), the validator
//! runs its rules on the value there, and each rule that fails is an error at that value.
//! [`violation`] reads such an error back as the violation the model is told about.

use std::sync::Arc;

use jsonschema::error::ValidationErrorKind;
use jsonschema::paths::Location;
use jsonschema::{Keyword, ValidationError, ValidationOptions};
use serde_json::{Map, Value};

use crate::schema::rules::compile::{Rule, rules};
use crate::schema::rules::eval::{Shape, evaluate, shape_of, to_cel};
use crate::schema::violation::{Category, Violation};

/// The keywords that hold rules: Kubernetes' and the same for everyone else.
pub const KEYWORDS: [&str; 2] = ["x-kubernetes-validations", "x-structure-rules"];

/// Separates the parts of a rule error's message (no pointer or message holds it).
const SEPARATOR: char = '\u{1f}';

/// `options` with both rule keywords.
pub fn with_rules(options: ValidationOptions<'static>) -> ValidationOptions<'static> {
    KEYWORDS.iter().fold(options, |options, keyword| {
        options.with_keyword(*keyword, factory)
    })
}

fn factory<'a>(
    parent: &'a Map<String, Value>,
    value: &'a Value,
    _at: Location,
) -> Result<Box<dyn for<'i> Keyword<'i>>, ValidationError<'a>> {
    // A registered schema's rules were checked (`super::check`); one stored before rules were
    // enforced may not have been.
    let rules = rules(value).map_err(|problems| {
        let said: Vec<String> = (problems.iter())
            .map(|(at, problem)| format!("{at}: {problem}"))
            .collect();
        ValidationError::schema(format!("a rule does not compile: {}", said.join("; ")))
    })?;
    let shape = shape_of(&Value::Object(parent.clone()));
    Ok(Box::new(Rules {
        rules: Arc::new(rules),
        shape: Arc::new(shape),
    }))
}

/// The rules of one keyword, and the shape of the value they stand on.
struct Rules {
    rules: Arc<Vec<Rule>>,
    shape: Arc<Shape>,
}

/// How a rule went on a value.
enum Verdict {
    Holds,
    /// It is false: what to say.
    Fails(String),
    /// It could not be evaluated on this value (a missing field, a wrong type, the budget).
    Broken(String),
}

impl Rules {
    fn verdicts(&self, instance: &Value) -> impl Iterator<Item = (&Rule, Verdict)> {
        let this = to_cel(instance, &self.shape);
        (self.rules.iter()).map(move |rule| (rule, verdict(rule, &this)))
    }
}

fn verdict(rule: &Rule, this: &cel::Value) -> Verdict {
    match evaluate(&rule.expr, this) {
        Ok(cel::Value::Bool(true)) => Verdict::Holds,
        Ok(cel::Value::Bool(false)) => Verdict::Fails(message(rule, this)),
        Ok(other) => Verdict::Broken(format!(
            "the rule gave {}, not true or false",
            other.type_of()
        )),
        Err(error) => Verdict::Broken(error),
    }
}

/// What a failed rule says: its `messageExpression`'s string, else its `message`, else the
/// rule itself.
fn message(rule: &Rule, this: &cel::Value) -> String {
    let said = (rule.message_expr.as_ref()).and_then(|expr| match evaluate(expr, this) {
        Ok(cel::Value::String(text)) if !text.trim().is_empty() => Some(text.to_string()),
        _ => None,
    });
    (said.or_else(|| rule.message.clone()))
        .unwrap_or_else(|| format!("must satisfy the rule {}", rule.source))
}

fn error(rule: &Rule, verdict: Verdict) -> Option<ValidationError<'static>> {
    let (kind, said) = match verdict {
        Verdict::Holds => return None,
        Verdict::Fails(said) => ("fails", said),
        Verdict::Broken(why) => (
            "broken",
            format!("the rule {} could not be checked: {why}", rule.source),
        ),
    };
    let clean = |text: &str| text.replace(SEPARATOR, " ");
    Some(ValidationError::custom(format!(
        "{SEPARATOR}{kind}{SEPARATOR}{}{SEPARATOR}{}",
        clean(&rule.field),
        clean(&said)
    )))
}

impl<'i> Keyword<'i> for Rules {
    fn validate(&self, instance: &'i Value) -> Result<(), ValidationError<'i>> {
        match self.iter_errors(instance).next() {
            Some(error) => Err(error),
            None => Ok(()),
        }
    }

    fn is_valid(&self, instance: &'i Value) -> bool {
        self.verdicts(instance)
            .all(|(_, verdict)| matches!(verdict, Verdict::Holds))
    }

    fn iter_errors(
        &self,
        instance: &'i Value,
    ) -> Box<dyn Iterator<Item = ValidationError<'i>> + 'i> {
        let errors: Vec<ValidationError<'i>> = self
            .verdicts(instance)
            .filter_map(|(rule, verdict)| error(rule, verdict))
            .collect();
        Box::new(errors.into_iter())
    }
}

/// A rule's error read back: the violation, and whether the rule could not be evaluated at all
/// (said only when nothing else is wrong with the value it stands on, see
/// [`crate::schema::validator`]) rather than found false.
pub struct RuleViolation {
    pub violation: Violation,
    /// Where the rule stands (the value `self` is).
    pub site: String,
    pub broken: bool,
}

/// The rule violation `error` stands for, if it is one.
pub fn violation(error: &ValidationError<'_>) -> Option<RuleViolation> {
    let ValidationErrorKind::Custom { message, .. } = error.kind() else {
        return None;
    };
    let mut parts = message.strip_prefix(SEPARATOR)?.splitn(3, SEPARATOR);
    let (kind, field, said) = (parts.next()?, parts.next()?, parts.next()?);
    let site = error.instance_path().as_str().to_owned();
    let pointer = format!("{site}{field}");
    Some(RuleViolation {
        violation: Violation {
            // A rule that could not be checked on the value is not one the value broke.
            category: match kind == "fails" {
                true => Category::Rule,
                false => Category::Other,
            },
            pointer: if pointer.is_empty() {
                "/".to_owned()
            } else {
                pointer
            },
            constraint: said.to_owned(),
            actual: None,
        },
        site,
        broken: kind == "broken",
    })
}
