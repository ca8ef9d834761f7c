//! Validation and the reason message on any [schema, instance] pair: violations are empty
//! exactly when the instance is valid, and describing them never panics.
#![no_main]

use libfuzzer_sys::fuzz_target;
use serde_json::Value;
use structure::content::reason::reason_message;
use structure::limits::CallLimits;
use structure::schema::validator::CompiledSchema;

fuzz_target!(|data: &[u8]| {
    let Ok((schema, instance)) = serde_json::from_slice::<(Value, Value)>(data) else {
        return;
    };
    if CallLimits::default().check_schema(&schema).is_err() {
        return;
    }
    let Ok(compiled) = CompiledSchema::compile(&schema) else {
        return;
    };
    let violations = compiled.violations(&instance);
    assert_eq!(violations.is_empty(), compiled.is_valid(&instance));
    for need in [false, true] {
        let _ = reason_message(&violations, need);
    }
});
