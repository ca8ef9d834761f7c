//! The PDF reader on any bytes: text by page, or a typed error saying why not — never a panic,
//! never a hang (`fuzz/run` gives each input ten seconds).
#![no_main]

use libfuzzer_sys::fuzz_target;
use structure::document::pdf::pages;
use structure::error::ErrorKind;

fuzz_target!(|data: &[u8]| {
    match pages(data, 50) {
        Ok(pages) => assert!(!pages.is_empty() && pages.len() <= 50),
        Err(error) => assert!(
            matches!(error.kind, ErrorKind::InvalidDocument { .. }),
            "{error:?}"
        ),
    }
});
