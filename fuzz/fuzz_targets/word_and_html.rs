//! The Word, spreadsheet and HTML readers on any bytes (the first byte picks the reader): text,
//! or a typed error saying why not — never a panic, never a hang, never more text than the bound.
#![no_main]

use libfuzzer_sys::fuzz_target;
use structure::document::{docx, html, xlsx};
use structure::error::ErrorKind;

const MAX_TEXT: usize = 1 << 20;

fuzz_target!(|data: &[u8]| {
    let Some((&reader, bytes)) = data.split_first() else {
        return;
    };
    let read = match reader % 3 {
        0 => docx::text(bytes, MAX_TEXT),
        1 => xlsx::text(bytes, MAX_TEXT),
        _ => html::text(bytes, MAX_TEXT),
    };
    match read {
        Ok(text) => assert!(text.len() <= MAX_TEXT),
        Err(error) => assert!(
            matches!(error.kind, ErrorKind::InvalidDocument { .. }),
            "{error:?}"
        ),
    }
});
