//! The core's modules import one way: every `crate::` path in `src/` points to a module that the
//! module map at the top of `src/lib.rs` lists before the importing one (and names in its "may
//! use" column), the files inside each module import each other without a cycle, and none takes
//! anything from its folder's `mod.rs`.

mod support;

use support::layering::{
    code, files_import_without_a_cycle, imports_point_down_the_module_map, module_map,
    nothing_is_taken_from_mod_rs, paths_after,
};
use support::root;

#[test]
fn every_import_points_down_the_module_map() {
    imports_point_down_the_module_map(&root().join("src"));
}

#[test]
fn the_files_of_each_module_import_each_other_without_a_cycle() {
    files_import_without_a_cycle(&root().join("src"));
}

#[test]
fn no_file_takes_anything_from_its_folders_mod_rs() {
    nothing_is_taken_from_mod_rs(&root().join("src"));
}

#[test]
fn the_checks_see_what_they_should() {
    let code = code(
        "use crate::{api, keys::{A, B}};\n// use crate::hidden;\nlet x = crate::time::rfc3339(0); // crate::no\n#[cfg(test)]\nmod tests { use crate::late; }",
    );
    assert_eq!(
        paths_after(&code, "crate::"),
        [
            vec!["api".to_owned()],
            vec!["keys".to_owned()],
            vec!["time".to_owned(), "rfc3339".to_owned()],
        ]
    );
    let map = module_map(
        "//! | module | what | may use |\n//! |---|---|---|\n//! | [`a`] | x | — |\n//! | `b` | y | a, c |",
    );
    assert_eq!(map.len(), 2);
    assert_eq!(map[1].module, "b");
    assert_eq!(map[1].may_use.len(), 2);
}
