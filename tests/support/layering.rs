//! The import rules both crates are held to (`tests/layering.rs`, `host/tests/layering.rs`).
//!
//! The reader sees every path into the crate a file's code names: after `crate::`, `super::`
//! and `self::`, in `use` trees with their nested `{…}` groups followed to each leaf, and in
//! expressions (`crate::time::rfc3339(…)`); and after a name a `mod x;` or a `use` brought in
//! (`one::finish(…)` after `use super::one;`). Each path is resolved to the file that holds what
//! it names: the deepest module of the path that has a file (`crate::content::one::finish` is
//! `src/content/one.rs`; `crate::content::long_text::extract` is `src/content/long_text/mod.rs`).
//!
//! The rules: every path points down the module map at the top of the crate's `lib.rs`; the
//! files import each other without a cycle, every file a node (`mod.rs`, `lib.rs` and
//! `main.rs` too: a `mod.rs` with logic is a file like any other); the sibling files and
//! folders inside each folder import each other without a cycle, a folder counted as one node;
//! and no file takes anything from its folder's `mod.rs`.
#![allow(dead_code)]

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// One row of the module map: a module and what it may use.
pub struct Row {
    pub module: String,
    pub may_use: BTreeSet<String>,
}

/// The rows of the table in `src/lib.rs`'s crate doc, in order.
pub fn module_map(lib: &str) -> Vec<Row> {
    lib.lines()
        .filter_map(|line| line.strip_prefix("//! |"))
        .filter_map(|row| {
            let cells: Vec<&str> = row.split('|').map(str::trim).collect();
            let module = cells.first()?.trim_matches(|c| "[]`".contains(c));
            if module.is_empty() || module == "module" || module.starts_with("---") {
                return None;
            }
            let may_use = cells
                .get(2)?
                .split(',')
                .map(str::trim)
                .filter(|name| !name.is_empty() && *name != "—")
                .map(str::to_owned)
                .collect();
            Some(Row {
                module: module.to_owned(),
                may_use,
            })
        })
        .collect()
}

/// Every `.rs` file under `dir`, in order.
pub fn rust_files(dir: &Path, found: &mut Vec<PathBuf>) {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            rust_files(&path, found);
        } else if path.extension().is_some_and(|ext| ext == "rs") {
            found.push(path);
        }
    }
}

/// The code of a file: its unit tests (at the end, after `#[cfg(test)] mod tests`) cut off and
/// every comment blanked, each line where it was (so that line numbers still hold).
pub fn code(text: &str) -> String {
    let text = text
        .split("#[cfg(test)]\nmod tests")
        .next()
        .unwrap_or_default();
    text.lines()
        .map(|line| {
            if line.trim_start().starts_with("//") {
                ""
            } else {
                line.split(" // ").next().unwrap_or_default()
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// One path a `use` tree or an expression names after a prefix, as written: `a::{b, c::{d, e}}`
/// gives `a::b`, `a::c::d` and `a::c::e`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Leaf {
    /// The segments after the prefix (`self` in a group names the path before it).
    pub segments: Vec<String>,
    /// `a::*`: every public name of `a`.
    pub glob: bool,
    /// The name the leaf is known by in the file: its `as` alias, or its last segment.
    pub name: Option<String>,
    /// The line the prefix is on, from 1.
    pub line: usize,
}

/// Reads identifiers, `::`, groups and aliases from a position in a file's code.
struct Cursor<'a> {
    text: &'a str,
    at: usize,
}

impl Cursor<'_> {
    fn skip_space(&mut self) {
        let rest = &self.text[self.at..];
        self.at += rest.len() - rest.trim_start().len();
    }

    fn eat(&mut self, token: &str) -> bool {
        self.skip_space();
        let found = self.text[self.at..].starts_with(token);
        if found {
            self.at += token.len();
        }
        found
    }

    fn ident(&mut self) -> Option<String> {
        self.skip_space();
        let ident: String = self.text[self.at..]
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect();
        if ident.is_empty() || ident.starts_with(|c: char| c.is_ascii_digit()) {
            return None;
        }
        self.at += ident.len();
        Some(ident)
    }

    /// `as name` after a path.
    fn alias(&mut self) -> Option<String> {
        let start = self.at;
        if self.ident().as_deref() == Some("as")
            && let Some(alias) = self.ident()
        {
            return Some(alias);
        }
        self.at = start;
        None
    }
}

/// The leaves of the path tree at the cursor, each after `path`.
fn tree(cursor: &mut Cursor, mut path: Vec<String>, line: usize, leaves: &mut Vec<Leaf>) {
    loop {
        if cursor.eat("{") {
            while !cursor.eat("}") {
                let before = cursor.at;
                tree(cursor, path.clone(), line, leaves);
                if !cursor.eat(",") {
                    cursor.eat("}");
                    return;
                }
                if cursor.at == before {
                    return;
                }
            }
            return;
        }
        if cursor.eat("*") {
            leaves.push(Leaf {
                segments: path,
                glob: true,
                name: None,
                line,
            });
            return;
        }
        let Some(segment) = cursor.ident() else {
            if !path.is_empty() {
                let name = path.last().cloned();
                leaves.push(Leaf {
                    segments: path,
                    glob: false,
                    name,
                    line,
                });
            }
            return;
        };
        if segment != "self" || path.is_empty() {
            path.push(segment);
        }
        if !cursor.eat("::") {
            let name = cursor.alias().or_else(|| path.last().cloned());
            leaves.push(Leaf {
                segments: path,
                glob: false,
                name,
                line,
            });
            return;
        }
    }
}

/// Whether `code[at..]` starts a path rather than continuing one or a longer word.
fn starts_a_path(code: &str, at: usize) -> bool {
    !code[..at]
        .chars()
        .last()
        .is_some_and(|c| c.is_alphanumeric() || c == '_' || c == ':')
}

/// The leaves of every path a file's code names after `prefix` (`crate::`, `super::`, `self::`
/// or `name::`), where the prefix starts a path.
pub fn paths_after(code: &str, prefix: &str) -> Vec<Leaf> {
    scan(code, &[prefix], &mut Vec::new())
        .into_iter()
        .map(|(_, leaf)| leaf)
        .collect()
}

/// The leaves of every path that starts with one of `prefixes`, each with its prefix, in the
/// order of the code; a path inside one read before (`self::` in `crate::a::{self::b}`, or in
/// `consumed`) is part of that one.
pub fn scan<'p>(
    code: &str,
    prefixes: &[&'p str],
    consumed: &mut Vec<(usize, usize)>,
) -> Vec<(&'p str, Leaf)> {
    let mut starts: Vec<(usize, &str)> = prefixes
        .iter()
        .flat_map(|prefix| code.match_indices(prefix).map(|(at, _)| (at, *prefix)))
        .collect();
    starts.sort();
    let mut leaves = Vec::new();
    for (start, prefix) in starts {
        let inside = consumed
            .iter()
            .any(|(from, to)| (*from..*to).contains(&start));
        if inside || !starts_a_path(code, start) {
            continue;
        }
        let line = code[..start].matches('\n').count() + 1;
        let mut cursor = Cursor {
            text: code,
            at: start + prefix.len(),
        };
        let mut found = Vec::new();
        tree(&mut cursor, Vec::new(), line, &mut found);
        consumed.push((start, cursor.at));
        leaves.extend(found.into_iter().map(|leaf| (prefix, leaf)));
    }
    leaves
}

/// The modules a file declares with `mod name;` (each a file of its own).
pub fn declared_modules(code: &str) -> Vec<String> {
    code.lines()
        .filter_map(|line| {
            let line = line.trim();
            let line = match line.strip_prefix("pub") {
                Some(rest) if rest.starts_with('(') => rest.split_once(')')?.1.trim_start(),
                Some(rest) => rest.trim_start(),
                None => line,
            };
            let name = line.strip_prefix("mod ")?.strip_suffix(';')?.trim();
            Some(name.to_owned())
        })
        .collect()
}

/// `src/schema/subset/lower.rs` → `["schema", "subset", "lower"]`; `mod.rs` names its folder;
/// the crate roots (`lib.rs`, `main.rs`) are `[]`.
pub fn module_of(src: &Path, file: &Path) -> Vec<String> {
    let relative = file.strip_prefix(src).unwrap().with_extension("");
    let mut parts: Vec<String> = relative
        .components()
        .map(|part| part.as_os_str().to_string_lossy().into_owned())
        .collect();
    if parts.last().is_some_and(|last| last == "mod") {
        parts.pop();
    }
    if parts == ["lib"] || parts == ["main"] {
        parts.clear();
    }
    parts
}

/// The absolute module path `segments` after `prefix` names from a file of module `module`.
pub fn absolute(module: &[String], prefix: &str, segments: &[String]) -> Option<Vec<String>> {
    let mut base = match prefix {
        "crate::" => Vec::new(),
        "self::" => module.to_vec(),
        "super::" => module[..module.len().checked_sub(1)?].to_vec(),
        _ => return None,
    };
    let mut rest = segments;
    while prefix == "super::" && rest.first().is_some_and(|first| first == "super") {
        base.pop()?;
        rest = &rest[1..];
    }
    base.extend(rest.iter().cloned());
    Some(base)
}

/// One path into the crate that a file names, resolved.
#[derive(Clone, Debug)]
pub struct Import {
    pub line: usize,
    /// The absolute path, from the crate root: `["content", "one", "finish"]`.
    pub path: Vec<String>,
    /// How the file wrote it: `super::one::finish`.
    pub written: String,
    /// The file that holds what the path names (an index into [`Crate::files`]).
    pub target: usize,
    /// The path names a module (`use super::one;`), not something in it: the names used through it
    /// are imports of their own.
    pub module_only: bool,
}

/// One source file of a crate.
pub struct File {
    pub path: PathBuf,
    pub module: Vec<String>,
    /// Whether the file belongs to the binary (`main.rs` and the modules it declares).
    pub binary: bool,
    pub imports: Vec<Import>,
}

impl File {
    fn is_hub(&self) -> bool {
        self.path
            .file_name()
            .is_some_and(|name| name == "mod.rs" || name == "lib.rs" || name == "main.rs")
    }

    fn is_root(&self) -> bool {
        self.module.is_empty()
    }
}

/// The files of a crate (its library and, if it has one, its binary) and what each imports.
pub struct Crate {
    pub src: PathBuf,
    pub files: Vec<File>,
}

impl Crate {
    /// Reads every file under `src`.
    pub fn read(src: &Path) -> Crate {
        let mut paths = Vec::new();
        rust_files(src, &mut paths);
        let codes: Vec<String> = paths
            .iter()
            .map(|path| code(&std::fs::read_to_string(path).unwrap()))
            .collect();
        let binary_modules: BTreeSet<String> = paths
            .iter()
            .zip(&codes)
            .filter(|(path, _)| path.strip_prefix(src).unwrap() == Path::new("main.rs"))
            .flat_map(|(_, code)| declared_modules(code))
            .collect();
        let mut files: Vec<File> = paths
            .iter()
            .map(|path| {
                let module = module_of(src, path);
                let binary = path.strip_prefix(src).unwrap() == Path::new("main.rs")
                    || module
                        .first()
                        .is_some_and(|top| binary_modules.contains(top));
                File {
                    path: path.clone(),
                    module,
                    binary,
                    imports: Vec::new(),
                }
            })
            .collect();
        let index: BTreeMap<(bool, Vec<String>), usize> = files
            .iter()
            .enumerate()
            .map(|(at, file)| ((file.binary, file.module.clone()), at))
            .collect();
        for (file, code) in files.iter_mut().zip(&codes) {
            file.imports = imports(file, code, &index);
        }
        Crate {
            src: src.to_owned(),
            files,
        }
    }

    /// A file's path from the crate's folder: `src/content/one.rs`.
    pub fn name(&self, file: usize) -> String {
        let folder = self.src.parent().unwrap_or(&self.src);
        let path = &self.files[file].path;
        path.strip_prefix(folder)
            .unwrap_or(path)
            .display()
            .to_string()
    }

    /// The file-to-file edges: `(from, to) → lines of from`, a file's own names left out.
    pub fn file_edges(&self) -> BTreeMap<(usize, usize), Vec<usize>> {
        let mut edges: BTreeMap<(usize, usize), Vec<usize>> = BTreeMap::new();
        for (from, file) in self.files.iter().enumerate() {
            for import in &file.imports {
                if !import.module_only && import.target != from {
                    let lines = edges.entry((from, import.target)).or_default();
                    if !lines.contains(&import.line) {
                        lines.push(import.line);
                    }
                }
            }
        }
        edges
    }
}

/// The imports of a file: every path into the crate its code names, resolved to a file of the
/// crate `index` lists (by binary-or-not and module).
fn imports(file: &File, code: &str, index: &BTreeMap<(bool, Vec<String>), usize>) -> Vec<Import> {
    let resolve = |path: Vec<String>, written: String, leaf: &Leaf| {
        let (target, depth) = (0..=path.len())
            .rev()
            .find_map(|depth| {
                index
                    .get(&(file.binary, path[..depth].to_vec()))
                    .map(|target| (*target, depth))
            })
            .expect("the crate root");
        Import {
            line: leaf.line,
            module_only: depth == path.len() && !leaf.glob && depth > 0,
            path,
            written,
            target,
        }
    };
    let mut found = Vec::new();
    // The names a path can start with: the file's modules, and what its `use`s bring in.
    let mut names: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for name in declared_modules(code) {
        let mut path = file.module.clone();
        path.push(name.clone());
        names.insert(name, path);
    }
    let mut consumed = Vec::new();
    for (prefix, leaf) in scan(code, &["crate::", "super::", "self::"], &mut consumed) {
        let Some(path) = absolute(&file.module, prefix, &leaf.segments) else {
            continue;
        };
        if let Some(name) = &leaf.name {
            names.insert(name.clone(), path.clone());
        }
        let written = format!("{prefix}{}", leaf.segments.join("::"));
        found.push(resolve(path, written, &leaf));
    }
    let prefixes: Vec<String> = names.keys().map(|name| format!("{name}::")).collect();
    let prefixes: Vec<&str> = prefixes.iter().map(String::as_str).collect();
    for (prefix, leaf) in scan(code, &prefixes, &mut consumed) {
        let mut path = names[prefix.trim_end_matches(':')].clone();
        path.extend(leaf.segments.iter().cloned());
        let written = format!("{prefix}{}", leaf.segments.join("::"));
        found.push(resolve(path, written, &leaf));
    }
    found.sort_by_key(|import| import.line);
    found
}

/// Every path into the crate that the files under `src` name points to a module that the module
/// map of `src/lib.rs` lists before the importing one, among those it may use.
pub fn imports_point_down_the_module_map(src: &Path) {
    let wrong = up_imports(src);
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// The imports that point up the module map of `src/lib.rs`, or name a module it lacks.
pub fn up_imports(src: &Path) -> Vec<String> {
    let lib = std::fs::read_to_string(src.join("lib.rs")).unwrap();
    let map = module_map(&lib);
    assert!(
        map.len() > 5,
        "the module map in {} was not found",
        src.join("lib.rs").display()
    );
    let mut wrong = Vec::new();
    let mut seen = BTreeSet::new();
    for row in &map {
        for used in &row.may_use {
            if !seen.contains(used) {
                wrong.push(format!(
                    "{} may use {used}, which the map does not list before it",
                    row.module
                ));
            }
        }
        seen.insert(row.module.clone());
    }
    let allowed: BTreeMap<&str, &BTreeSet<String>> = map
        .iter()
        .map(|row| (row.module.as_str(), &row.may_use))
        .collect();
    let krate = Crate::read(src);
    for (at, file) in krate.files.iter().enumerate() {
        // The crate roots: the library's, and a command's (whose modules are its own).
        let Some(top) = file.module.first() else {
            continue;
        };
        let Some(may_use) = allowed.get(top.as_str()) else {
            wrong.push(format!("{top} is not in the module map"));
            continue;
        };
        for import in &file.imports {
            let place = format!("{}:{}", krate.name(at), import.line);
            let Some(used) = import.path.first() else {
                continue;
            };
            if !allowed.contains_key(used.as_str()) {
                wrong.push(format!(
                    "{place} names {} (crate::{}): import from the module that defines it",
                    import.written,
                    import.path.join("::")
                ));
            } else if used != top && !may_use.contains(used) {
                wrong.push(format!(
                    "{place} uses {} (crate::{}), but {top} may use only {may_use:?}",
                    import.written,
                    import.path.join("::")
                ));
            }
        }
    }
    wrong.dedup();
    wrong
}

/// The strongly connected parts of a graph with more than one node: the cycles, each as its
/// nodes in order.
pub fn cycles<N: Ord + Clone>(edges: &BTreeSet<(N, N)>) -> Vec<Vec<N>> {
    let mut next: BTreeMap<&N, Vec<&N>> = BTreeMap::new();
    for (from, to) in edges {
        next.entry(from).or_default().push(to);
    }
    // Tarjan's algorithm.
    struct State<'a, N> {
        next: BTreeMap<&'a N, Vec<&'a N>>,
        index: BTreeMap<&'a N, usize>,
        low: BTreeMap<&'a N, usize>,
        stack: Vec<&'a N>,
        on_stack: BTreeSet<&'a N>,
        parts: Vec<Vec<N>>,
    }
    fn visit<'a, N: Ord + Clone>(state: &mut State<'a, N>, node: &'a N) {
        let at = state.index.len();
        state.index.insert(node, at);
        state.low.insert(node, at);
        state.stack.push(node);
        state.on_stack.insert(node);
        for to in state.next.get(node).cloned().unwrap_or_default() {
            if !state.index.contains_key(to) {
                visit(state, to);
                let low = state.low[node].min(state.low[to]);
                state.low.insert(node, low);
            } else if state.on_stack.contains(to) {
                let low = state.low[node].min(state.index[to]);
                state.low.insert(node, low);
            }
        }
        if state.low[node] == state.index[node] {
            let mut part = Vec::new();
            while let Some(top) = state.stack.pop() {
                state.on_stack.remove(top);
                part.push(top.clone());
                if top == node {
                    break;
                }
            }
            if part.len() > 1 {
                part.sort();
                state.parts.push(part);
            }
        }
    }
    let nodes: BTreeSet<&N> = edges.iter().flat_map(|(from, to)| [from, to]).collect();
    let mut state = State {
        next,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on_stack: BTreeSet::new(),
        parts: Vec::new(),
    };
    for node in nodes {
        if !state.index.contains_key(node) {
            visit(&mut state, node);
        }
    }
    state.parts.sort();
    state.parts
}

/// The files under `src` import each other without a cycle: every file a node, `mod.rs` and the
/// crate roots among them.
pub fn files_import_without_a_cycle(src: &Path) {
    let found = file_cycles(src);
    assert!(found.is_empty(), "{}", found.join("\n"));
}

/// Each cycle among the files under `src`: its files, and the imports between them (with the
/// lines of each).
pub fn file_cycles(src: &Path) -> Vec<String> {
    let krate = Crate::read(src);
    let edges: BTreeMap<(usize, usize), Vec<String>> = krate
        .file_edges()
        .into_iter()
        .map(|(edge, lines)| {
            let lines = lines.iter().map(|line| format!("line {line}")).collect();
            (edge, lines)
        })
        .collect();
    cycle_reports("files", &edges, |file| krate.name(*file))
}

/// Each cycle of the graph `edges` (an edge and where it is made) makes: its nodes as `name`
/// gives them, and each edge between them with its places.
fn cycle_reports<N: Ord + Clone>(
    what: &str,
    edges: &BTreeMap<(N, N), Vec<String>>,
    name: impl Fn(&N) -> String,
) -> Vec<String> {
    let graph: BTreeSet<(N, N)> = edges.keys().cloned().collect();
    cycles(&graph)
        .into_iter()
        .map(|part| {
            let names: Vec<String> = part.iter().map(&name).collect();
            let mut report = format!("an import cycle among the {what} {}:", names.join(", "));
            for ((from, to), places) in edges {
                if part.contains(from) && part.contains(to) {
                    let _ = write!(
                        report,
                        "\n    {} → {} ({})",
                        name(from),
                        name(to),
                        places.join(", ")
                    );
                }
            }
            report
        })
        .collect()
}

/// Inside each folder under `src`, its files and folders import each other without a cycle, a
/// folder counted as one node: `a/b/c.rs` naming `a::d::e` is the edge `a::b → a::d`.
pub fn modules_import_without_a_cycle(src: &Path) {
    let found = module_cycles(src);
    assert!(found.is_empty(), "{}", found.join("\n"));
}

/// Each cycle among the sibling files and folders inside a folder under `src`.
pub fn module_cycles(src: &Path) -> Vec<String> {
    let krate = Crate::read(src);
    let mut edges: BTreeMap<(Vec<String>, Vec<String>), BTreeSet<String>> = BTreeMap::new();
    for (at, file) in krate.files.iter().enumerate() {
        for import in &file.imports {
            let target = &krate.files[import.target];
            if import.module_only || target.binary != file.binary {
                continue;
            }
            let (module, to) = (&file.module, &target.module);
            for depth in 1..module.len() {
                if to.len() > depth && to[..depth] == module[..depth] {
                    let from = module[..=depth].to_vec();
                    let to = to[..=depth].to_vec();
                    if from != to {
                        edges.entry((from, to)).or_default().insert(format!(
                            "{}:{}",
                            krate.name(at),
                            import.line
                        ));
                    }
                }
            }
        }
    }
    let edges = edges
        .into_iter()
        .map(|(edge, places)| (edge, places.into_iter().collect()))
        .collect();
    cycle_reports("modules", &edges, |module| module.join("::"))
}

/// The files inside a folder import what they share from files of their own, never from the
/// folder's `mod.rs`, which only declares, dispatches and re-exports.
pub fn nothing_is_taken_from_mod_rs(src: &Path) {
    let wrong = taken_from_mod_rs(src);
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// Every import of a file from its own folder's `mod.rs`.
pub fn taken_from_mod_rs(src: &Path) -> Vec<String> {
    let krate = Crate::read(src);
    let mut wrong = Vec::new();
    for (at, file) in krate.files.iter().enumerate() {
        if file.is_hub() || file.module.len() < 2 {
            continue;
        }
        let folder = &file.module[..file.module.len() - 1];
        for import in &file.imports {
            let target = &krate.files[import.target];
            if !import.module_only && target.binary == file.binary && target.module == folder {
                wrong.push(format!(
                    "{}:{} takes {} from its folder's mod.rs: move it to a file of its own",
                    krate.name(at),
                    import.line,
                    import.written
                ));
            }
        }
    }
    wrong
}
