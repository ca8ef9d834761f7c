//! The schema stage and every provider's schema transform on any JSON: checking, the subset
//! rewrite, the answer envelope (one object and records) and the way back — never a panic.
#![no_main]

use libfuzzer_sys::fuzz_target;
use serde_json::Value;
use structure::answer::format::{AnswerFormat, Shape};
use structure::limits::CallLimits;
use structure::schema::subset::{ANTHROPIC, FULL, GEMINI, GRAMMAR_WITHOUT_PATTERNS, OPENAI_STRICT, restore, to_subset};

fuzz_target!(|data: &[u8]| {
    let Ok(schema) = serde_json::from_slice::<Value>(data) else {
        return;
    };
    // Within the limits a caller could send (the limits themselves are checked first).
    if CallLimits::default().check_schema(&schema).is_err() {
        return;
    }
    if let Ok((checked, ..)) = structure::schema::check(schema.clone(), &CallLimits::default()) {
        let _ = structure::schema::root::classify(&checked);
    }
    for subset in [&OPENAI_STRICT, &ANTHROPIC, &GEMINI, &GRAMMAR_WITHOUT_PATTERNS, &FULL] {
        let _ = to_subset(&schema, subset, "", &mut Vec::new());
        let format = AnswerFormat::build(&schema, subset, Shape::One);
        let _ = restore(&format.source, schema.clone(), format.encoded, &mut Vec::new());
        let records = AnswerFormat::build(&schema, subset, Shape::Records);
        let list = serde_json::json!({ "records": [schema.clone()] });
        let _ = restore(&records.source, list, records.encoded, &mut Vec::new());
        let _ = AnswerFormat::plain(&schema, subset);
    }
});
