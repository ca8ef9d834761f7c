//! Where a chunk is in the whole text, in the units a result counts in: Unicode code points
//! and UTF-16 code units. Sources found in a chunk's text are moved by its offsets.

use super::split::Chunk;
use crate::outcome::Source;

/// Where a chunk starts and ends in the whole text, in code points and UTF-16 code units.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(in crate::content) struct Offsets {
    pub chars: usize,
    pub end_chars: usize,
    pub utf16: usize,
}

impl Offsets {
    /// The offsets of `parts` (in text order) in `text`, counted in one pass.
    pub fn of(text: &str, parts: &[Chunk<'_>]) -> Vec<Offsets> {
        let (mut byte, mut chars, mut utf16) = (0, 0, 0);
        let mut advance = |to: usize| {
            let passed = &text[byte.min(to)..to];
            chars += passed.chars().count();
            utf16 += passed.encode_utf16().count();
            byte = byte.max(to);
            (chars, utf16)
        };
        parts
            .iter()
            .map(|chunk| {
                let (start_chars, start_utf16) = advance(chunk.start);
                Offsets {
                    chars: start_chars,
                    end_chars: start_chars + chunk.text.chars().count(),
                    utf16: start_utf16,
                }
            })
            .collect()
    }

    /// `sources` found in the chunk, placed in the whole text.
    pub fn place(self, mut sources: Vec<Source>) -> Vec<Source> {
        for span in sources.iter_mut().filter_map(|source| source.span.as_mut()) {
            span.start += self.chars;
            span.end += self.chars;
            span.utf16_start += self.utf16;
            span.utf16_end += self.utf16;
        }
        sources
    }

    /// Where the chunk is, as an error message starts: `characters 16214–20480`.
    pub fn label(self) -> String {
        format!("characters {}–{}", self.chars, self.end_chars)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::content::chunked::split::chunks;
    use crate::content::grounding::provenance::span_at;
    use crate::outcome::Match;

    #[test]
    fn a_span_in_a_chunk_lands_on_the_same_text_of_the_whole() {
        let text = "Ünïcödé 😀 first part.\n\nZoë 😀 signs here. Then more text follows.";
        let parts = chunks(text, 30, 8);
        assert!(parts.len() > 1);
        let offsets = Offsets::of(text, &parts);
        let holder = parts
            .iter()
            .rposition(|part| part.text.contains("signs"))
            .unwrap();
        assert!(holder > 0, "{parts:?}");
        let part = parts[holder];
        let at = part.text.find("signs").unwrap();
        let span = span_at(part.text, at..at + "signs".len());
        let placed = offsets[holder].place(vec![Source {
            pointer: "/x".into(),
            span: Some(span),
            matched: Match::Exact,
            page: None,
            boxes: Vec::new(),
            cell: None,
            confidence: None,
        }]);
        let span = placed[0].span.as_ref().unwrap();
        let by_chars: String = text
            .chars()
            .skip(span.start)
            .take(span.end - span.start)
            .collect();
        assert_eq!(by_chars, "signs");
        let utf16: Vec<u16> = text.encode_utf16().collect();
        assert_eq!(
            String::from_utf16(&utf16[span.utf16_start..span.utf16_end]).unwrap(),
            "signs"
        );
    }
}
