//! The passages of a text that speak of a field: its sentences ranked by the words they share
//! with the field's name, title, description and named values, each word weighed by how rare
//! it is in the text (inverse document frequency over the sentences, as BM25 and every search
//! engine weigh them), so `agreement`, which every sentence of a contract says, counts for
//! nothing and `governs`, which one says, for much.
//!
//! Words are compared by their first [`STEM`] letters, a stemmer crude enough to need no
//! language: `governed`, `governs` and `governing` are one word, as are `terminate` and
//! `termination`.
//!
//! ```
//! use structure::content::passages::Passages;
//!
//! let text = "The parties met in Paris. This agreement is governed by the laws of Ohio. \
//!             It is signed in two copies.";
//! let passages = Passages::of(text);
//! let found = passages.about("jurisdiction: the state whose law governs the agreement", 1);
//! assert_eq!(&text[found[0].clone()], "This agreement is governed by the laws of Ohio.");
//! ```

use std::collections::{BTreeMap, BTreeSet};
use std::ops::Range;

/// The letters of a word compared.
const STEM: usize = 5;
/// The most bytes of one passage: a longer sentence (a table, a text without stops) is cut at
/// whitespace into pieces this long.
pub const MAX_PASSAGE_BYTES: usize = 600;
/// The most sentences a text is read as; the rest of a text longer than that is not searched.
const MAX_SENTENCES: usize = 20_000;
/// The share of a text's width under which a line is short (3/5).
const SHORT_LINE: (usize, usize) = (3, 5);
/// Words that say nothing of what a sentence is about.
const STOP_WORDS: &[&str] = &[
    "a", "an", "and", "are", "as", "at", "be", "by", "each", "eg", "for", "from", "has", "have",
    "how", "if", "in", "is", "it", "its", "of", "on", "or", "that", "the", "their", "this", "to",
    "was", "were", "what", "when", "where", "which", "who", "whose", "with",
];

/// A text read into sentences and their words once, to be asked about any number of fields.
pub struct Passages {
    /// Each sentence's byte range in the text.
    sentences: Vec<Range<usize>>,
    /// Each sentence's distinct stems.
    words: Vec<BTreeSet<String>>,
    /// How many sentences say each stem.
    frequency: BTreeMap<String, usize>,
}

impl Passages {
    /// `text` read into sentences and words.
    pub fn of(text: &str) -> Self {
        let sentences = sentences(text);
        let words: Vec<BTreeSet<String>> = (sentences.iter())
            .map(|range| stems(&text[range.clone()]))
            .collect();
        let mut frequency: BTreeMap<String, usize> = BTreeMap::new();
        for word in words.iter().flatten() {
            *frequency.entry(word.clone()).or_default() += 1;
        }
        Self {
            sentences,
            words,
            frequency,
        }
    }

    /// The byte range of the sentences around `at` (a byte range of the text): those it runs
    /// over, and one either side; none past the sentences read.
    pub fn around(&self, at: Range<usize>) -> Option<Range<usize>> {
        let first = (self.sentences.iter()).position(|sentence| sentence.end > at.start)?;
        let last = (self.sentences.iter())
            .rposition(|sentence| sentence.start < at.end)
            .unwrap_or(first)
            .max(first);
        let from = self.sentences[first.saturating_sub(1)].start;
        let to = self.sentences[(last + 1).min(self.sentences.len() - 1)].end;
        Some(from..to)
    }

    /// The byte ranges of the (at most) `count` sentences that share the most of `query`'s
    /// words, weighed by rarity, in the order the text has them; none when no sentence shares
    /// a word with it.
    pub fn about(&self, query: &str, count: usize) -> Vec<Range<usize>> {
        let asked = stems(query);
        let total = self.sentences.len() as f64;
        let mut scored: Vec<(f64, usize)> = (self.words.iter().enumerate())
            .map(|(at, said)| {
                let score = (asked.iter())
                    .filter(|word| said.contains(*word))
                    .map(|word| (total / self.frequency[word] as f64).ln())
                    .sum::<f64>();
                (score, at)
            })
            .filter(|(score, _)| *score > 0.0)
            .collect();
        scored.sort_by(|(a, at_a), (b, at_b)| b.total_cmp(a).then(at_a.cmp(at_b)));
        let mut chosen: Vec<usize> = scored.into_iter().take(count).map(|(_, at)| at).collect();
        chosen.sort_unstable();
        (chosen.into_iter())
            .map(|at| self.sentences[at].clone())
            .collect()
    }
}

/// The sentences of `text` (trimmed byte ranges): ended by `.`, `;`, `!` or `?` before
/// whitespace, by a blank line, or by the break of a short line. A line break alone does not end
/// one where the line ran to the text's width (a PDF's text wraps its lines mid-sentence); a
/// line that stops well short of it (under [`SHORT_LINE`] of the width most lines reach) is one
/// of its own — an address, a heading, a salutation — as PDF readers tell paragraphs. A colon
/// does not end one (`Governing law: New York` is one). Each at most [`MAX_PASSAGE_BYTES`] long.
fn sentences(text: &str) -> Vec<Range<usize>> {
    let short = short_line_chars(text);
    let mut sentences = Vec::new();
    let mut start = 0;
    let mut line_start = 0;
    let mut previous = '\0';
    for (at, character) in text.char_indices() {
        if sentences.len() >= MAX_SENTENCES {
            return sentences;
        }
        let short_line = previous == '\n' && text[line_start..at].trim().chars().count() < short;
        let ends = (matches!(previous, '.' | ';' | '!' | '?') && character.is_whitespace())
            || (previous == '\n' && character == '\n')
            || short_line;
        if ends {
            push_cut(text, start..at, &mut sentences);
            start = at;
        }
        if previous == '\n' {
            line_start = at;
        }
        previous = character;
    }
    push_cut(text, start..text.len(), &mut sentences);
    sentences
}

/// The characters under which a line of `text` is short: [`SHORT_LINE`] of the width most of
/// its lines reach (the ninetieth percentile of their lengths); none for a text of one line.
fn short_line_chars(text: &str) -> usize {
    let mut widths: Vec<usize> = (text.lines())
        .map(|line| line.trim().chars().count())
        .filter(|width| *width > 0)
        .collect();
    if widths.len() < 2 {
        return 0;
    }
    widths.sort_unstable();
    let width = widths[(widths.len() * 9 / 10).min(widths.len() - 1)];
    width * SHORT_LINE.0 / SHORT_LINE.1
}

/// Pushes `range` of `text`, trimmed, in pieces of at most [`MAX_PASSAGE_BYTES`] cut at
/// whitespace (or at a character's edge, where a piece has none).
fn push_cut(text: &str, range: Range<usize>, into: &mut Vec<Range<usize>>) {
    let mut rest = trimmed(text, range);
    while rest.end - rest.start > MAX_PASSAGE_BYTES {
        let window = &text[rest.start
            ..rest.start + floor_boundary(text, rest.start + MAX_PASSAGE_BYTES) - rest.start];
        let cut = window
            .rfind(char::is_whitespace)
            .filter(|&cut| cut > 0)
            .unwrap_or(window.len());
        into.push(trimmed(text, rest.start..rest.start + cut));
        rest = trimmed(text, rest.start + cut..rest.end);
    }
    if rest.start < rest.end {
        into.push(rest);
    }
}

/// The byte offset of code point `chars` of `text` (its length past the end): where a span,
/// counted in code points, starts in the text's bytes.
pub fn byte_at(text: &str, chars: usize) -> usize {
    text.char_indices()
        .nth(chars)
        .map_or(text.len(), |(at, _)| at)
}

/// The largest character boundary of `text` at or before `at`.
fn floor_boundary(text: &str, at: usize) -> usize {
    (0..=at.min(text.len()))
        .rev()
        .find(|&at| text.is_char_boundary(at))
        .unwrap_or(0)
}

/// `range` of `text` without the whitespace at its ends.
fn trimmed(text: &str, range: Range<usize>) -> Range<usize> {
    let slice = &text[range.clone()];
    let start = range.start + (slice.len() - slice.trim_start().len());
    let end = range.end - (slice.len() - slice.trim_end().len());
    start..end.max(start)
}

/// The distinct words of `text` that say something, each cut to its first [`STEM`] letters,
/// lower-cased; a field's name is split at `_`, `-` and where its case turns (`dueDate`).
fn stems(text: &str) -> BTreeSet<String> {
    let mut words = BTreeSet::new();
    let mut word = String::new();
    let mut previous_lower = false;
    for character in text.chars().chain([' ']) {
        let turns = character.is_uppercase() && previous_lower;
        if !character.is_alphanumeric() || turns {
            add_word(&mut words, &word);
            word.clear();
        }
        if character.is_alphanumeric() {
            word.extend(character.to_lowercase());
        }
        previous_lower = character.is_lowercase();
    }
    words
}

fn add_word(words: &mut BTreeSet<String>, word: &str) {
    if word.chars().count() < 2 || STOP_WORDS.contains(&word) {
        return;
    }
    words.insert(word.chars().take(STEM).collect());
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The sentences of `text`, as it writes them.
    fn said(text: &str) -> Vec<&str> {
        sentences(text)
            .iter()
            .map(|range| &text[range.clone()])
            .collect()
    }

    #[test]
    fn the_passage_around_a_span_is_its_sentence_and_one_either_side() {
        let text = "One. Two is here. Three. Four.";
        let passages = Passages::of(text);
        let at = text.find("here").unwrap();
        let around = passages.around(at..at + 4).unwrap();
        assert_eq!(&text[around], "One. Two is here. Three.");
        assert_eq!(passages.around(text.len() + 5..text.len() + 6), None);
    }

    #[test]
    fn rare_words_outweigh_common_ones() {
        let text = "This agreement starts today. This agreement binds both. \
                    This agreement ends in three years. The laws of Ohio govern this agreement.";
        let found = Passages::of(text).about("term: how long the agreement lasts, ends", 1);
        assert_eq!(
            &text[found[0].clone()],
            "This agreement ends in three years."
        );
    }

    #[test]
    fn a_line_break_does_not_end_a_sentence_but_a_blank_line_does() {
        let text = "Governed by the laws\nof the State of Delaware.\n\nSigned";
        assert_eq!(
            said(text),
            ["Governed by the laws\nof the State of Delaware.", "Signed"]
        );
    }

    #[test]
    fn a_short_line_ends_a_sentence_and_a_wrapped_one_does_not() {
        let text = "Ken Bate\n33 Middle Street\nDear Ken:\nEffective immediately prior to the closing, as such term\nis defined in the Agreement and Plan of Merger dated as of January 27, 2009, by and\namong the parties to it, this letter sets out the terms of your leaving.";
        let said = said(text);
        assert_eq!(said[..3], ["Ken Bate", "33 Middle Street", "Dear Ken:"]);
        assert!(
            said[3].starts_with("Effective") && said[3].ends_with("leaving."),
            "{said:?}"
        );
    }

    #[test]
    fn a_colon_does_not_end_a_sentence() {
        let text = "Governing law: the State of Ohio. Signed";
        assert_eq!(said(text), ["Governing law: the State of Ohio.", "Signed"]);
    }

    #[test]
    fn passages_come_in_the_texts_order_and_none_when_nothing_is_shared() {
        let text = "Rent is due monthly. The tenant pays water. Rent rises yearly.";
        let passages = Passages::of(text);
        let found = passages.about("rent", 2);
        assert_eq!(found.len(), 2);
        assert!(found[0].start < found[1].start);
        assert!(passages.about("jurisdiction", 2).is_empty());
    }

    #[test]
    fn a_long_sentence_is_cut_at_whitespace_within_the_bound() {
        let text = "word ".repeat(400) + "ünïcödé".repeat(200).as_str();
        for range in sentences(&text) {
            assert!(range.end - range.start <= MAX_PASSAGE_BYTES, "{range:?}");
            assert!(text.is_char_boundary(range.start) && text.is_char_boundary(range.end));
        }
        let covered: usize = sentences(&text).iter().map(|r| r.end - r.start).sum();
        assert!(
            covered >= text.trim().len() - 400,
            "nothing but spaces is lost"
        );
    }

    #[test]
    fn field_names_split_into_their_words() {
        let words = stems("effective_date dueDate governing-law");
        for word in ["effec", "date", "due", "gover", "law"] {
            assert!(words.contains(word), "{word}: {words:?}");
        }
    }
}
