//! Properties over generated schemas and answers, for every provider's schema transform:
//! `ok` only ever carries data that validates against the schema asked for — the transform
//! and the way back never widen what local validation accepts.

mod support;

use mock_llm::wire::{Form, Wire};
use proptest::prelude::*;
use serde_json::{Map, Value, json};
use structure::{Answer, Scope, StructureRequest};
use support::{MapConfig, ScriptedTransport, ports};

const NAMES: [&str; 5] = ["a", "b", "c", "d", "e"];

fn property_schema() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        (proptest::option::of(0u64..3), proptest::option::of(3u64..8), 0..4u8).prop_map(|(min, max, extra)| {
            let mut schema = json!({ "type": "string" });
            if let Some(min) = min { schema["minLength"] = json!(min); }
            if let Some(max) = max { schema["maxLength"] = json!(max); }
            match extra {
                1 => schema["format"] = json!("email"),
                2 => schema["enum"] = json!(["x", "yy", "zzz"]),
                3 => schema["pattern"] = json!("^[a-z]+$"),
                _ => {}
            }
            schema
        }),
        (proptest::option::of(-5i64..5), proptest::option::of(5i64..50)).prop_map(|(min, max)| {
            let mut schema = json!({ "type": "integer" });
            if let Some(min) = min { schema["minimum"] = json!(min); }
            if let Some(max) = max { schema["maximum"] = json!(max); }
            schema
        }),
        Just(json!({ "type": "number" })),
        Just(json!({ "type": "boolean" })),
        (0u64..2, proptest::bool::ANY).prop_map(|(min, unique)| {
            json!({ "type": "array", "items": { "type": "string" }, "minItems": min, "uniqueItems": unique })
        }),
        Just(json!({ "type": ["string", "null"] })),
    ];
    leaf.prop_recursive(2, 8, 3, |inner| {
        (
            proptest::collection::btree_map(proptest::sample::select(&NAMES[..]), inner, 1..3),
            proptest::bool::ANY,
        )
            .prop_map(|(properties, closed)| object(properties, closed))
    })
}

fn object(properties: std::collections::BTreeMap<&str, Value>, closed: bool) -> Value {
    let required: Vec<&str> = properties
        .keys()
        .copied()
        .filter(|name| *name != "e")
        .collect();
    json!({
        "type": "object",
        "properties": properties.into_iter().map(|(name, schema)| (name.to_owned(), schema)).collect::<Map<_, _>>(),
        "required": required,
        "additionalProperties": !closed,
    })
}

fn schema() -> impl Strategy<Value = Value> {
    (
        proptest::collection::btree_map(
            proptest::sample::select(&NAMES[..]),
            property_schema(),
            1..5,
        ),
        proptest::bool::ANY,
    )
        .prop_map(|(properties, closed)| object(properties, closed))
}

fn value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        proptest::bool::ANY.prop_map(Value::Bool),
        (-10i64..60).prop_map(|n| json!(n)),
        (-10.0f64..60.0).prop_map(|n| json!(n)),
        proptest::sample::select(vec![
            "",
            "x",
            "yy",
            "zzz",
            "Ada",
            "ada@example.org",
            "2026-05-06",
            "toolongforthis"
        ])
        .prop_map(|s| json!(s)),
    ];
    leaf.prop_recursive(2, 12, 4, |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..3).prop_map(Value::Array),
            proptest::collection::btree_map(proptest::sample::select(&NAMES[..]), inner, 0..5)
                .prop_map(|map| Value::Object(
                    map.into_iter().map(|(k, v)| (k.to_owned(), v)).collect()
                )),
        ]
    })
}

/// A valid instance of a generated schema (`with_optional`: also the optional properties).
fn example(schema: &Value, with_optional: bool) -> Value {
    let kind = |types: &Value| match types {
        Value::Array(types) => types[0].as_str().unwrap_or("null").to_owned(),
        other => other.as_str().unwrap_or("null").to_owned(),
    };
    match kind(&schema["type"]).as_str() {
        "object" => {
            let required = schema["required"].as_array().cloned().unwrap_or_default();
            let properties = schema["properties"]
                .as_object()
                .cloned()
                .unwrap_or_default();
            Value::Object(
                properties
                    .iter()
                    .filter(|(name, _)| with_optional || required.contains(&json!(name)))
                    .map(|(name, property)| (name.clone(), example(property, with_optional)))
                    .collect(),
            )
        }
        "string" if schema["enum"].is_array() => schema["enum"][1].clone(),
        "string" if schema["format"] == "email" => json!("ada@example.org"),
        "string" => {
            let min = schema["minLength"].as_u64().unwrap_or(0);
            json!("abc"[..min.clamp(1, 3) as usize])
        }
        "integer" => schema["minimum"]
            .clone()
            .as_i64()
            .map_or(json!(5), |min| json!(min.max(5))),
        "number" => json!(1.5),
        "boolean" => json!(true),
        "array" => json!(["x", "y"]),
        _ => Value::Null,
    }
}

/// Providers with their config and wire: each transforms the schema its own way.
fn providers() -> Vec<(&'static str, MapConfig, Wire)> {
    let local = |profile: &str| {
        MapConfig::with(&[
            ("structure_model", "openai/m"),
            ("openai_base_url", "http://127.0.0.1:9/v1"),
            ("structure_provider_profile", profile),
        ])
    };
    vec![
        (
            "openai",
            MapConfig::with(&[
                ("structure_model", "openai/gpt-4.1-mini"),
                ("openai_api_key", "k"),
            ]),
            Wire::OpenAiChat,
        ),
        (
            "anthropic",
            MapConfig::with(&[
                ("structure_model", "anthropic/claude-sonnet-4-5"),
                ("anthropic_api_key", "k"),
            ]),
            Wire::Anthropic,
        ),
        (
            "gemini",
            MapConfig::with(&[
                ("structure_model", "google/gemini-2.5-flash"),
                ("gemini_api_key", "k"),
            ]),
            Wire::Gemini,
        ),
        ("llamacpp", local("llamacpp"), Wire::OpenAiChat),
        (
            "llamacpp, extractive",
            {
                let mut config = local("llamacpp");
                config
                    .values
                    .insert("structure_extractive".into(), "true".into());
                config
            },
            Wire::OpenAiChat,
        ),
        (
            "openai-compatible",
            local("openai-compatible"),
            Wire::OpenAiChat,
        ),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn ok_carries_only_valid_data(
        schema in schema(),
        optional in proptest::bool::ANY,
        at in 0usize..5,
        replacement in value(),
        second in value(),
    ) {
        // The first answer is one change away from valid (the cases a transform that dropped a
        // constraint would let through); the second anything.
        let validator = support::validator(&schema);
        let mut first = example(&schema, optional);
        if let Some(object) = first.as_object_mut() {
            let key = NAMES[at];
            object.insert(key.to_owned(), replacement);
        }
        for (name, config, wire) in providers() {
            let transport = ScriptedTransport::new([
                wire.answer(Form::Text, first.clone()),
                wire.answer(Form::Text, second.clone()),
            ]);
            let request = StructureRequest::from_tool_arguments(
                // The answer's own text as the prompt: grounding finds every copied value in it.
                &json!({ "prompt": first.to_string(), "schema": schema, "maxLoops": 2 }),
            )
            .unwrap();
            if let Ok(outcome) = structure::structure(&request, &Scope::default(), &ports(&transport, &config))
                && let Answer::Ok(data) = outcome.answer
            {
                prop_assert!(
                    validator.is_valid(&data),
                    "{name}: ok with {data}, invalid under {schema}: {:?}",
                    support::errors(&validator, &data)
                );
            }
        }
    }

    #[test]
    fn a_valid_answer_is_accepted_as_it_is(schema in schema(), with_optional in proptest::bool::ANY) {
        // When the model's first answer already validates, the call is ok with exactly that
        // answer after one LLM call (OpenAI-compatible: no transform to undo).
        let validator = support::validator(&schema);
        let answer = example(&schema, with_optional);
        prop_assume!(validator.is_valid(&answer));
        let config = MapConfig::with(&[
            ("structure_model", "openai/m"),
            ("openai_base_url", "http://127.0.0.1:9/v1"),
            ("structure_provider_profile", "openai-compatible"),
        ]);
        let transport = ScriptedTransport::new([Wire::OpenAiChat.answer(Form::Text, answer.clone())]);
        let request = StructureRequest::from_tool_arguments(
            &json!({ "prompt": answer.to_string(), "schema": schema }),
        )
        .unwrap();
        let outcome = structure::structure(&request, &Scope::default(), &ports(&transport, &config)).unwrap();
        prop_assert_eq!(outcome.answer, Answer::Ok(answer));
        prop_assert_eq!(outcome.usage.llm_calls, 1);
    }
}
