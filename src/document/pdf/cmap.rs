//! CMaps (ISO 32000 §9.7.5, §9.10.3): how a composite font's bytes split into codes (the
//! codespace ranges), which glyph (CID) a code selects, and — in a `/ToUnicode` CMap — the text
//! each code stands for. Ranges are kept as ranges, never expanded, so a CMap declaring every
//! code costs what it is written in.

use std::collections::HashMap;

use super::syntax::{Lexer, Object, Token};

/// Where a range of codes maps: text counting up from a first value, or a list of texts.
#[derive(Debug, Clone)]
enum Target {
    From(Vec<u16>),
    Each(Vec<String>),
}

#[derive(Debug, Clone, Default)]
pub struct CMap {
    /// Code lengths by leading byte ranges: `(bytes, low, high)`.
    pub codespace: Vec<(usize, u32, u32)>,
    text: HashMap<u32, String>,
    text_ranges: Vec<(u32, u32, Target)>,
    cids: HashMap<u32, u32>,
    cid_ranges: Vec<(u32, u32, u32)>,
}

impl CMap {
    pub fn parse(bytes: &[u8]) -> CMap {
        let mut cmap = CMap::default();
        let mut lexer = Lexer::new(bytes, 0);
        let mut operands: Vec<Object> = Vec::new();
        while let Some(token) = lexer.token() {
            match token {
                Token::Keyword(b"endcodespacerange") => {
                    for pair in operands.as_chunks::<2>().0 {
                        if let (Object::String(low), Object::String(high)) = (&pair[0], &pair[1]) {
                            cmap.codespace.push((low.len(), number(low), number(high)));
                        }
                    }
                }
                Token::Keyword(b"endbfchar") => {
                    for pair in operands.as_chunks::<2>().0 {
                        if let (Object::String(code), target) = (&pair[0], &pair[1]) {
                            cmap.text.insert(number(code), target_text(target));
                        }
                    }
                }
                Token::Keyword(b"endbfrange") => cmap.bf_ranges(&operands),
                Token::Keyword(b"endcidchar") => {
                    for pair in operands.as_chunks::<2>().0 {
                        if let (Object::String(code), Some(cid)) = (&pair[0], pair[1].int()) {
                            cmap.cids.insert(number(code), cid.clamp(0, 0xffff) as u32);
                        }
                    }
                }
                Token::Keyword(b"endcidrange") => {
                    for triple in operands.as_chunks::<3>().0 {
                        if let (Object::String(low), Object::String(high), Some(cid)) =
                            (&triple[0], &triple[1], triple[2].int())
                        {
                            let cid = cid.clamp(0, 0xffff) as u32;
                            cmap.cid_ranges.push((number(low), number(high), cid));
                        }
                    }
                }
                Token::Keyword(_) | Token::DictStart | Token::DictEnd | Token::ArrayEnd => {
                    operands.clear();
                }
                Token::ArrayStart => {
                    lexer.pos -= 1;
                    if let Some(array) = lexer.object() {
                        operands.push(array);
                    }
                }
                Token::Object(object) => operands.push(object),
            }
        }
        cmap
    }

    fn bf_ranges(&mut self, operands: &[Object]) {
        for triple in operands.as_chunks::<3>().0 {
            let (Object::String(low), Object::String(high)) = (&triple[0], &triple[1]) else {
                continue;
            };
            let target = match &triple[2] {
                Object::String(first) => Target::From(utf16_units(first)),
                Object::Array(each) => Target::Each(each.iter().map(target_text).collect()),
                _ => continue,
            };
            let (low, high) = (number(low), number(high));
            if low <= high {
                self.text_ranges.push((low, high, target));
            }
        }
    }

    /// The text `code` stands for, if this CMap says.
    pub fn text(&self, code: u32) -> Option<String> {
        if let Some(text) = self.text.get(&code) {
            return Some(text.clone());
        }
        let (low, _, target) = (self.text_ranges.iter().rev())
            .find(|(low, high, _)| (*low..=*high).contains(&code))?;
        let offset = code - low;
        match target {
            Target::Each(each) => each.get(offset as usize).cloned(),
            Target::From(units) => {
                let mut units = units.clone();
                let last = units.last_mut()?;
                *last = last.wrapping_add(offset as u16);
                Some(String::from_utf16_lossy(&units))
            }
        }
    }

    /// The CID `code` selects (the code itself where the CMap does not say).
    pub fn cid(&self, code: u32) -> u32 {
        if let Some(&cid) = self.cids.get(&code) {
            return cid;
        }
        (self.cid_ranges.iter())
            .find(|(low, high, _)| (*low..=*high).contains(&code))
            .map_or(code, |(low, _, cid)| cid.wrapping_add(code - low))
    }

    /// The next code at the start of `bytes` and its length, by the codespace ranges (two bytes
    /// when there are none: Identity-H and the like).
    pub fn next_code(&self, bytes: &[u8]) -> (u32, usize) {
        for length in 1..=4 {
            let Some(head) = bytes.get(..length) else {
                break;
            };
            let code = number(head);
            let fits = (self.codespace.iter())
                .any(|&(bytes, low, high)| bytes == length && (low..=high).contains(&code));
            if fits {
                return (code, length);
            }
        }
        let length = if self.codespace.is_empty() { 2 } else { 1 };
        let length = length.min(bytes.len()).max(1);
        (number(&bytes[..length.min(bytes.len())]), length)
    }
}

/// Big-endian bytes as a number (at most four count).
fn number(bytes: &[u8]) -> u32 {
    (bytes.iter().take(4)).fold(0, |value, &byte| value << 8 | u32::from(byte))
}

fn utf16_units(bytes: &[u8]) -> Vec<u16> {
    if bytes.len() == 1 {
        return vec![u16::from(bytes[0])];
    }
    (bytes.chunks(2))
        .map(|pair| u16::from_be_bytes([pair[0], pair.get(1).copied().unwrap_or(0)]))
        .collect()
}

fn target_text(target: &Object) -> String {
    match target {
        Object::String(bytes) => String::from_utf16_lossy(&utf16_units(bytes)),
        Object::Name(name) => super::encoding::glyph_text(name).unwrap_or_default(),
        _ => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_to_unicode_cmap_maps_single_codes_ranges_and_lists() {
        let cmap = CMap::parse(
            b"/CIDInit /ProcSet findresource begin 12 dict begin begincmap\n\
              1 begincodespacerange <0000> <FFFF> endcodespacerange\n\
              2 beginbfchar <0003> <0020> <0011> <00660069> endbfchar\n\
              2 beginbfrange <0024> <0026> <0041> <0030> <0031> [<0078> <D83DDE00>] endbfrange\n\
              endcmap",
        );
        assert_eq!(cmap.text(3).as_deref(), Some(" "));
        assert_eq!(cmap.text(0x11).as_deref(), Some("fi"));
        assert_eq!(cmap.text(0x25).as_deref(), Some("B"));
        assert_eq!(cmap.text(0x31).as_deref(), Some("😀"));
        assert_eq!(cmap.text(0x40), None);
        assert_eq!(cmap.next_code(&[0, 0x25, 1]), (0x25, 2));
    }

    #[test]
    fn codespace_ranges_split_mixed_length_codes() {
        let cmap = CMap::parse(
            b"2 begincodespacerange <00> <80> <8140> <9FFC> endcodespacerange \
              1 begincidrange <8140> <817E> 633 endcidrange",
        );
        assert_eq!(cmap.next_code(b"A"), (0x41, 1));
        assert_eq!(cmap.next_code(&[0x81, 0x41]), (0x8141, 2));
        assert_eq!(cmap.cid(0x8141), 634);
        assert_eq!(cmap.cid(0x41), 0x41);
    }
}
