//! PDF's syntax (ISO 32000 §7.2–7.3): the objects a file and a content stream are written in —
//! numbers, strings, names, arrays, dictionaries, references — and a content stream's operators,
//! lexed from bytes. Lenient as readers are: a stray byte is skipped, an unterminated string ends
//! with the input, and nesting deeper than [`MAX_DEPTH`] reads as `null` rather than recursing on.

/// How deep arrays and dictionaries may nest: past it a value reads as `null`, so a hostile file
/// cannot exhaust the stack.
const MAX_DEPTH: usize = 64;

/// A PDF object. A stream's bytes are as written in the file (still encoded).
#[derive(Debug, Clone, PartialEq)]
pub enum Object {
    Null,
    Bool(bool),
    Int(i64),
    Real(f64),
    Name(Vec<u8>),
    String(Vec<u8>),
    Array(Vec<Object>),
    Dict(Dict),
    Ref(u32),
    Stream(Dict, Vec<u8>),
}

/// A dictionary, in the order it was written (dictionaries are small: a scan is quicker than a
/// map).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Dict(pub Vec<(Vec<u8>, Object)>);

impl Dict {
    pub fn get(&self, key: &[u8]) -> Option<&Object> {
        self.0
            .iter()
            .rev()
            .find(|(name, _)| name == key)
            .map(|(_, value)| value)
    }

    /// Whether `/Type` (or `/Subtype` when `key` says so) is `name`.
    pub fn is(&self, key: &[u8], name: &[u8]) -> bool {
        self.get(key).and_then(Object::name) == Some(name)
    }
}

impl Object {
    pub fn number(&self) -> Option<f64> {
        match *self {
            Object::Int(value) => Some(value as f64),
            Object::Real(value) => Some(value),
            _ => None,
        }
    }

    pub fn int(&self) -> Option<i64> {
        match *self {
            Object::Int(value) => Some(value),
            Object::Real(value) if value.is_finite() => Some(value as i64),
            _ => None,
        }
    }

    pub fn name(&self) -> Option<&[u8]> {
        match self {
            Object::Name(name) => Some(name),
            _ => None,
        }
    }

    pub fn dict(&self) -> Option<&Dict> {
        match self {
            Object::Dict(dict) | Object::Stream(dict, _) => Some(dict),
            _ => None,
        }
    }

    pub fn array(&self) -> Option<&[Object]> {
        match self {
            Object::Array(items) => Some(items),
            _ => None,
        }
    }
}

/// One token: an object's start or end, an operand, or a bare keyword (an operator, `obj`, `R`).
#[derive(Debug, PartialEq)]
pub enum Token<'a> {
    Object(Object),
    ArrayStart,
    ArrayEnd,
    DictStart,
    DictEnd,
    Keyword(&'a [u8]),
}

pub fn is_white(byte: u8) -> bool {
    matches!(byte, 0 | b'\t' | b'\n' | 0x0c | b'\r' | b' ')
}

fn is_delimiter(byte: u8) -> bool {
    matches!(
        byte,
        b'(' | b')' | b'<' | b'>' | b'[' | b']' | b'{' | b'}' | b'/' | b'%'
    )
}

fn is_regular(byte: u8) -> bool {
    !is_white(byte) && !is_delimiter(byte)
}

/// Reads tokens and objects from `bytes`, starting at `pos`.
pub struct Lexer<'a> {
    pub bytes: &'a [u8],
    pub pos: usize,
}

impl<'a> Lexer<'a> {
    pub fn new(bytes: &'a [u8], pos: usize) -> Self {
        Lexer { bytes, pos }
    }

    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.pos).copied()
    }

    pub fn skip_white(&mut self) {
        while let Some(byte) = self.peek() {
            if is_white(byte) {
                self.pos += 1;
            } else if byte == b'%' {
                while self
                    .peek()
                    .is_some_and(|byte| byte != b'\n' && byte != b'\r')
                {
                    self.pos += 1;
                }
            } else {
                break;
            }
        }
    }

    /// The next token, or `None` at the end of the input.
    pub fn token(&mut self) -> Option<Token<'a>> {
        self.skip_white();
        let byte = self.peek()?;
        let start = self.pos;
        self.pos += 1;
        Some(match byte {
            b'/' => Token::Object(Object::Name(self.name())),
            b'(' => Token::Object(Object::String(self.literal())),
            b'[' => Token::ArrayStart,
            b']' => Token::ArrayEnd,
            b'<' if self.peek() == Some(b'<') => {
                self.pos += 1;
                Token::DictStart
            }
            b'<' => Token::Object(Object::String(self.hex())),
            b'>' if self.peek() == Some(b'>') => {
                self.pos += 1;
                Token::DictEnd
            }
            b'0'..=b'9' | b'+' | b'-' | b'.' => Token::Object(self.number(start)),
            _ if is_delimiter(byte) => Token::Keyword(&self.bytes[start..self.pos]),
            _ => {
                while self.peek().is_some_and(is_regular) {
                    self.pos += 1;
                }
                match &self.bytes[start..self.pos] {
                    b"true" => Token::Object(Object::Bool(true)),
                    b"false" => Token::Object(Object::Bool(false)),
                    b"null" => Token::Object(Object::Null),
                    word => Token::Keyword(word),
                }
            }
        })
    }

    /// The next object: `None` at the end of the input or at a token that starts none (a
    /// keyword, a closing bracket). `N G R` reads as a reference.
    pub fn object(&mut self) -> Option<Object> {
        let token = self.token()?;
        self.object_from(token, 0)
    }

    fn object_from(&mut self, token: Token<'a>, depth: usize) -> Option<Object> {
        match token {
            Token::Object(Object::Int(number)) => Some(self.reference(number)),
            Token::Object(object) => Some(object),
            Token::ArrayStart => Some(self.array(depth + 1)),
            Token::DictStart => Some(Object::Dict(self.dict(depth + 1))),
            _ => None,
        }
    }

    /// `number`, or the reference `number G R` when that follows.
    fn reference(&mut self, number: i64) -> Object {
        let after = self.pos;
        if let (Ok(id), Some(Token::Object(Object::Int(0..=65535))), Some(Token::Keyword(b"R"))) =
            (u32::try_from(number), self.token(), self.token())
        {
            return Object::Ref(id);
        }
        self.pos = after;
        Object::Int(number)
    }

    fn array(&mut self, depth: usize) -> Object {
        let mut items = Vec::new();
        while let Some(token) = self.token() {
            match token {
                // A keyword ends an array left open (`endobj`, an operator): no array holds one.
                Token::ArrayEnd | Token::Keyword(_) => break,
                Token::DictEnd => {}
                token => match self.nested(token, depth) {
                    Some(item) => items.push(item),
                    None => break,
                },
            }
        }
        Object::Array(items)
    }

    /// The dictionary after `<<`, up to its `>>`.
    pub fn dict(&mut self, depth: usize) -> Dict {
        let mut entries = Vec::new();
        while let Some(token) = self.token() {
            let key = match token {
                Token::DictEnd | Token::Keyword(_) => break,
                Token::Object(Object::Name(key)) => key,
                // A stray value where a key belongs is skipped, as readers do.
                _ => continue,
            };
            let Some(token) = self.token() else { break };
            if matches!(token, Token::DictEnd | Token::Keyword(_)) {
                break;
            }
            if let Some(value) = self.nested(token, depth) {
                entries.push((key, value));
            }
        }
        Dict(entries)
    }

    /// An object inside an array or dictionary at `depth`: read to its end in any case, so
    /// what follows stays in step.
    fn nested(&mut self, token: Token<'a>, depth: usize) -> Option<Object> {
        if depth > MAX_DEPTH {
            return match token {
                Token::ArrayStart | Token::DictStart => {
                    self.skip_nested();
                    Some(Object::Null)
                }
                _ => Some(Object::Null),
            };
        }
        self.object_from(token, depth)
    }

    /// Skips to the end of an array or dictionary without building it (past the depth limit).
    fn skip_nested(&mut self) {
        let mut open = 1usize;
        while open > 0 {
            match self.token() {
                None => return,
                Some(Token::ArrayStart | Token::DictStart) => open += 1,
                Some(Token::ArrayEnd | Token::DictEnd) => open -= 1,
                Some(_) => {}
            }
        }
    }

    fn name(&mut self) -> Vec<u8> {
        let mut name = Vec::new();
        while let Some(byte) = self.peek().filter(|&byte| is_regular(byte)) {
            self.pos += 1;
            if byte == b'#'
                && let Some(value) = self.bytes.get(self.pos..self.pos + 2).and_then(hex_byte)
            {
                self.pos += 2;
                name.push(value);
                continue;
            }
            name.push(byte);
        }
        name
    }

    fn number(&mut self, start: usize) -> Object {
        while self
            .peek()
            .is_some_and(|byte| byte.is_ascii_digit() || matches!(byte, b'.' | b'-' | b'+'))
        {
            self.pos += 1;
        }
        let text = std::str::from_utf8(&self.bytes[start..self.pos]).unwrap_or("0");
        // Writers leave `--5` and `5.-`: the sign that leads counts, stray ones do not.
        let negative = text.starts_with('-');
        let digits: String = text
            .chars()
            .filter(|c| c.is_ascii_digit() || *c == '.')
            .collect();
        let sign = if negative { -1.0 } else { 1.0 };
        if !digits.contains('.')
            && let Ok(value) = digits.parse::<i64>()
        {
            return Object::Int(if negative { -value } else { value });
        }
        let first_dot = digits.find('.').map_or(digits.len(), |at| at + 1);
        let cleaned: String = digits[..first_dot]
            .chars()
            .chain(digits[first_dot..].chars().filter(|c| *c != '.'))
            .collect();
        Object::Real(sign * cleaned.parse::<f64>().unwrap_or(0.0))
    }

    fn literal(&mut self) -> Vec<u8> {
        let mut out = Vec::new();
        let mut open = 1usize;
        while let Some(byte) = self.peek() {
            self.pos += 1;
            match byte {
                b'(' => open += 1,
                b')' => {
                    open -= 1;
                    if open == 0 {
                        break;
                    }
                }
                b'\\' => {
                    if let Some(byte) = self.escape() {
                        out.push(byte);
                    }
                    continue;
                }
                _ => {}
            }
            out.push(byte);
        }
        out
    }

    /// The byte a backslash escape in a literal string stands for (`None` for a line break
    /// escaped away).
    fn escape(&mut self) -> Option<u8> {
        let byte = self.peek()?;
        self.pos += 1;
        Some(match byte {
            b'n' => b'\n',
            b'r' => b'\r',
            b't' => b'\t',
            b'b' => 0x08,
            b'f' => 0x0c,
            b'0'..=b'7' => {
                let mut value = u32::from(byte - b'0');
                for _ in 0..2 {
                    match self.peek() {
                        Some(digit @ b'0'..=b'7') => {
                            self.pos += 1;
                            value = value * 8 + u32::from(digit - b'0');
                        }
                        _ => break,
                    }
                }
                value as u8
            }
            b'\r' => {
                if self.peek() == Some(b'\n') {
                    self.pos += 1;
                }
                return None;
            }
            b'\n' => return None,
            other => other,
        })
    }

    fn hex(&mut self) -> Vec<u8> {
        let mut digits = Vec::new();
        while let Some(byte) = self.peek() {
            self.pos += 1;
            if byte == b'>' {
                break;
            }
            if byte.is_ascii_hexdigit() {
                digits.push(byte);
            }
        }
        if digits.len() % 2 == 1 {
            digits.push(b'0');
        }
        digits.chunks(2).filter_map(hex_byte).collect()
    }
}

fn hex_byte(pair: &[u8]) -> Option<u8> {
    let text = std::str::from_utf8(pair).ok()?;
    u8::from_str_radix(text, 16).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(text: &str) -> Object {
        Lexer::new(text.as_bytes(), 0).object().unwrap()
    }

    #[test]
    fn objects_read_as_written() {
        assert_eq!(read("-12"), Object::Int(-12));
        assert_eq!(read("3.5"), Object::Real(3.5));
        assert_eq!(read(".5"), Object::Real(0.5));
        assert_eq!(read("/A#20B"), Object::Name(b"A B".to_vec()));
        assert_eq!(
            read(
                r"(a\(b\)\n\101(c)\
d)"
            ),
            Object::String(b"a(b)\nA(c)d".to_vec())
        );
        assert_eq!(read("<48 656c6c6f7>"), Object::String(b"Hellop".to_vec()));
        assert_eq!(read("12 0 R"), Object::Ref(12));
        assert_eq!(
            read("[1 2 R /x]"),
            Object::Array(vec![Object::Ref(1), Object::Name(b"x".to_vec())])
        );
        let dict = read("<< /Type /Page /Kids [3 0 R 4 0 R] % note\n /N null >>");
        let dict = dict.dict().unwrap();
        assert!(dict.is(b"Type", b"Page"));
        assert_eq!(
            dict.get(b"Kids").unwrap().array().unwrap(),
            [Object::Ref(3), Object::Ref(4)]
        );
        assert_eq!(dict.get(b"N"), Some(&Object::Null));
    }

    #[test]
    fn nesting_past_the_limit_reads_as_null_without_recursing() {
        let deep = "[".repeat(100_000) + &"]".repeat(100_000);
        assert!(matches!(read(&deep), Object::Array(_)));
        let deep = "<< /A ".repeat(50_000);
        assert!(matches!(read(&deep), Object::Dict(_)));
    }
}
