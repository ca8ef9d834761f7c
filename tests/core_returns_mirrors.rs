//! The result's other shapes name what the published `returns` names: the WIT mirror
//! (`wit/structure.wit`, which the component's `structuring.rs` and the host's `json.rs`
//! convert between) field for field, and the host's typed outcome, every field written, as
//! JSON the schema accepts.

mod support;

use std::collections::BTreeSet;

use serde_json::Value;
use structure::tool_definition;

use support::every_result::{paths_named, paths_written, properties_of};
use support::{errors, root, validator};

/// The fields of each `record` and the cases of each `enum` and `variant` in
/// `wit/structure.wit`, by name.
fn wit_shapes() -> std::collections::BTreeMap<String, Vec<String>> {
    let wit = std::fs::read_to_string(root().join("wit/structure.wit")).unwrap();
    let mut shapes = std::collections::BTreeMap::new();
    let mut open: Option<(String, Vec<String>)> = None;
    for line in wit.lines().map(str::trim) {
        if line.starts_with("///") || line.is_empty() {
            continue;
        }
        if let Some((name, members)) = &mut open {
            if line == "}" {
                shapes.insert(name.clone(), std::mem::take(members));
                open = None;
            } else {
                let member = line.split([':', '(', ',']).next().unwrap().trim();
                members.push(member.trim_start_matches('%').to_owned());
            }
            continue;
        }
        for kind in ["record ", "enum ", "variant "] {
            if let Some(rest) = line.strip_prefix(kind) {
                let name = rest.trim_end_matches('{').trim().to_owned();
                open = Some((name, Vec::new()));
            }
        }
    }
    shapes
}

/// `utf16-start` → `utf16Start`.
fn camel(kebab: &str) -> String {
    let mut words = kebab.split('-');
    let mut name = words.next().unwrap_or_default().to_owned();
    for word in words {
        let mut letters = word.chars();
        if let Some(first) = letters.next() {
            name.extend(first.to_uppercase());
            name.push_str(letters.as_str());
        }
    }
    name
}

/// The published outcome's schema and its typed error's (`{"error": here}`).
fn published() -> (Value, Value) {
    let returns = tool_definition()["returns"].clone();
    (
        returns["anyOf"][0].clone(),
        returns["anyOf"][1]["properties"]["error"].clone(),
    )
}

/// WIT field names and the schema's for the same field.
type Renamed = &'static [(&'static str, &'static str)];

/// Each WIT record of the outcome, the schema's object it mirrors, and the WIT field names that
/// differ from the schema's.
const MIRRORED: [(&str, &str, Renamed); 11] = [
    ("outcome", "", &[]),
    ("usage", "/properties/usage", &[]),
    ("trace", "/properties/trace", &[]),
    (
        "builder-trace",
        "/properties/trace/properties/schemaBuilder",
        &[],
    ),
    ("reason", "/properties/trace/properties/reasons/items", &[]),
    (
        "attempt",
        "/properties/trace/properties/attempts/items",
        &[],
    ),
    (
        "context-window",
        "/properties/trace/properties/contextWindow",
        &[("source", "from")],
    ),
    (
        "page-size",
        "/properties/trace/properties/pageSizes/items",
        &[],
    ),
    (
        "page-box",
        "/properties/sources/items/properties/boxes/items",
        &[],
    ),
    ("incomplete-record", "/properties/incomplete/items", &[]),
    (
        "source",
        "/properties/sources/items",
        &[("matched", "match")],
    ),
];

/// The WIT mirror of the result names field for field what the published schema names (the
/// component's `structuring.rs` and the host's `json.rs` convert between the two; a field added
/// to one and not the other is a difference here).
#[test]
fn the_wit_records_mirror_the_published_returns_field_for_field() {
    let (outcome, error) = published();
    let shapes = wit_shapes();
    for (record, pointer, renamed) in MIRRORED {
        let schema = outcome
            .pointer(pointer)
            .unwrap_or_else(|| panic!("{pointer}"));
        let mut wit = BTreeSet::new();
        for field in &shapes[record] {
            let field = (renamed.iter())
                .find(|(from, _)| from == field)
                .map_or(field.as_str(), |(_, to)| to);
            if record == "source" && field == "span" {
                // A source's span is written flat beside its pointer.
                wit.extend(shapes["span"].iter().map(|name| camel(name)));
            } else {
                wit.insert(camel(field));
            }
        }
        let named: BTreeSet<String> = properties_of(schema).keys().cloned().collect();
        assert_eq!(wit, named, "WIT record {record} against returns{pointer}");
    }
    // `kind` and its details come from the variant, beside the message and the usage.
    let wit: BTreeSet<String> = shapes["error"].iter().map(|name| camel(name)).collect();
    let mut named: BTreeSet<String> = error["properties"]
        .as_object()
        .unwrap()
        .keys()
        .cloned()
        .collect();
    named.insert("kind".to_owned());
    assert_eq!(wit, named, "WIT record error");
}

/// An enum's values, or the constants of its documented cases.
fn values(schema: &Value) -> BTreeSet<String> {
    let listed = schema
        .get("enum")
        .and_then(Value::as_array)
        .into_iter()
        .flatten();
    let cases = schema
        .get("oneOf")
        .and_then(Value::as_array)
        .into_iter()
        .flatten();
    let constants = cases.filter_map(|case| case.get("const"));
    (listed.chain(constants))
        .filter_map(|value| value.as_str().map(str::to_owned))
        .collect()
}

/// The WIT enums and the error variant have the cases the published schema's enums have.
#[test]
fn the_wit_enums_mirror_the_published_returns_case_for_case() {
    let (outcome, error) = published();
    let shapes = wit_shapes();
    for (wit_enum, pointer) in [
        ("status", "/properties/status"),
        (
            "reason-category",
            "/properties/trace/properties/reasons/items/properties/category",
        ),
        ("source-match", "/properties/sources/items/properties/match"),
    ] {
        let wit: BTreeSet<String> = shapes[wit_enum].iter().cloned().collect();
        assert_eq!(
            wit,
            values(outcome.pointer(pointer).unwrap()),
            "WIT enum {wit_enum}"
        );
    }
    let kinds: BTreeSet<String> = (error["oneOf"].as_array().unwrap().iter())
        .filter_map(|variant| {
            variant["properties"]["kind"]["const"]
                .as_str()
                .map(str::to_owned)
        })
        .collect();
    let wit: BTreeSet<String> = shapes["error-kind"].iter().cloned().collect();
    assert_eq!(wit, kinds, "WIT variant error-kind");
}

use structure_host as host;

const USAGE: host::Usage = host::Usage {
    llm_calls: 2,
    prompt_tokens: 90,
    completion_tokens: 9,
    cached_prompt_tokens: 4,
};

/// A source with every field: its span, page, box and confidence.
fn full_source() -> host::Source {
    let span = host::Span {
        start: 0,
        end: 3,
        text: "Ada".into(),
        utf16_start: 0,
        utf16_end: 3,
    };
    let boxed = host::PageBox {
        page: 1,
        x0: 72.0,
        top: 70.0,
        x1: 90.0,
        bottom: 82.0,
    };
    host::Source {
        pointer: "/name".into(),
        span: Some(span),
        matched: host::SourceMatch::Exact,
        page: Some(1),
        boxes: vec![boxed],
        cell: Some("Lines!A1".into()),
        confidence: Some(0.9),
    }
}

/// A trace with every field written.
fn full_trace() -> host::Trace {
    let some = |text: &str| vec![text.to_owned()];
    let builder = host::BuilderTrace {
        model: "openai/gpt-4.1".into(),
        cache_hit: true,
        usage: USAGE,
        schema: Some(r#"{"type": "object"}"#.into()),
    };
    let reason = host::Reason {
        iteration: 1,
        pointer: "/name".into(),
        category: host::ReasonCategory::Rule,
    };
    let attempt = host::Attempt {
        model: "openai/gpt-4.1-mini".into(),
        outcome: "ok".into(),
        usage: USAGE,
    };
    host::Trace {
        model: "openai/gpt-4.1-mini".into(),
        provider_profile: "openai".into(),
        delivery: "native".into(),
        warnings: some("w"),
        schema_transforms: some("t"),
        repairs: some("r"),
        feedback: some("f"),
        reasons: vec![reason],
        retries: 1,
        schema_builder: Some(builder),
        context_window: Some(host::ContextWindow {
            tokens: 8192,
            source: "server".into(),
        }),
        chunks: 2,
        chunk_of: vec![("/name".into(), 1)],
        attempts: vec![attempt],
        low_confidence: some("/age"),
        in_doubt: some("/name"),
        second_looks: some("/age: ..."),
        form_confidence: Some(0.95),
        left_out: some("/phone"),
        page_sizes: vec![host::PageSize {
            page: 1,
            width: 612.0,
            height: 792.0,
        }],
    }
}

/// The host's typed outcome, every field of it written, comes out as JSON the published schema
/// accepts, with every field it names (`host/src/json.rs` maps each one).
#[test]
fn the_hosts_typed_outcome_writes_every_published_field() {
    let incomplete = host::IncompleteRecord {
        record: r#"{"name": "Alan"}"#.into(),
        need: "the text gives no value for /date".into(),
        sources: vec![full_source()],
    };
    let outcome = host::Outcome {
        status: host::Status::Ok,
        data: Some(r#"[{"name": "Ada"}]"#.into()),
        sources: vec![full_source()],
        partial: None,
        incomplete: Some(vec![incomplete]),
        text: Some("Ada".into()),
        need: None,
        errors: Vec::new(),
        schema_origin: "inline".into(),
        iterations: 1,
        usage: USAGE,
        trace: full_trace(),
        review: Some(host::ReviewTicket {
            id: "0a1b2c3d4e5f60718293".into(),
            status: host::ReviewStatus::Pending,
            fields: vec![host::ReviewField {
                pointer: "/0/name".into(),
                reason: "confidence 0.41, under 0.8".into(),
            }],
        }),
    };
    let json = outcome.to_json();
    let returns = tool_definition()["returns"].clone();
    assert_eq!(
        errors(&validator(&returns), &json),
        Vec::<String>::new(),
        "{json:#}"
    );
    let mut written = BTreeSet::new();
    paths_written(&json, &returns, "", &mut written);
    let mut named = BTreeSet::new();
    paths_named(&returns["anyOf"][0], "", &mut named);
    // `need` (with `partial`) and `errors` belong to the other statuses.
    let never: Vec<&String> = (named.difference(&written))
        .filter(|path| !["/need", "/partial", "/errors"].contains(&path.as_str()))
        .collect();
    assert!(never.is_empty(), "fields the host never writes: {never:?}");

    let asking = host::Outcome {
        status: host::Status::NeedMoreInput,
        data: None,
        partial: Some(r#"{"name": "Ada"}"#.into()),
        incomplete: None,
        need: Some("the text does not state /date".into()),
        ..outcome
    };
    let json = asking.to_json();
    assert_eq!(
        errors(&validator(&returns), &json),
        Vec::<String>::new(),
        "{json:#}"
    );
    assert_eq!(json["partial"], serde_json::json!({ "name": "Ada" }));
    assert_eq!(json["sources"][0]["pointer"], full_source().pointer);
}
