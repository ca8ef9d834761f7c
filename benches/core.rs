//! Benchmarks of the core, natively: each stage of a call and a whole call with a canned
//! transport (no network). `cargo bench --bench core`; see BENCHMARKS.md.

use serde_json::{Value, json};
use structure::answer::format::{AnswerFormat, Shape};
use structure::answer::lenient;
use structure::content::reason::reason_message;
use structure::ports::{
    Config, HttpRequest, HttpResponse, MemoryKeyValue, Ports, SystemClock, Transport,
    TransportError,
};
use structure::provider::{Conversation, SystemPrompt, Turn, connect};
use structure::schema::registry::Registry;
use structure::schema::subset::{ANTHROPIC, GEMINI, OPENAI_STRICT, Subset, to_subset};
use structure::schema::validator::CompiledSchema;
use structure::settings::{Cascade, Settings};
use structure::{SchemaInput, Scope, StructureRequest};

fn main() {
    divan::main();
}

const SCHEMAS: [&str; 3] = ["user-action-record", "contact", "support-ticket"];

fn fixtures() -> Value {
    serde_json::from_str(include_str!("fixtures.json")).expect("benches/fixtures.json is JSON")
}

fn bundled(name: &str) -> Value {
    let key_value = MemoryKeyValue::default();
    let scope = Scope::default();
    Value::clone(
        &Registry::new(&key_value, &scope)
            .find(name)
            .expect("a bundled schema")
            .schema,
    )
}

fn instance(name: &str, which: &str) -> Value {
    fixtures()[name][which].clone()
}

/// `schema` with a fresh `$comment`, so the instance's cache of compiled schemas cannot answer.
fn uncached(schema: &Value) -> Value {
    static COUNTER: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let mut schema = schema.clone();
    let n = COUNTER.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    schema["$comment"] = json!(format!("benchmark {n}"));
    schema
}

/// Compiling a schema met for the first time, with the meta-schema check (inline schemas).
#[divan::bench(args = SCHEMAS)]
fn schema_compile(bencher: divan::Bencher, name: &str) {
    let schema = bundled(name);
    bencher
        .with_inputs(|| uncached(&schema))
        .bench_values(|schema| CompiledSchema::compile(&schema).unwrap());
}

/// Compiling a stored schema met for the first time (registry, builder cache).
#[divan::bench(args = SCHEMAS)]
fn schema_compile_checked(bencher: divan::Bencher, name: &str) {
    let schema = bundled(name);
    bencher
        .with_inputs(|| uncached(&schema))
        .bench_values(|schema| CompiledSchema::compile_checked(&schema).unwrap());
}

/// A schema compiled before, from the instance's cache.
#[divan::bench(args = SCHEMAS)]
fn schema_compile_cached(bencher: divan::Bencher, name: &str) {
    let schema = bundled(name);
    CompiledSchema::compile(&schema).unwrap();
    bencher.bench_local(|| CompiledSchema::compile(divan::black_box(&schema)).unwrap());
}

#[divan::bench(args = SCHEMAS)]
fn validate_valid(bencher: divan::Bencher, name: &str) {
    let compiled = CompiledSchema::compile(&bundled(name)).unwrap();
    let valid = instance(name, "valid");
    bencher.bench(|| assert!(compiled.is_valid(divan::black_box(&valid))));
}

#[divan::bench(args = SCHEMAS)]
fn validate_invalid_with_violations(bencher: divan::Bencher, name: &str) {
    let compiled = CompiledSchema::compile(&bundled(name)).unwrap();
    let invalid = instance(name, "invalid");
    bencher.bench(|| compiled.violations(divan::black_box(&invalid)));
}

#[divan::bench(args = SCHEMAS)]
fn reason_formatting(bencher: divan::Bencher, name: &str) {
    let violations = CompiledSchema::compile(&bundled(name))
        .unwrap()
        .violations(&instance(name, "invalid"));
    bencher.bench(|| reason_message(divan::black_box(&violations), true));
}

const SUBSETS: [(&str, &Subset); 3] = [
    ("openai", &OPENAI_STRICT),
    ("anthropic", &ANTHROPIC),
    ("gemini", &GEMINI),
];

#[divan::bench(args = ["openai", "anthropic", "gemini"])]
fn provider_transform(bencher: divan::Bencher, provider: &str) {
    let schema = bundled("support-ticket");
    let (_, subset) = SUBSETS.iter().find(|(name, _)| *name == provider).unwrap();
    bencher.bench(|| to_subset(divan::black_box(&schema), subset, "", &mut Vec::new()));
}

/// The answer envelope for a schema met for the first time.
#[divan::bench]
fn answer_format(bencher: divan::Bencher) {
    let schema = bundled("support-ticket");
    bencher
        .with_inputs(|| uncached(&schema))
        .bench_values(|schema| AnswerFormat::build(&schema, &OPENAI_STRICT, Shape::One));
}

/// The envelope of a schema used before, from the instance's cache.
#[divan::bench]
fn answer_format_cached(bencher: divan::Bencher) {
    let schema = bundled("support-ticket");
    AnswerFormat::build(&schema, &OPENAI_STRICT, Shape::One);
    bencher
        .bench_local(|| AnswerFormat::build(divan::black_box(&schema), &OPENAI_STRICT, Shape::One));
}

#[divan::bench]
fn lenient_parse_clean(bencher: divan::Bencher) {
    let text = json!({ "answer": instance("support-ticket", "valid") }).to_string();
    bencher.bench(|| lenient::parse(divan::black_box(&text)).unwrap());
}

#[divan::bench]
fn lenient_parse_repaired(bencher: divan::Bencher) {
    let body =
        serde_json::to_string_pretty(&json!({ "answer": instance("support-ticket", "valid") }))
            .unwrap();
    let text = format!(
        "Here is the object:\n```json\n{},\n```\nHope this helps!",
        body.trim_end_matches('}').trim_end().to_owned() + ",}"
    );
    bencher.bench(|| lenient::parse(divan::black_box(&text)).unwrap());
}

/// The config of the benchmarks: OpenAI's wire format at a local address.
struct Local;
impl Config for Local {
    fn get(&self, key: &str) -> Result<Option<String>, String> {
        Ok(match key {
            "structure_model" => Some("openai/gpt-4.1-mini".to_owned()),
            "openai_api_key" => Some("sk-bench".to_owned()),
            _ => None,
        })
    }
}

#[divan::bench]
fn request_building(bencher: divan::Bencher) {
    let settings = Settings::load(&Cascade::new(&Local)).unwrap();
    let provider = connect(&settings, "openai/gpt-4.1-mini").unwrap();
    let schema = bundled("user-action-record");
    let format = provider.answer_format(&schema, Shape::One);
    let conversation = Conversation {
        system: SystemPrompt {
            stable: "rules and schema".repeat(40),
            volatile: "The current date and time is 2026-11-30T14:30:00Z (UTC).".to_owned(),
            cacheable: false,
        },
        turns: vec![Turn::User(
            "Mike broke the build today at 2:30 pm".to_owned(),
        )],
        attachment: None,
    };
    bencher.bench_local(|| provider.request(divan::black_box(&conversation), &format));
}

/// Answers like OpenAI Chat Completions, with the scripted answers in turn.
struct Canned {
    answers: Vec<String>,
    next: std::cell::Cell<usize>,
}

impl Canned {
    fn new(answers: &[Value]) -> Self {
        let answers = answers
            .iter()
            .map(|answer| {
                json!({
                    "id": "chatcmpl-bench", "object": "chat.completion", "created": 0, "model": "gpt-4.1-mini",
                    "choices": [{ "index": 0, "finish_reason": "stop",
                        "message": { "role": "assistant", "content": json!({ "answer": answer }).to_string(), "refusal": null } }],
                    "usage": { "prompt_tokens": 400, "completion_tokens": 40, "total_tokens": 440 }
                })
                .to_string()
            })
            .collect();
        Canned {
            answers,
            next: std::cell::Cell::new(0),
        }
    }
}

impl Transport for Canned {
    fn send(&self, _request: &HttpRequest) -> Result<HttpResponse, TransportError> {
        let index = self.next.get();
        self.next.set((index + 1) % self.answers.len());
        Ok(HttpResponse {
            status: 200,
            headers: vec![],
            body: self.answers[index].clone().into_bytes(),
        })
    }
}

fn whole_call(bencher: divan::Bencher, answers: &[Value]) {
    let transport = Canned::new(answers);
    let key_value = MemoryKeyValue::default();
    let ports = Ports {
        transport: &transport,
        config: &Local,
        key_value: &key_value,
        clock: &SystemClock,
    };
    let request = StructureRequest::new(
        "Mike (mike_42) broke the build on 30 November 2026 at 14:30 UTC; tags ci and build.",
        SchemaInput::Named("user-action-record".to_owned()),
        None,
    )
    .unwrap();
    let scope = Scope::default();
    bencher
        .bench_local(|| structure::structure(divan::black_box(&request), &scope, &ports).unwrap());
}

/// A whole `structure` call whose first answer is valid: one LLM round trip, minus the network.
#[divan::bench]
fn call_valid_first_answer(bencher: divan::Bencher) {
    whole_call(bencher, &[instance("user-action-record", "valid")]);
}

/// A whole call with one violation fed back: two round trips.
#[divan::bench]
fn call_one_violation(bencher: divan::Bencher) {
    whole_call(
        bencher,
        &[
            instance("user-action-record", "invalid"),
            instance("user-action-record", "valid"),
        ],
    );
}
