//! Splitting a text into chunks: at paragraph breaks where they fit, else at sentence ends, else
//! at any character boundary; each chunk after the first starts up to `overlap` bytes before the
//! previous one ends, at a boundary, so a record cut by a chunk's end is whole in the next one.

/// A piece of the text: its bytes and where they start in the whole text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Chunk<'t> {
    pub text: &'t str,
    /// Byte offset of `text` in the whole text.
    pub start: usize,
}

/// `text` in chunks of at most `max_bytes` bytes (at least one character each), consecutive
/// chunks sharing up to `overlap` bytes (less than `max_bytes / 2`, so every chunk moves on).
/// Every byte of `text` is in a chunk; an empty text is one empty chunk.
pub fn chunks(text: &str, max_bytes: usize, overlap: usize) -> Vec<Chunk<'_>> {
    let max_bytes = max_bytes.max(1);
    let overlap = overlap.min(max_bytes.saturating_sub(1) / 2);
    let mut found = Vec::new();
    let mut start = 0;
    loop {
        let end = cut(text, start, max_bytes);
        found.push(Chunk {
            text: &text[start..end],
            start,
        });
        if end >= text.len() {
            return found;
        }
        // The next chunk begins at the first sentence start inside the overlap (so it does not
        // begin mid-sentence when one is near), and always after `start`.
        let earliest = ceil_char(text, end.saturating_sub(overlap).max(start + 1));
        start = boundary_at_or_after(text, earliest, end);
    }
}

/// Where a chunk starting at `start` ends: at the last paragraph break in the second half of
/// the `max_bytes` window, else its last sentence end there, else its last whitespace there, else
/// at the window's end (a character boundary).
fn cut(text: &str, start: usize, max_bytes: usize) -> usize {
    if text.len() - start <= max_bytes {
        return text.len();
    }
    let limit = floor_char(text, start + max_bytes);
    if limit <= start {
        // A single character longer than the limit still makes a chunk.
        return ceil_char(text, start + 1);
    }
    let window = &text[start..limit];
    let half = window.len() / 2;
    let paragraph = window.rfind("\n\n").map(|index| index + 2);
    let sentence = window
        .char_indices()
        .filter(|&(index, c)| ends_sentence(c) && followed_by_space(window, index + c.len_utf8()))
        .map(|(index, c)| index + c.len_utf8())
        .next_back();
    let space = window
        .char_indices()
        .filter(|&(_, c)| c.is_whitespace())
        .map(|(index, c)| index + c.len_utf8())
        .next_back();
    [paragraph, sentence, space]
        .into_iter()
        .flatten()
        .find(|&index| index > half)
        .map_or(limit, |index| start + index)
}

/// The sentence of `text` that holds byte `at`: from after the sentence end before it to
/// after the first sentence end at or after it (a line break ends a sentence too).
pub(in crate::content) fn sentence_of(text: &str, at: usize) -> std::ops::Range<usize> {
    let is_end =
        |index: usize, c: char| ends_sentence(c) && followed_by_space(text, index + c.len_utf8());
    let start = text[..at]
        .char_indices()
        .filter(|&(index, c)| is_end(index, c))
        .map(|(index, c)| index + c.len_utf8())
        .next_back()
        .unwrap_or(0);
    let end = text[at..]
        .char_indices()
        .find(|&(index, c)| is_end(at + index, c))
        .map_or(text.len(), |(index, c)| at + index + c.len_utf8());
    start..end
}

fn ends_sentence(c: char) -> bool {
    matches!(c, '.' | '!' | '?' | '\n' | '。' | '！' | '？')
}

fn followed_by_space(window: &str, index: usize) -> bool {
    window[index..]
        .chars()
        .next()
        .is_none_or(char::is_whitespace)
}

/// The first sentence start in `from..=until` (a non-space after a sentence end and spaces, or
/// after a line break), else the first word start there, else `from`.
fn boundary_at_or_after(text: &str, from: usize, until: usize) -> usize {
    let window = &text[from..];
    let starts = |sentence: bool| {
        window
            .char_indices()
            .take_while(|&(index, _)| from + index <= until)
            .find(|&(index, c)| {
                let head = &window[..index];
                let trimmed = head.trim_end();
                !c.is_whitespace()
                    && trimmed.len() < head.len()
                    && (!sentence
                        || trimmed.ends_with(ends_sentence)
                        || head[trimmed.len()..].contains('\n'))
            })
            .map(|(index, _)| from + index)
    };
    starts(true).or_else(|| starts(false)).unwrap_or(from)
}

fn floor_char(text: &str, mut index: usize) -> usize {
    index = index.min(text.len());
    while !text.is_char_boundary(index) {
        index -= 1;
    }
    index
}

fn ceil_char(text: &str, mut index: usize) -> usize {
    index = index.min(text.len());
    while !text.is_char_boundary(index) {
        index += 1;
    }
    index
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(text: &str, max_bytes: usize, overlap: usize) -> Vec<Chunk<'_>> {
        let found = chunks(text, max_bytes, overlap);
        assert_eq!(found[0].start, 0);
        assert_eq!(
            found.last().map(|c| c.start + c.text.len()),
            Some(text.len())
        );
        for pair in found.windows(2) {
            let (a, b) = (pair[0], pair[1]);
            assert!(b.start > a.start, "every chunk moves on");
            assert!(b.start <= a.start + a.text.len(), "no gap: {a:?} {b:?}");
        }
        for chunk in &found {
            assert_eq!(
                &text[chunk.start..chunk.start + chunk.text.len()],
                chunk.text
            );
            assert!(chunk.text.len() <= max_bytes.max(4), "{chunk:?}");
        }
        found
    }

    #[test]
    fn paragraphs_first_then_sentences_with_an_overlap_starting_at_a_sentence() {
        let text = "First party: Ada. Second party: Grace.\n\nThird party: Alan. Fourth: Edsger.";
        let found = check(text, 45, 20);
        assert_eq!(found[0].text, "First party: Ada. Second party: Grace.\n\n");
        assert!(
            found[1].text.starts_with("Third party") || found[1].text.starts_with("Second party")
        );
        assert!(check(text, 1000, 50).len() == 1);
    }

    #[test]
    fn long_sentences_multi_byte_text_and_tiny_limits_still_cover_everything() {
        let cjk = "甲方是张三。乙方是李四。丙方是王五。".repeat(20);
        check(&cjk, 40, 12);
        check("a".repeat(1000).as_str(), 64, 16);
        check("é".repeat(50).as_str(), 1, 0);
        assert_eq!(chunks("", 10, 2), vec![Chunk { text: "", start: 0 }]);
    }

    #[test]
    fn a_hundred_thousand_characters_make_few_chunks_with_bounded_overlap() {
        let text = "Record number 12345 is on this line. ".repeat(2700);
        let found = check(&text, 8000, 400);
        let covered: usize = found.iter().map(|chunk| chunk.text.len()).sum();
        assert!(
            covered < text.len() + found.len() * 400,
            "overlap stays bounded"
        );
        assert!(found.len() <= text.len() / (8000 - 400) + 1);
    }
}
