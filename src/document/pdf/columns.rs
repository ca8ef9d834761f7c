//! A table's columns on a page without rules: a word that starts where a word starts on each of
//! several lines in a row (the same x, within a point) starts a column there, as a table's
//! left-aligned cells do, however narrow the gap before it. Only a word after a bare gap counts:
//! one after a space the page draws is the same cell's next word (a cell's text is drawn as a
//! run, its spaces in it), however it lines up. Prose does not line its words up down four
//! lines. The reader then writes a tab before such a word, as it parts any row's cells.

use std::collections::BTreeMap;

/// What the columns are found from: a glyph's extent along its line, and whether it is a space.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Extent {
    pub x0: f32,
    pub x1: f32,
    pub blank: bool,
}

/// The fewest lines in a row a word must start at one x on to start a column there.
const MIN_ALIGNED: usize = 4;
/// How far (points) two words' starts may be apart and still be one column's.
const TOLERANCE: i32 = 1;
/// The narrowest bare gap (points) before a word that may start a column: two cells drawn as
/// runs of their own, a cell's padding between them, may stand closer than a word space (a
/// cell filled to its column's width); the glyphs of one word stand at no gap.
pub const CELL_GAP: f32 = 1.5;

/// For each line (its glyphs in order along it), the x positions (rounded to a point) at which
/// a word starts a column.
pub fn starts(lines: &[Vec<Extent>]) -> Vec<Vec<i32>> {
    let words: Vec<Vec<i32>> = lines.iter().map(|line| word_starts(line)).collect();
    // Each x a word starts at after a gap, and the lines it does on.
    let mut on: BTreeMap<i32, Vec<usize>> = BTreeMap::new();
    for (index, starts) in words.iter().enumerate() {
        for &x in starts {
            on.entry(x).or_default().push(index);
        }
    }
    let mut columns: Vec<Vec<i32>> = vec![Vec::new(); lines.len()];
    for &x in on.keys() {
        // The lines a word starts at x on, within the tolerance, in order, once each.
        let mut near: Vec<usize> = (x.saturating_sub(TOLERANCE)..=x.saturating_add(TOLERANCE))
            .filter_map(|key| on.get(&key))
            .flatten()
            .copied()
            .collect();
        near.sort_unstable();
        near.dedup();
        for run in near.chunk_by(|a, b| b - a == 1) {
            if run.len() < MIN_ALIGNED {
                continue;
            }
            for &index in run {
                if words[index].contains(&x) && !columns[index].contains(&x) {
                    columns[index].push(x);
                }
            }
        }
    }
    columns
}

/// Where `line`'s words start after a bare gap (no space drawn in it; its first glyph's start
/// is no gap's).
fn word_starts(line: &[Extent]) -> Vec<i32> {
    let mut starts = Vec::new();
    let mut previous: Option<Extent> = None;
    for &glyph in line {
        if bare_gap_before(previous, glyph) {
            starts.push(glyph.x0.round() as i32);
        }
        previous = Some(glyph);
    }
    starts
}

/// Whether `char` starts a word after a gap wider than [`CELL_GAP`] with no space drawn in it
/// (`previous`, the glyph before it on its line, is no blank).
pub fn bare_gap_before(previous: Option<Extent>, glyph: Extent) -> bool {
    previous.is_some_and(|previous| {
        !glyph.blank && !previous.blank && glyph.x0 - previous.x1 > CELL_GAP
    })
}

/// Whether a word starting at `x0` starts one of `columns`.
pub fn starts_column(columns: &[i32], x0: f32) -> bool {
    let x = x0.round() as i32;
    columns
        .iter()
        .any(|column| column.abs_diff(x) <= TOLERANCE.unsigned_abs())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn word(text: &str, x0: f32) -> Vec<Extent> {
        (text.chars().enumerate())
            .map(|(at, c)| Extent {
                x0: x0 + 5.0 * at as f32,
                x1: x0 + 5.0 * (at + 1) as f32,
                blank: c.is_whitespace(),
            })
            .collect()
    }

    fn line(words: &[(&str, f32)]) -> Vec<Extent> {
        words
            .iter()
            .flat_map(|(text, x0)| word(text, *x0))
            .collect()
    }

    #[test]
    fn words_placed_beyond_any_page_are_no_overflow() {
        // A damaged page may place text at x = 7e16: `as i32` saturates, and the tolerance
        // around it must not step past i32::MAX.
        let rows: Vec<Vec<Extent>> = (0..MIN_ALIGNED)
            .map(|_| line(&[("a", 72.0), ("b", 7.2e16), ("c", -7.2e16)]))
            .collect();
        let columns = starts(&rows);
        assert!(columns.iter().all(|line| line.contains(&i32::MAX)));
        assert!(starts_column(&columns[0], 7.2e16));
        assert!(!starts_column(&[i32::MIN], 7.2e16));
    }

    #[test]
    fn a_word_after_a_drawn_space_is_its_cells_however_it_lines_up() {
        let spaced = |first: &str| line(&[(first, 72.0), (" ", 102.0), ("tea", 110.0)]);
        let rows = vec![
            spaced("Green"),
            spaced("Black"),
            spaced("Mint "),
            spaced("White"),
        ];
        assert!(starts(&rows).iter().all(Vec::is_empty));
    }

    #[test]
    fn words_starting_at_one_x_down_four_lines_start_a_column_and_prose_does_not() {
        let table = vec![
            line(&[("L1", 72.0), ("Tea", 90.0), ("2", 150.0)]),
            line(&[("L2", 72.0), ("Green", 90.0), ("tea", 120.0), ("14", 150.0)]),
            line(&[("L3", 72.0), ("Cake", 90.5), ("1", 150.0)]),
            line(&[("L4", 72.0), ("Jam", 90.0), ("3", 149.5)]),
            // Prose below: its words start where they may.
            line(&[("The", 72.0), ("end", 95.0), ("of", 117.0)]),
        ];
        let columns = starts(&table);
        assert_eq!(columns[0], [90, 150]);
        assert!(starts_column(&columns[1], 90.0) && !starts_column(&columns[1], 120.0));
        assert!(columns[4].is_empty());
    }
}
