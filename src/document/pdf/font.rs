//! A font as text extraction needs it (ISO 32000 §9.5–9.10): how a string's bytes split into
//! codes, the text each code stands for (the `/ToUnicode` CMap first, then the encoding and its
//! glyph names), and each glyph's advance width, so the gaps between words can be seen.

use std::collections::HashMap;

use super::cmap::CMap;
use super::encoding::{self, Base};
use super::file::File;
use super::syntax::{Dict, Object};

/// One glyph of a shown string.
pub struct Glyph {
    pub text: String,
    /// The advance, in text space units (thousandths of the font size for most fonts).
    pub width: f32,
    /// A one-byte code 32: word spacing applies to it.
    pub word_space: bool,
}

pub struct Font {
    /// Composite fonts split bytes into codes by their CMap; simple fonts read one byte a code.
    composite: Option<CMap>,
    to_unicode: Option<CMap>,
    /// A simple font's encoding: the text of each code, where known.
    codes: Vec<Option<String>>,
    /// A composite font's codes are Unicode (a predefined UCS-2 or UTF-16 CMap), for when it
    /// has no `/ToUnicode`.
    unicode_codes: bool,
    widths: HashMap<u32, f32>,
    width_ranges: Vec<(u32, u32, f32)>,
    default_width: f32,
    /// Glyph space to text space: 1/1000, or a Type 3 font's own matrix.
    scale: f32,
}

impl Font {
    pub fn load(file: &File, dict: &Dict) -> Font {
        let to_unicode = dict
            .get(b"ToUnicode")
            .map(|stream| CMap::parse(&file.decoded(stream).unwrap_or_default()));
        let scale = match dict.get(b"FontMatrix").map(|matrix| file.resolve(matrix)) {
            Some(Object::Array(matrix)) => matrix
                .first()
                .and_then(Object::number)
                .map_or(0.001, |a| a as f32),
            _ => 0.001,
        };
        if dict.is(b"Subtype", b"Type0") {
            return Font::composite(file, dict, to_unicode);
        }
        let mut font = Font {
            composite: None,
            to_unicode,
            codes: simple_encoding(file, dict),
            unicode_codes: false,
            widths: HashMap::new(),
            width_ranges: Vec::new(),
            default_width: missing_width(file, dict),
            scale,
        };
        let first = dict.get(b"FirstChar").and_then(Object::int).unwrap_or(0);
        if let Some(Object::Array(widths)) = dict.get(b"Widths").map(|widths| file.resolve(widths))
        {
            for (index, width) in widths.iter().enumerate().take(256) {
                let width = file.resolve(width).number().unwrap_or(0.0) as f32;
                if let Ok(code) = u32::try_from(first.saturating_add(index as i64)) {
                    font.widths.insert(code, width);
                }
            }
        } else if let Some(Object::Name(base)) = dict.get(b"BaseFont") {
            let base = base.rsplit(|&byte| byte == b'+').next().unwrap_or(base);
            for code in 0x20..=0x7e {
                if let Some(width) = encoding::standard_width(base, code) {
                    font.widths.insert(u32::from(code), width);
                }
            }
        }
        font
    }

    fn composite(file: &File, dict: &Dict, to_unicode: Option<CMap>) -> Font {
        let encoding = dict.get(b"Encoding").map(|encoding| file.resolve(encoding));
        let unicode_codes = matches!(&encoding, Some(Object::Name(name))
            if name.windows(4).any(|w| w == b"UCS2") || name.windows(5).any(|w| w == b"UTF16"));
        let encoding = match encoding {
            Some(stream @ Object::Stream(..)) => {
                CMap::parse(&file.decoded(&stream).unwrap_or_default())
            }
            // Identity-H and the predefined CMaps: two bytes a code, the code its CID.
            _ => CMap::default(),
        };
        let descendant = match dict
            .get(b"DescendantFonts")
            .map(|fonts| file.resolve(fonts))
        {
            Some(Object::Array(fonts)) => fonts
                .first()
                .and_then(|font| file.resolve(font).dict().cloned()),
            _ => None,
        }
        .unwrap_or_default();
        let mut font = Font {
            composite: Some(encoding),
            to_unicode,
            codes: Vec::new(),
            unicode_codes,
            widths: HashMap::new(),
            width_ranges: Vec::new(),
            default_width: descendant
                .get(b"DW")
                .and_then(Object::number)
                .map_or(1000.0, |width| width as f32),
            scale: 0.001,
        };
        if let Some(Object::Array(widths)) = descendant.get(b"W").map(|widths| file.resolve(widths))
        {
            font.read_cid_widths(file, &widths);
        }
        font
    }

    /// `/W`: `first [w w …]` or `first last w`, repeated.
    fn read_cid_widths(&mut self, file: &File, items: &[Object]) {
        let mut at = 0;
        while at + 1 < items.len() {
            let Some(first) = items[at].int().and_then(|first| u32::try_from(first).ok()) else {
                at += 1;
                continue;
            };
            match file.resolve(&items[at + 1]) {
                Object::Array(each) => {
                    for (offset, width) in each.iter().enumerate() {
                        let width = width.number().unwrap_or(0.0) as f32;
                        self.widths
                            .insert(first.saturating_add(offset as u32), width);
                    }
                    at += 2;
                }
                last => {
                    let last = last.int().and_then(|last| u32::try_from(last).ok());
                    let width = items.get(at + 2).and_then(Object::number);
                    if let (Some(last), Some(width)) = (last, width) {
                        self.width_ranges.push((first, last, width as f32));
                    }
                    at += 3;
                }
            }
        }
    }

    /// The glyphs of a shown string.
    pub fn glyphs(&self, bytes: &[u8]) -> Vec<Glyph> {
        let mut glyphs = Vec::with_capacity(bytes.len());
        let mut rest = bytes;
        while !rest.is_empty() {
            let (code, length) = match &self.composite {
                Some(cmap) => cmap.next_code(rest),
                None => (u32::from(rest[0]), 1),
            };
            rest = &rest[length.min(rest.len())..];
            let text = (self.to_unicode.as_ref())
                .and_then(|cmap| cmap.text(code))
                .or_else(|| self.codes.get(code as usize).cloned().flatten())
                .or_else(|| {
                    (self.unicode_codes.then(|| char::from_u32(code)).flatten()).map(String::from)
                })
                .unwrap_or_default();
            let width_code = match &self.composite {
                Some(cmap) => cmap.cid(code),
                None => code,
            };
            glyphs.push(Glyph {
                text,
                width: self.width(width_code) * self.scale,
                word_space: length == 1 && code == 32,
            });
        }
        glyphs
    }

    fn width(&self, code: u32) -> f32 {
        if let Some(&width) = self.widths.get(&code) {
            return width;
        }
        (self.width_ranges.iter())
            .find(|(first, last, _)| (*first..=*last).contains(&code))
            .map_or(self.default_width, |&(_, _, width)| width)
    }
}

/// A simple font's text for each code: its base encoding (named, or the font program's own for
/// an embedded Type 1 font, else Standard for Type 1 and WinAnsi for TrueType), then its
/// `/Differences`.
fn simple_encoding(file: &File, dict: &Dict) -> Vec<Option<String>> {
    let encoding = dict.get(b"Encoding").map(|encoding| file.resolve(encoding));
    let named = |object: Option<&Object>| object.and_then(Object::name).and_then(Base::named);
    let base = match &encoding {
        Some(Object::Name(name)) => Base::named(name),
        Some(Object::Dict(encoding)) => named(encoding.get(b"BaseEncoding")),
        _ => None,
    };
    let mut codes: Vec<Option<String>> = match base {
        Some(base) => (0..=255u8)
            .map(|code| base.char(code).map(String::from))
            .collect(),
        None => builtin_encoding(file, dict).unwrap_or_else(|| {
            let base = if dict.is(b"Subtype", b"TrueType") {
                Base::WinAnsi
            } else {
                Base::Standard
            };
            (0..=255u8)
                .map(|code| base.char(code).map(String::from))
                .collect()
        }),
    };
    if let Some(Object::Dict(encoding)) = &encoding
        && let Some(Object::Array(differences)) =
            encoding.get(b"Differences").map(|d| file.resolve(d))
    {
        let mut code = 0usize;
        for item in &differences {
            match item {
                Object::Int(start) => code = (*start).clamp(0, 256) as usize,
                Object::Name(name) => {
                    if let Some(slot) = codes.get_mut(code) {
                        *slot = encoding::glyph_text(name);
                    }
                    code += 1;
                }
                _ => {}
            }
        }
    }
    codes
}

/// An embedded Type 1 font program's own encoding (`dup 65 /A put`), when it has one.
fn builtin_encoding(file: &File, dict: &Dict) -> Option<Vec<Option<String>>> {
    let descriptor = file.dict_at(dict, b"FontDescriptor")?;
    let program = file.decoded(descriptor.get(b"FontFile")?).ok()?;
    let clear = &program[..program.len().min(1 << 16)];
    let start = clear.windows(9).position(|window| window == b"/Encoding")?;
    let mut codes = vec![None; 256];
    let mut any = false;
    let text = String::from_utf8_lossy(&clear[start..]);
    let words: Vec<&str> = text.split_ascii_whitespace().take(256 * 4 + 16).collect();
    for window in words.windows(4) {
        if let ["dup", code, name, "put"] = window
            && let (Ok(code), Some(name)) = (code.parse::<usize>(), name.strip_prefix('/'))
            && code < 256
        {
            codes[code] = encoding::glyph_text(name.as_bytes());
            any = true;
        }
    }
    any.then_some(codes)
}

fn missing_width(file: &File, dict: &Dict) -> f32 {
    file.dict_at(dict, b"FontDescriptor")
        .and_then(|descriptor| descriptor.get(b"MissingWidth").and_then(Object::number))
        .filter(|&width| width > 0.0)
        .map_or(500.0, |width| width as f32)
}
