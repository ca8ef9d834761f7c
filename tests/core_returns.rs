//! The published result schema — the tool definition's `returns`, which `/v1/tool`, the WIT
//! `tool-definition` and MCP's `outputSchema` carry — tells the truth: it is generated from the
//! types that serialise a result, and one real result of every kind the product makes (each
//! status, records, documents, confidences, escalation, rules, left-out values, every typed
//! error) validates against it; between them they write every field it names, so a field added
//! to a type and not to the schema, or to the schema and never written, fails here.
//! `core_returns_mirrors.rs` holds the WIT mirror and the host's JSON to the same schema.

mod support;

use std::collections::BTreeSet;

use structure::tool_definition;

use support::every_result::{every_error_kind, every_result, paths_named, paths_written};
use support::{errors, root, validator};

#[test]
fn the_published_returns_is_generated_from_the_result_types() {
    let generated = tool_definition::returns::generate();
    // Written compact: the component carries it (pretty-printed, it was 40 % larger).
    let text = serde_json::to_string(&generated).unwrap() + "\n";
    let path = root().join("src/tool_definition/returns.json");
    if std::env::var_os("STRUCTURE_BLESS").is_some() {
        std::fs::write(&path, &text).unwrap();
        // The component's copy is the file as it was built: the next build takes this one.
        return;
    }
    let published = std::fs::read_to_string(&path).unwrap();
    assert!(
        published == text,
        "{} is not what the result's types generate: run \
         `STRUCTURE_BLESS=1 cargo test --test core_returns` and commit it",
        path.display()
    );
    assert_eq!(tool_definition()["returns"], generated);
}

#[test]
fn every_kind_of_result_validates_against_the_published_returns_and_uses_each_field() {
    let returns = tool_definition()["returns"].clone();
    let checker = validator(&returns);
    let corpus = every_result();
    let mut written = BTreeSet::new();
    for (kind, result) in &corpus {
        assert_eq!(
            errors(&checker, result),
            Vec::<String>::new(),
            "{kind}: {result:#}"
        );
        if let Some(error) = result.get("error") {
            assert_eq!(error["kind"], *kind, "{result:#}");
        }
        paths_written(result, &returns, "", &mut written);
    }
    let statuses: BTreeSet<&str> = corpus
        .iter()
        .filter_map(|(_, result)| result["status"].as_str())
        .collect();
    assert_eq!(statuses, BTreeSet::from(["need-more-input", "ok", "stale"]));
    let kinds: BTreeSet<&str> = corpus
        .iter()
        .filter_map(|(_, result)| result["error"]["kind"].as_str())
        .collect();
    let every_kind = BTreeSet::from_iter(every_error_kind());
    assert_eq!(kinds, every_kind, "one real error of each kind");
    let mut named = BTreeSet::new();
    paths_named(&returns, "", &mut named);
    let never: Vec<&String> = named.difference(&written).collect();
    assert!(
        never.is_empty(),
        "fields the schema names that no result wrote: {never:?}"
    );
    let unnamed: Vec<&String> = written.difference(&named).collect();
    assert!(unnamed.is_empty(), "{unnamed:?}");
    // What the results write that the schema must describe to the letter.
    let categories: BTreeSet<&str> = corpus
        .iter()
        .flat_map(|(_, result)| result["trace"]["reasons"].as_array().into_iter().flatten())
        .filter_map(|reason| reason["category"].as_str())
        .collect();
    assert!(categories.contains("rule"), "{categories:?}");
}
