//! `structure batch` against the mock LLM: one line an id whatever its status, a malformed line
//! an error line, duplicate ids refused before any call, a second run skipping what is written,
//! and `kill -9` or Ctrl-C at any point losing and doubling nothing.

use std::collections::HashMap;
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::Duration;

use mock_llm::batches::Plan;
use mock_llm::wire::{Form, Wire};
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

/// A provider: the model, its credentials' variable, its base URL's variable and base URL on
/// the mock, its wire.
type Provider = (&'static str, &'static str, &'static str, String, Wire);

/// The three providers' batch APIs.
fn providers(mock: &MockLlm) -> [Provider; 3] {
    let base = format!("http://{}", mock.address());
    [
        (
            "openai/gpt-4.1-mini",
            "OPENAI_API_KEY",
            "OPENAI_BASE_URL",
            mock.base_url(),
            Wire::OpenAiChat,
        ),
        (
            "anthropic/claude-sonnet-4-5",
            "ANTHROPIC_API_KEY",
            "ANTHROPIC_BASE_URL",
            base.clone(),
            Wire::Anthropic,
        ),
        (
            "google/gemini-2.5-flash",
            "GEMINI_API_KEY",
            "GEMINI_BASE_URL",
            base,
            Wire::Gemini,
        ),
    ]
}

/// `structure batch --provider-batch` on `provider`, polling every 20 ms.
fn provider_batch(dir: &Path, provider: &Provider) -> Command {
    let (model, key, url, base, _) = provider;
    let mut command = Command::new(env!("CARGO_BIN_EXE_structure"));
    for (name, _) in std::env::vars() {
        if ["STRUCTURE_", "OPENAI_", "ANTHROPIC_", "GEMINI_"]
            .iter()
            .any(|prefix| name.starts_with(prefix))
        {
            command.env_remove(name);
        }
    }
    command
        .env("STRUCTURE_MODEL", model)
        .env(key, "secret")
        .env(url, base)
        .args([
            "--store",
            "memory",
            "batch",
            "--schema",
            SCHEMA,
            "--provider-batch",
            "--poll-seconds",
            "0.02",
        ])
        .arg(dir.join("in.jsonl"))
        .arg("-o")
        .arg(dir.join("out.jsonl"))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    command
}

/// A model answering with the name its text holds, except Bob's first answer, a number (so
/// that Bob's item needs a second round with the violation fed back).
fn names(mock: &MockLlm, wire: Wire) {
    let bob_answered = std::sync::atomic::AtomicBool::new(false);
    mock.respond_with(move |request| {
        let name = ["Ada", "Bob", "Cy"]
            .into_iter()
            .find(|name| request.body.contains(&format!("{name} wrote")));
        match name {
            Some("Bob") if !bob_answered.swap(true, std::sync::atomic::Ordering::SeqCst) => {
                wire.answer(Form::Text, json!({ "name": 5 }))
            }
            Some(name) => wire.answer(Form::Text, json!({ "name": name })),
            None => Reply::error(400, "invalid_request_error", "no name in the text"),
        }
    });
}

/// Runs `check` for each provider against a mock of its own answering as [`names`] does.
fn each_provider(check: impl Fn(&MockLlm, &Provider)) {
    for at in 0..3 {
        let mock = MockLlm::start();
        let provider = providers(&mock).into_iter().nth(at).unwrap();
        names(&mock, provider.4);
        check(&mock, &provider);
    }
}

#[test]
fn each_providers_batch_api_answers_in_rounds_resending_only_what_failed_or_expired() {
    each_provider(|mock, provider| {
        // Round one: one request fails (a 500). Round two (that request, and Bob's second):
        // the batch expires with one request unrun (Gemini: the whole batch expires).
        mock.plan_batch(Plan {
            polls: 1,
            failing: 1,
            ..Plan::default()
        });
        mock.plan_batch(Plan {
            unrun: 1,
            ..Plan::default()
        });
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("in.jsonl"),
            "Ada wrote.\nBob wrote.\nCy wrote.\n",
        )
        .unwrap();
        let output = provider_batch(dir.path(), provider).output().unwrap();
        assert_eq!(
            output.status.code(),
            Some(0),
            "{}: {}",
            provider.0,
            stderr(&output)
        );
        let lines = written(dir.path());
        for (id, name) in [("1", "Ada"), ("2", "Bob"), ("3", "Cy")] {
            assert_eq!(
                lines[id]["data"],
                json!({ "name": name }),
                "{}: {}",
                provider.0,
                lines[id]
            );
            let usage = &lines[id]["usage"];
            assert_eq!(
                usage["batchPricedCalls"], usage["llmCalls"],
                "{}: {usage}",
                provider.0
            );
        }
        assert_eq!(
            lines["2"]["usage"]["llmCalls"], 2,
            "Bob's item took a second round"
        );
        let batches = mock.batches();
        assert_eq!(
            batches[0].ids.len(),
            3,
            "{}: all first requests in one batch",
            provider.0
        );
        assert!(
            batches.len() >= 3 && batches[1..].iter().all(|batch| batch.ids.len() <= 2),
            "{}: {batches:?}",
            provider.0
        );
        // The model answered each request once: 3 first requests and Bob's second; the failed
        // and the unrun were sent again, nothing answered was.
        let answered = mock.requests();
        assert_eq!(answered.len(), 4, "{}: {answered:?}", provider.0);
        assert!(
            !dir.path().join("out.jsonl.provider-batch.jsonl").exists(),
            "the journal goes once every item has its line"
        );
    });
}

#[test]
fn a_provider_batch_restarted_mid_poll_polls_the_same_batch_and_submits_nothing_twice() {
    each_provider(|mock, provider| {
        mock.plan_batch(Plan {
            polls: 1_000_000,
            ..Plan::default()
        });
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("in.jsonl"), "Ada wrote.\nCy wrote.\n").unwrap();
        let mut child = provider_batch(dir.path(), provider).spawn().unwrap();
        let journal = dir.path().join("out.jsonl.provider-batch.jsonl");
        let deadline = std::time::Instant::now() + Duration::from_secs(60);
        while !std::fs::read_to_string(&journal)
            .unwrap_or_default()
            .contains("\"batch\"")
        {
            assert!(
                std::time::Instant::now() < deadline,
                "{}: no batch submitted",
                provider.0
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        // Stopped once the batch has been polled: mid-poll.
        while mock.batches().first().is_none_or(|batch| batch.polled == 0) {
            assert!(
                std::time::Instant::now() < deadline,
                "{}: never polled",
                provider.0
            );
            std::thread::sleep(Duration::from_millis(10));
        }
        // OpenAI's run is stopped with Ctrl-C (it exits 130, the items left), the others killed.
        if provider.4 == Wire::OpenAiChat {
            signal(&child, "-INT");
            let stopped = child.wait_with_output().unwrap();
            assert_eq!(stopped.status.code(), Some(130), "{}", stderr(&stopped));
            assert!(
                stderr(&stopped).contains("stopped with 2 items left"),
                "{}",
                stderr(&stopped)
            );
        } else {
            signal(&child, "-9");
            child.wait().unwrap();
        }
        assert_eq!(mock.batches().len(), 1);
        assert!(mock.batches()[0].polled >= 1, "killed mid-poll");
        mock.end_batches();
        let output = provider_batch(dir.path(), provider).output().unwrap();
        assert_eq!(
            output.status.code(),
            Some(0),
            "{}: {}",
            provider.0,
            stderr(&output)
        );
        let lines = written(dir.path());
        assert_eq!(
            (
                lines["1"]["data"]["name"].as_str(),
                lines["2"]["data"]["name"].as_str()
            ),
            (Some("Ada"), Some("Cy"))
        );
        assert_eq!(
            mock.batches().len(),
            1,
            "{}: the rerun polled the batch it had, and sent none",
            provider.0
        );
        assert_eq!(mock.requests().len(), 2);
    });
}

#[test]
fn a_batch_refused_for_a_moment_is_sent_again_and_one_refused_for_good_ends_its_items() {
    let mock = MockLlm::start();
    let provider = providers(&mock).into_iter().next().unwrap();
    names(&mock, provider.4);
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("in.jsonl"), "Ada wrote.\n").unwrap();
    mock.plan_batch(Plan {
        refuse: Some(503),
        ..Plan::default()
    });
    let output = provider_batch(dir.path(), &provider).output().unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert_eq!(written(dir.path())["1"]["data"], json!({ "name": "Ada" }));
    assert_eq!(mock.batches().len(), 1, "created the second time");

    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("in.jsonl"), "Ada wrote.\nCy wrote.\n").unwrap();
    mock.plan_batch(Plan {
        refuse: Some(401),
        ..Plan::default()
    });
    let output = provider_batch(dir.path(), &provider).output().unwrap();
    assert_eq!(
        output.status.code(),
        Some(0),
        "every item has its line: {}",
        stderr(&output)
    );
    let lines = written(dir.path());
    for id in ["1", "2"] {
        let error = &lines[id]["error"];
        assert_eq!(error["kind"], "provider", "{}", lines[id]);
        assert!(
            error["message"].as_str().unwrap().contains("refused"),
            "{error}"
        );
    }
    assert_eq!(mock.batches().len(), 1, "nothing more was created");
}
