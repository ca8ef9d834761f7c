//! Rules across fields (issue 40): `x-kubernetes-validations` and `x-structure-rules` enforced
//! wherever they stand, a failed rule fed back like any violation with its message at its
//! pointer; a rule that does not compile, reaches past `self` or costs too much refused at
//! registration with its pointer; a hostile rule bounded; no provider ever sees the keywords.

mod support;

use mock_llm::Reply;
use serde_json::{Value, json};
use structure::http_api::{ApiRequest, handle};
use structure::ports::{MemoryKeyValue, Ports};
use structure::schema::subset::{ANTHROPIC, FULL, GEMINI, OPENAI_STRICT, to_subset};
use structure::schema::validator::CompiledSchema;
use structure::{Answer, ErrorKind, SchemaInput, StructureRequest};
use support::{FixedClock, MapConfig, ScriptedTransport, ports};

/// An order whose items must add up to its total, whose delivery ends after it starts, and
/// whose discount needs a reason.
fn order_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "items": {
                "type": "array", "maxItems": 50,
                "items": {
                    "type": "object",
                    "properties": {
                        "sku": { "type": "string", "maxLength": 20 },
                        "price": { "type": "number" },
                        "quantity": { "type": "integer", "minimum": 1 }
                    },
                    "required": ["sku", "price", "quantity"]
                }
            },
            "total": { "type": "number" },
            "discount": { "type": "number", "minimum": 0 },
            "discountReason": { "type": "string", "maxLength": 200 },
            "delivery": {
                "type": "object",
                "properties": {
                    "start": { "type": "string", "format": "date-time" },
                    "end": { "type": "string", "format": "date-time" }
                },
                "required": ["start", "end"],
                "x-structure-rules": [{
                    "rule": "timestamp(self.end) > timestamp(self.start)",
                    "message": "the delivery must end after it starts",
                    "fieldPath": ".end"
                }]
            }
        },
        "required": ["items", "total", "delivery"],
        "x-kubernetes-validations": [
            {
                "rule": "self.items.map(i, i.price * double(i.quantity)).sum() == self.total",
                "message": "the items (price × quantity) must add up to the total",
                "fieldPath": ".total"
            },
            {
                "rule": "!has(self.discount) || self.discount == 0 || has(self.discountReason)",
                "messageExpression": "'a discount of ' + string(self.discount) + ' needs a discountReason'",
                "fieldPath": ".discountReason",
                "reason": "FieldValueRequired"
            }
        ]
    })
}

fn wrong_order() -> Value {
    json!({
        "items": [
            { "sku": "A-1", "price": 12.5, "quantity": 2 },
            { "sku": "B-2", "price": 5.25, "quantity": 4 }
        ],
        "total": 50,
        "discount": 5,
        "delivery": { "start": "2026-05-08T09:00:00Z", "end": "2026-05-07T17:00:00Z" }
    })
}

fn right_order() -> Value {
    json!({
        "items": [
            { "sku": "A-1", "price": 12.5, "quantity": 2 },
            { "sku": "B-2", "price": 5.25, "quantity": 4 }
        ],
        "total": 46,
        "discount": 5,
        "discountReason": "loyal customer",
        "delivery": { "start": "2026-05-08T09:00:00Z", "end": "2026-05-09T17:00:00Z" }
    })
}

#[test]
fn three_broken_rules_are_fed_back_at_their_pointers_and_the_second_answer_is_ok() {
    let transport = ScriptedTransport::new(vec![
        Reply::answer(wrong_order()),
        Reply::answer(right_order()),
    ]);
    let config = MapConfig::local();
    let request = StructureRequest::new(
        "Order: 2 x A-1 at 12.50, 4 x B-2 at 5.25, total 46, 5 off for a loyal customer; \
         delivered from May 8 9:00 to May 9 17:00 UTC.",
        SchemaInput::Inline(order_schema()),
        Some(3),
    )
    .unwrap();
    let outcome = structure::structure(
        &request,
        &structure::Scope::default(),
        &ports(&transport, &config),
    )
    .unwrap();
    assert_eq!(outcome.answer, Answer::Ok(right_order()));
    assert_eq!((outcome.iterations, transport.count()), (2, 2));
    let reason = &outcome.trace.feedback[0];
    for line in [
        "- /total: the items (price × quantity) must add up to the total\n",
        "- /discountReason: a discount of 5 needs a discountReason\n",
        "- /delivery/end: the delivery must end after it starts\n",
    ] {
        assert!(reason.contains(line), "{line} in {reason}");
    }
    assert_eq!(reason.matches("\n- ").count(), 3, "{reason}");
    let messages = transport.body(1)["messages"].as_array().unwrap().clone();
    assert_eq!(
        messages.last().unwrap()["content"],
        reason.as_str(),
        "fed back to the model"
    );
    let categories: Vec<&str> = (outcome.trace.reasons.iter())
        .map(|reason| reason.category.name())
        .collect();
    assert_eq!(
        categories,
        ["rule", "rule", "rule"],
        "counted like any violation, in a category of their own"
    );
}

fn violations(schema: &Value, instance: &Value) -> Vec<String> {
    CompiledSchema::compile(schema)
        .unwrap()
        .violations(instance)
        .iter()
        .map(ToString::to_string)
        .collect()
}

#[test]
fn a_rule_stands_wherever_a_subschema_does_and_self_is_the_value_there() {
    let schema = json!({
        "$defs": { "span": {
            "type": "object",
            "x-kubernetes-validations": [{ "rule": "self.from <= self.to", "message": "from must not be after to" }]
        }},
        "type": "object",
        "properties": {
            "spans": { "type": "array", "maxItems": 10, "items": { "$ref": "#/$defs/span" } },
            "code": { "type": "string", "maxLength": 8,
                      "x-structure-rules": [{ "rule": "self.matches('^[A-Z]{3}$')", "message": "three capitals" }] }
        }
    });
    assert_eq!(
        violations(
            &schema,
            &json!({ "spans": [{ "from": 1, "to": 2 }, { "from": 5, "to": 3 }], "code": "eur" })
        ),
        [
            "/spans/1: from must not be after to",
            "/code: three capitals"
        ]
    );
    assert!(
        violations(
            &schema,
            &json!({ "spans": [{ "from": 1, "to": 1 }], "code": "EUR" })
        )
        .is_empty()
    );
}

#[test]
fn a_rule_is_said_only_when_the_value_it_stands_on_is_otherwise_valid() {
    let schema = json!({
        "type": "object",
        "properties": { "a": { "type": "integer" }, "b": { "type": "integer" } },
        "x-structure-rules": [{ "rule": "self.a < self.b", "message": "a must be below b" }]
    });
    // A wrong type is what the model fixes first; the rule cannot be evaluated on it.
    assert_eq!(
        violations(&schema, &json!({ "a": "one", "b": 2 })),
        ["/a: value must be an integer (was \"one\")"]
    );
    // A field the rule reads is missing and nothing else is wrong: said as the rule's failure.
    let missing = violations(&schema, &json!({ "a": 1 }));
    assert_eq!(missing.len(), 1, "{missing:?}");
    assert!(
        missing[0].starts_with("/: the rule self.a < self.b could not be checked"),
        "{missing:?}"
    );
    assert_eq!(
        violations(&schema, &json!({ "a": 3, "b": 2 })),
        ["/: a must be below b"]
    );
}

#[test]
fn cel_as_kubernetes_writes_it() {
    let order = json!({
        "items": [{ "price": 3, "qty": 2, "sku": "AB-1" }, { "price": 4, "qty": 1, "sku": "CD-2" }],
        "total": 10, "discount": 0.5, "reason": "loyal", "tags": ["a", "b"],
        "start": "2024-01-01T00:00:00Z", "end": "2024-01-02T12:00:00Z",
        "email": "Bob@Example.com", "labels": { "app": "shop" }
    });
    for rule in [
        "self.items.all(i, i.price > 0) && self.total == self.items.map(i, i.price * i.qty).sum()",
        "self.items.exists(i, i.sku.startsWith('CD')) && self.items.exists_one(i, i.qty == 2)",
        "self.items.filter(i, i.price > 3).size() == 1 && size(self.tags) == 2",
        "!has(self.nothing) && has(self.reason)",
        "self.email.endsWith('.com') && self.email.contains('@')",
        "timestamp(self.end) - timestamp(self.start) >= duration('24h')",
        "timestamp(self.start).getFullYear() == 2024 && duration('1h30m') == duration('90m')",
        "self.tags.all(t, t in ['a', 'b', 'c']) && 'app' in self.labels",
        "self.discount > 0.0 ? self.reason != '' : true",
        "type(self.total) == int && type(self.discount) == double && self.total == 10.0",
        "self.labels.all(k, k.matches('^[a-z]+$'))",
        // Kubernetes' strings and IP libraries, as CRDs call them.
        "self.email.lowerAscii() == 'bob@example.com' && self.email.upperAscii().startsWith('BOB')",
        "self.email.split('@') == ['Bob', 'Example.com'] && ' x '.trim() == 'x'",
        "self.email.substring(4) == 'Example.com' && 'ta©o'.substring(1, 3) == 'a©'",
        "self.email.indexOf('@') == 3 && self.email.indexOf('#') == -1",
        "isIP('10.0.0.1') && isIP('::1') && !isIP('10.0.0.256') && !isIP(self.email)",
    ] {
        let schema = json!({ "type": "object", "x-kubernetes-validations": [{ "rule": rule }] });
        assert_eq!(violations(&schema, &order), Vec::<String>::new(), "{rule}");
    }
    let schema =
        json!({ "type": "object", "x-kubernetes-validations": [{ "rule": "self.total > 10" }] });
    assert_eq!(
        violations(&schema, &order),
        ["/: must satisfy the rule self.total > 10"]
    );
    let out_of_range = json!({ "type": "object", "x-kubernetes-validations": [{ "rule": "self.email.substring(40) == ''" }] });
    let said = violations(&out_of_range, &order).join("");
    assert!(
        said.contains("not within the string's 15 characters"),
        "{said}"
    );
}

#[test]
fn a_property_named_as_cel_cannot_write_it_is_escaped_as_kubernetes_escapes_it() {
    let schema = json!({
        "type": "object",
        "properties": {
            "namespace": { "type": "string" },
            "max-size": { "type": "integer" },
            "labels": { "type": "object", "additionalProperties": { "type": "string" } }
        },
        "x-kubernetes-validations": [
            { "rule": "!has(self.__namespace__) || self.__namespace__ != 'kube-system'", "message": "not in kube-system" },
            { "rule": "self.max__dash__size <= 10", "message": "at most 10" },
            // A map's keys are its own: no escaping.
            { "rule": "self.labels.all(k, k != 'app.kubernetes.io/name' || self.labels[k] != '')", "message": "a name" }
        ]
    });
    let fine = json!({ "namespace": "apps", "max-size": 3, "labels": { "app.kubernetes.io/name": "web" } });
    assert_eq!(violations(&schema, &fine), Vec::<String>::new());
    let broken = json!({ "namespace": "kube-system", "max-size": 11, "labels": { "app.kubernetes.io/name": "" } });
    let said = violations(&schema, &broken).join("\n");
    for message in ["not in kube-system", "at most 10", "a name"] {
        assert!(said.contains(message), "{said}");
    }
}

fn refusal(schema: Value) -> String {
    let transport = ScriptedTransport::new(Vec::new());
    let config = MapConfig::local();
    let request = StructureRequest::new("text", SchemaInput::Inline(schema), None).unwrap();
    let error = structure::structure(
        &request,
        &structure::Scope::default(),
        &ports(&transport, &config),
    )
    .unwrap_err();
    assert!(
        matches!(error.kind, ErrorKind::InvalidSchema { .. }),
        "{}",
        error.message
    );
    assert_eq!(transport.count(), 0, "refused before any call");
    error.message
}

fn with_rule(rule: Value) -> Value {
    json!({ "type": "object", "properties": { "po": { "type": "object", "x-kubernetes-validations": [rule] } } })
}

#[test]
fn a_rule_that_does_not_compile_is_refused_with_its_pointer() {
    let message = refusal(with_rule(
        json!({ "rule": "self.items.all(i,\n  i.price > )" }),
    ));
    assert!(
        message.starts_with("a rule at /properties/po/x-kubernetes-validations/0/rule: does not parse as CEL: line 2"),
        "{message}"
    );
    let message = refusal(with_rule(json!({ "rule": "oldSelf.a == self.a" })));
    assert!(
        message.contains("/0/rule: oldSelf: transition rules do not apply"),
        "{message}"
    );
    let message = refusal(with_rule(json!({ "rule": "request.user == 'x'" })));
    assert!(
        message.contains("undeclared reference to \"request\""),
        "{message}"
    );
    let message = refusal(with_rule(json!({ "rule": "true", "fieldPath": "spec..x" })));
    assert!(
        message.contains("/0/fieldPath: fieldPath \"spec..x\""),
        "{message}"
    );
    let message = refusal(with_rule(json!({ "rule": "true", "reason": "Because" })));
    assert!(
        message.contains("/0/reason: reason must be one of"),
        "{message}"
    );
    let message = refusal(with_rule(json!({ "message": "no rule" })));
    assert!(message.contains("/0: a rule needs \"rule\""), "{message}");
}

#[test]
fn a_rule_that_does_not_type_check_against_its_schema_is_refused_at_registration() {
    let schema = |rule: &str| {
        json!({
            "type": "object",
            "properties": {
                "po": {
                    "type": "object",
                    "properties": {
                        "total": { "type": "number" },
                        "count": { "type": "integer" },
                        "items": { "type": "array", "items": { "type": "object", "properties": { "price": { "type": "number" } } } }
                    },
                    "x-kubernetes-validations": [{ "rule": rule }]
                }
            }
        })
    };
    let message = refusal(schema("self.count + self.total > 0.0"));
    assert!(
        message.starts_with(
            "a rule at /properties/po/x-kubernetes-validations/0/rule: the rule does not type-check: \
             found no matching overload for '_+_' applied to '(int, double)'"
        ),
        "{message}"
    );
    let message = refusal(schema("self.items.map(i, i.price).size()"));
    assert!(
        message.contains("must be true or false, and this one is a int"),
        "{message}"
    );
    // The same sum written with the types the schema gives is admitted.
    structure::schema::rules::check::check(&schema("double(self.count) + self.total > 0.0"))
        .unwrap();
}

#[test]
fn a_rule_that_names_a_property_a_closed_object_lacks_is_refused_at_registration() {
    let schema = |additional: bool| {
        json!({
            "type": "object",
            "properties": {
                "start": { "type": "string" },
                "end": { "type": "object", "properties": { "at": { "type": "string" } }, "additionalProperties": additional }
            },
            "additionalProperties": additional,
            "x-structure-rules": [{ "rule": "self.start != '' && has(self.end.when)" }]
        })
    };
    let message = refusal(schema(false));
    assert!(
        message.starts_with("a rule at /x-structure-rules/0/rule: self.end.when names a property"),
        "{message}"
    );
    assert!(message.contains("when is not one of at"), "{message}");
    // An object open to other properties may hold it: the rule stands.
    assert!(
        violations(
            &schema(true),
            &json!({ "start": "a", "end": { "when": "b" } })
        )
        .is_empty()
    );
}

#[test]
fn a_rule_over_the_cost_ceiling_is_refused_and_bounding_its_lists_admits_it() {
    let schema = |max_items: Option<u64>| {
        let mut items = json!({ "type": "array", "items": { "type": "integer" } });
        if let Some(max) = max_items {
            items["maxItems"] = json!(max);
        }
        json!({
            "type": "object",
            "properties": { "items": items },
            "x-structure-rules": [{ "rule": "self.items.all(a, self.items.all(b, self.items.all(c, a == b || a != b || c == c)))" }]
        })
    };
    let message = refusal(schema(None));
    assert!(
        message.starts_with("a rule at /x-structure-rules/0/rule: the rule's estimated cost"),
        "{message}"
    );
    assert!(
        message.contains("over the ceiling of 10000000"),
        "{message}"
    );
    assert!(violations(&schema(Some(20)), &json!({ "items": [1, 2, 3] })).is_empty());
}

#[test]
fn a_hostile_rule_is_bounded_by_the_runtime_budget() {
    // Admitted: with at most 5 items the nesting costs little. The answer has 400.
    let rule = "self.items.all(a, self.items.all(b, self.items.all(c, self.items.all(d, a + b + c + d >= 0))))";
    let schema = json!({
        "type": "object",
        "properties": { "items": { "type": "array", "maxItems": 5, "items": { "type": "integer" } } },
        "x-structure-rules": [{ "rule": rule }]
    });
    let items: Vec<i64> = (0..400).collect();
    // Without the budget 400⁴ steps would run for hours; with it the rule stops at once.
    let found = violations(&schema, &json!({ "items": items }));
    assert_eq!(
        found,
        ["/items: array must have at most 5 items (was 400 items)"]
    );
    // With nothing else wrong, running out of budget is the rule's failure.
    let open = json!({ "type": "object", "x-structure-rules": [{ "rule": rule }] });
    let found = CompiledSchema::compile_checked(&open)
        .unwrap()
        .violations(&json!({ "items": items }));
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(found[0].constraint.contains("budget"), "{found:?}");
}

#[test]
fn providers_never_see_the_rules_but_the_model_reads_them() {
    for subset in [&OPENAI_STRICT, &ANTHROPIC, &GEMINI, &FULL] {
        let mut transforms = Vec::new();
        let sent = to_subset(&order_schema(), subset, "", &mut transforms).to_string();
        assert!(
            !sent.contains("x-kubernetes-validations"),
            "{}: {sent}",
            subset.name
        );
        assert!(
            !sent.contains("x-structure-rules"),
            "{}: {sent}",
            subset.name
        );
        assert!(
            sent.contains("must add up to the total"),
            "{}: {sent}",
            subset.name
        );
    }
    let transport = ScriptedTransport::new(vec![Reply::answer(right_order())]);
    let config = MapConfig::local();
    let request =
        StructureRequest::new("an order", SchemaInput::Inline(order_schema()), None).unwrap();
    structure::structure(
        &request,
        &structure::Scope::default(),
        &ports(&transport, &config),
    )
    .unwrap();
    // What the provider is sent as the answer's schema (a local server in prompt mode also
    // shows the model the schema as written, rules included, in the system prompt).
    let body = transport.body(0);
    let keys: Vec<&String> = body.as_object().unwrap().keys().collect();
    let sent = body["response_format"].to_string();
    assert!(sent.contains("properties"), "{keys:?}");
    assert!(
        !sent.contains("x-kubernetes-validations") && !sent.contains("x-structure-rules"),
        "{sent}"
    );
    assert!(
        sent.contains("the delivery must end after it starts"),
        "{sent}"
    );
}

#[test]
fn a_check_names_each_broken_rule_at_its_pointer() {
    let mut config = MapConfig::local();
    config.values.insert(
        "structure_api_tokens".into(),
        r#"[{"token": "admin-token", "tenant": "acme", "role": "admin"}]"#.into(),
    );
    let (transport, store, clock) = (
        ScriptedTransport::new(Vec::new()),
        MemoryKeyValue::default(),
        FixedClock::default(),
    );
    let ports = Ports {
        transport: &transport,
        config: &config,
        key_value: &store,
        clock: &clock,
    };
    let schema = json!({
        "type": "object",
        "properties": {
            "a": { "type": "object", "x-kubernetes-validations": [{ "rule": "self.x >" }, { "rule": "oldSelf == self" }] }
        }
    });
    let request = ApiRequest {
        method: "PUT".into(),
        path: "/v1/schemas/draft?check".into(),
        headers: vec![("authorization".into(), "Bearer admin-token".into())],
        body: json!({ "schema": schema }).to_string().into_bytes(),
    };
    let checked: Value = serde_json::from_slice(&handle(&request, &ports).body).unwrap();
    assert_eq!(checked["ok"], false, "{checked}");
    let pointers: Vec<&str> = (checked["problems"].as_array().unwrap().iter())
        .map(|problem| problem["pointer"].as_str().unwrap())
        .collect();
    assert_eq!(
        pointers,
        [
            "/properties/a/x-kubernetes-validations/0/rule",
            "/properties/a/x-kubernetes-validations/1/rule"
        ],
        "{checked}"
    );
}

#[test]
fn the_documented_example_holds() {
    let docs = std::fs::read_to_string(support::root().join("docs/schemas.md")).unwrap();
    let section = docs.split("## Rules across fields").nth(1).unwrap();
    let json_text = section
        .split("```json")
        .nth(1)
        .unwrap()
        .split("```")
        .next()
        .unwrap();
    let schema: Value = serde_json::from_str(json_text).unwrap();
    let trip = json!({ "departure": "2026-05-08T09:00:00Z", "return": "2026-05-01T09:00:00Z" });
    let answer = json!({ "items": [{ "price": 2.5, "quantity": 2 }], "total": 5, "trip": trip });
    assert_eq!(
        violations(&schema, &answer),
        ["/trip/return: the return must follow the departure"]
    );
    let answer = json!({ "items": [{ "price": 2.5, "quantity": 2 }], "total": 6, "discount": 1 });
    assert_eq!(
        violations(&schema, &answer),
        [
            "/total: the items must add up to the total",
            "/discountReason: a discount of 1 needs a discountReason"
        ]
    );
}
