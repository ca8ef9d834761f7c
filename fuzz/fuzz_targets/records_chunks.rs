//! Records mode's chunking on any text and any sizes: every byte in a chunk, each chunk a
//! slice of the text at its offset, within the limit, each starting after the last one and
//! before it ends — never a panic, never a gap. And the tables it finds in the text: each row a
//! line of it, after its header, where it says it starts in every unit.
#![no_main]

use libfuzzer_sys::fuzz_target;
use structure::content::records::chunks;
use structure::content::records::rows::{cells, tables};

fuzz_target!(|data: &[u8]| {
    let [max, overlap, rest @ ..] = data else {
        return;
    };
    let text = String::from_utf8_lossy(rest);
    let max_bytes = usize::from(*max) * 4 + 1;
    let overlap = usize::from(*overlap);
    let parts = chunks(&text, max_bytes, overlap);
    assert!(!parts.is_empty());
    let mut covered = 0;
    let mut last_start = None;
    for chunk in &parts {
        assert_eq!(&text[chunk.start..chunk.start + chunk.text.len()], chunk.text);
        assert!(chunk.text.len() <= max_bytes || chunk.text.chars().count() == 1);
        assert!(chunk.start <= covered, "a gap before byte {}", chunk.start);
        assert!(last_start.is_none_or(|last| chunk.start > last));
        last_start = Some(chunk.start);
        covered = covered.max(chunk.start + chunk.text.len());
    }
    assert_eq!(covered, text.len());
    for table in tables(&text) {
        let after = table.header.map_or(0, |header| header.end);
        for row in &table.rows {
            assert!(row.bytes.start >= after && row.bytes.end <= text.len());
            let before = &text[..row.bytes.start];
            assert!(before.is_empty() || before.ends_with('\n'));
            assert_eq!(row.chars, before.chars().count());
            assert_eq!(row.utf16, before.encode_utf16().count());
            let line = &text[row.bytes.clone()];
            assert!(!line.contains('\n'));
            for cell in cells(line, table.delimiter) {
                assert!(cell.start <= cell.end && cell.end <= line.len());
            }
        }
    }
});
