//! The component's stack holds the deepest inputs its limits let in, with room to spare.
//!
//! The component is linked with a small stack (`.cargo/config.toml`: a fresh instance's whole
//! stack region is reset after every call, so its size is paid on every request;
//! docs/history/benchmarks.md "Third turn"). A stack too small for an input traps the instance
//! instead of answering: these calls go through the real .wasm with schemas and answers nested
//! as deep as the limits allow, and four times the default schema depth.

mod support;

use mock_llm::{MockLlm, Reply};
use serde_json::{Value, json};
use structure_host::{Request, SchemaInput, Scope, Status};

/// A schema `levels` arrays deep, each holding the next, around a string.
fn nested_schema(levels: usize) -> Value {
    (0..levels).fold(
        json!({ "type": "string" }),
        |inner, _| json!({ "type": "array", "items": inner }),
    )
}

/// A value `levels` arrays deep around `"leaf"`.
fn nested_value(levels: usize) -> Value {
    (0..levels).fold(json!("leaf"), |inner, _| json!([inner]))
}

/// The deepest array nesting a schema may have under the default depth limit.
const LEVELS_AT_DEFAULT_DEPTH: usize = 28;

/// An object schema whose `tree` is `tree`, with `more` keywords beside it.
fn with_tree(tree: Value, more: Value) -> Value {
    let mut schema = json!({
        "type": "object",
        "properties": { "tree": tree },
        "required": ["tree"],
    });
    if let (Some(schema), Value::Object(more)) = (schema.as_object_mut(), more) {
        schema.extend(more);
    }
    schema
}

/// One call through the component with `schema`, answered `{"tree": tree}`: the call must come
/// back ok (`what` names it when it does not); its data.
async fn answered(schema: &Value, tree: Value, extra: &[(&str, &str)], what: &str) -> Value {
    let mock = MockLlm::start();
    mock.push(Reply::answer(json!({ "tree": tree })));
    let request = Request::new("The leaf is leaf.", SchemaInput::Inline(schema.to_string()));
    let outcome = support::host_client(&mock, extra)
        .structure(&Scope::default(), &request)
        .await
        .unwrap_or_else(|error| panic!("{what}: {error:#}"));
    assert_eq!(outcome.status, Status::Ok, "{what}: {outcome:?}");
    serde_json::from_str(outcome.data.as_deref().unwrap()).unwrap()
}

/// One call with an object whose `tree` is `levels` arrays deep, answered with such a tree.
async fn call_with_depth(levels: usize, extra: &[(&str, &str)]) -> Value {
    let schema = with_tree(nested_schema(levels), json!({}));
    let what = format!("{levels} levels deep");
    answered(&schema, nested_value(levels), extra, &what).await
}

#[tokio::test]
async fn a_schema_and_an_answer_as_deep_as_the_default_limit_allow() {
    // The schema's root, its `properties`, `tree` itself and the innermost `type` take four of
    // the 32 levels.
    let levels = LEVELS_AT_DEFAULT_DEPTH;
    let data = call_with_depth(levels, &[]).await;
    assert_eq!(data["tree"], nested_value(levels));
}

#[tokio::test]
async fn four_times_the_default_schema_depth_when_the_operator_allows_it() {
    // JSON parsing stops at 128 levels before the depth limit does: the schema's text, and the
    // answer inside its envelope, stay within it.
    let levels = 120;
    let data = call_with_depth(levels, &[("structure_max_schema_depth", "128")]).await;
    assert_eq!(data["tree"], nested_value(levels));
}

#[tokio::test]
async fn an_answer_nested_as_deep_as_json_parsing_allows_is_read() {
    // serde_json reads at most 128 levels; an object whose `tree` takes anything, answered 120
    // arrays deep (inside the answer's envelope), is parsed, validated and grounded whole.
    let schema = with_tree(json!({}), json!({}));
    let data = answered(&schema, nested_value(120), &[], "an answer 120 levels deep").await;
    assert_eq!(data["tree"], nested_value(120));
}

#[tokio::test]
async fn a_rule_nested_as_deep_as_its_parser_allows_is_checked() {
    // The rules' parser takes at most 48 levels; a rule just inside them is compiled and run.
    let depth = 45;
    let rule = format!(
        "{}self.tree.size() == 1{}",
        "(".repeat(depth),
        ")".repeat(depth)
    );
    let schema = with_tree(
        nested_schema(3),
        json!({ "x-structure-rules": [{ "rule": rule, "message": "one tree" }] }),
    );
    answered(&schema, nested_value(3), &[], "a rule 45 levels deep").await;
}
