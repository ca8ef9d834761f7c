//! A rule's worst-case cost, estimated at registration the way Kubernetes does: from the
//! longest list and string the value it stands on can hold (`maxItems`, `maxProperties`,
//! `maxLength` below it; [`UNBOUNDED_ITEMS`] and [`UNBOUNDED_CHARS`] where the schema sets no
//! bound; a record has the properties it lists), one unit a node, string and list functions
//! linear in their length (a tenth of a unit a character or item, as Kubernetes counts; the
//! operators one unit, the estimate not knowing their operands' types), a comprehension its
//! length times its body, so nested loops multiply. A rule over [`CEILING`] is refused.

use cel::common::ast::{Expr, IdedExpr};
use serde_json::Value;

use crate::schema::rules::compile::children;
use crate::schema::walk::{self, Holds};

/// The estimated cost a rule may have: the limit Kubernetes sets on a rule's estimate when a CRD
/// is registered (`StaticEstimatedCostLimit`), so the CRDs it admits load here too (its run-time
/// limit is another matter: here the step budget of [`super::eval`]).
pub const CEILING: u64 = 10_000_000;

/// The length assumed for a list or map whose schema sets no `maxItems` (`maxProperties`).
pub const UNBOUNDED_ITEMS: u64 = 1_000;

/// The length assumed for a string whose schema sets no `maxLength`.
pub const UNBOUNDED_CHARS: u64 = 10_000;

/// The longest list (or map) and string a value can hold.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Bounds {
    pub items: u64,
    pub chars: u64,
}

/// Functions whose cost grows with the length of a string or list.
const LINEAR: &[&str] = &[
    "matches",
    "contains",
    "startsWith",
    "endsWith",
    "lowerAscii",
    "upperAscii",
    "trim",
    "replace",
    "split",
    "join",
    "indexOf",
    "lastIndexOf",
    "substring",
    "string",
    "@in",
    "sum",
    "timestamp",
    "duration",
];

/// The estimated worst-case cost of `expr` on a value within `bounds`.
pub fn estimate(expr: &IdedExpr, bounds: Bounds) -> u64 {
    let below = |expr: &IdedExpr| -> u64 {
        (children(expr).into_iter())
            .map(|child| estimate(child, bounds))
            .fold(0, u64::saturating_add)
    };
    match &expr.expr {
        Expr::Comprehension(loop_) => {
            let step = estimate(&loop_.loop_cond, bounds)
                .saturating_add(estimate(&loop_.loop_step, bounds));
            [
                estimate(&loop_.iter_range, bounds),
                estimate(&loop_.accu_init, bounds),
                estimate(&loop_.result, bounds),
                bounds.items.saturating_mul(step),
            ]
            .into_iter()
            .fold(1, u64::saturating_add)
        }
        Expr::Call(call) if LINEAR.contains(&call.func_name.as_str()) => {
            (2 + bounds.chars.max(bounds.items) / 10).saturating_add(below(expr))
        }
        _ => below(expr).saturating_add(1),
    }
}

/// The bounds of the values `node` (a subschema of `root`) allows.
pub fn bounds(root: &Value, node: &Value) -> Bounds {
    let mut bounds = Bounds { items: 0, chars: 0 };
    widen(root, node, &mut bounds, 0);
    bounds
}

fn widen(root: &Value, node: &Value, bounds: &mut Bounds, depth: usize) {
    let Value::Object(map) = node else {
        if node == &Value::Bool(true) {
            // `true`: anything at all.
            bounds.items = bounds.items.max(UNBOUNDED_ITEMS);
            bounds.chars = bounds.chars.max(UNBOUNDED_CHARS);
        }
        return;
    };
    if depth > 16 {
        bounds.items = bounds.items.max(UNBOUNDED_ITEMS);
        bounds.chars = bounds.chars.max(UNBOUNDED_CHARS);
        return;
    }
    let limit = |keyword: &str, otherwise: u64| {
        map.get(keyword)
            .and_then(Value::as_u64)
            .unwrap_or(otherwise)
    };
    let types: Vec<&str> = match map.get("type") {
        Some(Value::String(one)) => vec![one.as_str()],
        Some(Value::Array(many)) => many.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    };
    let untyped = types.is_empty()
        && ![
            "properties",
            "items",
            "$ref",
            "allOf",
            "anyOf",
            "oneOf",
            "enum",
            "const",
        ]
        .iter()
        .any(|keyword| map.contains_key(*keyword));
    let is = |ty: &str| types.contains(&ty) || untyped;
    if is("string") {
        bounds.chars = bounds.chars.max(limit("maxLength", UNBOUNDED_CHARS));
    }
    if is("array") || (types.is_empty() && map.contains_key("items")) {
        bounds.items = bounds.items.max(limit("maxItems", UNBOUNDED_ITEMS));
    }
    if is("object") || (types.is_empty() && map.contains_key("properties")) {
        // A record has the properties it lists; a map (`additionalProperties` or
        // `patternProperties` a schema, or no properties listed) as many as it is given.
        let map_like = map
            .get("additionalProperties")
            .is_some_and(Value::is_object)
            || map.contains_key("patternProperties")
            || !map.contains_key("properties");
        let listed = (map.get("properties").and_then(Value::as_object))
            .map_or(0, |properties| properties.len() as u64);
        let most = if map_like { UNBOUNDED_ITEMS } else { listed };
        bounds.items = bounds.items.max(limit("maxProperties", most));
    }
    if let Some(Value::String(reference)) = map.get("$ref")
        && let Some(target) = walk::resolve_local(root, reference)
    {
        widen(root, target, bounds, depth + 1);
    }
    for (keyword, value) in map {
        if matches!(keyword.as_str(), "$defs" | "definitions" | "not") {
            continue;
        }
        let children: Vec<&Value> = match (walk::holds(keyword), value) {
            (Holds::One, child) => vec![child],
            (Holds::List, Value::Array(items)) => items.iter().collect(),
            (Holds::List, child @ Value::Object(_)) => vec![child],
            (Holds::Map, Value::Object(children)) => children.values().collect(),
            _ => Vec::new(),
        };
        for child in children {
            widen(root, child, bounds, depth + 1);
        }
    }
}
