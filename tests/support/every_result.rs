//! One real result of every kind the product makes, through the tool form (`call_tool`): each
//! status, a schema built from words, records, every document kind, log-probabilities and what
//! they decide, escalation, rules, left-out values, a long text read in parts, and every typed
//! error; and the field paths a result writes and a schema names, to compare them.
#![allow(dead_code)]

use std::collections::BTreeSet;

use base64::Engine as _;
use mock_llm::Reply;
use mock_llm::document::{Terms, planted_document};
use mock_llm::servers::Server;
use serde_json::{Map, Value, json};
use structure::ports::{KeyValue, MemoryKeyValue, Ports};
use structure::{ErrorKind, Scope, StructureError};

use super::contract_model::{self, ContractModel};
use super::{FixedClock, MapConfig, ScriptedTransport, chat_reply};

const OPENAI: &[(&str, &str)] = &[
    ("structure_model", "openai/gpt-4.1-mini"),
    ("openai_api_key", "sk-test"),
];

/// Every kind of result, each named by what it shows.
pub fn every_result() -> Vec<(&'static str, Value)> {
    [
        statuses(),
        documents(),
        confidences(),
        vec![asked_with_the_rest(), sent_to_review()],
        features(),
        request_errors(),
        model_errors(),
    ]
    .concat()
}

/// The tool form's JSON for `arguments` (an outcome, or `{"error": ...}`), the model answering
/// with `replies` in turn, the settings `config`.
fn tool(arguments: Value, config: &[(&str, &str)], replies: Vec<Reply>) -> Value {
    let transport = ScriptedTransport::new(replies);
    tool_over(arguments, &MapConfig::with(config), &transport)
}

fn tool_over(arguments: Value, config: &MapConfig, transport: &ScriptedTransport) -> Value {
    let key_value = MemoryKeyValue::default();
    let ports = Ports {
        transport,
        config,
        key_value: &key_value,
        clock: &FixedClock::default(),
    };
    structure::call_tool(&arguments, &Scope::default(), &ports)
        .unwrap_or_else(|error| error.to_json())
}

fn person() -> Value {
    json!({
        "type": "object",
        "properties": {
            "name": { "type": "string" },
            "age": { "type": "integer", "maximum": 150 },
            "phone": { "type": "string", "format": "phone" }
        },
        "required": ["name"],
        "additionalProperties": false
    })
}

fn base64(bytes: &[u8]) -> String {
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

/// Each status, a schema built from words, a records call with an incomplete record, the
/// repairs, retries and warnings of a plain call.
fn statuses() -> Vec<(&'static str, Value)> {
    let ask = |prompt: &str| json!({ "prompt": prompt, "schema": person(), "maxLoops": 2 });
    let transport = ScriptedTransport::new([Reply::text(
        "```json\n{\"answer\": {\"name\": \"Ada\", \"age\": 36}}\n```",
    )]);
    transport.fail_next_retryable("connection reset");
    let built = json!({ "schema": { "type": "object", "properties": [{ "key": "n", "value": { "type": "integer" } }], "required": ["n"] }, "confidence": 0.9, "clarifyingQuestions": [] });
    let orders = format!(
        "{} {}",
        "Order ORD-0001 was placed by Ada Lovelace for 3 units.",
        "Order ORD-0002 was placed by Alan Turing."
    );
    let records = json!({ "records": [
        { "order": "ORD-0001", "customer": "Ada Lovelace", "quantity": 3 },
        { "order": "ORD-0002", "customer": "Alan Turing" }
    ] });
    vec![
        (
            "ok, repaired, retried, with a warning",
            tool_over(ask("Ada, 36"), &MapConfig::local(), &transport),
        ),
        (
            "need-more-input",
            tool(ask("someone"), OPENAI, vec![Reply::need("the name")]),
        ),
        (
            "stale",
            tool(
                ask("Ada, 200"),
                OPENAI,
                vec![
                    Reply::answer(json!({ "name": 5 })),
                    Reply::answer(json!({ "name": 6 })),
                ],
            ),
        ),
        (
            "a schema built from words",
            tool(
                json!({ "prompt": "four", "schema": "a number n", "schemaMode": "text" }),
                OPENAI,
                vec![
                    Reply::text(&built.to_string()),
                    Reply::answer(json!({ "n": 4 })),
                ],
            ),
        ),
        (
            "records with an incomplete one",
            tool(
                json!({ "prompt": orders, "schema": mock_llm::orders::order_schema(), "records": true }),
                OPENAI,
                vec![Reply::answer(records).with_token_probability(0.9)],
            ),
        ),
    ]
}

/// A PDF with its pages, boxes and text; a Word document, a web page and an image.
fn documents() -> Vec<(&'static str, Value)> {
    let pdf = mock_llm::pdf::with_pages(&["Name: Ada Lovelace", "Age: 36"]);
    let document = |bytes: &[u8], media_type: &str| {
        json!({ "schema": person(), "returnText": true,
                "document": { "data": base64(bytes), "mediaType": media_type } })
    };
    let ada = || Reply::answer(json!({ "name": "Ada Lovelace", "age": 36 }));
    let docx = mock_llm::docx::with_paragraphs(&["Name: Ada Lovelace", "Age: 36"]);
    let html = "<html><body><p>Name: Ada Lovelace</p><p>Age: 36</p></body></html>";
    let png = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR\0\0\0\x01\0\0\0\x01\x08\x06\0\0\0\x1f\x15\xc4\x89\0\0\0\rIDATx\x9cc\xf8\xff\xff?\0\x05\xfe\x02\xfe\xa7\x35\x81\x84\0\0\0\0IEND\xaeB`\x82";
    let confident = chat_reply(&[
        ("{\"answer\": {\"name\": ", 0.99),
        ("\"Ada Lovelace\"", 0.95),
        (", \"age\": ", 0.99),
        ("36", 0.9),
        ("}}", 0.99),
    ]);
    let orders = mock_llm::pdf::with_pages(&[
        "Order ORD-0001 was placed by Ada Lovelace for 3 units.",
        "Order ORD-0002 was placed by Alan Turing.",
    ]);
    let records = json!({ "records": [
        { "order": "ORD-0001", "customer": "Ada Lovelace", "quantity": 3 },
        { "order": "ORD-0002", "customer": "Alan Turing" }
    ] });
    let records_call = json!({ "schema": mock_llm::orders::order_schema(), "records": true,
        "document": { "data": base64(&orders), "mediaType": "application/pdf" } });
    vec![
        (
            "records from a PDF, one incomplete",
            tool(records_call, OPENAI, vec![Reply::answer(records)]),
        ),
        spreadsheet_records(),
        (
            "a PDF, with confidences",
            tool(document(&pdf, "application/pdf"), OPENAI, vec![confident]),
        ),
        (
            "a Word document",
            tool(
                document(
                    &docx,
                    "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
                ),
                OPENAI,
                vec![ada()],
            ),
        ),
        (
            "a web page",
            tool(document(html.as_bytes(), "text/html"), OPENAI, vec![ada()]),
        ),
        (
            "an image",
            tool(document(png, "image/png"), OPENAI, vec![ada()]),
        ),
    ]
}

/// Records from a spreadsheet, one incomplete: each source names its cell.
fn spreadsheet_records() -> (&'static str, Value) {
    let rows: &[&[&str]] = &[
        &["order", "customer", "quantity"],
        &["ORD-0001", "Ada Lovelace", "3"],
        &["ORD-0002", "Alan Turing", ""],
    ];
    let xlsx = mock_llm::xlsx::workbook(&[("Orders", rows)]);
    let records = json!({ "records": [
        { "order": "ORD-0001", "customer": "Ada Lovelace", "quantity": 3 },
        { "order": "ORD-0002", "customer": "Alan Turing" }
    ] });
    let media = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet";
    let call = json!({ "schema": mock_llm::orders::order_schema(), "records": true,
        "document": { "data": base64(&xlsx), "mediaType": media } });
    (
        "records from a spreadsheet, one incomplete",
        tool(call, OPENAI, vec![Reply::answer(records)]),
    )
}

/// A contract of like clauses, one of which names the governing law (a second look's case).
fn contract() -> String {
    let mut text = String::from("Agreement between Acme Corp. and Bolt LLC.\n\n");
    for clause in 1..=30 {
        text.push_str(&format!(
            "Clause {clause}. The Recipient shall keep the Confidential Information secret.\n"
        ));
        if clause == 17 {
            text.push_str("This Agreement is governed by the laws of the State of Ohio.\n");
        }
    }
    text
}

/// What log-probabilities decide: a value dropped for its confidence, a second look, values
/// left out for the words they copy.
fn confidences() -> Vec<(&'static str, Value)> {
    let contract_schema = json!({
        "type": "object",
        "properties": {
            "party": { "type": "array", "items": { "type": "string" } },
            "jurisdiction": { "type": "string", "description": "The state whose law governs the agreement" }
        },
        "additionalProperties": false
    });
    let unsure = chat_reply(&[
        ("{\"answer\": {\"party\": [", 0.99),
        ("\"Acme Corp.\"", 0.95),
        ("], \"jurisdiction\": ", 0.99),
        ("\"Ohio\"", 0.5),
        ("}}", 0.99),
    ]);
    let look = chat_reply(&[
        ("{\"answer\": {\"jurisdiction\": ", 0.99),
        ("\"Ohio\"", 0.4),
        ("}}", 0.99),
    ]);
    let unsure_form = chat_reply(&[
        ("{\"answer\": {\"name\": ", 0.4),
        ("\"Tom Becker\"", 0.3),
        (", \"surname\": ", 0.4),
        ("\"Becker\"", 0.5),
        ("}}", 0.4),
    ]);
    let names = json!({ "type": "object", "required": ["name"], "additionalProperties": false,
        "properties": { "name": { "type": "string" }, "surname": { "type": "string" } } });
    let hesitant = |sure: f64| {
        chat_reply(&[
            ("{\"answer\": {\"name\": ", 0.99),
            ("\"Ada Lovelace\"", sure),
            ("}}", 0.99),
        ])
    };
    vec![
        (
            "a second look, and a value dropped for its confidence",
            tool(
                json!({ "prompt": contract(), "schema": contract_schema }),
                OPENAI,
                vec![unsure, look],
            ),
        ),
        (
            "a value the answer needs kept in doubt, the text stating it",
            tool(
                json!({ "prompt": "Ada Lovelace, mathematician.", "schema": names }),
                OPENAI,
                vec![hesitant(0.4), Reply::answer(json!({ "value_1": "stated" }))],
            ),
        ),
        (
            "values left out for the words they copy",
            tool(
                json!({ "prompt": "Tom Becker", "schema": names }),
                OPENAI,
                vec![unsure_form],
            ),
        ),
    ]
}

/// A value the answer needs that the text does not state: asked for, with what the text gave.
fn asked_with_the_rest() -> (&'static str, Value) {
    (
        "a value the answer needs the text does not state, the rest given as partial",
        tool(
            json!({ "prompt": "Ada Lovelace, mathematician.", "schema": {
                    "type": "object", "required": ["name"], "additionalProperties": false,
                    "properties": { "name": { "type": "string" }, "job": { "type": "string" } } } }),
            OPENAI,
            vec![
                chat_reply(&[
                    ("{\"answer\": {\"name\": ", 0.99),
                    ("\"Ada Byron\"", 0.3),
                    (", \"job\": ", 0.99),
                    ("\"mathematician\"", 0.99),
                    ("}}", 0.99),
                ]),
                Reply::answer(json!({ "value_1": "not stated" })),
            ],
        ),
    )
}

/// A result with a value the model was unsure of, sent to a person (`structure_review`).
fn sent_to_review() -> (&'static str, Value) {
    (
        "a value in doubt, the result sent to review",
        tool(
            json!({ "prompt": "Ada Lovelace, mathematician.", "settings": { "review": "doubtful" },
                "schema": { "type": "object", "required": ["name"], "additionalProperties": false,
                    "properties": { "name": { "type": "string" } } } }),
            OPENAI,
            vec![chat_reply(&[
                ("{\"answer\": {\"name\": ", 0.99),
                ("\"Ada Lovelace\"", 0.75),
                ("}}", 0.99),
            ])],
        ),
    )
}

/// Escalation, a rule across fields, an optional value left out, a long text read in parts.
fn features() -> Vec<(&'static str, Value)> {
    let escalating = [OPENAI, &[("structure_escalate", "openai/gpt-4.1")]].concat();
    let range = json!({
        "type": "object",
        "properties": { "from": { "type": "integer" }, "to": { "type": "integer" } },
        "required": ["from", "to"],
        "x-kubernetes-validations": [{ "rule": "self.from <= self.to", "message": "from must not be after to" }]
    });
    let twice = |first: Value, second: Value| vec![Reply::answer(first), Reply::answer(second)];
    vec![
        (
            "escalation",
            tool(
                json!({ "prompt": "Ada, 36", "schema": person(), "maxLoops": 1 }),
                &escalating,
                twice(json!({ "name": 1 }), json!({ "name": "Ada" })),
            ),
        ),
        (
            "a rule across fields",
            tool(
                json!({ "prompt": "from 3 to 5", "schema": range, "maxLoops": 2 }),
                OPENAI,
                twice(json!({ "from": 5, "to": 3 }), json!({ "from": 3, "to": 5 })),
            ),
        ),
        (
            "an optional value that stays invalid",
            tool(
                json!({ "prompt": "Ada, 900", "schema": person(), "maxLoops": 2 }),
                OPENAI,
                twice(
                    json!({ "name": "Ada", "age": 900 }),
                    json!({ "name": "Ada", "age": 901 }),
                ),
            ),
        ),
        ("a long text read in parts", long_text()),
    ]
}

fn long_text() -> Value {
    let text = planted_document(40_000, &Terms::default());
    let model = ContractModel::new(Server::default());
    let config = contract_model::config(&[("structure_context_tokens", "2048")]);
    contract_model::run(&text, &model, &config, &MemoryKeyValue::default())
        .unwrap()
        .to_json()
}

/// A key-value store that is down.
struct Down;

impl KeyValue for Down {
    fn get(&self, _: &str) -> Result<Option<Vec<u8>>, String> {
        Err("the store is down".into())
    }
    fn set(&self, _: &str, _: &[u8]) -> Result<(), String> {
        Err("the store is down".into())
    }
    fn delete(&self, _: &str) -> Result<(), String> {
        Err("the store is down".into())
    }
    fn keys(&self, _: &str) -> Result<Vec<String>, String> {
        Err("the store is down".into())
    }
    fn update(&self, _: &str, _: &mut dyn FnMut(Option<Vec<u8>>) -> Vec<u8>) -> Result<(), String> {
        Err("the store is down".into())
    }
}

/// The typed errors of a request or its setting: each made the way a caller meets it (one,
/// `unsupported`, guards a path no request reaches, and is made as the core makes it).
fn request_errors() -> Vec<(&'static str, Value)> {
    let down = || {
        let config = MapConfig::with(OPENAI);
        let ports = Ports {
            transport: &ScriptedTransport::default(),
            config: &config,
            key_value: &Down,
            clock: &FixedClock::default(),
        };
        let arguments = json!({ "prompt": "x", "schema": "lead", "schemaMode": "named" });
        structure::call_tool(&arguments, &Scope::default(), &ports)
            .unwrap_err()
            .to_json()
    };
    let unsupported = StructureError::new(
        ErrorKind::Unsupported,
        "a described schema is built by the schema builder, not resolved",
    );
    let named = |name: &str| json!({ "prompt": "x", "schema": name, "schemaMode": "named" });
    let external = json!({ "type": "object", "$ref": "https://example.com/s" });
    let pdf = json!({ "data": base64(b"%PDF-1.4 cut"), "mediaType": "application/pdf" });
    let on = |arguments: Value| tool(arguments, OPENAI, vec![]);
    vec![
        ("invalid-request", on(json!({ "prompt": 5, "schema": {} }))),
        ("schema-not-found", on(named("contakt"))),
        (
            "invalid-schema",
            on(json!({ "prompt": "x", "schema": external })),
        ),
        (
            "configuration",
            tool(
                named("contact"),
                &[("structure_model", "openai/gpt-4.1-mini")],
                vec![],
            ),
        ),
        (
            "budget-exhausted",
            on(json!({ "prompt": "Ada", "schema": person(), "settings": { "tokenBudget": 1 } })),
        ),
        ("storage", down()),
        ("unsupported", unsupported.to_json()),
        (
            "invalid-document",
            on(json!({ "schema": person(), "document": pdf })),
        ),
    ]
}

/// The typed errors of a model or its provider, each as the provider gives it.
fn model_errors() -> Vec<(&'static str, Value)> {
    let ask = || json!({ "prompt": "Ada, 36", "schema": person() });
    let local = [
        ("structure_model", "openai/m"),
        ("openai_base_url", "http://127.0.0.1:9/v1"),
    ];
    let transport = ScriptedTransport::default();
    transport.fail_next("connection refused");
    let filtered = json!({ "choices": [{ "index": 0, "finish_reason": "content_filter",
        "message": { "role": "assistant", "content": "" } }] });
    let answering = |reply: Reply| tool(ask(), OPENAI, vec![reply]);
    let once = [OPENAI, &[("structure_max_retries", "0")]].concat();
    let tool_mode = [OPENAI, &[("structure_delivery", "tool")]].concat();
    let plain = || Reply::text("Ada");
    vec![
        (
            "provider",
            tool(
                ask(),
                &once,
                vec![Reply::error(400, "invalid_request_error", "bad request")],
            ),
        ),
        (
            "transport",
            tool_over(ask(), &MapConfig::with(&local), &transport),
        ),
        (
            "refusal",
            answering(Reply::refusal("I cannot help with that")),
        ),
        ("blocked", answering(Reply::raw(200, &filtered.to_string()))),
        (
            "truncated",
            answering(Reply::truncated("{\"answer\": {\"na")),
        ),
        (
            "invalid-response",
            answering(Reply::raw(200, "{\"choices\": 5}")),
        ),
        (
            "structured-output-failed",
            tool(ask(), &tool_mode, vec![plain(), plain(), plain()]),
        ),
    ]
}

/// The name of every kind of typed error, as an exhaustive match lists them: a kind added to
/// [`ErrorKind`] is a compile error here until it is in [`typed_errors`] too.
pub fn every_error_kind() -> Vec<&'static str> {
    let name = |kind: &ErrorKind| match kind {
        ErrorKind::InvalidRequest { .. }
        | ErrorKind::SchemaNotFound { .. }
        | ErrorKind::InvalidSchema { .. }
        | ErrorKind::Configuration { .. }
        | ErrorKind::Provider { .. }
        | ErrorKind::Transport
        | ErrorKind::Refusal
        | ErrorKind::Blocked { .. }
        | ErrorKind::Truncated
        | ErrorKind::InvalidResponse
        | ErrorKind::StructuredOutputFailed
        | ErrorKind::BudgetExhausted
        | ErrorKind::Storage
        | ErrorKind::Unsupported
        | ErrorKind::InvalidDocument { .. } => kind.name(),
    };
    let reason = || "r".to_owned();
    [
        ErrorKind::InvalidRequest { field: reason() },
        ErrorKind::SchemaNotFound {
            name: reason(),
            suggestions: Vec::new(),
        },
        ErrorKind::InvalidSchema {
            pointer: Some("/properties/a".into()),
        },
        ErrorKind::Configuration { key: reason() },
        ErrorKind::Provider {
            status: 400,
            retryable: false,
            code: None,
        },
        ErrorKind::Transport,
        ErrorKind::Refusal,
        ErrorKind::Blocked { reason: reason() },
        ErrorKind::Truncated,
        ErrorKind::InvalidResponse,
        ErrorKind::StructuredOutputFailed,
        ErrorKind::BudgetExhausted,
        ErrorKind::Storage,
        ErrorKind::Unsupported,
        ErrorKind::InvalidDocument { reason: reason() },
    ]
    .iter()
    .map(name)
    .collect()
}

/// The subschemas of `schema` that a value at a key may take: its own `properties`, and those
/// of each `anyOf`/`oneOf` branch.
pub fn properties_of(schema: &Value) -> Map<String, Value> {
    let mut properties = schema
        .get("properties")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    for branches in ["anyOf", "oneOf"] {
        for branch in schema
            .get(branches)
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            for (name, property) in properties_of(branch) {
                properties.entry(name).or_insert(property);
            }
        }
    }
    properties
}

/// Every field path the schema names: `/trace/attempts/[]/model`, `/trace/chunkOf/*`.
pub fn paths_named(schema: &Value, at: &str, named: &mut BTreeSet<String>) {
    for (name, property) in properties_of(schema) {
        let path = format!("{at}/{name}");
        named.insert(path.clone());
        paths_named(&property, &path, named);
    }
    if let Some(items) = schema.get("items").filter(|items| items.is_object()) {
        paths_named(items, &format!("{at}/[]"), named);
    }
    if let Some(more) = schema
        .get("additionalProperties")
        .filter(|more| more.is_object())
    {
        named.insert(format!("{at}/*"));
        paths_named(more, &format!("{at}/*"), named);
    }
}

/// Every field path `value` writes, read beside `schema` (a map's keys as `*`; what the schema
/// leaves free, such as `data`, is not walked).
pub fn paths_written(value: &Value, schema: &Value, at: &str, written: &mut BTreeSet<String>) {
    match value {
        Value::Object(fields) => {
            let properties = properties_of(schema);
            let more = schema
                .get("additionalProperties")
                .filter(|more| more.is_object());
            for (name, field) in fields {
                let (path, subschema) = match (properties.get(name), more) {
                    (Some(property), _) => (format!("{at}/{name}"), property),
                    (None, Some(more)) => (format!("{at}/*"), more),
                    // A free-form value (`data`, a record): validation alone judges it.
                    (None, None) => continue,
                };
                written.insert(path.clone());
                paths_written(field, subschema, &path, written);
            }
        }
        Value::Array(items) => {
            if let Some(item_schema) = schema.get("items").filter(|items| items.is_object()) {
                for item in items {
                    paths_written(item, item_schema, &format!("{at}/[]"), written);
                }
            }
        }
        _ => {}
    }
}
