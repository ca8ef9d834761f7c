//! The core's modules import one way: every path into the crate that a file of `src/` names
//! (`crate::`, `super::`, `self::`, nested `{…}` groups followed to each leaf) points to a module
//! that the module map at the top of `src/lib.rs` lists before the importing one (and names in
//! its "may use" column); the files import each other without a cycle, `mod.rs` files among
//! them; so do the files and folders inside each folder; and none takes anything from its
//! folder's `mod.rs`. `host/tests/layering.rs` holds the host to the same rules.

mod support;

use support::layering::{
    Crate, absolute, code, cycles, declared_modules, files_import_without_a_cycle,
    imports_point_down_the_module_map, module_map, modules_import_without_a_cycle,
    nothing_is_taken_from_mod_rs, paths_after, scan,
};
use support::root;

#[test]
fn every_import_points_down_the_module_map() {
    imports_point_down_the_module_map(&root().join("src"));
}

#[test]
fn the_files_import_each_other_without_a_cycle() {
    files_import_without_a_cycle(&root().join("src"));
}

#[test]
fn the_files_and_folders_of_each_folder_import_each_other_without_a_cycle() {
    modules_import_without_a_cycle(&root().join("src"));
}

#[test]
fn no_file_takes_anything_from_its_folders_mod_rs() {
    nothing_is_taken_from_mod_rs(&root().join("src"));
}

/// The segments of each path `code` names after `prefix`.
fn leaves(code: &str, prefix: &str) -> Vec<String> {
    paths_after(code, prefix)
        .into_iter()
        .map(|leaf| leaf.segments.join("::"))
        .collect()
}

#[test]
fn the_reader_follows_nested_groups_to_each_leaf() {
    let nested = code("use crate::content::{long_text, one::{finish, One}};");
    assert_eq!(
        leaves(&nested, "crate::"),
        [
            "content::long_text",
            "content::one::finish",
            "content::one::One"
        ]
    );
    let code = code("use crate::{\n    api,\n    keys::{self, A},\n    schema::walk::*,\n};");
    assert_eq!(
        leaves(&code, "crate::"),
        ["api", "keys", "keys::A", "schema::walk"]
    );
    assert!(paths_after(&code, "crate::")[3].glob);
    // Each leaf keeps the line its path starts on.
    assert!(
        paths_after(&code, "crate::")
            .iter()
            .all(|leaf| leaf.line == 1)
    );
}

#[test]
fn the_reader_reads_visibility_aliases_and_expressions() {
    let code = code(
        "pub(crate) use crate::time::rfc3339;\nuse crate::secret as hidden;\nlet x = crate::a::b(crate::c::D { e: 1 });\nlet y = crate::f::G::<u8>::new();",
    );
    assert_eq!(
        leaves(&code, "crate::"),
        ["time::rfc3339", "secret", "a::b", "c::D", "f::G"]
    );
    let leaves = paths_after(&code, "crate::");
    assert_eq!(leaves[1].name.as_deref(), Some("hidden"));
    assert_eq!(
        leaves.iter().map(|leaf| leaf.line).collect::<Vec<_>>(),
        [1, 2, 3, 3, 4]
    );
}

#[test]
fn the_reader_leaves_out_comments_tests_and_longer_words() {
    let code = code(
        "use crate::api;\n// use crate::hidden;\nlet x = 1; // crate::no\nlet y = my_crate::no();\nlet z = other::crate::no;\n#[cfg(test)]\nmod tests { use crate::late; }",
    );
    assert_eq!(leaves(&code, "crate::"), ["api"]);
}

#[test]
fn super_and_self_resolve_from_the_files_module() {
    let path = |segments: &[&str]| -> Vec<String> {
        segments
            .iter()
            .map(|segment| (*segment).to_owned())
            .collect()
    };
    // `src/content/long_text/mod.rs` is the module `content::long_text`.
    let long_text = path(&["content", "long_text"]);
    assert_eq!(
        absolute(&long_text, "super::", &path(&["one"])),
        Some(path(&["content", "one"]))
    );
    assert_eq!(
        absolute(&long_text, "self::", &path(&["fields", "x"])),
        Some(path(&["content", "long_text", "fields", "x"]))
    );
    // `src/content/long_text/choose.rs` is the module `content::long_text::choose`.
    let choose = path(&["content", "long_text", "choose"]);
    assert_eq!(
        absolute(&choose, "super::", &path(&["fields"])),
        Some(path(&["content", "long_text", "fields"]))
    );
    assert_eq!(
        absolute(&choose, "super::", &path(&["super", "one", "finish"])),
        Some(path(&["content", "one", "finish"]))
    );
    assert_eq!(
        absolute(&choose, "crate::", &path(&["keys"])),
        Some(path(&["keys"]))
    );
    // A `self::` inside a group belongs to the group.
    let code = code("use crate::a::{self, self::b};");
    assert_eq!(leaves(&code, "crate::"), ["a", "a::b"]);
    let read: Vec<&str> = scan(&code, &["crate::", "self::"], &mut Vec::new())
        .into_iter()
        .map(|(prefix, _)| prefix)
        .collect();
    assert_eq!(read, ["crate::", "crate::"]);
}

#[test]
fn the_reader_resolves_each_path_to_the_file_that_holds_it() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("src");
    let write = |path: &str, text: &str| {
        let path = src.join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    };
    write("lib.rs", "pub mod content;\npub mod keys;\n");
    write("keys.rs", "pub const A: u8 = 1;\n");
    write(
        "content/mod.rs",
        "mod long_text;\nmod one;\npub use one::run;\n",
    );
    write(
        "content/one.rs",
        "use crate::content::{long_text, keys_free::X};\npub fn run() { long_text::extract(); }\npub fn finish() {}\n",
    );
    write(
        "content/long_text/mod.rs",
        "mod choose;\nuse super::one::finish;\npub fn extract() { choose::settle(); finish() }\n",
    );
    write(
        "content/long_text/choose.rs",
        "use super::super::one;\nuse crate::keys as k;\npub fn settle() { one::finish(); let _ = k::A; }\n",
    );
    let krate = Crate::read(&src);
    let edges: Vec<String> = krate
        .file_edges()
        .into_iter()
        .map(|((from, to), lines)| format!("{}:{lines:?} → {}", krate.name(from), krate.name(to)))
        .collect();
    assert_eq!(
        edges,
        [
            "src/content/long_text/choose.rs:[3] → src/content/one.rs",
            "src/content/long_text/choose.rs:[3] → src/keys.rs",
            "src/content/long_text/mod.rs:[3] → src/content/long_text/choose.rs",
            "src/content/long_text/mod.rs:[2] → src/content/one.rs",
            "src/content/mod.rs:[3] → src/content/one.rs",
            "src/content/one.rs:[2] → src/content/long_text/mod.rs",
            "src/content/one.rs:[1] → src/content/mod.rs",
        ]
    );
    assert_eq!(
        declared_modules("mod a;\npub mod b;\npub(super) mod c;\nmod d { }"),
        ["a", "b", "c"]
    );
    let graph = krate.file_edges().into_keys().collect();
    let cycles: Vec<Vec<String>> = cycles(&graph)
        .into_iter()
        .map(|part| part.into_iter().map(|file| krate.name(file)).collect())
        .collect();
    assert_eq!(
        cycles,
        [vec![
            "src/content/long_text/choose.rs".to_owned(),
            "src/content/long_text/mod.rs".to_owned(),
            "src/content/mod.rs".to_owned(),
            "src/content/one.rs".to_owned(),
        ]]
    );
    let wrong = support::layering::module_cycles(&src);
    assert_eq!(wrong.len(), 1, "{wrong:?}");
    assert!(wrong[0].contains("content::long_text → content::one"));
    assert!(wrong[0].contains("content::one → content::long_text"));
}

#[test]
fn the_module_map_is_read_from_the_crate_doc() {
    let map = module_map(
        "//! | module | what | may use |\n//! |---|---|---|\n//! | [`a`] | x | — |\n//! | `b` | y | a, c |",
    );
    assert_eq!(map.len(), 2);
    assert_eq!(map[1].module, "b");
    assert_eq!(map[1].may_use.len(), 2);
}
