//! The text a Word or HTML reader writes: words and the line breaks its blocks (paragraphs, table
//! cells, list items) end with, no run of blank lines, no space at either end of a line, within
//! a bound on its size.

/// Text written line by line, at most `max_bytes` of it.
#[derive(Debug)]
pub struct Lines {
    text: String,
    max_bytes: usize,
    full: bool,
}

impl Lines {
    pub fn new(max_bytes: usize) -> Self {
        Self {
            text: String::new(),
            max_bytes,
            full: false,
        }
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
            if word_start > 0 && !self.at_line_start() && !self.text.ends_with(' ') {
                self.append(" ");
            }
            rest = &rest[word_start..];
            let word_end = rest.find(gap).unwrap_or(rest.len());
            self.append(&rest[..word_end]);
            rest = &rest[word_end..];
        }
    }

    /// Ends the line, unless it is empty (blocks in blocks end one line, not several).
    pub fn end_line(&mut self) {
        if !self.at_line_start() {
            self.line_break();
        }
    }

    /// A line break, even on an empty line (`<br>`, Word's `<w:br/>`).
    pub fn line_break(&mut self) {
        self.trim_line_end();
        self.append("\n");
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
    fn the_bound_keeps_what_fits_and_says_so() {
        let mut lines = Lines::new(8);
        lines.push("12345");
        lines.push("6789");
        assert!(lines.is_full());
        assert_eq!(lines.finish(), "12345");
    }
}
