//! A page's content stream run for its text (ISO 32000 §8.4, §9.3–9.4): the graphics state's
//! matrix, the text state, and each glyph shown placed on the page, through the forms the page
//! draws. What draws no text (paths, images, colour) is passed over. Bounded: forms nest at most
//! [`MAX_FORM_DEPTH`] deep and a page runs at most [`MAX_OPERATIONS`] operators.

use std::collections::HashMap;
use std::rc::Rc;

use super::file::File;
use super::font::Font;
use super::layout::Char;
use super::problem::Problem;
use super::syntax::{Dict, Lexer, Object, Token, is_white};

const MAX_FORM_DEPTH: usize = 8;
const MAX_OPERATIONS: usize = 4_000_000;
const MAX_SAVED_STATES: usize = 256;
/// No operator takes more operands than this: more are a damaged stream, and only the last are
/// kept.
const MAX_OPERANDS: usize = 16;

type Matrix = [f32; 6];
const IDENTITY: Matrix = [1.0, 0.0, 0.0, 1.0, 0.0, 0.0];

/// `a` then `b`: a point goes through `a` first.
fn multiply(a: &Matrix, b: &Matrix) -> Matrix {
    [
        a[0] * b[0] + a[1] * b[2],
        a[0] * b[1] + a[1] * b[3],
        a[2] * b[0] + a[3] * b[2],
        a[2] * b[1] + a[3] * b[3],
        a[4] * b[0] + a[5] * b[2] + b[4],
        a[4] * b[1] + a[5] * b[3] + b[5],
    ]
}

/// The matrix the six numbers at the end of `operands` write (`a b c d e f`).
fn matrix_of(operands: &[Object]) -> Option<Matrix> {
    let numbers = operands.get(operands.len().checked_sub(6)?..)?;
    let mut matrix = IDENTITY;
    for (slot, number) in matrix.iter_mut().zip(numbers) {
        *slot = number.number()? as f32;
    }
    Some(matrix)
}

fn translate(x: f32, y: f32) -> Matrix {
    [1.0, 0.0, 0.0, 1.0, x, y]
}

#[derive(Clone)]
struct State {
    ctm: Matrix,
    font: Option<Rc<Font>>,
    size: f32,
    char_spacing: f32,
    word_spacing: f32,
    horizontal: f32,
    leading: f32,
    rise: f32,
}

/// Runs pages' contents; fonts are loaded once for the whole document.
pub struct Runner<'f, 'a> {
    file: &'f File<'a>,
    fonts: HashMap<u32, Rc<Font>>,
    /// A stream too large to read: the page's text would be missing, so the document fails.
    problem: Option<Problem>,
}

/// What one content stream's resource names stand for, each looked up once: a stream may name
/// the same font or form millions of times.
#[derive(Default)]
struct Names {
    fonts: HashMap<Vec<u8>, Option<Rc<Font>>>,
    forms: HashMap<Vec<u8>, Option<Rc<Object>>>,
}

/// One run: the state and what it has placed.
struct Run {
    state: State,
    saved: Vec<State>,
    text_matrix: Matrix,
    line_matrix: Matrix,
    chars: Vec<Char>,
    operations: usize,
    /// Whether anything besides text was drawn: paths filled or stroked, shadings, images,
    /// XObjects (a scanned page is an image and nothing else).
    painted: bool,
}

/// What a page draws: its glyphs, and whether it paints anything else.
pub struct Drawn {
    pub chars: Vec<Char>,
    pub painted: bool,
}

impl<'f, 'a> Runner<'f, 'a> {
    pub fn new(file: &'f File<'a>) -> Self {
        Runner {
            file,
            fonts: HashMap::new(),
            problem: None,
        }
    }

    /// A stream's bytes, decoded; empty for one that is damaged, as readers show what they can.
    fn decoded(&mut self, object: &Object) -> Vec<u8> {
        match self.file.decoded(object) {
            Ok(bytes) => bytes,
            Err(problem) => {
                if matches!(problem, Problem::TooLarge(_)) {
                    self.problem.get_or_insert(problem);
                }
                Vec::new()
            }
        }
    }

    /// The glyphs a page shows, and whether it paints anything else.
    pub fn page(&mut self, page: &Dict) -> Result<Drawn, Problem> {
        let resources = self.file.dict_at(page, b"Resources").unwrap_or_default();
        let mut content = Vec::new();
        match page
            .get(b"Contents")
            .map(|contents| self.file.resolve(contents))
        {
            Some(Object::Array(parts)) => {
                for part in &parts {
                    content.extend(self.decoded(part));
                    content.push(b'\n');
                }
            }
            Some(stream @ Object::Stream(..)) => content = self.decoded(&stream),
            _ => {}
        }
        let mut run = Run {
            state: State {
                ctm: IDENTITY,
                font: None,
                size: 0.0,
                char_spacing: 0.0,
                word_spacing: 0.0,
                horizontal: 1.0,
                leading: 0.0,
                rise: 0.0,
            },
            saved: Vec::new(),
            text_matrix: IDENTITY,
            line_matrix: IDENTITY,
            chars: Vec::new(),
            operations: 0,
            painted: false,
        };
        self.run(&mut run, &content, &resources, 0);
        match self.problem.take() {
            Some(problem) => Err(problem),
            None => Ok(Drawn {
                chars: run.chars,
                painted: run.painted,
            }),
        }
    }

    fn run(&mut self, run: &mut Run, content: &[u8], resources: &Dict, depth: usize) {
        let mut lexer = Lexer::new(content, 0);
        let mut operands: Vec<Object> = Vec::new();
        let mut names = Names::default();
        while let Some(token) = lexer.token() {
            let operator = match token {
                Token::Keyword(operator) => operator,
                Token::ArrayStart | Token::DictStart => {
                    lexer.pos -= if token == Token::ArrayStart { 1 } else { 2 };
                    push_operand(&mut operands, lexer.object());
                    continue;
                }
                Token::Object(object) => {
                    push_operand(&mut operands, Some(object));
                    continue;
                }
                Token::ArrayEnd | Token::DictEnd => continue,
            };
            run.operations += 1;
            if run.operations > MAX_OPERATIONS {
                return;
            }
            if operator == b"BI" {
                run.painted = true;
                skip_inline_image(&mut lexer);
            } else if operator == b"Do" {
                run.painted = true;
                if let Some(Object::Name(name)) = operands.last() {
                    self.form(run, resources, &mut names, name, depth);
                }
            } else if operator == b"Tf" {
                if let Some(Object::Name(name)) = operands.first() {
                    run.state.font = match names.fonts.get(name) {
                        Some(font) => font.clone(),
                        None => {
                            let font = self.font(resources, name);
                            names.fonts.insert(name.clone(), font.clone());
                            font
                        }
                    };
                }
                run.state.size =
                    (operands.get(1).and_then(Object::number)).map_or(0.0, |size| size as f32);
            } else {
                Self::operate(run, operator, &operands);
            }
            operands.clear();
        }
    }

    fn operate(run: &mut Run, operator: &[u8], operands: &[Object]) {
        let number = |index: usize| -> f32 {
            operands
                .get(index)
                .and_then(Object::number)
                .map_or(0.0, |value| value as f32)
        };
        let state = &mut run.state;
        match operator {
            b"q" if run.saved.len() < MAX_SAVED_STATES => run.saved.push(state.clone()),
            b"Q" => {
                if let Some(saved) = run.saved.pop() {
                    *state = saved;
                }
            }
            b"cm" => {
                if let Some(matrix) = matrix_of(operands) {
                    state.ctm = multiply(&matrix, &state.ctm);
                }
            }
            b"BT" => {
                run.text_matrix = IDENTITY;
                run.line_matrix = IDENTITY;
            }
            b"Tc" => state.char_spacing = number(0),
            b"Tw" => state.word_spacing = number(0),
            b"Tz" => state.horizontal = number(0) / 100.0,
            b"TL" => state.leading = number(0),
            b"Ts" => state.rise = number(0),
            b"Td" => run.next_line(number(0), number(1)),
            b"TD" => {
                run.state.leading = -number(1);
                run.next_line(number(0), number(1));
            }
            b"Tm" => {
                if let Some(matrix) = matrix_of(operands) {
                    run.line_matrix = matrix;
                    run.text_matrix = matrix;
                }
            }
            b"T*" => run.next_line(0.0, -run.state.leading),
            b"Tj" => run.show_operand(operands.first()),
            b"'" => {
                run.next_line(0.0, -run.state.leading);
                run.show_operand(operands.first());
            }
            b"\"" => {
                run.state.word_spacing = number(0);
                run.state.char_spacing = number(1);
                run.next_line(0.0, -run.state.leading);
                run.show_operand(operands.get(2));
            }
            b"TJ" => run.show_array(operands.first().and_then(Object::array).unwrap_or_default()),
            b"f" | b"F" | b"f*" | b"B" | b"B*" | b"b" | b"b*" | b"S" | b"s" | b"sh" => {
                run.painted = true;
            }
            _ => {}
        }
    }

    /// The font named `name` in `resources`, loaded once per object.
    fn font(&mut self, resources: &Dict, name: &[u8]) -> Option<Rc<Font>> {
        let fonts = self.file.dict_at(resources, b"Font")?;
        let entry = fonts.get(name)?;
        if let Object::Ref(id) = entry
            && let Some(font) = self.fonts.get(id)
        {
            return Some(Rc::clone(font));
        }
        let font = Rc::new(Font::load(self.file, self.file.resolve(entry).dict()?));
        if let Object::Ref(id) = entry {
            self.fonts.insert(*id, Rc::clone(&font));
        }
        Some(font)
    }

    /// Draws the form XObject `name`, with its matrix and its own resources (or the page's).
    fn form(
        &mut self,
        run: &mut Run,
        resources: &Dict,
        names: &mut Names,
        name: &[u8],
        depth: usize,
    ) {
        if depth >= MAX_FORM_DEPTH {
            return;
        }
        let stream = names.forms.entry(name.to_vec()).or_insert_with(|| {
            let stream = self.file.dict_at(resources, b"XObject").map(|objects| {
                objects
                    .get(name)
                    .map_or(Object::Null, |form| self.file.resolve(form))
            })?;
            let is_form =
                matches!(&stream, Object::Stream(dict, _) if dict.is(b"Subtype", b"Form"));
            is_form.then(|| Rc::new(stream))
        });
        let Some(stream) = stream.clone() else { return };
        let Object::Stream(dict, _) = stream.as_ref() else {
            return;
        };
        let content = self.decoded(&stream);
        let own = self.file.dict_at(dict, b"Resources");
        let saved = run.state.clone();
        if let Some(Object::Array(matrix)) = dict.get(b"Matrix").map(|m| self.file.resolve(m))
            && let Some(matrix) = matrix_of(&matrix)
        {
            run.state.ctm = multiply(&matrix, &run.state.ctm);
        }
        let (text_matrix, line_matrix) = (run.text_matrix, run.line_matrix);
        self.run(run, &content, own.as_ref().unwrap_or(resources), depth + 1);
        run.state = saved;
        (run.text_matrix, run.line_matrix) = (text_matrix, line_matrix);
    }
}

impl Run {
    fn next_line(&mut self, x: f32, y: f32) {
        self.line_matrix = multiply(&translate(x, y), &self.line_matrix);
        self.text_matrix = self.line_matrix;
    }

    /// `TJ`: strings shown, numbers moving the next glyph back by thousandths of the size.
    fn show_array(&mut self, items: &[Object]) {
        for item in items {
            match item {
                Object::String(_) => self.show_operand(Some(item)),
                _ => {
                    let adjust = item.number().unwrap_or(0.0) as f32;
                    let shift = -adjust / 1000.0 * self.state.size * self.state.horizontal;
                    self.text_matrix = multiply(&translate(shift, 0.0), &self.text_matrix);
                }
            }
        }
    }

    fn show_operand(&mut self, operand: Option<&Object>) {
        if let (Some(Object::String(bytes)), Some(font)) = (operand, self.state.font.clone()) {
            self.show(&font, bytes);
        }
    }

    /// Places each glyph of `bytes` and moves the text matrix past it.
    fn show(&mut self, font: &Font, bytes: &[u8]) {
        let state = &self.state;
        let (size, horizontal) = (state.size, state.horizontal);
        let text_space = [size * horizontal, 0.0, 0.0, size, 0.0, state.rise];
        for glyph in font.glyphs(bytes) {
            let device = multiply(&multiply(&text_space, &self.text_matrix), &self.state.ctm);
            let height = device[2].hypot(device[3]);
            if !glyph.text.is_empty() {
                let advance = glyph.width * device[0];
                self.chars.push(Char {
                    text: glyph.text,
                    x0: device[4].min(device[4] + advance),
                    x1: device[4].max(device[4] + advance),
                    y: device[5],
                    size: height,
                });
            }
            let spacing = self.state.char_spacing
                + if glyph.word_space {
                    self.state.word_spacing
                } else {
                    0.0
                };
            let shift = (glyph.width * size + spacing) * horizontal;
            self.text_matrix = multiply(&translate(shift, 0.0), &self.text_matrix);
        }
    }
}

fn push_operand(operands: &mut Vec<Object>, operand: Option<Object>) {
    if operands.len() == MAX_OPERANDS {
        operands.remove(0);
    }
    operands.extend(operand);
}

/// Moves past an inline image (`BI … ID <data> EI`): its data is not PDF syntax.
fn skip_inline_image(lexer: &mut Lexer) {
    while let Some(token) = lexer.token() {
        if token == Token::Keyword(b"ID") {
            break;
        }
    }
    let bytes = lexer.bytes;
    let mut at = lexer.pos + 1;
    while at + 2 <= bytes.len() {
        if bytes[at..].starts_with(b"EI")
            && is_white(bytes[at - 1])
            && bytes.get(at + 2).is_none_or(|&after| is_white(after))
        {
            lexer.pos = at + 2;
            return;
        }
        at += 1;
    }
    lexer.pos = bytes.len();
}
