//! A page's glyphs put in reading order: lines by the top of their glyphs (top to bottom, so a
//! superscript raised in a smaller size stays on its line), glyphs by their position along the line (not by the order the content stream draws them), a space where the
//! gap between two glyphs is wider than [`WORD_GAP`], one space for a run of blanks, and a glyph
//! drawn over the same glyph (a bold faked by printing twice) read once.

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

/// Glyph tops closer than this (points) are one line.
const LINE_TOLERANCE: f32 = 3.0;
/// A gap wider than this (points) between two glyphs of a line is a space.
const WORD_GAP: f32 = 3.0;

/// The page's text: a line of text per line of glyphs.
pub fn text(mut chars: Vec<Char>) -> String {
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
    let mut out = String::new();
    for mut line in lines {
        line.sort_by(|a, b| a.x0.total_cmp(&b.x0));
        let text = line_text(&line);
        let text = text.trim();
        if text.is_empty() {
            continue;
        }
        if !out.is_empty() {
            out.push('\n');
        }
        out.push_str(text);
    }
    out
}

fn line_text(line: &[Char]) -> String {
    let mut text = String::new();
    let mut previous: Option<&Char> = None;
    for char in line {
        if previous.is_some_and(|previous| overprinted(previous, char)) {
            continue;
        }
        let blank = char.text.chars().all(char::is_whitespace);
        if let Some(previous) = previous
            && char.x0 - previous.x1 > WORD_GAP
            && !text.ends_with(' ')
        {
            text.push(' ');
        }
        if blank {
            if !text.ends_with(' ') {
                text.push(' ');
            }
        } else {
            push_expanded(&mut text, &char.text);
        }
        previous = Some(char);
    }
    text
}

/// Whether `char` is `previous` drawn again at (about) the same place.
fn overprinted(previous: &Char, char: &Char) -> bool {
    char.text == previous.text
        && (char.x0 - previous.x0).abs() < 0.5
        && (char.y - previous.y).abs() < 0.5
}

/// `text` with presentation-form ligatures (`ﬁ`) written as their letters, as a reader searches
/// for them.
fn push_expanded(out: &mut String, text: &str) {
    for c in text.chars() {
        match c {
            '\u{fb00}' => out.push_str("ff"),
            '\u{fb01}' => out.push_str("fi"),
            '\u{fb02}' => out.push_str("fl"),
            '\u{fb03}' => out.push_str("ffi"),
            '\u{fb04}' => out.push_str("ffl"),
            '\u{fb05}' | '\u{fb06}' => out.push_str("st"),
            '\u{0}' => {}
            c => out.push(c),
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
        assert_eq!(text(chars), "Wod rfith\nL 2");
    }
}
