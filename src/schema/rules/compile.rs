//! A rule list as written (`[{"rule", "message", "messageExpression", "fieldPath", "reason"}]`)
//! read into rules ready to run: each expression parsed (CEL, Pratt parser), held to `self` as
//! its only variable, and instrumented for the runtime budget; `fieldPath` read as a JSON pointer.

use cel::common::ast::{EntryExpr, Expr, IdedExpr, operators};
use serde_json::Value;

use crate::schema::rules::eval::wrap;
use crate::schema::walk::escape;

/// One rule, ready to run.
#[derive(Debug)]
pub struct Rule {
    /// The expression as written.
    pub source: String,
    pub expr: IdedExpr,
    /// `message`: what a failure says.
    pub message: Option<String>,
    /// `messageExpression`: a string expression over `self` that says it instead.
    pub message_expr: Option<IdedExpr>,
    /// `fieldPath` as a JSON pointer below the value the rule stands on (`""`: that value).
    pub field: String,
    /// `reason`: Kubernetes' kind of failure (`FieldValueInvalid` when not given).
    pub reason: String,
}

/// A problem with a rule list: where it is below the keyword (`/0/rule`) and what it is.
pub type Problem = (String, String);

/// Kubernetes' `reason` values.
const REASONS: [&str; 4] = [
    "FieldValueInvalid",
    "FieldValueForbidden",
    "FieldValueRequired",
    "FieldValueDuplicate",
];

/// Type names an expression may use as identifiers (`type(self.a) == int`).
const TYPE_NAMES: &[&str] = &[
    "int",
    "uint",
    "double",
    "bool",
    "string",
    "bytes",
    "list",
    "map",
    "null_type",
    "type",
    "dyn",
];

/// The largest expression a rule may be, in nodes, and how deep it may nest.
const MAX_NODES: usize = 2_000;
const MAX_DEPTH: u16 = 48;

/// The rules of a keyword's value, or every problem with them.
pub fn rules(value: &Value) -> Result<Vec<Rule>, Vec<Problem>> {
    let Value::Array(entries) = value else {
        return Err(vec![(
            String::new(),
            "must be a list of rules, each {\"rule\": \"<CEL expression>\", \"message\": …}"
                .to_owned(),
        )]);
    };
    let mut rules = Vec::new();
    let mut problems = Vec::new();
    for (at, entry) in entries.iter().enumerate() {
        match rule(entry) {
            Ok(rule) => rules.push(rule),
            Err(found) => problems.extend(
                (found.into_iter()).map(|(below, problem)| (format!("/{at}{below}"), problem)),
            ),
        }
    }
    if problems.is_empty() {
        Ok(rules)
    } else {
        Err(problems)
    }
}

fn rule(entry: &Value) -> Result<Rule, Vec<Problem>> {
    let Value::Object(fields) = entry else {
        return Err(vec![(
            String::new(),
            "a rule is an object: {\"rule\": \"<CEL expression>\", \"message\": …}".to_owned(),
        )]);
    };
    let mut problems = Vec::new();
    let mut text = |name: &str| match fields.get(name) {
        None => None,
        Some(Value::String(text)) => Some(text.clone()),
        Some(_) => {
            problems.push((format!("/{name}"), format!("{name} must be a string")));
            None
        }
    };
    let (source, message) = (text("rule"), text("message"));
    let (message_source, field_path, reason) =
        (text("messageExpression"), text("fieldPath"), text("reason"));
    problems.extend(unknown_fields(fields));
    let Some(source) = source else {
        if !fields.contains_key("rule") {
            problems.push((
                String::new(),
                "a rule needs \"rule\": a CEL expression".to_owned(),
            ));
        }
        return Err(problems);
    };
    let expr = expression(&source).map_err(|problem| problems.push(("/rule".to_owned(), problem)));
    let message_expr = message_source.map(|source| {
        expression(&source)
            .map_err(|problem| problems.push(("/messageExpression".to_owned(), problem)))
    });
    let field = field_path.map_or(Ok(String::new()), |path| pointer_of(&path));
    let field = field.map_err(|problem| problems.push(("/fieldPath".to_owned(), problem)));
    let reason = reason.unwrap_or_else(|| REASONS[0].to_owned());
    if !REASONS.contains(&reason.as_str()) {
        problems.push((
            "/reason".to_owned(),
            format!("reason must be one of {}", REASONS.join(", ")),
        ));
    }
    match (expr, message_expr.transpose(), field) {
        (Ok(expr), Ok(message_expr), Ok(field)) if problems.is_empty() => Ok(Rule {
            source,
            expr,
            message,
            message_expr,
            field,
            reason,
        }),
        _ => Err(problems),
    }
}

/// Fields a rule does not have; `optionalOldSelf` is Kubernetes' and means nothing here.
fn unknown_fields(fields: &serde_json::Map<String, Value>) -> Vec<Problem> {
    let known = [
        "rule",
        "message",
        "messageExpression",
        "fieldPath",
        "reason",
    ];
    (fields.keys())
        .filter(|name| !known.contains(&name.as_str()))
        .map(|name| {
            let problem = if name == "optionalOldSelf" {
                "optionalOldSelf: transition rules (oldSelf) do not apply: an answer has no \
                 earlier version"
                    .to_owned()
            } else {
                format!("unknown field {name:?}: a rule has {}", known.join(", "))
            };
            (format!("/{}", escape(name)), problem)
        })
        .collect()
}

/// `source` parsed, held to `self`, and instrumented for the budget.
pub fn expression(source: &str) -> Result<IdedExpr, String> {
    let parser = (cel::parser::PrattParser::new())
        .max_expression_node_count(MAX_NODES)
        .max_recursion_depth(MAX_DEPTH);
    let mut expr = parser.parse(source).map_err(|errors| {
        let said: Vec<String> = (errors.errors.iter())
            .map(|error| {
                format!(
                    "line {} column {}: {}",
                    error.pos.0,
                    error.pos.1 + 1,
                    error.msg
                )
            })
            .collect();
        format!("does not parse as CEL: {}", said.join("; "))
    })?;
    let mut unbound = Vec::new();
    free_variables(&expr, &mut vec!["self".to_owned()], &mut unbound);
    unbound.dedup();
    if let Some(name) = unbound.first() {
        return Err(if name == "oldSelf" {
            "oldSelf: transition rules do not apply (an answer has no earlier version); only \
             self is bound"
                .to_owned()
        } else {
            format!("undeclared reference to {name:?}: only self is bound")
        });
    }
    instrument(&mut expr);
    Ok(expr)
}

/// The identifiers of `expr` that neither `scope` nor a comprehension around them binds.
fn free_variables(expr: &IdedExpr, scope: &mut Vec<String>, out: &mut Vec<String>) {
    match &expr.expr {
        Expr::Ident(name)
            if !scope.iter().any(|bound| bound == name) && !TYPE_NAMES.contains(&name.as_str()) =>
        {
            out.push(name.clone());
        }
        Expr::Comprehension(loop_) => {
            free_variables(&loop_.iter_range, scope, out);
            free_variables(&loop_.accu_init, scope, out);
            let depth = scope.len();
            scope.push(loop_.accu_var.clone());
            free_variables(&loop_.result, scope, out);
            scope.push(loop_.iter_var.clone());
            scope.extend(loop_.iter_var2.clone());
            free_variables(&loop_.loop_cond, scope, out);
            free_variables(&loop_.loop_step, scope, out);
            scope.truncate(depth);
        }
        _ => {
            for child in children(expr) {
                free_variables(child, scope, out);
            }
        }
    }
}

/// The expressions right below `expr` (a comprehension's included).
pub fn children(expr: &IdedExpr) -> Vec<&IdedExpr> {
    match &expr.expr {
        Expr::Call(call) => (call.target.iter().map(|target| &**target))
            .chain(call.args.iter())
            .collect(),
        Expr::Select(select) => vec![&select.operand],
        Expr::List(list) => list.elements.iter().collect(),
        Expr::Map(map) => entries(&map.entries),
        Expr::Struct(built) => entries(&built.entries),
        Expr::Comprehension(loop_) => vec![
            &loop_.iter_range,
            &loop_.accu_init,
            &loop_.loop_cond,
            &loop_.loop_step,
            &loop_.result,
        ],
        _ => Vec::new(),
    }
}

/// The expressions of a map's or a message's entries.
fn entries(entries: &[cel::common::ast::IdedEntryExpr]) -> Vec<&IdedExpr> {
    (entries.iter())
        .flat_map(|entry| match &entry.expr {
            EntryExpr::MapEntry(entry) => vec![&entry.key, &entry.value],
            EntryExpr::StructField(field) => vec![&field.value],
        })
        .collect()
}

/// Where a comprehension ticks.
enum Spot {
    /// Its condition (whose errors end the loop).
    Condition,
    /// The condition of a `filter` step (`c ? @result + [x] : @result`).
    StepCondition,
    /// The element a `map` step appends (`@result + [x]`).
    Element,
}

/// `@tick` spliced into each comprehension step, keeping the shapes the interpreter's fast
/// paths recognise: `map` and `filter` (a literal `true` condition, an appending step) tick in
/// the filter's test or the element; every other comprehension in its condition.
fn instrument(expr: &mut IdedExpr) {
    match &mut expr.expr {
        Expr::Comprehension(loop_) => {
            for part in [
                &mut loop_.iter_range,
                &mut loop_.accu_init,
                &mut loop_.loop_cond,
                &mut loop_.loop_step,
                &mut loop_.result,
            ] {
                instrument(part);
            }
            let spot = match &loop_.loop_step.expr {
                _ if !matches!(loop_.loop_cond.expr, Expr::Literal(_)) => Spot::Condition,
                Expr::Call(call)
                    if call.func_name == operators::CONDITIONAL
                        && call.args.len() == 3
                        && appends(&call.args[1]) =>
                {
                    Spot::StepCondition
                }
                _ if appends(&loop_.loop_step) => Spot::Element,
                _ => Spot::Condition,
            };
            let target = match (spot, &mut loop_.loop_step.expr) {
                (Spot::StepCondition, Expr::Call(call)) => &mut call.args[0],
                (Spot::Element, Expr::Call(call)) => match &mut call.args[1].expr {
                    Expr::List(list) => &mut list.elements[0],
                    _ => &mut loop_.loop_cond,
                },
                _ => &mut loop_.loop_cond,
            };
            wrap(target);
        }
        Expr::Call(call) => {
            if let Some(target) = call.target.as_deref_mut() {
                instrument(target);
            }
            call.args.iter_mut().for_each(instrument);
        }
        Expr::Select(select) => instrument(&mut select.operand),
        Expr::List(list) => list.elements.iter_mut().for_each(instrument),
        Expr::Map(cel::common::ast::MapExpr { entries })
        | Expr::Struct(cel::common::ast::StructExpr { entries, .. }) => {
            for entry in entries {
                match &mut entry.expr {
                    EntryExpr::MapEntry(entry) => {
                        instrument(&mut entry.key);
                        instrument(&mut entry.value);
                    }
                    EntryExpr::StructField(field) => instrument(&mut field.value),
                }
            }
        }
        Expr::Ident(_) | Expr::Literal(_) | Expr::Unspecified => {}
    }
}

/// Whether `expr` is `@result + [x]`.
fn appends(expr: &IdedExpr) -> bool {
    matches!(&expr.expr, Expr::Call(call)
        if call.func_name == operators::ADD
            && call.args.len() == 2
            && matches!(&call.args[1].expr, Expr::List(list) if list.elements.len() == 1))
}

/// A Kubernetes `fieldPath` (`.spec.replicas`, `.metadata['app.kubernetes.io/name']`,
/// `.items[0]`) as a JSON pointer (`/spec/replicas`).
pub fn pointer_of(path: &str) -> Result<String, String> {
    let wrong = || {
        format!(
            "fieldPath {path:?} is not a path below self: write it as .name, ['name'] or [index] \
             steps, e.g. .items[0].price"
        )
    };
    let mut pointer = String::new();
    let mut rest = path;
    while !rest.is_empty() {
        if let Some(after) = rest.strip_prefix('.') {
            let end = after.find(['.', '[']).unwrap_or(after.len());
            let name = &after[..end];
            if name.is_empty()
                || !name
                    .chars()
                    .all(|c| c.is_alphanumeric() || c == '_' || c == '-')
            {
                return Err(wrong());
            }
            pointer.push('/');
            pointer.push_str(&escape(name));
            rest = &after[end..];
        } else if let Some(after) = rest.strip_prefix("['") {
            let end = after.find("']").ok_or_else(wrong)?;
            pointer.push('/');
            pointer.push_str(&escape(&after[..end]));
            rest = &after[end + 2..];
        } else if let Some(after) = rest.strip_prefix('[') {
            let end = after.find(']').ok_or_else(wrong)?;
            let index = &after[..end];
            if index.is_empty() || !index.chars().all(|c| c.is_ascii_digit()) {
                return Err(wrong());
            }
            pointer.push('/');
            pointer.push_str(index);
            rest = &after[end + 1..];
        } else {
            return Err(wrong());
        }
    }
    Ok(pointer)
}
