//! A PDF file's structure (ISO 32000 §7.5): where each object is (the cross-reference tables and
//! streams, back through every update, and objects packed in object streams), the objects
//! themselves, and the pages in order. A file whose cross-references are damaged or missing is
//! read by finding every `N G obj` in its bytes, as readers repair files. Every walk is bounded:
//! a reference chain, an update chain or a page tree that loops ends.

use std::cell::{Cell, RefCell};
use std::collections::{HashMap, HashSet};
use std::rc::Rc;

use super::filters;
use super::problem::Problem;
use super::syntax::{Dict, Lexer, Object, Token};

/// At most this many pages are walked: far above the operator's page limit.
const MAX_PAGE_NODES: usize = 1 << 16;
/// The attributes a page takes from the page tree's nodes above it when it does not state them.
const INHERITED: [&[u8]; 4] = [b"Resources", b"MediaBox", b"CropBox", b"Rotate"];
/// The most all of a document's streams may inflate to together, so that a page tree drawing
/// one large stream again and again is bounded too.
const MAX_DECODED_BYTES: usize = 1 << 30;

/// Where an object is written.
#[derive(Debug, Clone, Copy)]
enum Entry {
    At(usize),
    /// The object `index` of the object stream numbered here.
    Packed(u32, usize),
    Free,
}

/// An object stream, decoded: its objects' numbers and where each starts.
struct Packed {
    data: Vec<u8>,
    starts: Vec<(u32, usize)>,
}

pub struct File<'a> {
    bytes: &'a [u8],
    entries: HashMap<u32, Entry>,
    pub trailer: Dict,
    packed: RefCell<HashMap<u32, Rc<Packed>>>,
    decoded: Cell<usize>,
    /// A stream ran to the end of the file: the file is cut short, and text may be missing.
    cut_short: Cell<bool>,
    /// Objects read so far, each read once.
    cache: RefCell<HashMap<u32, Object>>,
    /// Bytes lexed so far, against [`File::budget`]: a damaged file whose objects all run to its
    /// end (an unclosed string after each) would otherwise take time square in its size.
    work: Cell<usize>,
    budget: usize,
}

impl<'a> File<'a> {
    /// The file in `bytes` and its pages in order: its cross-references read, or rebuilt from
    /// the objects when they do not hold.
    pub fn open(bytes: &'a [u8]) -> Result<(Self, Vec<Dict>), Problem> {
        if !crate::media_type::is_pdf(bytes) {
            return Err(Problem::Unreadable(
                "it does not start as a PDF does".into(),
            ));
        }
        let mut file = File {
            bytes,
            entries: HashMap::new(),
            trailer: Dict::default(),
            packed: RefCell::new(HashMap::new()),
            decoded: Cell::new(0),
            cut_short: Cell::new(false),
            cache: RefCell::new(HashMap::new()),
            work: Cell::new(0),
            budget: bytes.len().saturating_mul(16).saturating_add(16 << 20),
        };
        // Cross-references that do not lead to every page (a wrong offset, a table of another
        // version of the file) are rebuilt too.
        let read = file.read_cross_references();
        let pages = match read.and_then(|()| file.pages()) {
            Ok(pages) if file.catalog().is_some() => Some(pages),
            _ => {
                file.entries.clear();
                file.cache.borrow_mut().clear();
                file.packed.borrow_mut().clear();
                file.cut_short.set(false);
                file.trailer = Dict::default();
                file.rebuild();
                None
            }
        };
        if file.trailer.get(b"Encrypt").is_some() {
            return Err(Problem::Encrypted);
        }
        let pages = match pages {
            Some(pages) => pages,
            None => file.pages()?,
        };
        Ok((file, pages))
    }

    /// The object numbered `id`, or `null` where there is none.
    pub fn get(&self, id: u32) -> Object {
        if let Some(object) = self.cache.borrow().get(&id) {
            return object.clone();
        }
        let object = match self.entries.get(&id) {
            Some(&Entry::At(offset)) => self.object_at(offset, Some(id)).unwrap_or(Object::Null),
            Some(&Entry::Packed(stream, index)) => self.packed_object(stream, index),
            _ => Object::Null,
        };
        self.cache.borrow_mut().insert(id, object.clone());
        object
    }

    /// Counts `bytes` lexed; false once the budget is spent.
    fn spend(&self, bytes: usize) -> bool {
        self.work.set(self.work.get().saturating_add(bytes));
        self.work.get() <= self.budget
    }

    /// What went wrong while reading that the text cannot show: a file cut short, or one too
    /// damaged to read in bounded time.
    pub fn trouble(&self) -> Option<Problem> {
        if self.work.get() > self.budget {
            return Some(Problem::Unreadable(
                "it is damaged throughout: its objects run into each other".into(),
            ));
        }
        self.cut_short.get().then(|| {
            Problem::Unreadable(
                "a stream in it runs to the end of the file: it is cut short".into(),
            )
        })
    }

    /// `object`, or what it refers to (through at most a few references).
    pub fn resolve(&self, object: &Object) -> Object {
        let mut current = object.clone();
        for _ in 0..16 {
            match current {
                Object::Ref(id) => current = self.get(id),
                other => return other,
            }
        }
        Object::Null
    }

    /// The dictionary at `key` of `dict`, resolved.
    pub fn dict_at(&self, dict: &Dict, key: &[u8]) -> Option<Dict> {
        match self.resolve(dict.get(key)?) {
            Object::Dict(found) | Object::Stream(found, _) => Some(found),
            _ => None,
        }
    }

    /// A stream's bytes with its filters undone.
    pub fn decoded(&self, object: &Object) -> Result<Vec<u8>, Problem> {
        let Object::Stream(dict, data) = self.resolve(object) else {
            return Ok(Vec::new());
        };
        let decoded = filters::decode(&dict, data)?;
        let total = self.decoded.get().saturating_add(decoded.len());
        self.decoded.set(total);
        if total > MAX_DECODED_BYTES {
            return Err(Problem::TooLarge(format!(
                "its streams inflate past {} MiB together",
                MAX_DECODED_BYTES >> 20
            )));
        }
        Ok(decoded)
    }

    fn catalog(&self) -> Option<Dict> {
        self.dict_at(&self.trailer, b"Root")
    }

    /// Each page's dictionary, in order, with the attributes pages inherit ([`INHERITED`])
    /// filled in from their ancestors. A page the tree names but the file lacks is an error: the
    /// file is cut short or damaged, and reading the rest would lose text without a word.
    fn pages(&self) -> Result<Vec<Dict>, Problem> {
        let Some(root) = self
            .catalog()
            .and_then(|catalog| catalog.get(b"Pages").cloned())
        else {
            return Ok(Vec::new());
        };
        let mut pages = Vec::new();
        let mut seen = HashSet::new();
        // Depth first, each node with the attributes it inherits.
        let mut stack = vec![(root, Vec::<(Vec<u8>, Object)>::new())];
        while let Some((node, mut inherited)) = stack.pop() {
            if let Object::Ref(id) = node
                && !seen.insert(id)
            {
                continue;
            }
            if seen.len() > MAX_PAGE_NODES {
                break;
            }
            let Some(mut dict) = self.resolve(&node).dict().cloned() else {
                return Err(Problem::Unreadable(format!(
                    "page {} is missing: it may be cut short",
                    pages.len() + 1
                )));
            };
            for key in INHERITED {
                if let Some(value) = dict.get(key) {
                    inherited.retain(|(name, _)| name != key);
                    inherited.push((key.to_vec(), value.clone()));
                }
            }
            match dict.get(b"Kids").map(|kids| self.resolve(kids)) {
                Some(Object::Array(kids)) if !dict.is(b"Type", b"Page") => {
                    for kid in kids.into_iter().rev() {
                        stack.push((kid, inherited.clone()));
                    }
                }
                _ => {
                    for (key, value) in inherited {
                        if dict.get(&key).is_none() {
                            dict.0.push((key, value));
                        }
                    }
                    pages.push(dict);
                }
            }
        }
        Ok(pages)
    }

    /// Reads the cross-reference sections from the last one back through `/Prev`; an entry
    /// already read (a later update) wins.
    fn read_cross_references(&mut self) -> Result<(), Problem> {
        let tail = self.bytes.len().saturating_sub(2048);
        let marker = find_last(&self.bytes[tail..], b"startxref")
            .ok_or_else(|| Problem::Unreadable("it has no startxref".into()))?;
        let mut lexer = Lexer::new(self.bytes, tail + marker + 9);
        let mut next = match lexer.object() {
            Some(Object::Int(offset)) => usize::try_from(offset).ok(),
            _ => None,
        };
        let mut seen = HashSet::new();
        while let Some(offset) = next.filter(|offset| seen.insert(*offset)) {
            let trailer = self.read_section(offset)?;
            if let Some(stream) = trailer.get(b"XRefStm").and_then(Object::int)
                && let Ok(stream) = usize::try_from(stream)
                && seen.insert(stream)
            {
                self.read_section(stream)?;
            }
            next = trailer
                .get(b"Prev")
                .and_then(Object::int)
                .and_then(|prev| usize::try_from(prev).ok());
            for (key, value) in trailer.0 {
                if self.trailer.get(&key).is_none() {
                    self.trailer.0.push((key, value));
                }
            }
        }
        Ok(())
    }

    /// One section at `offset`, a table or a stream; its trailer dictionary.
    fn read_section(&mut self, offset: usize) -> Result<Dict, Problem> {
        let broken = || Problem::Unreadable("its cross-reference table is damaged".into());
        let mut lexer = Lexer::new(self.bytes, offset);
        if lexer.token() != Some(Token::Keyword(b"xref")) {
            let Ok(Object::Stream(dict, data)) = self.object_at(offset, None) else {
                return Err(broken());
            };
            self.read_stream_section(&dict, &filters::decode(&dict, data)?);
            return Ok(dict);
        }
        loop {
            let start = lexer.pos;
            match (lexer.token(), lexer.token()) {
                (
                    Some(Token::Object(Object::Int(first))),
                    Some(Token::Object(Object::Int(count))),
                ) => {
                    for id in first..first.saturating_add(count.min(1 << 24)) {
                        let (Some(Token::Object(Object::Int(at))), _, Some(Token::Keyword(kind))) =
                            (lexer.token(), lexer.token(), lexer.token())
                        else {
                            return Err(broken());
                        };
                        let entry = match kind {
                            b"n" => Entry::At(usize::try_from(at).map_err(|_| broken())?),
                            _ => Entry::Free,
                        };
                        let id = u32::try_from(id).map_err(|_| broken())?;
                        self.entries.entry(id).or_insert(entry);
                    }
                }
                _ => {
                    lexer.pos = start;
                    break;
                }
            }
        }
        match (lexer.token(), lexer.token()) {
            (Some(Token::Keyword(b"trailer")), Some(Token::DictStart)) => Ok(lexer.dict(1)),
            _ => Err(broken()),
        }
    }

    fn read_stream_section(&mut self, dict: &Dict, data: &[u8]) {
        let widths: Vec<usize> = (dict.get(b"W").and_then(Object::array).unwrap_or_default())
            .iter()
            .map(|width| width.int().unwrap_or(0).clamp(0, 8) as usize)
            .collect();
        let [kind_width, offset_width, index_width] = widths[..] else {
            return;
        };
        let size = dict.get(b"Size").and_then(Object::int).unwrap_or(0);
        let ranges: Vec<i64> = match dict.get(b"Index").and_then(Object::array) {
            Some(index) => index.iter().filter_map(Object::int).collect(),
            None => vec![0, size],
        };
        let row = kind_width + offset_width + index_width;
        let mut rows = data.chunks_exact(row.max(1));
        for range in ranges.as_chunks::<2>().0 {
            for id in range[0]..range[0].saturating_add(range[1].clamp(0, 1 << 24)) {
                let Some(row) = rows.next() else { return };
                let field = |from: usize, width: usize| {
                    row[from..from + width]
                        .iter()
                        .fold(0usize, |value, &byte| value << 8 | usize::from(byte))
                };
                let kind = if kind_width == 0 {
                    1
                } else {
                    field(0, kind_width)
                };
                let second = field(kind_width, offset_width);
                let third = field(kind_width + offset_width, index_width);
                let entry = match kind {
                    1 => Entry::At(second),
                    2 => Entry::Packed(second as u32, third),
                    _ => Entry::Free,
                };
                if let Ok(id) = u32::try_from(id) {
                    self.entries.entry(id).or_insert(entry);
                }
            }
        }
    }

    /// The cross-references rebuilt from every `N G obj` in the file (a later one wins, as an
    /// update would), the trailer from the last `trailer` or cross-reference stream, or else the
    /// catalog found among the objects.
    fn rebuild(&mut self) {
        static OBJECT: std::sync::LazyLock<regex::bytes::Regex> = std::sync::LazyLock::new(|| {
            regex::bytes::Regex::new(
                r"(?-u)(\d{1,10})[\x00\t\n\x0c\r ]+\d{1,5}[\x00\t\n\x0c\r ]+obj\b",
            )
            .expect("the pattern is valid")
        });
        for found in OBJECT.captures_iter(self.bytes) {
            let id = std::str::from_utf8(&found[1])
                .ok()
                .and_then(|id| id.parse().ok());
            if let (Some(id), Some(whole)) = (id, found.get(0)) {
                self.entries.insert(id, Entry::At(whole.start()));
            }
        }
        let mut ids: Vec<u32> = self.entries.keys().copied().collect();
        ids.sort_unstable();
        let mut catalog = None;
        for id in ids {
            let object = self.get(id);
            let Some(dict) = object.dict() else { continue };
            if dict.is(b"Type", b"ObjStm") {
                self.unpack_into_entries(id);
            } else if dict.is(b"Type", b"XRef") && dict.get(b"Root").is_some() {
                self.trailer = dict.clone();
            } else if dict.is(b"Type", b"Catalog") {
                catalog = Some(id);
            }
        }
        let mut at = 0;
        while let Some(found) = find_first(&self.bytes[at..], b"trailer") {
            let mut lexer = Lexer::new(self.bytes, at + found + 7);
            if let Some(Object::Dict(dict)) = lexer.object()
                && dict.get(b"Root").is_some()
            {
                self.trailer = dict;
            }
            at += found + 7;
        }
        if self.catalog().is_none()
            && let Some(id) = catalog
        {
            self.trailer.0.push((b"Root".to_vec(), Object::Ref(id)));
        }
    }

    fn unpack_into_entries(&mut self, stream: u32) {
        if let Some(packed) = self.packed(stream) {
            for (index, &(id, _)) in packed.starts.iter().enumerate() {
                self.entries
                    .entry(id)
                    .or_insert(Entry::Packed(stream, index));
            }
        }
    }

    /// The indirect object written at `offset` (`N G obj … endobj`), a stream with its bytes;
    /// an error where another object than `expected` is written there (a wrong offset).
    fn object_at(&self, offset: usize, expected: Option<u32>) -> Result<Object, Problem> {
        let broken =
            || Problem::Unreadable(format!("no object where one is said to be ({offset})"));
        if self.work.get() > self.budget {
            return Err(broken());
        }
        let mut lexer = Lexer::new(self.bytes, offset);
        match (lexer.token(), lexer.token(), lexer.token()) {
            (
                Some(Token::Object(Object::Int(id))),
                Some(Token::Object(Object::Int(_))),
                Some(Token::Keyword(b"obj")),
            ) if expected.is_none_or(|expected| i64::from(expected) == id) => {}
            _ => return Err(broken()),
        }
        let object = lexer.object().unwrap_or(Object::Null);
        self.spend(lexer.pos.saturating_sub(offset));
        let Object::Dict(dict) = object else {
            return Ok(object);
        };
        if lexer.token() != Some(Token::Keyword(b"stream")) {
            return Ok(Object::Dict(dict));
        }
        let mut start = lexer.pos;
        if self.bytes.get(start) == Some(&b'\r') {
            start += 1;
        }
        if self.bytes.get(start) == Some(&b'\n') {
            start += 1;
        }
        let data = self.stream_data(&dict, start);
        Ok(Object::Stream(dict, data.to_vec()))
    }

    /// A stream's bytes from `start`: `/Length` of them when `endstream` follows there, else up
    /// to the next `endstream` (a wrong or indirect length to a damaged object).
    fn stream_data(&self, dict: &Dict, start: usize) -> &'a [u8] {
        let rest = &self.bytes[start.min(self.bytes.len())..];
        let length = match dict.get(b"Length") {
            Some(Object::Int(length)) => usize::try_from(*length).ok(),
            // Read as a bare number: a stream whose length refers to itself must not recurse.
            Some(Object::Ref(id)) => match self.entries.get(id) {
                Some(&Entry::At(offset)) => {
                    let mut lexer = Lexer::new(self.bytes, offset);
                    let _ = (lexer.token(), lexer.token(), lexer.token());
                    lexer
                        .object()
                        .and_then(|length| usize::try_from(length.int()?).ok())
                }
                _ => None,
            },
            _ => None,
        };
        if let Some(length) = length.filter(|&length| length <= rest.len()) {
            let mut after = Lexer::new(rest, length);
            if after.token() == Some(Token::Keyword(b"endstream")) {
                return &rest[..length];
            }
        }
        let found = find_first(rest, b"endstream");
        self.spend(found.unwrap_or(rest.len()));
        let end = found.unwrap_or_else(|| {
            self.cut_short.set(true);
            rest.len()
        });
        let mut data = &rest[..end];
        if let Some(trimmed) = data.strip_suffix(b"\n") {
            data = trimmed.strip_suffix(b"\r").unwrap_or(trimmed);
        } else if let Some(trimmed) = data.strip_suffix(b"\r") {
            data = trimmed;
        }
        data
    }

    fn packed(&self, stream: u32) -> Option<Rc<Packed>> {
        if let Some(packed) = self.packed.borrow().get(&stream) {
            return Some(Rc::clone(packed));
        }
        let Some(&Entry::At(offset)) = self.entries.get(&stream) else {
            return None;
        };
        let Ok(Object::Stream(dict, data)) = self.object_at(offset, Some(stream)) else {
            return None;
        };
        let data = filters::decode(&dict, data).ok()?;
        let first = dict.get(b"First").and_then(Object::int).unwrap_or(0).max(0) as usize;
        let count = dict
            .get(b"N")
            .and_then(Object::int)
            .unwrap_or(0)
            .clamp(0, 1 << 20) as usize;
        let mut lexer = Lexer::new(&data, 0);
        let mut starts = Vec::with_capacity(count);
        for _ in 0..count {
            match (lexer.token(), lexer.token()) {
                (Some(Token::Object(Object::Int(id))), Some(Token::Object(Object::Int(at)))) => {
                    let (Ok(id), Ok(at)) = (u32::try_from(id), usize::try_from(at)) else {
                        break;
                    };
                    starts.push((id, first.saturating_add(at)));
                }
                _ => break,
            }
        }
        let packed = Rc::new(Packed { data, starts });
        self.packed.borrow_mut().insert(stream, Rc::clone(&packed));
        Some(packed)
    }

    fn packed_object(&self, stream: u32, index: usize) -> Object {
        let Some(packed) = self.packed(stream) else {
            return Object::Null;
        };
        let Some(&(_, start)) = packed.starts.get(index) else {
            return Object::Null;
        };
        if self.work.get() > self.budget {
            return Object::Null;
        }
        let mut lexer = Lexer::new(&packed.data, start);
        let object = lexer.object().unwrap_or(Object::Null);
        self.spend(lexer.pos.saturating_sub(start));
        object
    }
}

fn find_first(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack
        .windows(needle.len())
        .position(|window| window == needle)
}

fn find_last(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack
        .windows(needle.len())
        .rposition(|window| window == needle)
}
