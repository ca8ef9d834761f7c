//! The import rules both crates are held to (`tests/layering.rs`, `host/tests/layering.rs`):
//! every `crate::` path points down the module map at the top of the crate's `lib.rs`, and the
//! files inside each module import each other without a cycle.
#![allow(dead_code)]

use std::collections::{BTreeMap, BTreeSet};
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

/// Every `.rs` file under `dir`.
pub fn rust_files(dir: &Path, found: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, found);
        } else if path.extension().is_some_and(|ext| ext == "rs") {
            found.push(path);
        }
    }
}

/// The code of a file: its unit tests (at the end, after `#[cfg(test)] mod tests`) and every
/// comment left out.
pub fn code(text: &str) -> String {
    let text = text
        .split("#[cfg(test)]\nmod tests")
        .next()
        .unwrap_or_default();
    text.lines()
        .filter(|line| !line.trim_start().starts_with("//"))
        .map(|line| line.split(" // ").next().unwrap_or_default())
        .collect::<Vec<_>>()
        .join("\n")
}

/// The module paths a file's code names after `prefix` (`crate::` or `super::`), each as its
/// segments: `crate::schema::walk::{self, Next}` gives `[schema, walk]`; a group
/// `crate::{api, keys}` gives `[api]` and `[keys]`.
pub fn paths_after(code: &str, prefix: &str) -> Vec<Vec<String>> {
    let mut found = Vec::new();
    for (start, _) in code.match_indices(prefix) {
        let before = code[..start].chars().last();
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == ':') {
            continue;
        }
        let rest = &code[start + prefix.len()..];
        if let Some(group) = rest.strip_prefix('{') {
            let mut depth = 0;
            let mut item = String::new();
            for c in group.chars() {
                match c {
                    '{' => depth += 1,
                    '}' if depth == 0 => break,
                    '}' => depth -= 1,
                    ',' if depth == 0 => {
                        found.push(segments(&item));
                        item.clear();
                        continue;
                    }
                    _ => {}
                }
                item.push(c);
            }
            found.push(segments(&item));
        } else {
            found.push(segments(rest));
        }
    }
    found.retain(|path| !path.is_empty());
    found
}

/// `schema::walk::{self, Next}` → `[schema, walk, Next]`.
pub fn segments(path: &str) -> Vec<String> {
    let path: String = path
        .trim()
        .chars()
        .take_while(|c| c.is_alphanumeric() || *c == '_' || *c == ':')
        .collect();
    path.split("::")
        .filter(|segment| !segment.is_empty())
        .map(str::to_owned)
        .collect()
}

/// `src/schema/subset/lower.rs` → `["schema", "subset", "lower"]`; `mod.rs` names its folder.
pub fn module_of(src: &Path, file: &Path) -> Vec<String> {
    let relative = file.strip_prefix(src).unwrap().with_extension("");
    let mut parts: Vec<String> = relative
        .components()
        .map(|part| part.as_os_str().to_string_lossy().into_owned())
        .collect();
    if parts.last().is_some_and(|last| last == "mod") {
        parts.pop();
    }
    parts
}

/// Every `crate::` path of the files under `src` points to a module that the module map of
/// `src/lib.rs` lists before the importing one, among those it may use.
pub fn imports_point_down_the_module_map(src: &Path) {
    let lib = std::fs::read_to_string(src.join("lib.rs")).unwrap();
    let map = module_map(&lib);
    assert!(
        map.len() > 5,
        "the module map in {} was not found",
        src.join("lib.rs").display()
    );
    let mut seen = BTreeSet::new();
    for row in &map {
        for used in &row.may_use {
            assert!(
                seen.contains(used),
                "{} may use {used}, which the map does not list before it",
                row.module
            );
        }
        seen.insert(row.module.clone());
    }
    let allowed: BTreeMap<&str, &BTreeSet<String>> = map
        .iter()
        .map(|row| (row.module.as_str(), &row.may_use))
        .collect();
    let mut files = Vec::new();
    rust_files(src, &mut files);
    let mut wrong = Vec::new();
    for file in &files {
        let module = module_of(src, file);
        let Some(top) = module.first() else { continue };
        // The crate roots: the library's, and a command's (whose modules are its own).
        if top == "lib" || top == "main" {
            continue;
        }
        let Some(may_use) = allowed.get(top.as_str()) else {
            wrong.push(format!("{top} is not in the module map"));
            continue;
        };
        let code = code(&std::fs::read_to_string(file).unwrap());
        for path in paths_after(&code, "crate::") {
            let used = &path[0];
            if used != top && !may_use.contains(used) {
                wrong.push(format!(
                    "{} uses crate::{} ({top} may use {may_use:?})",
                    file.display(),
                    path.join("::")
                ));
            }
            if !allowed.contains_key(used.as_str()) {
                wrong.push(format!(
                    "{} names crate::{}: import from the module that defines it",
                    file.display(),
                    path.join("::")
                ));
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// The files and folders inside each module of `src` import each other without a cycle.
pub fn files_import_without_a_cycle(src: &Path) {
    let mut files = Vec::new();
    rust_files(src, &mut files);
    // Edges between sibling files or folders: `a/b.rs` using `crate::a::c` (or `super::c`) is
    // b → c. A module's own `mod.rs` is the hub that declares them, so it is left out.
    let mut edges: BTreeMap<Vec<String>, BTreeSet<Vec<String>>> = BTreeMap::new();
    for file in &files {
        let module = module_of(src, file);
        if file
            .file_name()
            .is_some_and(|name| name == "mod.rs" || name == "lib.rs" || name == "main.rs")
        {
            continue;
        }
        let code = code(&std::fs::read_to_string(file).unwrap());
        let parent = &module[..module.len() - 1];
        let mut targets: Vec<Vec<String>> = paths_after(&code, "crate::");
        targets.extend(paths_after(&code, "super::").into_iter().map(|path| {
            let mut absolute = parent.to_vec();
            absolute.extend(path);
            absolute
        }));
        for target in targets {
            // The sibling `target` names, one level under the common parent of the two.
            for depth in 1..module.len() {
                let parent = &module[..depth];
                if target.len() > depth && target[..depth] == *parent {
                    let from = module[..=depth].to_vec();
                    let to = target[..=depth].to_vec();
                    if from != to {
                        edges.entry(from).or_default().insert(to);
                    }
                }
            }
        }
    }
    for start in edges.keys() {
        let mut stack = vec![(start.clone(), vec![start.join("::")])];
        let mut visited = BTreeSet::new();
        while let Some((node, trail)) = stack.pop() {
            for next in edges.get(&node).into_iter().flatten() {
                let mut trail = trail.clone();
                trail.push(next.join("::"));
                assert!(next != start, "an import cycle: {}", trail.join(" → "));
                if visited.insert(next.clone()) {
                    stack.push((next.clone(), trail));
                }
            }
        }
    }
}

/// The files inside a folder import what they share from files of their own, never from the
/// folder's `mod.rs`, which only declares, dispatches and re-exports: every `crate::` path into
/// the file's own folder, and every `super::` path, names a sibling file or folder.
pub fn nothing_is_taken_from_mod_rs(src: &Path) {
    let mut files = Vec::new();
    rust_files(src, &mut files);
    let mut wrong = Vec::new();
    for file in &files {
        let name = file.file_name().unwrap_or_default();
        if name == "mod.rs" || name == "lib.rs" || name == "main.rs" {
            continue;
        }
        let module = module_of(src, file);
        let folder = &module[..module.len() - 1];
        if folder.is_empty() {
            continue;
        }
        let dir = file.parent().unwrap();
        let siblings: BTreeSet<String> = std::fs::read_dir(dir)
            .unwrap()
            .filter_map(|entry| {
                let path = entry.ok()?.path();
                let stem = path.file_stem()?.to_string_lossy().into_owned();
                (path.is_dir() || path.extension().is_some_and(|ext| ext == "rs")).then_some(stem)
            })
            .filter(|stem| stem != "mod")
            .collect();
        let code = code(&std::fs::read_to_string(file).unwrap());
        let mut named: Vec<Vec<String>> = paths_after(&code, "super::");
        named.extend(
            paths_after(&code, "crate::")
                .into_iter()
                .filter(|path| path.len() > folder.len() && path[..folder.len()] == *folder)
                .map(|path| path[folder.len()..].to_vec()),
        );
        for path in named {
            let first = &path[0];
            if first != "self" && !siblings.contains(first) {
                wrong.push(format!(
                    "{} takes {first} from its folder's mod.rs: move it to a file of its own",
                    file.display()
                ));
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}
