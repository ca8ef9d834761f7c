//! Every root a schema may have: roots that can be objects without saying so, arrays of
//! objects (records mode by themselves, the array checked whole), and scalars, enums and arrays
//! of scalars (wrapped for the model, unwrapped in the result), with what is refused.

mod support;

use mock_llm::Reply;
use serde_json::{Value, json};
use structure::ports::MemoryKeyValue;
use structure::{Answer, ErrorKind, Outcome, SchemaInput, Scope, StructureError, StructureRequest};
use support::{FixedClock, MapConfig, ScriptedTransport};

/// One call of `schema` over `text`, the model answering `replies` in turn: the outcome and the
/// request bodies sent.
fn run(
    text: &str,
    schema: Value,
    records: bool,
    replies: Vec<Reply>,
) -> (Result<Outcome, StructureError>, Vec<Value>) {
    let transport = ScriptedTransport::new(replies);
    let config = MapConfig::with(&[
        ("structure_model", "openai/test-model"),
        ("openai_base_url", "http://127.0.0.1:9/v1"),
    ]);
    let key_value = MemoryKeyValue::default();
    let ports = structure::ports::Ports {
        transport: &transport,
        config: &config,
        key_value: &key_value,
        clock: &FixedClock::default(),
    };
    let request = StructureRequest::new(text, SchemaInput::Inline(schema), None)
        .unwrap()
        .with_records(records);
    let outcome = structure::structure(&request, &Scope::default(), &ports);
    let bodies = (0..transport.count()).map(|i| transport.body(i)).collect();
    (outcome, bodies)
}

/// What the model was asked for in `body`: the answer branch of the envelope.
fn asked(body: &Value) -> Value {
    let answer = &body["response_format"]["json_schema"]["schema"]["properties"]["answer"];
    answer
        .get("anyOf")
        .map_or(answer.clone(), |any| any[0].clone())
}

fn ok(outcome: &Result<Outcome, StructureError>) -> &Outcome {
    match outcome {
        Ok(outcome) => outcome,
        Err(error) => panic!("{error:?}"),
    }
}

fn data(outcome: &Result<Outcome, StructureError>) -> Value {
    match &ok(outcome).answer {
        Answer::Ok(data) => data.clone(),
        other => panic!("{other:?}"),
    }
}

#[test]
fn roots_that_can_be_objects_run_and_the_model_is_asked_for_the_object() {
    let city = json!({ "city": "Bern" });
    for schema in [
        json!({ "properties": { "city": { "type": "string" } }, "required": ["city"] }),
        json!({ "type": ["object", "null"], "properties": { "city": { "type": "string" } } }),
        json!({ "allOf": [{ "properties": { "city": { "type": "string" } } }, { "required": ["city"] }] }),
        json!({ "anyOf": [{ "type": "object", "properties": { "city": { "type": "string" } } }, { "type": "string" }] }),
        json!({ "if": { "required": ["city"] }, "then": { "properties": { "city": { "type": "string", "minLength": 2 } } } }),
    ] {
        let (outcome, bodies) = run(
            "I live in Bern.",
            schema.clone(),
            false,
            vec![Reply::answer(city.clone())],
        );
        assert_eq!(data(&outcome), city, "{schema}");
        let asked = asked(&bodies[0]);
        let types: Vec<Value> = match asked.get("anyOf") {
            Some(branches) => branches
                .as_array()
                .unwrap()
                .iter()
                .map(|b| b["type"].clone())
                .collect(),
            None => vec![asked["type"].clone()],
        };
        assert!(
            types.iter().all(|ty| ty == "object"),
            "{schema} sent as {asked}"
        );
    }
    // A root that says nothing of its value is a free-form object, sent as strict mode can
    // carry one (encoded) and decoded back.
    let (outcome, _) = run(
        "I live in Bern.",
        json!({}),
        false,
        vec![Reply::answer(json!(city.to_string()))],
    );
    assert_eq!(data(&outcome), city);
}

#[test]
fn the_original_root_still_validates_an_object_root_that_did_not_say_so() {
    let schema = json!({
        "properties": { "city": { "type": "string" }, "zip": { "type": "string" } },
        "if": { "required": ["city"] }, "then": { "required": ["zip"] }
    });
    let (outcome, bodies) = run(
        "I live in Bern, 3011.",
        schema,
        false,
        vec![
            Reply::answer(json!({ "city": "Bern" })),
            Reply::answer(json!({ "city": "Bern", "zip": "3011" })),
        ],
    );
    assert_eq!(data(&outcome), json!({ "city": "Bern", "zip": "3011" }));
    assert_eq!(ok(&outcome).iterations, 2);
    assert!(
        bodies[1].to_string().contains("/zip"),
        "the if/then violation was fed back"
    );
}

#[test]
fn a_scalar_root_is_wrapped_for_the_model_and_unwrapped_in_the_result() {
    let schema = json!({ "type": "integer", "minimum": 0, "description": "the number of seats" });
    let (outcome, bodies) = run(
        "The van has 9 seats.",
        schema.clone(),
        false,
        vec![
            Reply::answer(json!({ "value": -9 })),
            Reply::answer(json!({ "value": 9 })),
        ],
    );
    let outcome_ok = ok(&outcome);
    assert_eq!(outcome_ok.answer, Answer::Ok(json!(9)));
    assert_eq!(outcome_ok.iterations, 2);
    assert_eq!(outcome_ok.sources[0].pointer, "", "the value is the root");
    assert_eq!(outcome_ok.sources[0].span.as_ref().unwrap().text, "9");
    let asked = asked(&bodies[0]);
    assert_eq!(asked["type"], "object");
    assert_eq!(asked["required"], json!(["value"]));
    assert_eq!(asked["properties"]["value"]["type"], "integer");
    assert!(bodies[1].to_string().contains("/value: value must be ≥ 0"));

    // A classification: the root enum, behind a reference into its definitions.
    let label =
        json!({ "$ref": "#/$defs/label", "$defs": { "label": { "enum": ["spam", "ham"] } } });
    let (outcome, _) = run(
        "Buy cheap watches now!",
        label,
        false,
        vec![Reply::answer(json!({ "value": "spam" }))],
    );
    assert_eq!(data(&outcome), json!("spam"));

    for (schema, value) in [
        (json!({ "type": "boolean" }), json!(true)),
        (json!({ "const": "yes" }), json!("yes")),
        (json!({ "type": "number" }), json!(2.5)),
        (
            json!({ "type": "array", "items": { "type": "string" } }),
            json!(["red", "blue"]),
        ),
    ] {
        let (outcome, _) = run(
            "red and blue, 2.5, yes, true",
            schema.clone(),
            false,
            vec![Reply::answer(json!({ "value": value }))],
        );
        assert_eq!(data(&outcome), value, "{schema}");
    }
}

#[test]
fn a_wrapped_root_ends_as_the_loop_does_for_objects() {
    let name = json!({ "type": "string", "description": "the caller's name" });
    let (outcome, _) = run(
        "Call me.",
        name,
        false,
        vec![Reply::need("the text gives no name")],
    );
    assert_eq!(
        ok(&outcome).answer,
        Answer::NeedMoreInput("the text gives no name".to_owned())
    );
    // No address in the text: the text lacks the root's value, before any call.
    let schema = json!({ "type": "string", "format": "email" });
    let (outcome, bodies) = run("Call me.", schema.clone(), false, vec![]);
    assert_eq!(
        ok(&outcome).answer,
        Answer::NeedMoreInput("the text gives no value for /".to_owned())
    );
    assert!(bodies.is_empty());
    let wrong = || Reply::answer(json!({ "value": "not an email" }));
    let (outcome, _) = run(
        "Write to me.",
        json!({ "type": "string", "minLength": 20 }),
        false,
        vec![wrong(), wrong(), wrong()],
    );
    let Answer::Stale(errors) = &ok(&outcome).answer else {
        panic!("{outcome:?}");
    };
    assert!(
        errors.iter().all(|error| error.starts_with("/: ")),
        "{errors:?}"
    );
}

#[test]
fn a_bare_value_of_the_roots_type_is_read_as_the_answer() {
    for (schema, bare) in [
        (json!({ "type": "number" }), json!(42)),
        (json!({ "type": "boolean" }), json!(true)),
        (
            json!({ "type": "array", "items": { "type": "string" } }),
            json!(["a", "b"]),
        ),
        (json!({ "enum": ["spam", "ham"] }), json!("ham")),
    ] {
        let (outcome, bodies) = run(
            "The answer: 42, true, a and b, ham.",
            schema.clone(),
            false,
            vec![Reply::answer(bare.clone())],
        );
        assert_eq!(data(&outcome), bare, "{schema}");
        assert_eq!(bodies.len(), 1, "{schema}: accepted at once");
        let repairs = &ok(&outcome).trace.repairs;
        assert!(
            repairs.iter().any(|r| r.contains("bare answer")),
            "{repairs:?}"
        );
    }
    // A schema of the user's that only looks like the wrapper is the user's: records of
    // `{"value": …}` objects, given as a bare list, are those records.
    let colours = json!({ "type": "array", "items": {
        "type": "object", "properties": { "value": { "type": "string" } },
        "required": ["value"], "additionalProperties": false,
    } });
    let list = json!([{ "value": "#FF0000" }, { "value": "#000" }]);
    let (outcome, _) = run(
        "#FF0000 and #000",
        colours,
        false,
        vec![Reply::answer(list.clone())],
    );
    assert_eq!(data(&outcome), list);
    // A bare value the root does not accept is told in the root's own terms, never the
    // wrapper's.
    let many = || Reply::answer(json!("many"));
    let (outcome, _) = run(
        "Some.",
        json!({ "type": "number" }),
        false,
        vec![many(), many(), many()],
    );
    let Answer::Stale(errors) = &ok(&outcome).answer else {
        panic!("{outcome:?}");
    };
    assert!(
        errors
            .iter()
            .all(|e| e.starts_with("/: ") && !e.contains("object")),
        "{errors:?}"
    );
}

fn order() -> Value {
    json!({ "type": "object", "properties": { "order": { "type": "string" }, "units": { "type": "integer" } }, "required": ["order"] })
}

const ORDERS: &str = "Order ORD-1 for 3 units. Order ORD-2 for 5 units.";

#[test]
fn an_array_root_of_objects_is_records_mode_by_itself() {
    let two =
        json!({ "records": [{ "order": "ORD-1", "units": 3 }, { "order": "ORD-2", "units": 5 }] });
    let pydantic = json!({ "type": "array", "items": { "$ref": "#/$defs/Order" }, "$defs": { "Order": order() } });
    for schema in [json!({ "type": "array", "items": order() }), pydantic] {
        let (outcome, bodies) = run(
            ORDERS,
            schema.clone(),
            false,
            vec![Reply::answer(two.clone())],
        );
        assert_eq!(data(&outcome), two["records"], "{schema}");
        assert_eq!(ok(&outcome).sources[0].pointer, "/0/order");
        let sent = &bodies[0]["response_format"]["json_schema"]["schema"]["properties"]["answer"];
        assert_eq!(
            sent["properties"]["records"]["type"], "array",
            "{schema}: {sent}"
        );
    }
}

#[test]
fn a_draft_04_array_root_with_an_id_reads_its_records_through_the_definition() {
    let schema = json!({
        "$schema": "http://json-schema.org/draft-04/schema#",
        "id": "https://example.com/orders.json",
        "type": "array",
        "items": { "$ref": "#/definitions/order" },
        "definitions": { "order": { "properties": { "order": { "type": "string" } }, "required": ["order"] } }
    });
    let two = json!({ "records": [{ "order": "ORD-1" }, { "order": "ORD-2" }] });
    let (outcome, _) = run(ORDERS, schema, false, vec![Reply::answer(two.clone())]);
    assert_eq!(data(&outcome), two["records"]);
    // The same document as a wrapped root: its definitions stay where its id says they are.
    let tags = json!({
        "$schema": "http://json-schema.org/draft-04/schema#",
        "id": "https://example.com/tags.json",
        "type": "array",
        "items": { "$ref": "#/definitions/tag" },
        "definitions": { "tag": { "type": "string" } }
    });
    let (outcome, _) = run(
        "red, blue",
        tags,
        false,
        vec![Reply::answer(json!({ "value": ["red", "blue"] }))],
    );
    assert_eq!(data(&outcome), json!(["red", "blue"]));
}

#[test]
fn an_array_root_is_checked_whole() {
    let two = || Reply::answer(json!({ "records": [{ "order": "ORD-1" }, { "order": "ORD-2" }] }));
    let array = |extra: Value| {
        let mut schema = json!({ "type": "array", "items": order() });
        schema
            .as_object_mut()
            .unwrap()
            .extend(extra.as_object().unwrap().clone());
        schema
    };
    let (outcome, _) = run(ORDERS, array(json!({ "minItems": 3 })), false, vec![two()]);
    assert_eq!(
        ok(&outcome).answer,
        Answer::NeedMoreInput(
            "the text holds 2 records; the schema asks for at least 3".to_owned()
        )
    );
    // The records the text holds come with the question, and where each comes from.
    assert_eq!(
        ok(&outcome).partial,
        Some(json!([{ "order": "ORD-1" }, { "order": "ORD-2" }]))
    );
    assert!(!ok(&outcome).sources.is_empty());
    let (outcome, _) = run(ORDERS, array(json!({ "maxItems": 1 })), false, vec![two()]);
    assert!(
        matches!(&ok(&outcome).answer, Answer::Stale(errors) if errors[0].contains("at most 1")),
        "{outcome:?}"
    );
    let (outcome, _) = run(
        ORDERS,
        array(json!({ "minItems": 2, "uniqueItems": true })),
        false,
        vec![two()],
    );
    assert_eq!(data(&outcome).as_array().unwrap().len(), 2);
}

#[test]
fn records_of_a_scalar_schema_are_the_values_themselves() {
    let email = json!({ "type": "string", "format": "email" });
    let (outcome, _) = run(
        "Write to ada@example.com or alan@example.com.",
        email,
        true,
        vec![Reply::answer(
            json!({ "records": [{ "value": "ada@example.com" }, { "value": "alan@example.com" }] }),
        )],
    );
    assert_eq!(
        data(&outcome),
        json!(["ada@example.com", "alan@example.com"])
    );
    assert_eq!(ok(&outcome).sources[1].pointer, "/1");
}

#[test]
fn what_is_refused_is_refused_before_any_call() {
    let (outcome, bodies) = run(
        ORDERS,
        json!({ "type": "array", "items": order() }),
        true,
        vec![],
    );
    let error = outcome.unwrap_err();
    assert!(
        matches!(&error.kind, ErrorKind::InvalidRequest { field } if field == "records"),
        "{error:?}"
    );
    assert!(
        error.message.contains("records mode by itself"),
        "{}",
        error.message
    );
    assert!(bodies.is_empty());
}

#[test]
fn an_array_whose_items_refer_back_to_it_is_one_wrapped_value() {
    let tree = json!({ "type": "array", "items": { "type": "object",
        "properties": { "name": { "type": "string" }, "children": { "$ref": "#" } }, "required": ["name"] } });
    let value = json!([{ "name": "root", "children": [{ "name": "leaf", "children": [] }] }]);
    let (outcome, bodies) = run(
        "root has a leaf",
        tree,
        false,
        vec![Reply::answer(json!({ "value": value }))],
    );
    assert_eq!(data(&outcome), value);
    // The envelope keeps a recursive target under its definitions.
    let sent = &bodies[0]["response_format"]["json_schema"]["schema"]["$defs"]["structure_target"];
    assert_eq!(sent["required"], json!(["value"]), "{sent}");
}

#[test]
fn a_schema_over_openais_totals_is_sent_loosened_and_the_answer_read_back() {
    // Thirteen levels of objects: OpenAI takes ten, the envelope is one of them.
    let deep = (0..13).fold(
        json!({ "type": "string", "minLength": 2 }),
        |inner, _| json!({ "type": "object", "properties": { "a": inner }, "required": ["a"] }),
    );
    let value = (0..13).fold(json!("ok"), |inner, _| json!({ "a": inner }));
    // The model answers the nine levels it was sent, the rest as the JSON text it was asked for.
    let mut answer = value.clone();
    let cut = answer.pointer_mut(&"/a".repeat(9)).unwrap();
    *cut = json!(cut.to_string());
    let (outcome, bodies) = run("ok", deep, false, vec![Reply::answer(answer)]);
    assert_eq!(data(&outcome), value);
    let transforms = &ok(&outcome).trace.schema_transforms;
    assert!(
        transforms
            .iter()
            .any(|transform| transform.contains("nested deeper than the provider takes")),
        "{transforms:?}"
    );
    let sent = bodies[0]["response_format"]["json_schema"]["schema"].to_string();
    assert!(sent.contains("JSON-encoded string"), "{sent}");
}
