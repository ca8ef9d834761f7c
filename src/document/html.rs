//! A web page's visible text, as a browser's `innerText` gives it: the text of `<body>` with
//! whitespace collapsed outside `<pre>`, a line for each block (paragraph, heading, list item,
//! table cell on its own line), `<br>` a line break, character references decoded; nothing of
//! `<head>`, `<script>`, `<style>`, `<template>`, `<noscript>` or an element marked `hidden`.
//! Tokenised by html5gum (the WHATWG tokenizer, which decodes references and switches to raw
//! text inside `<script>` and `<style>` as browsers do); no tree is built, so deep nesting
//! costs nothing.
//!
//! ```
//! let html = b"<html><head><title>Hi</title></head><body><h1>Order&nbsp;42</h1>\
//!              <p>Total: <b>9.50</b> EUR<script>var x = '<p>';</script></p></body></html>";
//! let text = structure::document::html::text(html, 1 << 20)?;
//! assert_eq!(text, "Order\u{a0}42\nTotal: 9.50 EUR");
//! # Ok::<(), structure::StructureError>(())
//! ```

use html5gum::{DefaultEmitter, Token, Tokenizer};

use super::lines::Lines;
use crate::error::StructureError;

/// Elements whose content a browser does not show as text.
const UNSHOWN: &[&[u8]] = &[
    b"head",
    b"title",
    b"script",
    b"style",
    b"template",
    b"noscript",
    b"iframe",
    b"object",
    b"noembed",
    b"noframes",
];

/// Elements that start and end a line of their own.
const BLOCKS: &[&[u8]] = &[
    b"address",
    b"article",
    b"aside",
    b"blockquote",
    b"body",
    b"caption",
    b"dd",
    b"details",
    b"dialog",
    b"div",
    b"dl",
    b"dt",
    b"fieldset",
    b"figcaption",
    b"figure",
    b"footer",
    b"form",
    b"h1",
    b"h2",
    b"h3",
    b"h4",
    b"h5",
    b"h6",
    b"header",
    b"hr",
    b"li",
    b"main",
    b"nav",
    b"ol",
    b"p",
    b"pre",
    b"section",
    b"summary",
    b"table",
    b"tbody",
    b"td",
    b"tfoot",
    b"th",
    b"thead",
    b"tr",
    b"ul",
];

/// Elements without content (no end tag follows their start).
const VOID: &[&[u8]] = &[
    b"area", b"base", b"br", b"col", b"embed", b"hr", b"img", b"input", b"link", b"meta",
    b"source", b"track", b"wbr",
];

/// Elements whose whitespace is shown as written.
const PREFORMATTED: &[&[u8]] = &[b"pre", b"textarea", b"listing", b"plaintext"];

/// The visible text of the HTML page `bytes` (UTF-8), at most `max_bytes` of it.
pub fn text(bytes: &[u8], max_bytes: usize) -> Result<String, StructureError> {
    let source = std::str::from_utf8(bytes).map_err(|error| {
        StructureError::invalid_document(
            "not-utf8",
            format!(
                "the HTML page is not UTF-8 (byte {} is not): save it as UTF-8 first",
                error.valid_up_to()
            ),
        )
    })?;
    let mut emitter = DefaultEmitter::default();
    emitter.naively_switch_states(true);
    let mut page = Page::new(max_bytes);
    for token in Tokenizer::new_with_emitter(source, emitter) {
        // Reading a string cannot fail; the tokenizer's own parse errors are recovered from.
        let Ok(token) = token;
        page.take(token);
        if page.lines.is_full() {
            return Err(StructureError::invalid_document(
                "too-large",
                format!(
                    "the HTML page's text is over {max_bytes} bytes: send a smaller page, or \
                     its text in parts"
                ),
            ));
        }
    }
    Ok(page.lines.finish())
}

/// The page's text so far, and where in its elements the tokenizer is.
struct Page {
    lines: Lines,
    /// The unshown element being skipped, and how many of its name are open inside it.
    skipping: Option<(Vec<u8>, usize)>,
    /// How many preformatted elements are open.
    preformatted: usize,
    /// The columns the open table cell spans beyond its own (`colspan`).
    spanned: usize,
}

impl Page {
    fn new(max_bytes: usize) -> Self {
        Self {
            lines: Lines::new(max_bytes),
            skipping: None,
            preformatted: 0,
            spanned: 0,
        }
    }

    fn take(&mut self, token: Token) {
        match token {
            Token::StartTag(tag) => {
                let name = tag.name.to_ascii_lowercase();
                let hidden = tag.attributes.contains_key(b"hidden".as_slice());
                if (name == b"td" || name == b"th") && self.skipping.is_none() {
                    let span = (tag.attributes.get(b"colspan".as_slice()))
                        .and_then(|span| std::str::from_utf8(span).ok()?.trim().parse().ok());
                    self.lines.open_cell();
                    self.spanned = span.unwrap_or(1usize).saturating_sub(1);
                    return;
                }
                self.start(
                    &name,
                    hidden && !VOID.contains(&name.as_slice()),
                    tag.self_closing,
                );
            }
            Token::EndTag(tag) => self.end(&tag.name.to_ascii_lowercase()),
            Token::String(words) if self.skipping.is_none() => {
                let words = String::from_utf8_lossy(&words);
                match self.preformatted > 0 {
                    true => self.lines.push(&words.replace("\r\n", "\n")),
                    false => self.lines.push_collapsed(&words),
                }
            }
            _ => {}
        }
    }

    fn start(&mut self, name: &[u8], hidden: bool, self_closing: bool) {
        if let Some((skipped, open)) = &mut self.skipping {
            // A `<body>` closes a `<head>` left open, as a parser's tree builder would.
            if skipped.as_slice() == b"head" && name == b"body" {
                self.skipping = None;
            } else {
                if skipped.as_slice() == name && !self_closing {
                    *open += 1;
                }
                return;
            }
        }
        if (UNSHOWN.contains(&name) || hidden) && !self_closing {
            self.skipping = Some((name.to_vec(), 1));
            return;
        }
        if name == b"br" {
            self.lines.line_break();
        } else if name == b"tr" || name == b"table" {
            self.lines.end_row();
        } else if BLOCKS.contains(&name) {
            self.lines.end_line();
        }
        if PREFORMATTED.contains(&name) && !self_closing {
            self.preformatted += 1;
        }
    }

    fn end(&mut self, name: &[u8]) {
        if let Some((skipped, open)) = &mut self.skipping {
            if skipped.as_slice() == name {
                *open -= 1;
                if *open == 0 {
                    self.skipping = None;
                }
            }
            return;
        }
        match name {
            b"td" | b"th" => self.lines.close_spanning(std::mem::take(&mut self.spanned)),
            b"tr" | b"table" => self.lines.end_row(),
            _ if BLOCKS.contains(&name) => self.lines.end_line(),
            _ => {}
        }
        if PREFORMATTED.contains(&name) {
            self.preformatted = self.preformatted.saturating_sub(1);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(html: &str) -> String {
        text(html.as_bytes(), 1 << 20).unwrap()
    }

    #[test]
    fn blocks_items_and_rows_are_lines_and_scripts_are_not_text() {
        let html = "<!DOCTYPE html><html><head><style>p{color:red}</style></head><body>\
            <h2>Invoice   INV-7</h2><ul><li>Tea &amp; cake</li><li>Water</li></ul>\
            <table><tr><td>Total</td><td>&euro;12.50</td></tr></table>\
            <script>if (a < b) { document.write('<p>no</p>') }</script>\
            <p>Line one<br>line&#32;two</p><div hidden><p>secret</p></div>\
            <template><p>later</p></template><noscript>enable JS</noscript></body></html>";
        assert_eq!(
            read(html),
            "Invoice INV-7\nTea & cake\nWater\nTotal\t€12.50\nLine one\nline two"
        );
    }

    #[test]
    fn a_tables_row_is_a_line_of_cells_parted_by_tabs_a_spanning_cell_keeping_the_columns() {
        let html = "<p>Lines</p><table><thead><tr><th>Item<th>Qty<th>Price</thead>\
            <tr><td><p>Green</p><p>tea</p></td><td>2</td><td>4.50</td></tr>\
            <tr><td colspan=2>Total</td><td>9.00</td></tr></table><p>Thanks</p>";
        assert_eq!(
            read(html),
            "Lines\nItem\tQty\tPrice\nGreen tea\t2\t4.50\nTotal\t\t9.00\nThanks"
        );
    }

    #[test]
    fn a_space_between_inline_elements_is_kept_and_a_no_break_space_is_not_a_gap() {
        assert_eq!(
            read("<p><b>Mary</b> <i>Jackson</i>,\n of&nbsp; Hampton</p>"),
            "Mary Jackson, of\u{a0} Hampton"
        );
    }

    #[test]
    fn preformatted_text_keeps_its_spaces() {
        assert_eq!(read("<p>a  b</p><pre>x   y\n  z</pre>"), "a b\nx   y\n  z");
    }

    #[test]
    fn an_unclosed_head_ends_at_body() {
        assert_eq!(read("<html><head><title>T</title><body>Visible"), "Visible");
    }

    #[test]
    fn deep_nesting_and_long_references_cost_nothing_special() {
        let deep = "<div>".repeat(100_000) + "deep" + &"</div>".repeat(100_000);
        assert_eq!(read(&deep), "deep");
        let entities = "&NotNestedGreaterGreater;".repeat(10_000);
        assert_eq!(read(&entities).chars().count(), 20_000);
        let unended = "<script>".to_owned() + &"x".repeat(1000);
        assert_eq!(read(&unended), "");
    }

    #[test]
    fn text_over_the_bound_and_bytes_not_utf8_are_typed_errors() {
        let big = "<p>".to_owned() + &"word ".repeat(100);
        let error = text(big.as_bytes(), 64).unwrap_err();
        assert!(error.to_string().contains("over 64 bytes"), "{error}");
        let error = text(b"<p>caf\xe9</p>", 1 << 10).unwrap_err();
        assert!(error.to_string().contains("not UTF-8"), "{error}");
    }
}
