//! The documentation holds together: every relative link and image of the README,
//! `ARCHITECTURE.md`, `SECURITY.md`, `EVAL.md`, `BENCHMARKS.md`, `js/README.md` and `docs/*.md`
//! leads to a file that exists, and every `#fragment` into a Markdown file (the same file's too)
//! to a heading it has, by GitHub's slugs; the README stays within 300 lines, and its layout
//! list (`- `path` — what` lines under `## Layout`) names only paths that exist.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

/// The most lines the README may have: the rest belongs in `docs/`.
const README_MAX_LINES: usize = 300;

/// The Markdown files outside `docs/` whose links are checked.
const TOP_LEVEL: [&str; 6] = [
    "README.md",
    "ARCHITECTURE.md",
    "SECURITY.md",
    "EVAL.md",
    "BENCHMARKS.md",
    "js/README.md",
];

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// Every file whose links are checked: the top-level ones, then `docs/*.md` by name.
fn documents() -> Vec<PathBuf> {
    let mut pages: Vec<PathBuf> = fs::read_dir(root().join("docs"))
        .expect("docs/ can be listed")
        .map(|entry| entry.expect("docs/ can be listed").path())
        .filter(|path| path.extension().is_some_and(|extension| extension == "md"))
        .collect();
    pages.sort();
    let mut files: Vec<PathBuf> = TOP_LEVEL.iter().map(|name| root().join(name)).collect();
    files.extend(pages);
    files
}

fn read(path: &Path) -> String {
    fs::read_to_string(path).unwrap_or_else(|error| panic!("{}: {error}", shown(path)))
}

/// `path` as a reader names it: relative to the repository.
fn shown(path: &Path) -> String {
    path.strip_prefix(root())
        .unwrap_or(path)
        .display()
        .to_string()
}

/// The lines of `text` with those of fenced code blocks (fences included) left empty, so that
/// line numbers still count from the top.
fn prose_lines(text: &str) -> Vec<&str> {
    let mut fenced = false;
    let mut lines = Vec::new();
    for line in text.split('\n') {
        let trimmed = line.trim_start();
        if trimmed.starts_with("```") || trimmed.starts_with("~~~") {
            fenced = !fenced;
            lines.push("");
        } else if fenced {
            lines.push("");
        } else {
            lines.push(line);
        }
    }
    lines
}

/// `text` with each inline code span (a run of backticks up to the next run of as many, within
/// its paragraph) blanked out, newlines kept.
fn without_code_spans(text: &str) -> String {
    let mut bytes = text.as_bytes().to_vec();
    let run_at = |bytes: &[u8], at: usize| bytes[at..].iter().take_while(|&&b| b == b'`').count();
    let mut at = 0;
    while at < bytes.len() {
        if bytes[at] != b'`' {
            at += 1;
            continue;
        }
        let run = run_at(&bytes, at);
        let mut end = None;
        let mut next = at + run;
        while next < bytes.len() {
            if bytes[next..].starts_with(b"\n\n") {
                break;
            }
            if bytes[next] == b'`' {
                let closing = run_at(&bytes, next);
                if closing == run {
                    end = Some(next + closing);
                    break;
                }
                next += closing;
            } else {
                next += 1;
            }
        }
        match end {
            Some(end) => {
                // ASCII spaces in place of every byte but newlines: still UTF-8.
                for byte in &mut bytes[at..end] {
                    if *byte != b'\n' {
                        *byte = b' ';
                    }
                }
                at = end;
            }
            None => at += run,
        }
    }
    String::from_utf8(bytes).expect("blanking bytes with spaces keeps UTF-8")
}

/// Every link and image target of `text` (`](target)`), with the line it is written on, outside
/// code blocks and code spans.
fn links(text: &str) -> Vec<(usize, String)> {
    let prose = without_code_spans(&prose_lines(text).join("\n"));
    let mut found = Vec::new();
    let mut from = 0;
    while let Some(offset) = prose[from..].find("](") {
        let at = from + offset;
        let rest = &prose[at + 2..];
        let end = rest
            .find(|c: char| c == ')' || c.is_whitespace())
            .unwrap_or(rest.len());
        let line = prose[..at].matches('\n').count() + 1;
        found.push((line, rest[..end].to_owned()));
        from = at + 2;
    }
    found
}

/// The anchor GitHub gives a heading: the text a reader sees (a link's target dropped), trimmed
/// and lower-cased, letters, digits, `-` and `_` kept, each space a `-`, everything else
/// (backticks, punctuation, symbols) dropped.
fn slug(heading: &str) -> String {
    let mut seen = String::new();
    let mut rest = heading;
    while let Some(at) = rest.find("](") {
        seen.push_str(&rest[..at]);
        rest = match rest[at..].find(')') {
            Some(close) => &rest[at + close + 1..],
            None => "",
        };
    }
    seen.push_str(rest);
    let mut slug = String::new();
    for c in seen.trim().chars().flat_map(char::to_lowercase) {
        if c.is_alphanumeric() || c == '-' || c == '_' {
            slug.push(c);
        } else if c == ' ' {
            slug.push('-');
        }
    }
    slug
}

/// The anchors of `text`'s headings (ATX, outside code blocks), a repeated one numbered as
/// GitHub numbers it (`load`, `load-1`, ...).
fn anchors(text: &str) -> Vec<String> {
    let mut counts: BTreeMap<String, usize> = BTreeMap::new();
    let mut anchors = Vec::new();
    for line in prose_lines(text) {
        let level = line.chars().take_while(|&c| c == '#').count();
        let title = &line[level..];
        if level == 0 || level > 6 || !(title.is_empty() || title.starts_with(' ')) {
            continue;
        }
        let title = title.trim().trim_end_matches('#').trim_end();
        let slug = slug(title);
        let count = counts.entry(slug.clone()).or_insert(0);
        anchors.push(match *count {
            0 => slug,
            n => format!("{slug}-{n}"),
        });
        *count += 1;
    }
    anchors
}

/// What is wrong with the links of `file`: each names the file, its line, the link and why.
fn broken_links(file: &Path) -> Vec<String> {
    let text = read(file);
    let folder = file.parent().expect("a file has a folder");
    let mut problems = Vec::new();
    for (line, target) in links(&text) {
        if ["http:", "https:", "mailto:"]
            .iter()
            .any(|scheme| target.starts_with(scheme))
        {
            continue;
        }
        let (path, fragment) = target.split_once('#').unwrap_or((target.as_str(), ""));
        let at = format!("{}:{line}: link `{target}`", shown(file));
        let destination = if path.is_empty() {
            file.to_path_buf()
        } else {
            folder.join(path)
        };
        if !destination.exists() {
            problems.push(format!("{at}: {} does not exist", shown(&destination)));
            continue;
        }
        let markdown = destination
            .extension()
            .is_some_and(|extension| extension == "md");
        if fragment.is_empty() || !markdown {
            continue;
        }
        if !anchors(&read(&destination))
            .iter()
            .any(|anchor| anchor == fragment)
        {
            problems.push(format!(
                "{at}: {} has no heading whose anchor is #{fragment}",
                shown(&destination)
            ));
        }
    }
    problems
}

/// The paths the README's layout names, with their lines: the code spans before ` — ` on each
/// `- ` line under `## Layout`. A `- ` line there without ` — ` is a problem of its own.
fn layout(readme: &str) -> (Vec<(usize, String)>, Vec<String>) {
    let mut paths = Vec::new();
    let mut problems = Vec::new();
    let mut inside = false;
    for (index, line) in readme.lines().enumerate() {
        if line.starts_with('#') {
            inside = line.trim_end() == "## Layout";
            continue;
        }
        if !inside || !line.starts_with("- ") {
            continue;
        }
        let Some((named, _what)) = line.split_once(" — ") else {
            problems.push(format!(
                "README.md:{}: a layout line is \"- `path` — what\", not {line:?}",
                index + 1
            ));
            continue;
        };
        for path in named.split('`').skip(1).step_by(2) {
            paths.push((index + 1, path.to_owned()));
        }
    }
    (paths, problems)
}

#[test]
fn every_relative_link_leads_to_a_file_and_heading_that_exist() {
    let files = documents();
    assert!(
        files.len() >= TOP_LEVEL.len() + 6,
        "docs/ holds its pages: {files:?}"
    );
    let problems: Vec<String> = files
        .iter()
        .flat_map(|file| broken_links(file.as_path()))
        .collect();
    assert!(
        problems.is_empty(),
        "broken links:\n{}",
        problems.join("\n")
    );
}

#[test]
fn the_readme_stays_short() {
    let lines = read(&root().join("README.md")).lines().count();
    assert!(
        lines <= README_MAX_LINES,
        "README.md has {lines} lines, more than {README_MAX_LINES}: move a section to docs/"
    );
}

#[test]
fn the_readme_layout_names_only_paths_that_exist() {
    let (paths, mut problems) = layout(&read(&root().join("README.md")));
    assert!(
        paths.len() >= 5,
        "README.md's \"## Layout\" lists its paths as \"- `path` — what\" lines: found {paths:?}"
    );
    for (line, path) in &paths {
        let full = root().join(path);
        if !full.exists() {
            problems.push(format!(
                "README.md:{line}: the layout names `{path}`, which does not exist"
            ));
        } else if path.ends_with('/') && !full.is_dir() {
            problems.push(format!(
                "README.md:{line}: the layout names `{path}` as a folder, but it is a file"
            ));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn slugs_are_the_ones_github_gives() {
    let cases = [
        (
            "Escalation: when the first model is not enough",
            "escalation-when-the-first-model-is-not-enough",
        ),
        (
            "Documents: PDFs and text files",
            "documents-pdfs-and-text-files",
        ),
        (
            "Long documents: Kleister-NDA",
            "long-documents-kleister-nda",
        ),
        (
            "Provenance and the defaults (issue 14)",
            "provenance-and-the-defaults-issue-14",
        ),
        (
            "Through the providers' batch APIs, at half the price",
            "through-the-providers-batch-apis-at-half-the-price",
        ),
        (
            "Deploying: `structure serve`, Spin, several instances",
            "deploying-structure-serve-spin-several-instances",
        ),
        ("What `./scripts/test` runs", "what-scriptstest-runs"),
        ("Inline schemas (`json`)", "inline-schemas-json"),
        (
            "Using it from JavaScript: Node and browsers",
            "using-it-from-javascript-node-and-browsers",
        ),
        ("Tom & Jerry", "tom--jerry"),
        ("Zürich, snake_case", "zürich-snake_case"),
        ("See [the docs](docs/cli.md)", "see-the-docs"),
    ];
    for (heading, expected) in cases {
        assert_eq!(slug(heading), expected, "the slug of {heading:?}");
    }
}

#[test]
fn anchors_are_numbered_when_repeated_and_code_blocks_hold_none() {
    let text = "# Title\n\n## Load\n\n```sh\n# not a heading\n```\n\n### Load ###\n\n#hashtag\n";
    assert_eq!(anchors(text), ["title", "load", "load-1"]);
}

#[test]
fn links_are_found_outside_code_only() {
    let text = "See [a](b.md#c) and `[x](y.md)` and\n![an image](p.png).\n\n```md\n[z](w.md)\n```\n[Two\nlines](#d)";
    let expected: Vec<(usize, String)> = vec![
        (1, "b.md#c".to_owned()),
        (2, "p.png".to_owned()),
        (8, "#d".to_owned()),
    ];
    assert_eq!(links(text), expected);
}

#[test]
fn the_layout_is_read_from_its_list() {
    let readme = "# x\n\n## Layout\n\nIntro.\n\n- `src/` — the core\n- `a.toml`, `b/` — two\n- nothing here\n\n## After\n\n- `not/` — read\n";
    let (paths, problems) = layout(readme);
    let expected: Vec<(usize, String)> = vec![
        (7, "src/".to_owned()),
        (8, "a.toml".to_owned()),
        (8, "b/".to_owned()),
    ];
    assert_eq!(paths, expected);
    assert_eq!(problems.len(), 1, "{problems:?}");
}
