//! Provenance and the grounding policy in the core: every `ok` result says where each value comes
//! from, with offsets that slice the prompt right (also on the whole eval dev set), and bad input
//! around grounding gets a typed outcome, never a panic or a wrong offset.

mod support;

use mock_llm::Reply;
use serde_json::{Value, json};
use structure::outcome::{Category, Match, Reason, Source};
use structure::{Answer, ErrorKind, Outcome, SchemaInput, StructureRequest};
use support::{MapConfig, ScriptedTransport, ports, root};

fn call(prompt: &str, schema: Value, replies: Vec<Reply>, settings: &[(&str, &str)]) -> Outcome {
    let mut pairs = vec![
        ("structure_model", "openai/test-model"),
        ("openai_base_url", "http://127.0.0.1:9/v1"),
    ];
    pairs.extend_from_slice(settings);
    let config = MapConfig::with(&pairs);
    let transport = ScriptedTransport::new(replies);
    let request = StructureRequest::new(prompt, SchemaInput::Inline(schema), None).unwrap();
    structure::structure(
        &request,
        &structure::Scope::default(),
        &ports(&transport, &config),
    )
    .unwrap()
}

/// The prompt's code points `start..end`, and its UTF-16 units `utf16_start..utf16_end`.
fn slices(prompt: &str, source: &Source) -> (String, String) {
    let span = source.span.as_ref().unwrap();
    let by_chars: String = prompt
        .chars()
        .skip(span.start)
        .take(span.end - span.start)
        .collect();
    let units: Vec<u16> = prompt.encode_utf16().collect();
    let by_units = String::from_utf16(&units[span.utf16_start..span.utf16_end]).unwrap();
    (by_chars, by_units)
}

fn assert_offsets_right(prompt: &str, sources: &[Source]) {
    for source in sources.iter().filter(|source| source.span.is_some()) {
        let (by_chars, by_units) = slices(prompt, source);
        let text = &source.span.as_ref().unwrap().text;
        assert_eq!(&by_chars, text, "{} in {prompt:?}", source.pointer);
        assert_eq!(&by_units, text, "{} in {prompt:?}", source.pointer);
    }
}

#[test]
fn every_exact_source_on_the_dev_set_is_the_prompts_own_slice() {
    let cases = std::fs::read_to_string(root().join("eval/cases/dev.jsonl")).unwrap();
    let mut exact = 0;
    for line in cases.lines().filter(|line| !line.trim().is_empty()) {
        let case: Value = serde_json::from_str(line).unwrap();
        let Some(expected) = case.get("expected").filter(|value| value.is_object()) else {
            continue;
        };
        let prompt = case["prompt"].as_str().unwrap();
        let name = case["schema"].as_str().unwrap();
        let path = root().join(format!("eval/schemas/{name}.json"));
        let schema: Value = match std::fs::read_to_string(&path) {
            Ok(text) => serde_json::from_str(&text).unwrap(),
            Err(_) => support::bundled(name),
        };
        let sources = structure::content::grounding::provenance::sources(expected, &schema, prompt);
        assert!(!sources.is_empty(), "{}", case["id"]);
        for source in &sources {
            if source.matched == Match::Exact {
                exact += 1;
                let (by_chars, _) = slices(prompt, source);
                let value = expected.pointer(&source.pointer).unwrap();
                let written = value
                    .as_str()
                    .map_or_else(|| value.to_string(), str::to_owned);
                assert_eq!(by_chars, written, "{} {}", case["id"], source.pointer);
            }
        }
        assert_offsets_right(prompt, &sources);
    }
    assert!(exact > 50, "only {exact} exact sources over the dev set");
}

fn person() -> Value {
    json!({"type": "object", "properties": {
        "name": {"type": "string"},
        "note": {"type": "string"},
    }, "required": ["name"]})
}

#[test]
fn a_text_without_spaces_gets_right_offsets() {
    let prompt = "顧客名は山田太郎です。東京都在住。電話は０３です。";
    let outcome = call(
        prompt,
        person(),
        vec![Reply::answer(
            json!({"name": "山田太郎", "note": "東京都在住"}),
        )],
        &[],
    );
    assert!(matches!(outcome.answer, Answer::Ok(_)));
    let spans: Vec<(usize, usize)> = outcome
        .sources
        .iter()
        .map(|source| {
            let span = source.span.as_ref().unwrap();
            (span.start, span.end)
        })
        .collect();
    assert_eq!(spans, [(4, 8), (11, 16)]);
    assert_offsets_right(prompt, &outcome.sources);
}

#[test]
fn in_require_mode_a_value_found_only_inside_longer_words_is_fed_back() {
    let prompt = "The Annual report of 1975 was filed in İstanbul.";
    let replies = || {
        vec![
            Reply::answer(json!({"name": "Ann", "note": "7"})),
            Reply::answer(json!({"name": "Ann", "note": "stanbul"})),
        ]
    };
    let outcome = call(
        prompt,
        person(),
        replies(),
        &[
            ("structure_grounding", "require"),
            ("structure_max_loops", "2"),
        ],
    );
    assert!(
        matches!(outcome.answer, Answer::Stale(_)),
        "{:?}",
        outcome.answer
    );
    let fed_back: Vec<&str> = outcome
        .trace
        .reasons
        .iter()
        .map(|reason| reason.pointer.as_str())
        .collect();
    assert_eq!(fed_back[..2], ["/name", "/note"], "fed back, then stale");
    // Where words are written without spaces, a name inside a longer run is the text's.
    let outcome = call(
        "山田太郎は東京都在住。",
        person(),
        vec![Reply::answer(json!({"name": "山田", "note": "東京"}))],
        &[("structure_grounding", "require")],
    );
    assert!(
        matches!(outcome.answer, Answer::Ok(_)),
        "{:?}",
        outcome.answer
    );
    assert_offsets_right("山田太郎は東京都在住。", &outcome.sources);
}

#[test]
fn a_value_of_100_kb_is_located_or_fed_back_cut_short() {
    let long = "x".repeat(100 * 1024);
    let prompt = format!("Name: Ada. Note: {long}");
    // A window that holds it (an unknown server's default, 8,192 tokens, does not).
    let outcome = call(
        &prompt,
        person(),
        vec![Reply::answer(json!({"name": "Ada", "note": long}))],
        &[("structure_context_tokens", "200000")],
    );
    let note = &outcome.sources[1];
    assert_eq!(
        (note.matched, note.span.as_ref().unwrap().start),
        (Match::Exact, 17)
    );
    // The same value not in the text, in require mode: fed back, shown cut to a few words.
    let outcome = call(
        "Name: Ada.",
        person(),
        vec![
            Reply::answer(json!({"name": "Ada", "note": "y".repeat(100 * 1024)})),
            Reply::answer(json!({"name": "Ada"})),
        ],
        &[
            ("structure_grounding", "require"),
            ("structure_context_tokens", "200000"),
        ],
    );
    assert!(matches!(outcome.answer, Answer::Ok(_)));
    assert_eq!(outcome.iterations, 2);
    assert!(
        outcome.trace.feedback[0].len() < 1000,
        "{}",
        outcome.trace.feedback[0].len()
    );
    assert!(outcome.trace.feedback[0].contains("/note: \"yyy"));
    assert_eq!(
        outcome.trace.reasons,
        [Reason {
            iteration: 1,
            pointer: "/note".to_owned(),
            category: Category::Ungrounded,
        }]
    );
}

#[test]
fn a_schema_whose_every_field_is_derived_is_never_held_to_the_text() {
    let schema = json!({"type": "object", "properties": {
        "summary": {"type": "string", "x-structure-derived": true},
        "topic": {"type": "string", "x-structure-derived": true},
    }, "required": ["summary", "topic"], "x-structure-derived": true});
    let outcome = call(
        "The build broke twice this week.",
        schema,
        vec![Reply::answer(
            json!({"summary": "Unstable builds", "topic": "CI"}),
        )],
        &[
            ("structure_grounding", "require"),
            ("structure_extractive", "true"),
        ],
    );
    assert!(
        matches!(outcome.answer, Answer::Ok(_)),
        "{:?}",
        outcome.answer
    );
    assert_eq!(outcome.iterations, 1);
    assert!(
        outcome
            .sources
            .iter()
            .all(|source| source.matched == Match::Derived)
    );
    assert!(
        !outcome
            .trace
            .schema_transforms
            .iter()
            .any(|transform| transform.contains("narrowed")),
        "derived fields are not narrowed: {:?}",
        outcome.trace.schema_transforms
    );
}

#[test]
fn a_prompt_with_no_text_is_an_invalid_request() {
    for prompt in ["", " \n\t "] {
        let error = StructureRequest::new(prompt, SchemaInput::Inline(person()), None).unwrap_err();
        assert_eq!(
            error.kind,
            ErrorKind::InvalidRequest {
                field: "prompt".to_owned()
            }
        );
    }
}

#[test]
fn grounding_off_reports_no_sources_and_bad_settings_are_refused() {
    let outcome = call(
        "Name: Ada.",
        person(),
        vec![Reply::answer(json!({"name": "Ada"}))],
        &[("structure_grounding", "off")],
    );
    assert!(matches!(outcome.answer, Answer::Ok(_)) && outcome.sources.is_empty());
    assert_eq!(outcome.to_json()["sources"], json!([]));
    for (key, value) in [
        ("structure_grounding", "strict"),
        ("structure_extractive", "maybe"),
    ] {
        let config = MapConfig::with(&[("structure_model", "openai/m"), (key, value)]);
        let error = structure::settings::Settings::load(&config).unwrap_err();
        assert_eq!(
            error.kind,
            ErrorKind::Configuration {
                key: key.to_owned()
            }
        );
        assert!(error.message.contains(value), "{}", error.message);
    }
}

#[test]
fn extractive_auto_is_on_for_local_servers_only() {
    use structure::settings::Extractive;
    for profile in ["ollama", "llamacpp", "vllm"] {
        assert!(Extractive::Auto.for_profile(profile), "{profile}");
    }
    for profile in [
        "openai",
        "openai-compatible",
        "anthropic",
        "gemini",
        "openai-responses",
    ] {
        assert!(!Extractive::Auto.for_profile(profile), "{profile}");
    }
    assert!(Extractive::On.for_profile("openai") && !Extractive::Off.for_profile("ollama"));
    // The default on a llama.cpp server: a required number the text lacks is asked for.
    let config = MapConfig::with(&[("structure_model", "llamacpp/smollm2")]);
    let transport = ScriptedTransport::new([]);
    let schema =
        json!({"type": "object", "properties": {"age": {"type": "integer"}}, "required": ["age"]});
    let request =
        StructureRequest::new("Ada, a nurse.", SchemaInput::Inline(schema), None).unwrap();
    let outcome = structure::structure(
        &request,
        &structure::Scope::default(),
        &ports(&transport, &config),
    )
    .unwrap();
    assert_eq!(
        outcome.answer,
        Answer::NeedMoreInput("the text gives no value for /age".into())
    );
    assert_eq!(transport.count(), 0);
}
