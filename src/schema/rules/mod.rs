//! Rules across fields: what JSON Schema cannot say (line items add up to the total, a return
//! follows its departure, a discount needs a reason), written the way Kubernetes writes them —
//! `x-kubernetes-validations`, or `x-structure-rules` in the same shape, a list of
//! `{"rule": "<CEL>", "message", "messageExpression", "fieldPath", "reason"}` wherever a
//! subschema stands, `self` the value there.
//!
//! - [`compile`]: a rule list read, each expression parsed and held to `self`;
//! - [`check`]: the problems of a schema's rules at registration, cost included ([`cost`]), and
//!   the fields they read held to a closed object's properties ([`fields`]), their operands'
//!   types to the schema's ([`types`]);
//! - [`eval`]: CEL's standard library with Kubernetes' `sum()` and the string and IP functions
//!   CRDs call ([`library`]), JSON as CEL values, the budget;
//! - [`keyword`]: the rules as `jsonschema` keywords, so the validator runs them where they
//!   stand and their failures are violations like any other.

pub mod check;
pub mod compile;
pub mod cost;
pub mod eval;
pub mod fields;
pub mod keyword;
pub mod library;
pub mod types;
