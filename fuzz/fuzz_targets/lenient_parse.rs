//! The lenient JSON reader on any text: no panic, and whatever it accepts is JSON.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    if let Ok(parsed) = structure::answer::lenient::parse(&text) {
        let again: serde_json::Value = serde_json::from_str(&parsed.value.to_string()).unwrap();
        assert_eq!(again, parsed.value);
    }
});
