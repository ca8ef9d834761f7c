//! Evaluating rules: CEL's standard library as Kubernetes uses it (`has()`, `size()`, the list
//! and map macros, strings, `matches`, timestamps and durations) with Kubernetes' `sum()` on
//! lists, a JSON value bound as `self` the way Kubernetes maps it, and a budget: every step of
//! every comprehension ticks, and an answer's rules together may take [`RUNTIME_BUDGET`] ticks.

use std::cell::Cell;
use std::collections::HashMap;
use std::sync::{Arc, OnceLock};

use cel::common::ast::{CallExpr, Expr, IdedExpr};
use cel::common::types::{CelDouble, CelInt, DYN_TYPE, LIST_TYPE};
use cel::common::value::CowVal;
use cel::objects::{Key, Map};
use cel::{Context, Env, ExecutionError, Value};

use crate::schema::rules::library;

/// The comprehension steps all the rules of one answer judged may take together (each step of
/// `all`, `exists`, `exists_one`, `map` and `filter` is one); a rule still running past it fails
/// to evaluate. Static costs ([`super::cost`]) keep a registered rule well under it for any
/// answer its schema allows; this bounds what the schema does not (an answer over `maxItems`).
pub const RUNTIME_BUDGET: u64 = 50_000;

/// The name of the function spliced into every comprehension step to count it (`@` cannot be
/// written in CEL source, so no rule calls it).
pub const TICK: &str = "@tick";

thread_local! {
    static SPENT: Cell<u64> = const { Cell::new(0) };
}

/// Starts the budget of one answer's rules.
pub fn start_budget() {
    SPENT.with(|spent| spent.set(0));
}

fn over_budget() -> bool {
    SPENT.with(Cell::get) > RUNTIME_BUDGET
}

/// The environment every rule runs in, built once per instance.
fn env() -> Arc<Env> {
    static ENV: OnceLock<Arc<Env>> = OnceLock::new();
    ENV.get_or_init(|| Arc::new(build_env())).clone()
}

fn build_env() -> Env {
    // The Pratt parser expands the standard macros itself, so the environment needs none; and
    // without optional support `optional.*` stays out.
    let mut env = Env::default().with_optional_support(false).with_stdlib();
    env.add_member_overload("sum", "list_sum", LIST_TYPE, vec![], list_sum)
        .expect("sum is declared once");
    env.add_overload(TICK, "@tick_dyn", vec![DYN_TYPE], tick)
        .expect("the tick is declared once");
    library::declare(&mut env).expect("Kubernetes' functions are declared once");
    env
}

/// Kubernetes' `sum()`: the sum of a list of numbers, an `int` unless a `double` is among them.
fn list_sum<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    let list = (args.first().and_then(|list| list.as_iterable()))
        .ok_or_else(|| ExecutionError::function_error("sum", "not a list"))?;
    let (mut int, mut double, mut any_double) = (0i64, 0f64, false);
    let mut items = list.iter();
    while let Some(item) = items.next() {
        if let Some(value) = item.downcast_ref::<CelInt>() {
            int = (int.checked_add(*value.inner()))
                .ok_or_else(|| ExecutionError::function_error("sum", "integer overflow"))?;
            #[allow(clippy::cast_precision_loss)]
            let as_double = *value.inner() as f64;
            double += as_double;
        } else if let Some(value) = item.downcast_ref::<CelDouble>() {
            double += *value.inner();
            any_double = true;
        } else {
            return Err(ExecutionError::function_error("sum", "not a number"));
        }
    }
    Ok(if any_double {
        CowVal::owned(CelDouble::from(double))
    } else {
        CowVal::owned(CelInt::from(int))
    })
}

/// The identity, counting one step of the budget.
fn tick<'b, 'v>(mut args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    SPENT.with(|spent| spent.set(spent.get().saturating_add(1)));
    if over_budget() {
        return Err(ExecutionError::function_error(
            "budget",
            "the rules' evaluation budget is spent",
        ));
    }
    args.pop()
        .ok_or_else(|| ExecutionError::function_error("budget", "no argument"))
}

/// `e` as `@tick(e)`.
pub fn wrap(e: &mut IdedExpr) {
    let inner = std::mem::take(e);
    *e = IdedExpr {
        id: inner.id,
        expr: Expr::Call(CallExpr {
            func_name: TICK.into(),
            target: None,
            args: vec![inner],
        }),
    };
}

/// What the schema says of a value's numbers, as far as the rule's subschema writes it out:
/// Kubernetes gives CEL a `number` as a `double` even when it is whole (`12`), so that
/// `i.price * i.quantity` multiplies a double by an int only where the schema says so.
#[derive(Debug, Default)]
pub enum Shape {
    #[default]
    Any,
    /// `type: number`.
    Number,
    /// The named properties, and the shape of the others.
    Object(HashMap<String, Shape>, Box<Shape>),
    /// The items' shape.
    Array(Box<Shape>),
}

/// The shape `schema` (a subschema, its `$ref`s unread) gives its values.
pub fn shape_of(schema: &serde_json::Value) -> Shape {
    shape_at(schema, 0)
}

fn shape_at(schema: &serde_json::Value, depth: usize) -> Shape {
    use serde_json::Value as Json;
    let Json::Object(map) = schema else {
        return Shape::Any;
    };
    if depth > 32 {
        return Shape::Any;
    }
    let types: Vec<&str> = match map.get("type") {
        Some(Json::String(one)) => vec![one.as_str()],
        Some(Json::Array(many)) => many.iter().filter_map(Json::as_str).collect(),
        _ => Vec::new(),
    };
    if types.contains(&"number") && !types.contains(&"integer") {
        return Shape::Number;
    }
    if let Some(Json::Object(properties)) = map.get("properties") {
        let named = (properties.iter())
            .map(|(name, schema)| (name.clone(), shape_at(schema, depth + 1)))
            .collect();
        let others = map
            .get("additionalProperties")
            .map_or(Shape::Any, |others| shape_at(others, depth + 1));
        return Shape::Object(named, Box::new(others));
    }
    if let Some(others @ Json::Object(_)) = map.get("additionalProperties") {
        return Shape::Object(HashMap::new(), Box::new(shape_at(others, depth + 1)));
    }
    match map.get("items") {
        Some(items @ Json::Object(_)) => Shape::Array(Box::new(shape_at(items, depth + 1))),
        _ => Shape::Any,
    }
}

/// JSON as Kubernetes gives it to CEL: numbers the schema calls `number` are `double`, other
/// integers `int` (`uint` past its range), other numbers `double`, objects maps with string
/// keys.
pub fn to_cel(value: &serde_json::Value, shape: &Shape) -> Value {
    use serde_json::Value as Json;
    match (value, shape) {
        (Json::Null, _) => Value::Null,
        (Json::Bool(bool), _) => Value::Bool(*bool),
        (Json::Number(number), Shape::Number) => Value::Float(number.as_f64().unwrap_or(f64::NAN)),
        (Json::Number(number), _) => match (number.as_i64(), number.as_u64()) {
            (Some(int), _) => Value::Int(int),
            (None, Some(uint)) => Value::UInt(uint),
            _ => Value::Float(number.as_f64().unwrap_or(f64::NAN)),
        },
        (Json::String(text), _) => Value::String(Arc::new(text.clone())),
        (Json::Array(items), shape) => {
            let of_items = match shape {
                Shape::Array(items) => items,
                _ => &Box::new(Shape::Any),
            };
            Value::List(Arc::new(
                items.iter().map(|item| to_cel(item, of_items)).collect(),
            ))
        }
        (Json::Object(map), shape) => {
            let mut fields = HashMap::with_capacity(map.len());
            for (key, value) in map {
                match shape {
                    // A declared property is a field, named as Kubernetes escapes it; its own
                    // name stays for `self['name']`.
                    Shape::Object(named, _) if named.contains_key(key) => {
                        let value = to_cel(value, &named[key]);
                        let escaped = escaped(key);
                        if escaped != *key {
                            fields.insert(Key::from(escaped.as_str()), value.clone());
                        }
                        fields.insert(Key::from(key.as_str()), value);
                    }
                    Shape::Object(_, others) => {
                        fields.insert(Key::from(key.as_str()), to_cel(value, others));
                    }
                    _ => {
                        fields.insert(Key::from(key.as_str()), to_cel(value, &Shape::Any));
                    }
                }
            }
            let map = fields;
            Value::Map(Map { map: Arc::new(map) })
        }
    }
}

/// CEL's reserved words: a property so named is `__name__` in a rule.
const RESERVED: [&str; 22] = [
    "true",
    "false",
    "null",
    "in",
    "as",
    "break",
    "const",
    "continue",
    "else",
    "for",
    "function",
    "if",
    "import",
    "let",
    "loop",
    "package",
    "namespace",
    "return",
    "var",
    "void",
    "while",
    "",
];

/// A declared property's name as a rule writes it, escaped as Kubernetes escapes it
/// (`namespace` → `__namespace__`, `x-y` → `x__dash__y`, `a.b` → `a__dot__b`, `a/b` →
/// `a__slash__b`, `__` → `__underscores__`); a name no rule can write (a character outside
/// those, a leading digit) stays as it is, for `self['name']`.
pub fn escaped(name: &str) -> String {
    if RESERVED.contains(&name) {
        return format!("__{name}__");
    }
    let writable = |c: char| c.is_ascii_alphanumeric() || "_.-/".contains(c);
    if name.starts_with(|c: char| c.is_ascii_digit()) || !name.chars().all(writable) {
        return name.to_owned();
    }
    let mut out = String::with_capacity(name.len());
    let mut rest = name;
    while let Some(c) = rest.chars().next() {
        let (piece, taken) = match c {
            '_' if rest.starts_with("__") => ("__underscores__", 2),
            '.' => ("__dot__", 1),
            '-' => ("__dash__", 1),
            '/' => ("__slash__", 1),
            _ => {
                out.push(c);
                rest = &rest[c.len_utf8()..];
                continue;
            }
        };
        out.push_str(piece);
        rest = &rest[taken..];
    }
    out
}

/// What evaluating an expression on `self` gave: its value, or why there is none (the budget
/// spent included, even where a later `false` absorbed the error).
pub fn evaluate(expr: &IdedExpr, this: &Value) -> Result<Value, String> {
    if over_budget() {
        return Err("the rules' evaluation budget is spent".to_owned());
    }
    let mut context = Context::with_env(env());
    context.add_variable_from_value("self", this.clone());
    let result = Value::resolve(expr, &context);
    if over_budget() {
        return Err("the rules' evaluation budget is spent".to_owned());
    }
    result.map_err(|error| error.to_string())
}
