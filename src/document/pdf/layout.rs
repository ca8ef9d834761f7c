//! A page's glyphs put in reading order: lines by the top of their glyphs (top to bottom, so a
//! superscript raised in a smaller size stays on its line), glyphs by their position along the
//! line (not by the order the content stream draws them), a space where the gap between two
//! glyphs is wider than [`WORD_GAP`], one space for a run of blanks, and a glyph drawn over the
//! same glyph (a bold faked by printing twice) read once; a tab where a table's column starts
//! ([`super::columns`], or a gap as wide as a column). Each code point of the text keeps where
//! its glyph stands ([`Place`]), so a span of the text can be shown on the page.

use super::columns::{self, Extent};

/// A glyph placed on the page, in points (y grows upwards, as PDF's does).
#[derive(Debug, Clone, PartialEq)]
pub struct Char {
    pub text: String,
    pub x0: f32,
    pub x1: f32,
    /// The baseline.
    pub y: f32,
    pub size: f32,
}

impl Char {
    /// Its extent along its line, for finding a table's columns.
    fn extent(&self) -> Extent {
        Extent {
            x0: self.x0,
            x1: self.x1,
            blank: self.text.chars().all(char::is_whitespace),
        }
    }
}

/// Where a code point of a page's text is drawn: its glyph's box in the page's space (points, y
/// upwards), and the line of glyphs it is on (from 0, top to bottom). A code point no glyph draws
/// (a line break, a space put at a gap) is [`Place::NOWHERE`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Place {
    pub x0: f32,
    pub x1: f32,
    pub bottom: f32,
    pub top: f32,
    pub line: u32,
}

impl Place {
    pub const NOWHERE: Place = Place {
        x0: f32::NAN,
        x1: f32::NAN,
        bottom: f32::NAN,
        top: f32::NAN,
        line: u32::MAX,
    };

    pub fn is_somewhere(&self) -> bool {
        !self.x0.is_nan()
    }

    /// A glyph's box: as wide as it advances, as tall as its size, standing on the font's usual
    /// descent below the baseline (the box pdfminer and pdfplumber give a glyph of a font that
    /// states none).
    fn of(char: &Char) -> Place {
        let bottom = char.y - DESCENT * char.size;
        Place {
            x0: char.x0,
            x1: char.x1,
            bottom,
            top: bottom + char.size,
            line: 0,
        }
    }
}

/// A page's text, and where each of its code points stands (`places[i]` for the `i`th).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PageText {
    pub text: String,
    pub places: Vec<Place>,
}

impl PageText {
    pub fn push(&mut self, c: char, place: Place) {
        self.text.push(c);
        self.places.push(place);
    }

    /// The code points with their places, in order.
    pub fn placed(&self) -> impl Iterator<Item = (char, Place)> + '_ {
        self.text.chars().zip(self.places.iter().copied())
    }
}

/// Glyph tops closer than this (points) are one line.
const LINE_TOLERANCE: f32 = 3.0;
/// A gap wider than this (points) between two glyphs of a line is a space.
const WORD_GAP: f32 = 3.0;
/// A gap wider than this many times the glyphs' size (and than [`MIN_COLUMN_GAP`]) parts two
/// columns (a table's cells, a form's label and value): a tab, as the other readers part a row's
/// cells, so records mode finds the table's rows. A justified line's widest word gap is well
/// under it.
const COLUMN_GAP: f32 = 1.5;
const MIN_COLUMN_GAP: f32 = 12.0;
/// How far below the baseline a glyph's box reaches, as a share of its size (Helvetica's and
/// Times' descent, about a fifth).
const DESCENT: f32 = 0.21;

/// The page's text: a line of text per line of glyphs.
pub fn text(mut chars: Vec<Char>) -> PageText {
    chars.retain(|char| char.y.is_finite() && char.x0.is_finite() && char.x1.is_finite());
    // Top to bottom (a glyph's top: its baseline and its size); a stable sort keeps the drawing
    // order of glyphs at one height.
    let top = |char: &Char| char.y + char.size;
    chars.sort_by(|a, b| top(b).total_cmp(&top(a)));
    let mut lines: Vec<Vec<Char>> = Vec::new();
    let mut last_top = f32::NAN;
    for char in chars {
        let this_top = top(&char);
        match lines.last_mut() {
            Some(line) if last_top - this_top <= LINE_TOLERANCE => line.push(char),
            _ => lines.push(vec![char]),
        }
        last_top = this_top;
    }
    for line in &mut lines {
        line.sort_by(|a, b| a.x0.total_cmp(&b.x0));
    }
    let extents: Vec<Vec<Extent>> = (lines.iter())
        .map(|line| line.iter().map(Char::extent).collect())
        .collect();
    let columns = columns::starts(&extents);
    let mut out = PageText::default();
    let mut number = 0;
    for (line, columns) in lines.iter().zip(&columns) {
        let line = line_text(line, columns);
        let text = line.text.trim_start();
        let skipped = line.text.chars().count() - text.chars().count();
        let text = text.trim_end();
        if text.is_empty() {
            continue;
        }
        if !out.text.is_empty() {
            out.push('\n', Place::NOWHERE);
        }
        out.text.push_str(text);
        let kept = text.chars().count();
        out.places.extend(
            (line.places[skipped..skipped + kept].iter()).map(|&place| Place {
                line: number,
                ..place
            }),
        );
        number += 1;
    }
    out
}

/// A line's text: its glyphs in order, a space at a word's gap, a tab where a column starts
/// (`columns`, or a gap as wide as one).
fn line_text(line: &[Char], columns: &[i32]) -> PageText {
    let mut out = PageText::default();
    let mut previous: Option<&Char> = None;
    for char in line {
        if previous.is_some_and(|previous| overprinted(previous, char)) {
            continue;
        }
        let blank = char.text.chars().all(char::is_whitespace);
        let column_gap = (COLUMN_GAP * char.size).max(MIN_COLUMN_GAP);
        let gap = previous.map(|previous| char.x0 - previous.x1);
        let column = columns::bare_gap_before(previous.map(Char::extent), char.extent())
            && columns::starts_column(columns, char.x0);
        match gap {
            Some(gap) if (gap > column_gap || column) && !blank => {
                if out.text.ends_with(' ') {
                    out.text.pop();
                    out.places.pop();
                }
                out.push('\t', Place::NOWHERE);
            }
            Some(gap) if gap > WORD_GAP && !out.text.ends_with([' ', '\t']) => {
                out.push(' ', Place::NOWHERE);
            }
            _ => {}
        }
        if blank {
            if !out.text.ends_with([' ', '\t']) {
                out.push(' ', Place::NOWHERE);
            }
        } else {
            push_expanded(&mut out, &char.text, Place::of(char));
        }
        previous = Some(char);
    }
    out
}

/// Whether `char` is `previous` drawn again at (about) the same place.
fn overprinted(previous: &Char, char: &Char) -> bool {
    char.text == previous.text
        && (char.x0 - previous.x0).abs() < 0.5
        && (char.y - previous.y).abs() < 0.5
}

/// `text` with presentation-form ligatures (`ﬁ`) written as their letters, as a reader searches
/// for them; each letter stands where the ligature does.
fn push_expanded(out: &mut PageText, text: &str, place: Place) {
    for c in text.chars() {
        let letters = match c {
            '\u{fb00}' => "ff",
            '\u{fb01}' => "fi",
            '\u{fb02}' => "fl",
            '\u{fb03}' => "ffi",
            '\u{fb04}' => "ffl",
            '\u{fb05}' | '\u{fb06}' => "st",
            '\u{0}' => "",
            c => {
                out.push(c, place);
                continue;
            }
        };
        for letter in letters.chars() {
            out.push(letter, place);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(text: &str, x0: f32, y: f32) -> Char {
        Char {
            text: text.into(),
            x0,
            x1: x0 + 5.0,
            y,
            size: 10.0,
        }
    }

    #[test]
    fn a_gap_as_wide_as_a_column_is_a_tab() {
        let chars = vec![
            at("A", 100.0, 700.0),
            at(" ", 105.0, 700.0),
            at("B", 140.0, 700.0),
            at("C", 152.0, 700.0),
        ];
        let page = text(chars);
        // 30 points after the space: a column; 7 points: a word.
        assert_eq!(page.text, "A\tB C");
        assert_eq!(page.places.len(), page.text.chars().count());
    }

    #[test]
    fn glyphs_are_read_by_position_with_spaces_at_gaps() {
        let chars = vec![
            at("d", 110.0, 700.0),
            at("W", 100.0, 700.5),
            at("o", 105.0, 700.0),
            at("r", 125.0, 700.0),
            at("ﬁ", 130.0, 700.0),
            // A superscript: smaller, raised, its top level with the line's.
            Char {
                text: "th".into(),
                x0: 135.0,
                x1: 140.0,
                y: 704.0,
                size: 6.0,
            },
            at("L", 100.0, 680.0),
            at(" ", 105.0, 680.0),
            at(" ", 110.0, 680.0),
            at("2", 115.0, 680.0),
        ];
        let page = text(chars);
        assert_eq!(page.text, "Wod rfith\nL 2");
        assert_eq!(page.places.len(), page.text.chars().count());
        // Each letter where its glyph is; the ligature's two letters where it is; no place for
        // the space put at the gap or the line break.
        assert_eq!((page.places[0].x0, page.places[0].x1), (100.0, 105.0));
        assert!(!page.places[3].is_somewhere());
        assert_eq!(page.places[5].x0, 130.0);
        assert_eq!(page.places[6].x0, 130.0);
        assert_eq!((page.places[8].line, page.places[10].line), (0, 1));
        assert!((page.places[0].bottom - (700.5 - 2.1)).abs() < 1e-3);
        assert!(!page.places[9].is_somewhere());
    }
}
