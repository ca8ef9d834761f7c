//! A type check of each rule against the schema it stands in, as Kubernetes' checker does at
//! registration and cel-rust leaves to its user: `self` and the fields a rule reads take their
//! types from the schema (`integer` an int, `number` a double, `string`, `boolean`, arrays as
//! lists of their items, objects by their properties or as maps of their other properties),
//! and an operator or function given operands it has no overload for — `self.count + "1"`, an
//! int added to a double, `!self.name`, `self.name.size` of a number — is a problem at the
//! rule's pointer, as is a rule whose value is not true or false. What the schema does not pin
//! down (no type, several, a `$ref`) is `dyn` and passes, so a rule is refused only for a
//! mismatch that would fail on every value.

use cel::common::ast::operators as op;
use cel::common::ast::{Expr, IdedExpr, LiteralValue};
use serde_json::{Map, Value};

use crate::schema::rules::eval::escaped;

/// How deep an expression or a schema is followed: past it, a type is `dyn`.
const MAX_DEPTH: usize = 64;

/// A CEL type as far as the schema tells it.
#[derive(Debug, Clone, PartialEq)]
enum Type<'s> {
    Int,
    Uint,
    Double,
    String,
    Bool,
    Bytes,
    Null,
    List(Box<Type<'s>>),
    /// A map with string keys: an object with no declared properties, a map literal.
    Map(Box<Type<'s>>),
    /// An object with declared properties: the schema says each field's type.
    Object(&'s Map<String, Value>),
    Dyn,
}

impl Type<'_> {
    fn name(&self) -> String {
        match self {
            Type::Int => "int".into(),
            Type::Uint => "uint".into(),
            Type::Double => "double".into(),
            Type::String => "string".into(),
            Type::Bool => "bool".into(),
            Type::Bytes => "bytes".into(),
            Type::Null => "null_type".into(),
            Type::List(items) => format!("list({})", items.name()),
            Type::Map(values) => format!("map(string, {})", values.name()),
            Type::Object(_) => "object".into(),
            Type::Dyn => "dyn".into(),
        }
    }

    fn is_numeric(&self) -> bool {
        matches!(self, Type::Int | Type::Uint | Type::Double)
    }

    fn known(&self) -> bool {
        *self != Type::Dyn
    }

    /// Whether a value of this type is true or false (or may be).
    fn may_be_bool(&self) -> bool {
        matches!(self, Type::Bool | Type::Dyn)
    }
}

/// The type of a value `schema` describes; `dyn` past [`MAX_DEPTH`] or behind a `$ref`.
fn of_schema(schema: &Value, depth: usize) -> Type<'_> {
    let Value::Object(map) = schema else {
        return Type::Dyn;
    };
    if depth > MAX_DEPTH
        || map.contains_key("$ref")
        || map.contains_key("x-kubernetes-int-or-string")
    {
        return Type::Dyn;
    }
    of_map(map, depth)
}

/// The type `map`'s `type` keyword gives (an object by its properties when it declares some).
fn of_map(map: &Map<String, Value>, depth: usize) -> Type<'_> {
    match map.get("type").and_then(Value::as_str) {
        Some("integer") => Type::Int,
        Some("number") => Type::Double,
        Some("string") => Type::String,
        Some("boolean") => Type::Bool,
        Some("array") => Type::List(Box::new(
            map.get("items")
                .map_or(Type::Dyn, |items| of_schema(items, depth + 1)),
        )),
        Some("object") if map.contains_key("properties") => Type::Object(map),
        Some("object") => Type::Map(Box::new(
            (map.get("additionalProperties"))
                .map_or(Type::Dyn, |others| of_schema(others, depth + 1)),
        )),
        _ => Type::Dyn,
    }
}

/// What is wrong with the types of `expr`, a rule standing in `schema`: each problem said once.
pub fn problems(expr: &IdedExpr, schema: &Map<String, Value>) -> Vec<String> {
    // The schema a rule stands in is an object by its properties even without `type`.
    let this = match schema.contains_key("properties") {
        true => Type::Object(schema),
        false => of_map(schema, 0),
    };
    let mut checker = Checker {
        this,
        scope: Vec::new(),
        found: Vec::new(),
    };
    let result = checker.type_of(expr, 0);
    if !result.may_be_bool() {
        checker.found.push(format!(
            "a rule must be true or false, and this one is a {}",
            result.name()
        ));
    }
    checker.found.dedup();
    checker.found
}

struct Checker<'s> {
    this: Type<'s>,
    /// The variables macros bind (`i` in `self.items.all(i, …)`), innermost last.
    scope: Vec<(String, Type<'s>)>,
    found: Vec<String>,
}

impl<'s> Checker<'s> {
    fn type_of(&mut self, expr: &IdedExpr, depth: usize) -> Type<'s> {
        if depth > MAX_DEPTH {
            return Type::Dyn;
        }
        match &expr.expr {
            Expr::Literal(literal) => literal_type(literal),
            Expr::Ident(name) if name == "self" => self.this.clone(),
            Expr::Ident(name) => (self.scope.iter().rev())
                .find(|(bound, _)| bound == name)
                .map_or(Type::Dyn, |(_, bound)| bound.clone()),
            Expr::Select(select) => {
                let operand = self.type_of(&select.operand, depth + 1);
                match select.test {
                    true => Type::Bool,
                    false => self.field(&operand, &select.field),
                }
            }
            Expr::List(list) => {
                let items: Vec<Type> = (list.elements.iter())
                    .map(|element| self.type_of(element, depth + 1))
                    .collect();
                Type::List(Box::new(same(&items)))
            }
            Expr::Map(_) | Expr::Struct(_) => {
                for child in crate::schema::rules::compile::children(expr) {
                    self.type_of(child, depth + 1);
                }
                Type::Map(Box::new(Type::Dyn))
            }
            Expr::Comprehension(loop_) => {
                let range = self.type_of(&loop_.iter_range, depth + 1);
                let element = match range {
                    Type::List(items) => *items,
                    Type::Map(_) | Type::Object(_) => Type::String,
                    _ => Type::Dyn,
                };
                self.type_of(&loop_.accu_init, depth + 1);
                self.scope.push((loop_.iter_var.clone(), element));
                self.scope.push((loop_.accu_var.clone(), Type::Dyn));
                self.type_of(&loop_.loop_cond, depth + 1);
                self.type_of(&loop_.loop_step, depth + 1);
                let result = self.type_of(&loop_.result, depth + 1);
                self.scope.truncate(self.scope.len() - 2);
                result
            }
            Expr::Call(call) => {
                let target = (call.target.as_deref()).map(|target| self.type_of(target, depth + 1));
                let args: Vec<Type> = (call.args.iter())
                    .map(|arg| self.type_of(arg, depth + 1))
                    .collect();
                self.call(&call.func_name, target, &args)
            }
            Expr::Unspecified => Type::Dyn,
        }
    }

    /// The type of `operand.field`.
    fn field(&mut self, operand: &Type<'s>, field: &str) -> Type<'s> {
        match operand {
            Type::Object(schema) => {
                let properties = schema.get("properties").and_then(Value::as_object);
                let declared = properties.and_then(|properties| {
                    (properties.iter()).find(|(name, _)| escaped(name) == field || *name == field)
                });
                match (declared, schema.get("additionalProperties")) {
                    (Some((_, property)), _) => of_schema(property, 1),
                    (None, Some(others @ Value::Object(_))) => of_schema(others, 1),
                    _ => Type::Dyn,
                }
            }
            Type::Map(values) => (**values).clone(),
            Type::Dyn => Type::Dyn,
            other => {
                self.found.push(format!(
                    "`.{field}` selects a field of a {}, which has none",
                    other.name()
                ));
                Type::Dyn
            }
        }
    }

    fn call(&mut self, name: &str, target: Option<Type<'s>>, args: &[Type<'s>]) -> Type<'s> {
        let operands: Vec<&Type> = target.iter().chain(args).collect();
        match name {
            op::LOGICAL_AND | op::LOGICAL_OR | op::LOGICAL_NOT => {
                if operands.iter().any(|operand| !operand.may_be_bool()) {
                    self.no_overload(name, &operands);
                }
                Type::Bool
            }
            op::NOT_STRICTLY_FALSE | op::IN => Type::Bool,
            op::EQUALS | op::NOT_EQUALS => {
                if let [left, right] = operands[..]
                    && left.known()
                    && right.known()
                    && *left != Type::Null
                    && *right != Type::Null
                    && family(left) != family(right)
                {
                    self.no_overload(name, &operands);
                }
                Type::Bool
            }
            op::LESS | op::LESS_EQUALS | op::GREATER | op::GREATER_EQUALS => {
                if let [left, right] = operands[..]
                    && left.known()
                    && right.known()
                    && !(left.is_numeric() && right.is_numeric())
                    && !(left == right && matches!(left, Type::String | Type::Bytes | Type::Bool))
                {
                    self.no_overload(name, &operands);
                }
                Type::Bool
            }
            op::ADD | op::SUBSTRACT | op::MULTIPLY | op::DIVIDE | op::MODULO => {
                self.arithmetic(name, &operands)
            }
            op::NEGATE => match operands[..] {
                [Type::Int] => Type::Int,
                [Type::Double] => Type::Double,
                [Type::Dyn] | [] => Type::Dyn,
                _ => {
                    self.no_overload(name, &operands);
                    Type::Dyn
                }
            },
            op::CONDITIONAL => {
                if let Some(condition) = operands.first()
                    && !condition.may_be_bool()
                {
                    self.no_overload(name, &operands);
                }
                match operands[..] {
                    [_, then, otherwise] if then == otherwise => then.clone(),
                    _ => Type::Dyn,
                }
            }
            op::INDEX | op::OPT_INDEX => match operands[..] {
                [Type::List(items), Type::Int | Type::Uint | Type::Dyn] => (**items).clone(),
                [Type::Map(values), _] => (**values).clone(),
                [Type::List(_), _] | [Type::String | Type::Int | Type::Double | Type::Bool, _] => {
                    self.no_overload(name, &operands);
                    Type::Dyn
                }
                _ => Type::Dyn,
            },
            _ => self.function(name, &operands),
        }
    }

    fn arithmetic(&mut self, name: &str, operands: &[&Type<'s>]) -> Type<'s> {
        let [left, right] = operands[..] else {
            return Type::Dyn;
        };
        if !left.known() || !right.known() {
            return Type::Dyn;
        }
        let fits = match name {
            op::ADD => {
                left == right
                    && matches!(
                        left,
                        Type::Int | Type::Uint | Type::Double | Type::String | Type::Bytes
                    )
                    || matches!((left, right), (Type::List(_), Type::List(_)))
            }
            op::MODULO => left == right && matches!(left, Type::Int | Type::Uint),
            _ => left == right && left.is_numeric(),
        };
        if fits {
            return left.clone();
        }
        self.no_overload(name, operands);
        Type::Dyn
    }

    /// The functions and methods rules call, where their operands' types are known.
    fn function(&mut self, name: &str, operands: &[&Type<'s>]) -> Type<'s> {
        let (wanted, result): (&[Fits], Type) = match name {
            "size" => (&[sized], Type::Int),
            "matches" | "startsWith" | "endsWith" | "contains" => (&[text, text], Type::Bool),
            "lowerAscii" | "upperAscii" | "trim" => (&[text], Type::String),
            "split" => (&[text, text], Type::List(Box::new(Type::String))),
            "indexOf" => (&[text, text], Type::Int),
            "int" => (&[any], Type::Int),
            "uint" => (&[any], Type::Uint),
            "double" => (&[any], Type::Double),
            "string" => (&[any], Type::String),
            "bool" => (&[any], Type::Bool),
            "isIP" => (&[text], Type::Bool),
            _ => return Type::Dyn,
        };
        let mismatched = (operands.iter().zip(wanted)).any(|(operand, fits)| !fits(operand));
        if mismatched {
            self.no_overload(name, operands);
        }
        result
    }

    fn no_overload(&mut self, name: &str, operands: &[&Type]) {
        let types: Vec<String> = operands.iter().map(|operand| operand.name()).collect();
        self.found.push(format!(
            "found no matching overload for '{name}' applied to '({})'",
            types.join(", ")
        ));
    }
}

/// Whether an operand's type fits a parameter.
type Fits = fn(&Type) -> bool;

fn sized(operand: &Type) -> bool {
    matches!(
        operand,
        Type::String | Type::Bytes | Type::List(_) | Type::Map(_) | Type::Object(_) | Type::Dyn
    )
}

fn text(operand: &Type) -> bool {
    matches!(operand, Type::String | Type::Dyn)
}

fn any(_: &Type) -> bool {
    true
}

/// What values of a type compare equal to: numbers to numbers, maps to objects.
fn family(of: &Type) -> u8 {
    match of {
        Type::Int | Type::Uint | Type::Double => 0,
        Type::String => 1,
        Type::Bool => 2,
        Type::Bytes => 3,
        Type::List(_) => 4,
        Type::Map(_) | Type::Object(_) => 5,
        Type::Null => 6,
        Type::Dyn => 7,
    }
}

fn literal_type(literal: &LiteralValue) -> Type<'static> {
    match literal {
        LiteralValue::Boolean(_) => Type::Bool,
        LiteralValue::Bytes(_) => Type::Bytes,
        LiteralValue::Double(_) => Type::Double,
        LiteralValue::Int(_) => Type::Int,
        LiteralValue::Null => Type::Null,
        LiteralValue::String(_) => Type::String,
        LiteralValue::UInt(_) => Type::Uint,
    }
}

/// The one type every item has, else `dyn`.
fn same<'s>(items: &[Type<'s>]) -> Type<'s> {
    match items {
        [first, rest @ ..] if rest.iter().all(|item| item == first) => first.clone(),
        _ => Type::Dyn,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn problems_of(rule: &str, schema: &Value) -> Vec<String> {
        let expr = cel::parser::Parser::new()
            .parse(rule)
            .expect("the rule parses");
        problems(&expr, schema.as_object().unwrap())
    }

    fn order() -> Value {
        json!({
            "type": "object",
            "properties": {
                "total": { "type": "number" },
                "count": { "type": "integer" },
                "name": { "type": "string" },
                "paid": { "type": "boolean" },
                "start": { "type": "string", "format": "date-time" },
                "end": { "type": "string", "format": "date-time" },
                "items": { "type": "array", "items": {
                    "type": "object",
                    "properties": { "price": { "type": "number" }, "sku": { "type": "string" } },
                } },
                "labels": { "type": "object", "additionalProperties": { "type": "string" } },
                "anything": {},
            },
        })
    }

    #[test]
    fn rules_whose_operands_fit_pass() {
        for rule in [
            "self.items.map(i, i.price).sum() == self.total",
            "self.items.all(i, i.price >= 0.0 && i.sku.size() > 0)",
            "timestamp(self.end) > timestamp(self.start)",
            "self.start < self.end",
            "!has(self.paid) || self.paid",
            "self.count < self.total",
            "self.count + 1 > 2 ? true : false",
            "self.labels.all(k, self.labels[k].startsWith('x'))",
            "self.name.matches('^[a-z]+$') && self.name.lowerAscii() == self.name",
            "size(self.items) <= 10 && self.anything.foo == 3",
            "'a' in self.labels && self.name != null",
            "self.items[0].price == self.total",
        ] {
            assert_eq!(problems_of(rule, &order()), Vec::<String>::new(), "{rule}");
        }
    }

    #[test]
    fn mismatched_operands_and_a_rule_that_is_not_true_or_false_are_problems() {
        for (rule, says) in [
            ("self.count + '1' == 2", "'_+_' applied to '(int, string)'"),
            (
                "self.count + self.total > 1.0",
                "'_+_' applied to '(int, double)'",
            ),
            ("self.name > 3", "'_>_' applied to '(string, int)'"),
            ("!self.name", "'!_' applied to '(string)'"),
            ("self.paid && self.count", "'_&&_' applied to '(bool, int)'"),
            ("self.count.size() > 0", "'size' applied to '(int)'"),
            (
                "self.total.startsWith('1')",
                "'startsWith' applied to '(double, string)'",
            ),
            ("self.name == 3", "'_==_' applied to '(string, int)'"),
            ("self.count.value == 1", "`.value` selects a field of a int"),
            (
                "self.count + 1",
                "must be true or false, and this one is a int",
            ),
            (
                "self.items.all(i, i.sku > 1)",
                "'_>_' applied to '(string, int)'",
            ),
        ] {
            let found = problems_of(rule, &order());
            assert!(
                found.iter().any(|problem| problem.contains(says)),
                "{rule}: {found:?}"
            );
        }
    }
}
