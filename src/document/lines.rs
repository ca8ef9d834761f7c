//! The text a Word or HTML reader writes: words and the line breaks its blocks (paragraphs, list
//! items, table rows) end with, no run of blank lines, no space at either end of a line, within
//! a bound on its size. A table's row is one line, its cells parted by tabs (how records mode
//! finds a table's rows, `content::records::rows`); a block inside a cell is a space there.

/// The most columns one cell is taken to span (`colspan`, Word's `gridSpan`).
const MAX_SPAN: usize = 64;

/// Text written line by line, at most `max_bytes` of it.
#[derive(Debug)]
pub struct Lines {
    text: String,
    max_bytes: usize,
    full: bool,
    /// Whether a table cell is open: its blocks end with a space, not a line break.
    in_cell: bool,
}

impl Lines {
    pub fn new(max_bytes: usize) -> Self {
        Self {
            text: String::new(),
            max_bytes,
            full: false,
            in_cell: false,
        }
    }

    /// Opens a table cell (closing one left open: HTML may leave out `</td>`).
    pub fn open_cell(&mut self) {
        self.close_cell();
        self.in_cell = true;
    }

    /// Closes the open cell, if one is, with the tab that parts it from the next, and
    /// `spanned` more for the columns it spans beyond its own.
    pub fn close_cell(&mut self) {
        self.close_spanning(0);
    }

    /// [`Lines::close_cell`] of a cell spanning `spanned + 1` columns.
    pub fn close_spanning(&mut self, spanned: usize) {
        if !self.in_cell {
            return;
        }
        self.in_cell = false;
        let kept = self.text.trim_end_matches(' ').len();
        self.text.truncate(kept);
        self.append(&"\t".repeat(1 + spanned.min(MAX_SPAN)));
    }

    /// Ends a table's row: its open cell closed, the line ended.
    pub fn end_row(&mut self) {
        self.close_cell();
        self.end_line();
    }

    /// Appends `words` as they are (a space at the start of a line dropped).
    pub fn push(&mut self, words: &str) {
        let words = match self.at_line_start() {
            true => words.trim_start_matches([' ', '\t']),
            false => words,
        };
        self.append(words);
    }

    /// Appends `words` with every run of ASCII whitespace written as one space, as a browser
    /// shows HTML's text outside `<pre>` (a no-break space is a character, not a gap).
    pub fn push_collapsed(&mut self, words: &str) {
        let gap = |c: char| c.is_ascii_whitespace();
        let mut rest = words;
        while !rest.is_empty() {
            let word_start = rest.find(|c: char| !gap(c)).unwrap_or(rest.len());
            if word_start > 0 && !self.at_line_start() && !self.text.ends_with([' ', '\t']) {
                self.append(" ");
            }
            rest = &rest[word_start..];
            let word_end = rest.find(gap).unwrap_or(rest.len());
            self.append(&rest[..word_end]);
            rest = &rest[word_end..];
        }
    }

    /// Ends the line, unless it is empty (blocks in blocks end one line, not several); in a
    /// table cell, a space.
    pub fn end_line(&mut self) {
        if self.in_cell {
            self.gap();
        } else if !self.at_line_start() {
            self.line_break();
        }
    }

    /// A line break, even on an empty line (`<br>`, Word's `<w:br/>`); in a table cell, a
    /// space.
    pub fn line_break(&mut self) {
        if self.in_cell {
            self.gap();
            return;
        }
        self.trim_line_end();
        self.append("\n");
    }

    /// A space, unless the cell or the line has nothing yet, or ends with one.
    fn gap(&mut self) {
        if !self.at_line_start() && !self.text.ends_with([' ', '\t']) {
            self.append(" ");
        }
    }

    /// Whether the bound was reached (what came after it was not kept).
    pub fn is_full(&self) -> bool {
        self.full
    }

    /// The text: no space or line break at its end, at most one blank line in a row.
    pub fn finish(mut self) -> String {
        self.trim_line_end();
        let trimmed = self.text.trim_end().len();
        self.text.truncate(trimmed);
        let mut text = String::with_capacity(self.text.len());
        let mut newlines = 0;
        for c in self.text.chars() {
            newlines = if c == '\n' { newlines + 1 } else { 0 };
            if newlines <= 2 {
                text.push(c);
            }
        }
        text.trim_start_matches('\n').to_owned()
    }

    fn at_line_start(&self) -> bool {
        self.text.is_empty() || self.text.ends_with('\n')
    }

    fn trim_line_end(&mut self) {
        let kept = self.text.trim_end_matches([' ', '\t']).len();
        self.text.truncate(kept);
    }

    fn append(&mut self, words: &str) {
        if self.full {
            return;
        }
        if self.text.len() + words.len() > self.max_bytes {
            self.full = true;
            return;
        }
        self.text.push_str(words);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_end_lines_once_and_spaces_collapse() {
        let mut lines = Lines::new(1 << 10);
        lines.push_collapsed("  Invoice \n  42 ");
        lines.end_line();
        lines.end_line();
        lines.push_collapsed(" total:");
        lines.push_collapsed("  9.50\t");
        lines.push_collapsed("\n");
        lines.push_collapsed("EUR");
        lines.line_break();
        lines.line_break();
        lines.line_break();
        lines.line_break();
        lines.push("  due  ");
        assert_eq!(lines.finish(), "Invoice 42\ntotal: 9.50 EUR\n\ndue");
    }

    #[test]
    fn a_tables_row_is_a_line_its_cells_parted_by_tabs() {
        let mut lines = Lines::new(1 << 10);
        lines.push("Orders");
        lines.end_line();
        for row in [["Item", "", "Price"], ["Tea", "hot", "4.50"]] {
            for cell in row {
                lines.open_cell();
                lines.push_collapsed(&format!("  {cell} "));
                lines.end_line();
            }
            lines.end_row();
        }
        lines.open_cell();
        lines.push("Total");
        lines.close_spanning(1);
        lines.open_cell();
        lines.push("4.50");
        lines.end_row();
        assert_eq!(
            lines.finish(),
            "Orders\nItem\t\tPrice\nTea\thot\t4.50\nTotal\t\t4.50"
        );
    }

    #[test]
    fn the_bound_keeps_what_fits_and_says_so() {
        let mut lines = Lines::new(8);
        lines.push("12345");
        lines.push("6789");
        assert!(lines.is_full());
        assert_eq!(lines.finish(), "12345");
    }
}
