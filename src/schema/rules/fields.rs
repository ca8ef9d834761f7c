//! The fields a rule reads from `self`, held to the schema it stands in: a rule that names a
//! property a closed object (`additionalProperties: false`) cannot have is refused at
//! registration, as Kubernetes refuses an undefined field — the type check cel-rust leaves to
//! its user, where a misspelt name would otherwise only fail when an answer is judged.

use std::collections::BTreeSet;

use cel::common::ast::{Expr, IdedExpr};
use serde_json::{Map, Value};

use crate::schema::rules::compile::children;
use crate::schema::rules::eval::escaped;

/// What is wrong with each path from `self` that `expr` reads and `schema` (the subschema the
/// rule stands in) cannot hold.
pub fn undefined(expr: &IdedExpr, schema: &Map<String, Value>) -> Vec<String> {
    let mut paths = BTreeSet::new();
    collect(expr, &mut paths);
    (paths.iter())
        .filter_map(|path| undefined_in(path, schema))
        .collect()
}

/// Every path from `self` (`self.a.b` as `["a", "b"]`) in `expr`.
fn collect(expr: &IdedExpr, paths: &mut BTreeSet<Vec<String>>) {
    if let Some(path) = path_from_self(expr)
        && !path.is_empty()
    {
        paths.insert(path);
    }
    for child in children(expr) {
        collect(child, paths);
    }
}

fn path_from_self(expr: &IdedExpr) -> Option<Vec<String>> {
    match &expr.expr {
        Expr::Ident(name) if name == "self" => Some(Vec::new()),
        Expr::Select(select) => {
            let mut path = path_from_self(&select.operand)?;
            path.push(select.field.clone());
            Some(path)
        }
        _ => None,
    }
}

/// Why `schema` cannot hold `path`; `None` when it can, or when it does not say (an object
/// open to other properties, a `$ref`, a value that is not an object).
fn undefined_in(path: &[String], schema: &Map<String, Value>) -> Option<String> {
    let mut here = schema;
    for (depth, name) in path.iter().enumerate() {
        let Some(Value::Object(properties)) = here.get("properties") else {
            return None;
        };
        let found = (properties.iter())
            .find(|(property, _)| escaped(property) == *name || *property == name);
        match found {
            Some((_, Value::Object(next))) => here = next,
            Some(_) => return None,
            None if here.get("additionalProperties") == Some(&Value::Bool(false)) => {
                let known: Vec<&str> = properties.keys().map(String::as_str).collect();
                return Some(format!(
                    "self.{} names a property the schema does not have: {name} is not one of \
                     {} (additionalProperties is false)",
                    path[..=depth].join("."),
                    known.join(", ")
                ));
            }
            None => return None,
        }
    }
    None
}
