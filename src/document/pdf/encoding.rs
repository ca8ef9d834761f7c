//! What a simple font's one-byte codes stand for (ISO 32000 Annex D): the standard Latin
//! encodings (WinAnsi, MacRoman, Standard), and glyph names (an encoding's `/Differences`) read as
//! Unicode — the Latin names of those encodings, `uniXXXX`, `uXXXX` and ligatures like `f_i`.

/// A named base encoding.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Base {
    WinAnsi,
    MacRoman,
    Standard,
}

impl Base {
    pub fn named(name: &[u8]) -> Option<Base> {
        match name {
            b"WinAnsiEncoding" => Some(Base::WinAnsi),
            b"MacRomanEncoding" => Some(Base::MacRoman),
            b"StandardEncoding" | b"MacExpertEncoding" => Some(Base::Standard),
            _ => None,
        }
    }

    /// The character `code` stands for, if any.
    pub fn char(self, code: u8) -> Option<char> {
        let high = usize::from(code.wrapping_sub(0x80));
        let found = match (self, code) {
            (_, 0..=0x1f) | (_, 0x7f) => None,
            (Base::Standard, b'\'') => Some('\u{2019}'),
            (Base::Standard, b'`') => Some('\u{2018}'),
            (_, 0x20..=0x7e) => Some(char::from(code)),
            (Base::WinAnsi, 0x80..=0x9f) => WIN_ANSI_80.chars().nth(high),
            (Base::WinAnsi, _) => Some(char::from(code)),
            (Base::MacRoman, _) => MAC_ROMAN_80.chars().nth(high),
            (Base::Standard, _) => standard_high(code),
        };
        found.filter(|&c| c != '\u{0}')
    }
}

/// WinAnsi's 0x80–0x9f (the rest is Latin-1); `\0` where it has none.
const WIN_ANSI_80: &str = "€\0‚ƒ„…†‡ˆ‰Š‹Œ\0Ž\0\0‘’“”•–—˜™š›œ\0žŸ";

/// MacRoman's 0x80–0xff.
const MAC_ROMAN_80: &str = "ÄÅÇÉÑÖÜáàâäãåçéèêëíìîïñóòôöõúùûü†°¢£§•¶ß®©™´¨≠ÆØ∞±≤≥¥µ∂∑∏π∫ªºΩæø\
    ¿¡¬√ƒ≈∆«»…\u{a0}ÀÃÕŒœ–—“”‘’÷◊ÿŸ⁄€‹›ﬁﬂ‡·‚„‰ÂÊÁËÈÍÎÏÌÓÔ\u{f8ff}ÒÚÛÙıˆ˜¯˘˙˚¸˝˛ˇ";

fn standard_high(code: u8) -> Option<char> {
    Some(match code {
        0xa1 => '¡',
        0xa2 => '¢',
        0xa3 => '£',
        0xa4 => '⁄',
        0xa5 => '¥',
        0xa6 => 'ƒ',
        0xa7 => '§',
        0xa8 => '¤',
        0xa9 => '\'',
        0xaa => '“',
        0xab => '«',
        0xac => '‹',
        0xad => '›',
        0xae => 'ﬁ',
        0xaf => 'ﬂ',
        0xb1 => '–',
        0xb2 => '†',
        0xb3 => '‡',
        0xb4 => '·',
        0xb6 => '¶',
        0xb7 => '•',
        0xb8 => '‚',
        0xb9 => '„',
        0xba => '”',
        0xbb => '»',
        0xbc => '…',
        0xbd => '‰',
        0xbf => '¿',
        0xc1 => '`',
        0xc2 => '´',
        0xc3 => 'ˆ',
        0xc4 => '˜',
        0xc5 => '¯',
        0xc6 => '˘',
        0xc7 => '˙',
        0xc8 => '¨',
        0xca => '˚',
        0xcb => '¸',
        0xcd => '˝',
        0xce => '˛',
        0xcf => 'ˇ',
        0xd0 => '—',
        0xe1 => 'Æ',
        0xe3 => 'ª',
        0xe8 => 'Ł',
        0xe9 => 'Ø',
        0xea => 'Œ',
        0xeb => 'º',
        0xf1 => 'æ',
        0xf5 => 'ı',
        0xf8 => 'ł',
        0xf9 => 'ø',
        0xfa => 'œ',
        0xfb => 'ß',
        _ => return None,
    })
}

/// Glyph names beyond a single letter or digit, as the Latin encodings name their characters.
const NAMES: &[(&str, char)] = &[
    ("space", ' '),
    ("exclam", '!'),
    ("quotedbl", '"'),
    ("numbersign", '#'),
    ("dollar", '$'),
    ("percent", '%'),
    ("ampersand", '&'),
    ("quotesingle", '\''),
    ("quoteright", '’'),
    ("parenleft", '('),
    ("parenright", ')'),
    ("asterisk", '*'),
    ("plus", '+'),
    ("comma", ','),
    ("hyphen", '-'),
    ("period", '.'),
    ("slash", '/'),
    ("zero", '0'),
    ("one", '1'),
    ("two", '2'),
    ("three", '3'),
    ("four", '4'),
    ("five", '5'),
    ("six", '6'),
    ("seven", '7'),
    ("eight", '8'),
    ("nine", '9'),
    ("colon", ':'),
    ("semicolon", ';'),
    ("less", '<'),
    ("equal", '='),
    ("greater", '>'),
    ("question", '?'),
    ("at", '@'),
    ("bracketleft", '['),
    ("backslash", '\\'),
    ("bracketright", ']'),
    ("asciicircum", '^'),
    ("underscore", '_'),
    ("grave", '`'),
    ("quoteleft", '‘'),
    ("braceleft", '{'),
    ("bar", '|'),
    ("braceright", '}'),
    ("asciitilde", '~'),
    ("exclamdown", '¡'),
    ("cent", '¢'),
    ("sterling", '£'),
    ("currency", '¤'),
    ("yen", '¥'),
    ("brokenbar", '¦'),
    ("section", '§'),
    ("dieresis", '¨'),
    ("copyright", '©'),
    ("ordfeminine", 'ª'),
    ("guillemotleft", '«'),
    ("logicalnot", '¬'),
    ("registered", '®'),
    ("macron", '¯'),
    ("degree", '°'),
    ("plusminus", '±'),
    ("twosuperior", '²'),
    ("threesuperior", '³'),
    ("acute", '´'),
    ("mu", 'µ'),
    ("paragraph", '¶'),
    ("periodcentered", '·'),
    ("cedilla", '¸'),
    ("onesuperior", '¹'),
    ("ordmasculine", 'º'),
    ("guillemotright", '»'),
    ("onequarter", '¼'),
    ("onehalf", '½'),
    ("threequarters", '¾'),
    ("questiondown", '¿'),
    ("Agrave", 'À'),
    ("Aacute", 'Á'),
    ("Acircumflex", 'Â'),
    ("Atilde", 'Ã'),
    ("Adieresis", 'Ä'),
    ("Aring", 'Å'),
    ("AE", 'Æ'),
    ("Ccedilla", 'Ç'),
    ("Egrave", 'È'),
    ("Eacute", 'É'),
    ("Ecircumflex", 'Ê'),
    ("Edieresis", 'Ë'),
    ("Igrave", 'Ì'),
    ("Iacute", 'Í'),
    ("Icircumflex", 'Î'),
    ("Idieresis", 'Ï'),
    ("Eth", 'Ð'),
    ("Ntilde", 'Ñ'),
    ("Ograve", 'Ò'),
    ("Oacute", 'Ó'),
    ("Ocircumflex", 'Ô'),
    ("Otilde", 'Õ'),
    ("Odieresis", 'Ö'),
    ("multiply", '×'),
    ("Oslash", 'Ø'),
    ("Ugrave", 'Ù'),
    ("Uacute", 'Ú'),
    ("Ucircumflex", 'Û'),
    ("Udieresis", 'Ü'),
    ("Yacute", 'Ý'),
    ("Thorn", 'Þ'),
    ("germandbls", 'ß'),
    ("agrave", 'à'),
    ("aacute", 'á'),
    ("acircumflex", 'â'),
    ("atilde", 'ã'),
    ("adieresis", 'ä'),
    ("aring", 'å'),
    ("ae", 'æ'),
    ("ccedilla", 'ç'),
    ("egrave", 'è'),
    ("eacute", 'é'),
    ("ecircumflex", 'ê'),
    ("edieresis", 'ë'),
    ("igrave", 'ì'),
    ("iacute", 'í'),
    ("icircumflex", 'î'),
    ("idieresis", 'ï'),
    ("eth", 'ð'),
    ("ntilde", 'ñ'),
    ("ograve", 'ò'),
    ("oacute", 'ó'),
    ("ocircumflex", 'ô'),
    ("otilde", 'õ'),
    ("odieresis", 'ö'),
    ("divide", '÷'),
    ("oslash", 'ø'),
    ("ugrave", 'ù'),
    ("uacute", 'ú'),
    ("ucircumflex", 'û'),
    ("udieresis", 'ü'),
    ("yacute", 'ý'),
    ("thorn", 'þ'),
    ("ydieresis", 'ÿ'),
    ("Euro", '€'),
    ("quotesinglbase", '‚'),
    ("florin", 'ƒ'),
    ("quotedblbase", '„'),
    ("ellipsis", '…'),
    ("dagger", '†'),
    ("daggerdbl", '‡'),
    ("circumflex", 'ˆ'),
    ("perthousand", '‰'),
    ("Scaron", 'Š'),
    ("guilsinglleft", '‹'),
    ("OE", 'Œ'),
    ("Zcaron", 'Ž'),
    ("quotedblleft", '“'),
    ("quotedblright", '”'),
    ("bullet", '•'),
    ("endash", '–'),
    ("emdash", '—'),
    ("tilde", '˜'),
    ("trademark", '™'),
    ("scaron", 'š'),
    ("guilsinglright", '›'),
    ("oe", 'œ'),
    ("zcaron", 'ž'),
    ("Ydieresis", 'Ÿ'),
    ("fraction", '⁄'),
    ("dotlessi", 'ı'),
    ("Lslash", 'Ł'),
    ("lslash", 'ł'),
    ("breve", '˘'),
    ("dotaccent", '˙'),
    ("ring", '˚'),
    ("hungarumlaut", '˝'),
    ("ogonek", '˛'),
    ("caron", 'ˇ'),
    ("minus", '−'),
    ("nbspace", '\u{a0}'),
    ("nonbreakingspace", '\u{a0}'),
    ("sfthyphen", '\u{ad}'),
    ("softhyphen", '\u{ad}'),
    ("fi", 'ﬁ'),
    ("fl", 'ﬂ'),
    ("ff", 'ﬀ'),
    ("ffi", 'ﬃ'),
    ("ffl", 'ﬄ'),
    ("notequal", '≠'),
    ("lessequal", '≤'),
    ("greaterequal", '≥'),
    ("infinity", '∞'),
    ("partialdiff", '∂'),
    ("summation", '∑'),
    ("product", '∏'),
    ("pi", 'π'),
    ("integral", '∫'),
    ("Omega", 'Ω'),
    ("radical", '√'),
    ("approxequal", '≈'),
    ("Delta", '∆'),
    ("lozenge", '◊'),
    ("apple", '\u{f8ff}'),
];

/// The text a glyph named `name` stands for: a name of the Latin encodings, `uniXXXX…`,
/// `uXXXX[XX]`, a ligature of names (`f_i`), a name with a variant suffix (`a.sc`), or a single
/// letter or digit.
pub fn glyph_text(name: &[u8]) -> Option<String> {
    let name = std::str::from_utf8(name).ok()?;
    let name = name.split('.').next().filter(|base| !base.is_empty())?;
    if name.contains('_') {
        return name
            .split('_')
            .map(|part| glyph_text(part.as_bytes()))
            .collect();
    }
    if let Some(&(_, c)) = NAMES.iter().find(|(known, _)| *known == name) {
        return Some(c.to_string());
    }
    if let Some(hex) = name.strip_prefix("uni")
        && hex.len() % 4 == 0
        && !hex.is_empty()
    {
        let units: Option<Vec<u16>> = (0..hex.len() / 4)
            .map(|at| u16::from_str_radix(hex.get(at * 4..at * 4 + 4)?, 16).ok())
            .collect();
        return String::from_utf16(&units?).ok();
    }
    if let Some(hex) = name.strip_prefix('u')
        && (4..=6).contains(&hex.len())
    {
        return u32::from_str_radix(hex, 16)
            .ok()
            .and_then(char::from_u32)
            .map(String::from);
    }
    let mut chars = name.chars();
    match (chars.next(), chars.next()) {
        (Some(c), None) if c.is_ascii_alphanumeric() => Some(c.to_string()),
        _ => None,
    }
}

/// Advance widths (thousandths of the text size) of the printable ASCII characters (0x20–0x7e)
/// of the standard fonts a PDF may use without embedding or describing them: Helvetica and
/// Times-Roman (their bold and italic faces measured by them; Courier is 600 throughout).
pub fn standard_width(base_font: &[u8], code: u8) -> Option<f32> {
    let name = std::str::from_utf8(base_font).ok()?;
    let table = if name.starts_with("Helvetica") || name.starts_with("Arial") {
        HELVETICA
    } else if name.starts_with("Times") {
        TIMES
    } else if name.starts_with("Courier") {
        return Some(600.0);
    } else {
        return None;
    };
    let index = usize::from(code.checked_sub(0x20)?);
    table.get(index).map(|&width| f32::from(width))
}

const HELVETICA: &[u16] = &[
    278, 278, 355, 556, 556, 889, 667, 191, 333, 333, 389, 584, 278, 333, 278, 278, 556, 556, 556,
    556, 556, 556, 556, 556, 556, 556, 278, 278, 584, 584, 584, 556, 1015, 667, 667, 722, 722, 667,
    611, 778, 722, 278, 500, 667, 556, 833, 722, 778, 667, 778, 722, 667, 611, 722, 667, 944, 667,
    667, 611, 278, 278, 278, 469, 556, 333, 556, 556, 500, 556, 556, 278, 556, 556, 222, 222, 500,
    222, 833, 556, 556, 556, 556, 333, 500, 278, 556, 500, 722, 500, 500, 500, 334, 260, 334, 584,
];

const TIMES: &[u16] = &[
    250, 333, 408, 500, 500, 833, 778, 180, 333, 333, 500, 564, 250, 333, 250, 278, 500, 500, 500,
    500, 500, 500, 500, 500, 500, 500, 278, 278, 564, 564, 564, 444, 921, 722, 667, 667, 722, 611,
    556, 722, 722, 333, 389, 722, 611, 889, 722, 722, 556, 722, 667, 556, 611, 722, 722, 944, 722,
    722, 611, 333, 278, 333, 469, 500, 333, 444, 500, 444, 500, 444, 333, 500, 500, 278, 278, 500,
    278, 778, 500, 500, 500, 500, 333, 389, 278, 500, 500, 722, 500, 500, 444, 480, 200, 480, 541,
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_and_names_read_as_their_characters() {
        assert_eq!(Base::WinAnsi.char(0x93), Some('“'));
        assert_eq!(Base::WinAnsi.char(0x81), None);
        assert_eq!(Base::WinAnsi.char(0xe9), Some('é'));
        assert_eq!(Base::MacRoman.char(0x8e), Some('é'));
        assert_eq!(Base::MacRoman.char(0xff), Some('ˇ'));
        assert_eq!(Base::Standard.char(b'\''), Some('’'));
        assert_eq!(glyph_text(b"quotedblleft").as_deref(), Some("“"));
        assert_eq!(glyph_text(b"uni00660069").as_deref(), Some("fi"));
        assert_eq!(glyph_text(b"u1F600").as_deref(), Some("😀"));
        assert_eq!(glyph_text(b"f_f_i").as_deref(), Some("ffi"));
        assert_eq!(glyph_text(b"a.sc").as_deref(), Some("a"));
        assert_eq!(glyph_text(b"g123"), None);
        assert_eq!(HELVETICA.len(), 95);
        assert_eq!(TIMES.len(), 95);
        assert_eq!(standard_width(b"Helvetica-Bold", b'W'), Some(944.0));
    }
}
