//! `structure batch` against the mock LLM: one line an id whatever its status, a malformed line
//! an error line, duplicate ids refused before any call, a second run skipping what is written,
//! and `kill -9` or Ctrl-C at any point losing and doubling nothing.

use std::collections::HashMap;
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::Duration;

use mock_llm::{MockLlm, Reply};
use serde_json::{Value, json};

const SCHEMA: &str =
    r#"{"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}"#;

fn command(mock: &MockLlm, dir: &Path, jobs: &str) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_structure"));
    for (name, _) in std::env::vars() {
        if name.starts_with("STRUCTURE_") || name.starts_with("OPENAI_") {
            command.env_remove(name);
        }
    }
    command
        .env("STRUCTURE_MODEL", "openai/gpt-4.1-mini")
        .env("OPENAI_BASE_URL", mock.base_url())
        .args([
            "--store", "memory", "batch", "--schema", SCHEMA, "--jobs", jobs,
        ])
        .arg(dir.join("in.jsonl"))
        .arg("-o")
        .arg(dir.join("out.jsonl"))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    command
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// The output file's lines by id; panics on a torn line or an id written twice.
fn written(dir: &Path) -> HashMap<String, Value> {
    let text = std::fs::read_to_string(dir.join("out.jsonl")).unwrap_or_default();
    let mut lines = HashMap::new();
    for line in text.lines() {
        let value: Value = serde_json::from_str(line).expect("every line is whole JSON");
        let id = value["id"].as_str().unwrap().to_owned();
        assert!(
            lines.insert(id.clone(), value).is_none(),
            "{id} written twice"
        );
    }
    assert!(text.is_empty() || text.ends_with('\n'));
    lines
}

#[test]
fn every_line_gets_its_result_line_and_a_second_run_sends_nothing() {
    let mock = MockLlm::start();
    mock.always(Some(Reply::answer(json!({ "name": "Ada" }))));
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("note.txt"), "Ada wrote the note.").unwrap();
    std::fs::write(
        dir.path().join("in.jsonl"),
        "Ada Lovelace called.\n\
         {\"id\": \"with-file\", \"file\": \"note.txt\"}\n\
         {\"id\": \"own-schema\", \"prompt\": \"p\", \"schema\": \"nope-no-such-schema\", \"schemaMode\": \"named\"}\n\
         {\"id\": \"no prompt\"}\n\
         {broken json\n",
    )
    .unwrap();
    let output = command(&mock, dir.path(), "2").output().unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let lines = written(dir.path());
    assert_eq!(lines.len(), 5);
    assert_eq!(lines["1"]["status"], "ok");
    assert_eq!(lines["with-file"]["data"], json!({ "name": "Ada" }));
    assert_eq!(lines["own-schema"]["error"]["kind"], "schema-not-found");
    assert_eq!(lines["no prompt"]["error"]["kind"], "invalid-request");
    assert_eq!(lines["5"]["error"]["field"], "line");
    let summary = stderr(&output);
    assert!(
        summary.contains("5 of 5 items written this run") && summary.contains("ok 2"),
        "{summary}"
    );
    let sent = mock.requests().len();
    assert_eq!(sent, 2);

    let again = command(&mock, dir.path(), "2").output().unwrap();
    assert_eq!(again.status.code(), Some(0), "{}", stderr(&again));
    assert_eq!(mock.requests().len(), sent, "nothing is sent again");
    assert!(stderr(&again).contains("0 of 5 items written this run (5 were already)"));
    assert_eq!(written(dir.path()).len(), 5);
}

#[test]
fn duplicate_ids_are_refused_before_anything_is_sent() {
    let mock = MockLlm::start();
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("in.jsonl"),
        "{\"id\": \"a\", \"prompt\": \"x\"}\n{\"id\": \"b\", \"prompt\": \"y\"}\n{\"id\": \"a\", \"prompt\": \"z\"}\n",
    )
    .unwrap();
    let output = command(&mock, dir.path(), "2").output().unwrap();
    assert_eq!(output.status.code(), Some(1));
    assert!(
        stderr(&output).contains("these ids more than once: a"),
        "{}",
        stderr(&output)
    );
    assert!(mock.requests().is_empty());
    assert!(!dir.path().join("out.jsonl").exists());
}

/// Sends SIGKILL or SIGINT to `child`.
fn signal(child: &std::process::Child, name: &str) {
    let status = Command::new("kill")
        .args([name, &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
}

#[test]
fn kill_9_at_any_point_then_a_rerun_loses_and_doubles_nothing() {
    let mock = MockLlm::start();
    mock.always(Some(
        Reply::answer(json!({ "name": "Ada" })).with_delay(Duration::from_millis(40)),
    ));
    let dir = tempfile::tempdir().unwrap();
    let input: String = (0..200).map(|n| format!("text number {n}\n")).collect();
    std::fs::write(dir.path().join("in.jsonl"), input).unwrap();
    for wait in [250, 400, 320, 600] {
        let mut child = command(&mock, dir.path(), "4").spawn().unwrap();
        std::thread::sleep(Duration::from_millis(wait));
        signal(&child, "-KILL");
        child.wait().unwrap();
        written(dir.path());
    }
    let before = written(dir.path()).len();

    // Ctrl-C once the run is writing (a signal before the handler is set would only end the
    // process): the calls in flight finish and are written; the status says items are left.
    let mut child = command(&mock, dir.path(), "4").spawn().unwrap();
    let waited = std::time::Instant::now();
    while written(dir.path()).len() == before
        && child.try_wait().unwrap().is_none()
        && waited.elapsed() < Duration::from_secs(60)
    {
        std::thread::sleep(Duration::from_millis(5));
    }
    signal(&child, "-INT");
    let stopped = child.wait_with_output().unwrap();
    let after_stop = written(dir.path()).len();
    if after_stop < 200 {
        assert_eq!(stopped.status.code(), Some(130), "{}", stderr(&stopped));
        assert!(
            stderr(&stopped).contains("items left"),
            "{}",
            stderr(&stopped)
        );
    }
    assert!(after_stop >= before);

    let output = command(&mock, dir.path(), "4").output().unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let lines = written(dir.path());
    assert_eq!(lines.len(), 200, "0 lost");
    assert!((1..=200).all(|line| lines.contains_key(&line.to_string())));
}
