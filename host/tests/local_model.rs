//! The embedded default model: fetched once from a model hub (a stand-in on loopback: redirects,
//! ranges, cuts, 404s), checked, cached, and run in process by `structure run` with no server
//! and no key (the real models `scripts/install-test-deps` takes from PyPI into
//! `target/test-models`).
#![cfg(feature = "embedded")]

mod support;

use std::collections::HashMap;
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use structure_host::local::{FetchError, Hub, ModelCache, ModelCard, Show, fetch};

/// What a stand-in hub serves and how it misbehaves.
#[derive(Default)]
struct Behaviour {
    /// `/cdn/<file>` → its bytes (or a file on disk, for the real models).
    files: HashMap<String, Vec<u8>>,
    on_disk: HashMap<String, PathBuf>,
    /// The first download of a file is cut after this many bytes.
    cut_after: Option<usize>,
    /// Ranges are answered with the whole file (200), as a hub without them would.
    no_ranges: bool,
    /// Each request: its path and its `range` header.
    seen: Vec<(String, Option<String>)>,
}

/// A model hub on loopback: `/{repo}/resolve/{revision}/{file}` redirects to `/cdn/{file}`,
/// which serves the bytes, ranges included.
struct StandInHub {
    address: String,
    behaviour: Arc<Mutex<Behaviour>>,
}

impl StandInHub {
    fn start(behaviour: Behaviour) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let address = format!("http://{}", listener.local_addr().unwrap());
        let behaviour = Arc::new(Mutex::new(behaviour));
        let shared = behaviour.clone();
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let shared = shared.clone();
                std::thread::spawn(move || answer(stream, &shared));
            }
        });
        Self { address, behaviour }
    }

    fn hub(&self) -> Hub {
        Hub::at(&self.address)
    }

    /// The requests for the bytes (not the redirects).
    fn downloads(&self) -> Vec<Option<String>> {
        let behaviour = self.behaviour.lock().unwrap();
        (behaviour.seen.iter())
            .filter(|(path, _)| path.starts_with("/cdn/"))
            .map(|(_, range)| range.clone())
            .collect()
    }
}

fn answer(mut stream: TcpStream, behaviour: &Mutex<Behaviour>) {
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") && stream.read(&mut byte).is_ok_and(|read| read == 1) {
        head.push(byte[0]);
    }
    let head = String::from_utf8_lossy(&head).into_owned();
    let path = head.split(' ').nth(1).unwrap_or("/").to_owned();
    let range = (head.lines())
        .find_map(|line| {
            line.to_ascii_lowercase()
                .strip_prefix("range: bytes=")
                .map(str::to_owned)
        })
        .and_then(|range| range.trim_end_matches('-').parse::<usize>().ok());
    let mut shared = behaviour.lock().unwrap();
    shared
        .seen
        .push((path.clone(), range.map(|from| format!("bytes={from}-"))));
    if let Some(file) = path
        .split("/resolve/")
        .nth(1)
        .and_then(|rest| rest.split('/').nth(1))
    {
        let reply = format!(
            "HTTP/1.1 302 Found\r\nlocation: /cdn/{file}\r\ncontent-length: 0\r\nconnection: close\r\n\r\n"
        );
        let _ = stream.write_all(reply.as_bytes());
        return;
    }
    let name = path.trim_start_matches("/cdn/").to_owned();
    let bytes = match (shared.files.get(&name), shared.on_disk.get(&name)) {
        (Some(bytes), _) => bytes.clone(),
        (None, Some(file)) => std::fs::read(file).unwrap(),
        (None, None) => {
            let _ = stream.write_all(
                b"HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\nconnection: close\r\n\r\n",
            );
            return;
        }
    };
    let from = if shared.no_ranges {
        0
    } else {
        range.unwrap_or(0)
    };
    let cut = shared.cut_after.take().filter(|_| from == 0);
    drop(shared);
    let status = if from > 0 {
        "206 Partial Content"
    } else {
        "200 OK"
    };
    let body = &bytes[from..];
    let reply = format!(
        "HTTP/1.1 {status}\r\ncontent-length: {}\r\nconnection: close\r\n\r\n",
        body.len()
    );
    let _ = stream.write_all(reply.as_bytes());
    let _ = stream.write_all(&body[..cut.unwrap_or(body.len()).min(body.len())]);
}

/// A model card for `bytes`, served as `file`.
fn card(name: &str, file: &str, bytes: &[u8]) -> &'static ModelCard {
    let sha256: String = Sha256::digest(bytes)
        .iter()
        .map(|byte| format!("{byte:02x}"))
        .collect();
    Box::leak(Box::new(ModelCard {
        name: Box::leak(name.to_owned().into_boxed_str()),
        title: "a test model",
        repo: "owner/models",
        revision: "main",
        file: Box::leak(file.to_owned().into_boxed_str()),
        size: bytes.len() as u64,
        sha256: Box::leak(sha256.into_boxed_str()),
        license: "none",
    }))
}

fn bytes(count: usize) -> Vec<u8> {
    (0..count).map(|index| (index * 7 % 251) as u8).collect()
}

#[test]
fn a_model_is_fetched_through_a_redirect_resumed_after_a_cut_and_checked_once() {
    let data = bytes(3_000_000);
    let card = card("tiny", "tiny.gguf", &data);
    let hub = StandInHub::start(Behaviour {
        files: HashMap::from([("tiny.gguf".to_owned(), data.clone())]),
        cut_after: Some(1_000_000),
        ..Behaviour::default()
    });
    let dir = tempfile::tempdir().unwrap();
    let cache = ModelCache::at(dir.path());
    let cut = fetch(&cache, card, &hub.hub(), false, Show::Nothing).unwrap_err();
    assert!(matches!(cut, FetchError::Network { .. }), "{cut:?}");
    assert!(cut.to_string().contains("resumes"), "{cut}");
    let partial = dir.path().join("tiny/tiny.gguf.part");
    let held = std::fs::metadata(&partial).unwrap().len();
    assert!(held > 0 && held < data.len() as u64, "{held}");
    assert!(!cache.has(card));

    let path = fetch(&cache, card, &hub.hub(), false, Show::Nothing).unwrap();
    assert_eq!(std::fs::read(&path).unwrap(), data);
    assert!(!partial.exists());
    assert_eq!(
        hub.downloads(),
        [None, Some(format!("bytes={held}-"))],
        "resumed where it stopped"
    );
    // Once here, it is not fetched again, even offline.
    assert_eq!(
        fetch(&cache, card, &hub.hub(), true, Show::Nothing).unwrap(),
        path
    );
    assert_eq!(hub.downloads().len(), 2);
    let listed = cache.list();
    assert_eq!(
        (listed.len(), listed[0].whole, listed[0].bytes),
        (1, true, data.len() as u64)
    );
    assert!(cache.remove("tiny").unwrap());
    assert!(!cache.has(card) && !cache.remove("tiny").unwrap());
}

#[test]
fn a_hub_that_ignores_the_range_is_read_again_from_the_start() {
    let data = bytes(2_000_000);
    let card = card("tiny", "tiny.gguf", &data);
    let hub = StandInHub::start(Behaviour {
        files: HashMap::from([("tiny.gguf".to_owned(), data.clone())]),
        cut_after: Some(500_000),
        no_ranges: true,
        ..Behaviour::default()
    });
    let dir = tempfile::tempdir().unwrap();
    let cache = ModelCache::at(dir.path());
    assert!(fetch(&cache, card, &hub.hub(), false, Show::Nothing).is_err());
    let path = fetch(&cache, card, &hub.hub(), false, Show::Nothing).unwrap();
    assert_eq!(std::fs::read(path).unwrap(), data);
}

#[test]
fn a_wrong_file_a_404_and_offline_each_fail_saying_how_to_get_it_and_leave_nothing() {
    let data = bytes(100_000);
    let hub = StandInHub::start(Behaviour {
        files: HashMap::from([(
            "other.gguf".to_owned(),
            data.iter().rev().copied().collect(),
        )]),
        ..Behaviour::default()
    });
    let dir = tempfile::tempdir().unwrap();
    let cache = ModelCache::at(dir.path());
    let wrong = card("other", "other.gguf", &data);
    let error = fetch(&cache, wrong, &hub.hub(), false, Show::Nothing).unwrap_err();
    assert!(matches!(error, FetchError::Mismatch { .. }), "{error:?}");
    assert!(error.to_string().contains("--model-file"), "{error}");
    let missing = card("missing", "missing.gguf", &data);
    let error = fetch(&cache, missing, &hub.hub(), false, Show::Nothing).unwrap_err();
    assert!(matches!(error, FetchError::NotFound { .. }), "{error:?}");
    let asked = hub.behaviour.lock().unwrap().seen.len();
    let offline = card("offline", "offline.gguf", &data);
    let error = fetch(&cache, offline, &hub.hub(), true, Show::Nothing).unwrap_err();
    assert!(matches!(error, FetchError::Offline { .. }), "{error:?}");
    assert!(
        error.to_string().contains("structure model pull"),
        "{error}"
    );
    assert_eq!(
        hub.behaviour.lock().unwrap().seen.len(),
        asked,
        "offline asks nothing"
    );
    let left: Vec<PathBuf> = walk(dir.path())
        .into_iter()
        .filter(|path| !path.to_string_lossy().ends_with(".lock"))
        .collect();
    assert!(left.is_empty(), "{left:?}");
}

#[test]
fn two_first_runs_at_once_download_it_once() {
    let data = bytes(4_000_000);
    let card = card("tiny", "tiny.gguf", &data);
    let hub = Arc::new(StandInHub::start(Behaviour {
        files: HashMap::from([("tiny.gguf".to_owned(), data.clone())]),
        ..Behaviour::default()
    }));
    let dir = tempfile::tempdir().unwrap();
    let runs: Vec<_> = (0..2)
        .map(|_| {
            let (hub, dir) = (hub.clone(), dir.path().to_path_buf());
            std::thread::spawn(move || {
                fetch(&ModelCache::at(dir), card, &hub.hub(), false, Show::Nothing)
            })
        })
        .collect();
    for run in runs {
        assert_eq!(std::fs::read(run.join().unwrap().unwrap()).unwrap(), data);
    }
    assert_eq!(hub.downloads().len(), 1);
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        if entry.path().is_dir() {
            found.extend(walk(&entry.path()));
        } else {
            found.push(entry.path());
        }
    }
    found
}

/// A model `scripts/install-test-deps` took from PyPI.
fn test_model(file: &str) -> PathBuf {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../target/test-models")
        .join(file);
    assert!(
        path.is_file(),
        "{} is missing: run scripts/install-test-deps",
        path.display()
    );
    path
}

/// `structure` with `args` and nothing configured but `env`: no provider, no key, the store in
/// memory, the cache in `cache`.
fn structure(args: &[&str], env: &[(&str, &str)], cache: &Path) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_structure"));
    command
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", cache);
    command
        .env("STRUCTURE_CACHE_DIR", cache)
        .args(["--store", "memory"])
        .args(args);
    command.envs(env.iter().copied());
    command.output().expect("the structure binary runs")
}

/// The README's first command on a machine with nothing configured: the default model is
/// fetched once (from the stand-in hub), checked, and answers; the second run fetches
/// nothing; offline with no model is a typed error that says how to get it.
#[test]
fn structure_run_with_nothing_configured_fetches_the_default_model_once_and_answers() {
    let model = test_model("qwen2.5-coder-0.5b-instruct-q4_k_m.gguf");
    let hub = StandInHub::start(Behaviour {
        on_disk: HashMap::from([("qwen2.5-coder-0.5b-instruct-q4_k_m.gguf".to_owned(), model)]),
        ..Behaviour::default()
    });
    let cache = tempfile::tempdir().unwrap();
    let endpoint = [("HF_ENDPOINT", hub.address.as_str())];
    let args = [
        "run",
        "--schema",
        "user-action-record",
        "Mike broke the build today at 2:30 pm",
    ];
    for run in 0..2 {
        let output = structure(&args, &endpoint, cache.path());
        let result = support::stdout_json(&output);
        assert_eq!(
            result["status"],
            "ok",
            "run {run}: {result:#}\n{}",
            String::from_utf8_lossy(&output.stderr)
        );
        assert_eq!(
            result["data"]["userId"]
                .as_str()
                .map(str::to_lowercase)
                .as_deref(),
            Some("mike"),
            "{result:#}"
        );
        assert_eq!(
            result["trace"]["model"],
            "llamacpp/qwen2.5-coder-0.5b-instruct"
        );
        let mike = (result["sources"].as_array().unwrap().iter())
            .find(|source| source["pointer"] == "/userId")
            .unwrap();
        assert_eq!(mike["text"], "Mike", "{result:#}");
        assert_eq!(hub.downloads().len(), 1, "fetched on the first run only");
    }
    let empty = tempfile::tempdir().unwrap();
    let output = structure(
        &["--offline", args[0], args[1], args[2], args[3]],
        &endpoint,
        empty.path(),
    );
    assert_eq!(output.status.code(), Some(1));
    let error = support::stdout_json(&output);
    assert_eq!(error["error"]["kind"], "configuration", "{error}");
    assert_eq!(error["error"]["key"], "structure_model_file");
    assert!(
        error["error"]["message"]
            .as_str()
            .unwrap()
            .contains("structure model pull"),
        "{error}"
    );
    assert_eq!(hub.downloads().len(), 1);
}

/// SmolLM2-135M, a GGUF a user has, and a schema it answers.
fn small_model() -> (String, String) {
    let model = test_model("SmolLM2-135M-Instruct.Q4_1.gguf");
    let schema = json!({ "type": "object", "properties": { "name": { "type": "string" } }, "required": ["name"] });
    (model.to_str().unwrap().to_owned(), schema.to_string())
}

/// A GGUF the user has, run in process by `run`: the value found, with its place and the
/// engine's log-probabilities (the value's confidence, the form's).
#[test]
fn a_model_file_the_user_has_answers_a_run_with_sources_and_confidences() {
    let (model, schema) = small_model();
    let cache = tempfile::tempdir().unwrap();
    let args = [
        "--model-file",
        &model,
        "run",
        "--schema",
        &schema,
        "Ada Lovelace wrote the first program.",
    ];
    let result = support::stdout_json(&structure(&args, &[], cache.path()));
    assert_eq!(
        result["trace"]["model"], "llamacpp/smollm2-135m-instruct.q4_1",
        "{result:#}"
    );
    assert_eq!(result["status"], "ok", "{result:#}");
    assert_eq!(result["sources"][0]["text"], "Ada Lovelace", "{result:#}");
    assert!(
        result["sources"][0]["confidence"]
            .as_f64()
            .is_some_and(|confidence| confidence > 0.0),
        "{result:#}"
    );
    assert!(result["trace"]["formConfidence"].is_number(), "{result:#}");
}

/// `batch` sends its items one at a time through the one engine, whatever `--jobs` says: none
/// waits in a queue against its time limit.
#[test]
fn a_batch_runs_its_items_through_one_engine() {
    let (model, schema) = small_model();
    let cache = tempfile::tempdir().unwrap();
    let input = cache.path().join("in.jsonl");
    let lines: Vec<String> = (0..3)
        .map(|id| {
            json!({ "id": format!("p{id}"), "prompt": format!("Person number {id} is Ada.") })
                .to_string()
        })
        .collect();
    std::fs::write(&input, lines.join("\n")).unwrap();
    let out = cache.path().join("out.jsonl");
    let (input, out_path) = (input.to_str().unwrap(), out.to_str().unwrap());
    let args = [
        "--model-file",
        &model,
        "batch",
        input,
        "-o",
        out_path,
        "--schema",
        &schema,
        "--jobs",
        "4",
    ];
    let output = structure(&args, &[], cache.path());
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let written = std::fs::read_to_string(&out).unwrap();
    assert_eq!(written.lines().count(), 3, "{written}");
    for line in written.lines() {
        let line: Value = serde_json::from_str(line).unwrap();
        assert!(line["status"].is_string(), "no error, no timeout: {line}");
    }
}

/// `serve` loads the model before it listens, and answers with it.
#[test]
fn the_service_answers_with_the_embedded_model() {
    let (model, schema) = small_model();
    let env = [
        ("STRUCTURE_MODEL_FILE", model.as_str()),
        ("STRUCTURE_API_AUTH", "none"),
    ];
    let served = support::Served::start(&["--store", "memory"], &env);
    let schema: Value = serde_json::from_str(&schema).unwrap();
    let body = json!({ "prompt": "Ada Lovelace wrote the first program.", "schema": schema });
    let headers = [("content-type", "application/json")];
    let (status, answer) = support::http(
        &served.address,
        "POST",
        "/v1/structure",
        &headers,
        &body.to_string(),
    );
    let answer: Value = serde_json::from_str(&answer).unwrap();
    assert_eq!(
        (status, &answer["trace"]["model"]),
        (200, &json!("llamacpp/smollm2-135m-instruct.q4_1")),
        "{answer}"
    );
}

/// The Rust library: a client whose settings name a GGUF runs it in process; one engine serves
/// every client of the process that asks for the same model.
#[tokio::test]
async fn the_rust_library_runs_the_embedded_model() {
    use structure_host::{Request, SchemaInput, Scope, Settings, Status, Structure};
    let (model, schema) = small_model();
    let settings = Settings::new().set("structure_model_file", model.as_str());
    let client = Structure::builder()
        .settings(settings.clone())
        .build()
        .unwrap();
    let other = Structure::builder().settings(settings).build().unwrap();
    assert_eq!(client.local_model(), other.local_model());
    let request = Request::new(
        "Ada Lovelace wrote the first program.",
        SchemaInput::Inline(schema),
    );
    let outcome = client.structure(&Scope::default(), &request).await.unwrap();
    assert_eq!(outcome.status, Status::Ok, "{outcome:?}");
    assert_eq!(outcome.trace.model, "llamacpp/smollm2-135m-instruct.q4_1");
    let again = other.structure(&Scope::default(), &request).await.unwrap();
    assert!(
        again.usage.cached_prompt_tokens > 0,
        "the same engine kept the prompt: {:?}",
        again.usage
    );
}
