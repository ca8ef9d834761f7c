//! The `structure` command: arguments, stdin, settings from the environment, output and exit
//! status (0 ok, 3 need-more-input, 4 stale, 2 usage error, 1 any other error).

use std::io::Write;
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::Duration;

use mock_llm::{MockLlm, Reply};
use serde_json::{Value, json};

mod support;
use support::stdout_json;

fn structure(mock: Option<&MockLlm>, args: &[&str], stdin: Option<&str>) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_structure"));
    command.args(args).args(["--store", "memory"]);
    for (name, _) in std::env::vars() {
        if name.starts_with("STRUCTURE_") || name.starts_with("OPENAI_") {
            command.env_remove(name);
        }
    }
    if let Some(mock) = mock {
        command
            .env("STRUCTURE_MODEL", "openai/gpt-4.1-mini")
            .env("OPENAI_BASE_URL", mock.base_url());
    }
    command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = command.spawn().expect("the structure binary runs");
    let mut input = child.stdin.take().unwrap();
    if let Some(text) = stdin {
        input.write_all(text.as_bytes()).unwrap();
    }
    drop(input);
    child.wait_with_output().unwrap()
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

fn action() -> Value {
    json!({ "userId": "mike", "action": "broke_build", "timestamp": "2026-05-06T14:30:00Z", "status": "failure" })
}

#[test]
fn a_call_escalates_from_the_command_line_and_prints_each_attempt_and_confidence() {
    let mock = MockLlm::start();
    mock.push(Reply::error(503, "overloaded", "try later"));
    mock.push(Reply::answer(action()).with_token_probability(0.5));
    let output = structure(
        Some(&mock),
        &[
            "--set",
            "structure_max_retries=0",
            "--set",
            "structure_logprobs=on",
            "run",
            "--with",
            "escalate=openai/gpt-4.1",
            "--schema",
            "user-action-record",
            "Mike broke the build at 2:30 pm",
        ],
        None,
    );
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let result = stdout_json(&output);
    let attempts: Vec<(&str, &str)> = (result["trace"]["attempts"].as_array().unwrap().iter())
        .map(|attempt| {
            (
                attempt["model"].as_str().unwrap(),
                attempt["outcome"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        attempts,
        [
            ("openai/gpt-4.1-mini", "provider"),
            ("openai/gpt-4.1", "ok")
        ]
    );
    assert_eq!(result["sources"][0]["confidence"], 0.5);
}

#[test]
fn run_prints_the_result_and_exits_by_status() {
    let mock = MockLlm::start();
    mock.push(Reply::answer(action()));
    let output = structure(
        Some(&mock),
        &[
            "run",
            "--schema",
            "user-action-record",
            "Mike broke the build at 2:30 pm",
        ],
        None,
    );
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let result = stdout_json(&output);
    assert_eq!(result["status"], "ok");
    assert_eq!(result["data"], action());

    mock.push(Reply::need("when it happened"));
    let output = structure(
        Some(&mock),
        &[
            "run",
            "--schema",
            "user-action-record",
            "Mike broke the build",
        ],
        None,
    );
    assert_eq!(output.status.code(), Some(3));
    assert_eq!(stdout_json(&output)["need"], "when it happened");

    mock.push(Reply::answer(json!({ "userId": "mike" })));
    let output = structure(
        Some(&mock),
        &[
            "run",
            "--schema",
            "user-action-record",
            "--max-loops",
            "1",
            "Mike broke the build",
        ],
        None,
    );
    assert_eq!(output.status.code(), Some(4));
    assert_eq!(stdout_json(&output)["status"], "stale");
    assert_eq!(mock.requests().len(), 3);
}

#[test]
fn a_reader_that_goes_away_ends_the_command_quietly_with_its_status() {
    let mock = MockLlm::start();
    for (args, code) in [
        (
            &[
                "run",
                "--schema",
                "user-action-record",
                "Mike broke the build",
            ][..],
            0,
        ),
        (&["schemas", "list"][..], 0),
        (&["tool-definition"][..], 0),
    ] {
        mock.push(Reply::answer(action()));
        let mut command = Command::new(env!("CARGO_BIN_EXE_structure"));
        command
            .args([
                "--store",
                "memory",
                "--model",
                "openai/gpt-4.1-mini",
                "--base-url",
            ])
            .arg(mock.base_url())
            .args(args)
            .env("OPENAI_API_KEY", "sk-test")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = command.spawn().unwrap();
        // `| head -c 0`: the reader is gone before anything is written.
        drop(child.stdout.take());
        let output = child.wait_with_output().unwrap();
        let stderr = stderr(&output);
        assert_eq!(output.status.code(), Some(code), "{args:?}: {stderr}");
        assert!(
            !stderr.contains("panicked") && !stderr.contains("Broken pipe"),
            "{args:?}: {stderr}"
        );
    }
}

#[test]
fn the_prompt_comes_from_stdin_and_the_schema_from_a_file_or_inline_json() {
    let mock = MockLlm::start();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("person.json");
    let schema = json!({ "type": "object", "properties": { "name": { "type": "string" } }, "required": ["name"] });
    std::fs::write(&file, schema.to_string()).unwrap();
    mock.push(Reply::answer(json!({ "name": "Ada" })));
    let output = structure(
        Some(&mock),
        &["run", "--schema", file.to_str().unwrap()],
        Some("Ada wrote the first program."),
    );
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert_eq!(stdout_json(&output)["schemaOrigin"], "inline");
    let sent = mock.requests()[0].json();
    assert_eq!(
        sent["messages"][1]["content"],
        "Ada wrote the first program."
    );

    mock.push(Reply::answer(json!({ "name": "Ada" })));
    let output = structure(
        Some(&mock),
        &["run", "--schema", &schema.to_string(), "Ada"],
        None,
    );
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
}

#[test]
fn records_prints_every_record_of_a_text_read_from_stdin() {
    let mock = MockLlm::start();
    mock.read_orders(mock_llm::orders::Reader::records(Duration::ZERO));
    let (text, planted) = mock_llm::orders::planted_text(8_000, 5);
    let schema = mock_llm::orders::order_schema().to_string();
    let output = structure(
        Some(&mock),
        &[
            "run",
            "--schema",
            &schema,
            "--records",
            "--with",
            "chunkTokens=500",
        ],
        Some(&text),
    );
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let result = stdout_json(&output);
    let orders: Vec<&Value> = result["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|record| &record["order"])
        .collect();
    let planted: Vec<Value> = planted.into_iter().map(|(order, _)| json!(order)).collect();
    assert_eq!(orders, planted.iter().collect::<Vec<_>>());
    assert_eq!(result["incomplete"], json!([]));
    assert!(result["trace"]["chunks"].as_u64().unwrap() > 1);
}

#[test]
fn word_documents_spreadsheets_and_web_pages_are_read_by_extension_or_bytes_with_spans_into_their_text()
 {
    let mock = MockLlm::start();
    let dir = tempfile::tempdir().unwrap();
    let blocks = mock_llm::docx::paragraph("Purchase order PO-7")
        + &mock_llm::docx::table(&[&["Buyer", "Mary Jackson"], &["Total", "12.50 EUR"]]);
    let docx = mock_llm::docx::with_body(&blocks);
    let html = "<!doctype html><title>PO-7</title><h1>Purchase order PO-7</h1>\
                <table><tr><td>Buyer<td>Mary&#32;Jackson<tr><td>Total<td>12.50 EUR</table>\
                <script>var buyer = 'nobody';</script>";
    let xlsx = mock_llm::xlsx::workbook(&[(
        "Order",
        &[&["Buyer", "Mary Jackson"], &["Total", "12.50 EUR"]],
    )]);
    let schema = r#"{"type":"object","properties":{"buyer":{"type":"string"},"total":{"type":"string"}},"required":["buyer","total"]}"#;
    // By extension (a fragment without a doctype too), and by bytes alone.
    let files = [
        ("order.docx", docx.clone()),
        ("order.bin", docx),
        ("order.xlsx", xlsx.clone()),
        ("sheet.bin", xlsx),
        ("order.html", html.as_bytes().to_vec()),
        (
            "fragment.htm",
            b"<p>Buyer: Mary Jackson</p><p>Total: 12.50 EUR".to_vec(),
        ),
        ("page", html.as_bytes().to_vec()),
    ];
    for (name, bytes) in files {
        let path = dir.path().join(name);
        std::fs::write(&path, bytes).unwrap();
        let answer = json!({ "buyer": "Mary Jackson", "total": "12.50 EUR" });
        let result = read_file(&mock, schema, &path, answer);
        let text = result["text"].as_str().unwrap();
        assert!(
            !text.contains("nobody") && !text.contains("<"),
            "{name}: {text:?}"
        );
        for source in spelled_sources(&result) {
            assert_eq!(source["boxes"], json!(null), "{name}: no page, no box");
        }
    }
    // A Word document damaged in transit: an error naming why, no LLM call.
    let damaged = dir.path().join("damaged.docx");
    std::fs::write(&damaged, mock_llm::docx::corrupt(&["Buyer: Mary Jackson"])).unwrap();
    let before = mock.requests().len();
    let output = structure(
        Some(&mock),
        &[
            "run",
            "--schema",
            schema,
            "--file",
            damaged.to_str().unwrap(),
        ],
        None,
    );
    assert_eq!(output.status.code(), Some(1));
    let error = &stdout_json(&output)["error"];
    assert_eq!(error["kind"], "invalid-document", "{error}");
    assert!(
        stderr(&output).contains("Word document"),
        "{}",
        stderr(&output)
    );
    assert_eq!(mock.requests().len(), before);
}

#[test]
fn an_image_goes_to_a_model_that_reads_images_as_its_own_part() {
    let mock = MockLlm::start();
    let dir = tempfile::tempdir().unwrap();
    // A PNG's signature is all the CLI and the component look at; the model sees the bytes.
    let png = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR\0\0\0\x01\0\0\0\x01\x08\x06\0\0\0".to_vec();
    let schema =
        r#"{"type":"object","properties":{"total":{"type":"string"}},"required":["total"]}"#;
    for name in ["receipt.png", "receipt"] {
        let path = dir.path().join(name);
        std::fs::write(&path, &png).unwrap();
        let result = read_file(&mock, schema, &path, json!({ "total": "12.50 EUR" }));
        assert_eq!(result["data"]["total"], "12.50 EUR");
        let sent: Value = serde_json::from_str(&mock.requests().last().unwrap().body).unwrap();
        let url = sent["messages"][1]["content"][1]["image_url"]["url"]
            .as_str()
            .unwrap();
        assert!(
            url.starts_with("data:image/png;base64,iVBORw0KGgo"),
            "{name}: {url}"
        );
    }
}

/// `structure run --schema SCHEMA --file PATH --return-text` against `mock` answering `answer`:
/// its result, after checking the run ended `0`.
fn read_file(mock: &MockLlm, schema: &str, path: &Path, answer: Value) -> Value {
    mock.push(Reply::answer(answer));
    let file = path.to_str().unwrap();
    let output = structure(
        Some(mock),
        &["run", "--schema", schema, "--file", file, "--return-text"],
        None,
    );
    assert_eq!(output.status.code(), Some(0), "{file}: {}", stderr(&output));
    stdout_json(&output)
}

/// The sources of `result`, each checked to spell its value in the text read (`text`, code
/// points).
fn spelled_sources(result: &Value) -> Vec<&Value> {
    let text = result["text"].as_str().unwrap();
    let sources = result["sources"].as_array().unwrap();
    for source in sources {
        let start = source["start"].as_u64().unwrap() as usize;
        let end = source["end"].as_u64().unwrap() as usize;
        let read: String = text.chars().skip(start).take(end - start).collect();
        let value = &result["data"][source["pointer"].as_str().unwrap()[1..].to_owned()];
        assert_eq!(json!(read), *value, "{source} in {text:?}");
    }
    sources.iter().collect()
}

/// Runs `program` with `args`, failing the test with its output when it fails.
fn tool(program: &str, args: &[&str]) {
    let output = Command::new(program)
        .args(args)
        .output()
        .unwrap_or_else(|error| {
            panic!("{program} cannot run ({error}): scripts/install-test-deps installs it")
        });
    assert!(
        output.status.success(),
        "{program} {args:?}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
}

/// README's recipe for a scan: `ocrmypdf` adds a text layer, then the PDF is read with spans and
/// boxes like any other. The scan is made as a scanner makes one: a page printed to pixels
/// (Ghostscript at 300 dpi), so nothing of its text survives but the picture of it.
#[test]
fn a_scan_given_a_text_layer_by_ocrmypdf_is_read_with_spans_and_boxes() {
    let mock = MockLlm::start();
    let dir = tempfile::tempdir().unwrap();
    let printed = dir.path().join("printed.pdf");
    std::fs::write(
        &printed,
        mock_llm::pdf::with_pages(&[
            "PURCHASE ORDER PO-4417\nBuyer: Mary Jackson, Hampton\nTotal due: 1,250.00 EUR",
        ]),
    )
    .unwrap();
    let scan = dir.path().join("scan.png");
    let ocr = dir.path().join("scan-ocr.pdf");
    let path = |path: &Path| path.to_str().unwrap().to_owned();
    tool(
        "gs",
        &[
            "-q",
            "-dNOPAUSE",
            "-dBATCH",
            "-sDEVICE=pnggray",
            "-r300",
            &format!("-sOutputFile={}", path(&scan)),
            &path(&printed),
        ],
    );
    tool(
        "ocrmypdf",
        &["-q", "--image-dpi", "300", &path(&scan), &path(&ocr)],
    );
    let schema = r#"{"type":"object","properties":{"buyer":{"type":"string"},"order":{"type":"string"}},"required":["buyer","order"]}"#;
    let answer = json!({ "buyer": "Mary Jackson", "order": "PO-4417" });
    let result = read_file(&mock, schema, &ocr, answer);
    let text = result["text"].as_str().unwrap();
    assert!(
        text.contains("Buyer: Mary Jackson"),
        "the OCR'd text: {text:?}"
    );
    for source in spelled_sources(&result) {
        assert_eq!(source["page"], 1);
        // One box on the page, where the printed line stood: the scan keeps the page's size
        // (612 × 792 points at 300 dpi), the OCR layer puts each word where its pixels are.
        let [line] = source["boxes"].as_array().unwrap().as_slice() else {
            panic!("one line: {source}");
        };
        let top = line["top"].as_f64().unwrap();
        assert!((40.0..120.0).contains(&top), "{line}");
    }
    assert_eq!(
        result["trace"]["pageSizes"][0]["width"]
            .as_f64()
            .unwrap()
            .round(),
        612.0
    );
}

#[test]
fn a_document_is_read_from_a_file_or_stdin_and_its_text_returned_on_request() {
    let mock = MockLlm::start();
    let dir = tempfile::tempdir().unwrap();
    let pdf = dir.path().join("contract.pdf");
    std::fs::write(
        &pdf,
        mock_llm::pdf::with_pages(&["Agreement.", "Signed by Zoë Kim."]),
    )
    .unwrap();
    let schema =
        r#"{"type":"object","properties":{"signer":{"type":"string"}},"required":["signer"]}"#;
    mock.push(Reply::answer(json!({ "signer": "Zoë Kim" })));
    // The prompt comes before the document; stdin is not read for it.
    let pdf_path = pdf.to_str().unwrap();
    let output = structure(
        Some(&mock),
        &[
            "run",
            "--schema",
            schema,
            "--file",
            pdf_path,
            "--return-text",
            "Sent by mail.",
        ],
        Some("not read"),
    );
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let result = stdout_json(&output);
    assert_eq!(result["sources"][0]["page"], 2);
    // Its box: the first line of page 2 (11-point type, its baseline 72 below the top).
    let line = &result["sources"][0]["boxes"][0];
    assert_eq!(
        (&line["page"], &line["top"], &line["bottom"]),
        (&json!(2), &json!(63.31), &json!(74.31))
    );
    assert!(line["x0"].as_f64().unwrap() > 72.0, "{line}");
    assert_eq!(
        result["trace"]["pageSizes"][1],
        json!({ "page": 2, "width": 612.0, "height": 792.0 })
    );
    let text = result["text"].as_str().unwrap();
    assert!(text.starts_with("Sent by mail.\n\nAgreement."), "{text:?}");
    assert!(!mock.requests()[0].body.contains("not read"));
    // `-`: the document from stdin (a text here), no prompt.
    mock.push(Reply::answer(json!({ "signer": "Ada" })));
    let output = structure(
        Some(&mock),
        &["run", "--schema", schema, "--file", "-"],
        Some("Signed by Ada."),
    );
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert_eq!(stdout_json(&output)["sources"][0]["start"], 10);
}

#[test]
fn a_document_that_cannot_be_read_or_found_is_an_error_with_no_llm_call() {
    let mock = MockLlm::start();
    let dir = tempfile::tempdir().unwrap();
    let schema =
        r#"{"type":"object","properties":{"signer":{"type":"string"}},"required":["signer"]}"#;
    // A document the model cannot read (a scan, for a model that does not read PDFs as
    // pictures) is an error naming why, exit 1, with no LLM call.
    let scan = dir.path().join("scan.pdf");
    std::fs::write(&scan, mock_llm::pdf::without_text(2)).unwrap();
    let before = mock.requests().len();
    let scan = scan.to_str().unwrap();
    let output = structure(
        Some(&mock),
        &[
            "run",
            "--schema",
            schema,
            "--file",
            scan,
            "--with",
            "model=openai/local",
        ],
        None,
    );
    assert_eq!(output.status.code(), Some(1));
    assert_eq!(stdout_json(&output)["error"]["kind"], "invalid-document");
    assert!(stderr(&output).contains("OCR"), "{}", stderr(&output));
    assert_eq!(mock.requests().len(), before);
    let output = structure(
        Some(&mock),
        &["run", "--schema", schema, "--file", "/no/such.pdf"],
        None,
    );
    assert_eq!(output.status.code(), Some(2));
    assert!(
        stderr(&output).contains("/no/such.pdf"),
        "{}",
        stderr(&output)
    );
}

#[test]
fn usage_errors_exit_2_with_one_clear_line() {
    let mock = MockLlm::start();
    let cases: [(&[&str], &str); 4] = [
        (&["run", "text"], "--schema"),
        (
            &["run", "--schema", "contact", "--max-loops", "0", "x"],
            "maxLoops must be an integer from 1 to 10",
        ),
        (
            &["run", "--schema", "missing/person.json", "x"],
            "no such schema file: missing/person.json",
        ),
        (
            &["run", "--schema", "contact", "--set", "novalue", "x"],
            "--set takes key=value",
        ),
    ];
    for (args, text) in cases {
        let output = structure(Some(&mock), args, None);
        assert_eq!(
            output.status.code(),
            Some(2),
            "{args:?}: {}",
            stderr(&output)
        );
        assert!(
            stderr(&output).contains(text),
            "{args:?}: {}",
            stderr(&output)
        );
    }
    assert!(mock.requests().is_empty());

    // A slip of a store's name or another scheme is refused, not made a file of that name.
    let folder = tempfile::tempdir().unwrap();
    for (store, text) in [
        ("memroy", "slip of \"memory\""),
        ("Memory", "slip of \"memory\""),
        ("rediss", ""),
        ("reddis", "slip of \"redis\""),
        ("sqlite://structure.db", "sqlite: store"),
        ("redis:localhost", "redis: store"),
        ("", "is empty"),
    ] {
        let output = Command::new(env!("CARGO_BIN_EXE_structure"))
            .current_dir(folder.path())
            .args(["--store", store, "settings", "get"])
            .output()
            .unwrap();
        let stderr = stderr(&output);
        assert_eq!(output.status.code(), Some(2), "{store}: {stderr}");
        assert!(
            stderr.contains(text) && stderr.contains("redis://host:port/N"),
            "{store}: {stderr}"
        );
    }
    assert_eq!(
        std::fs::read_dir(folder.path()).unwrap().count(),
        0,
        "no file made"
    );
    let output = Command::new(env!("CARGO_BIN_EXE_structure"))
        .current_dir(folder.path())
        .args(["--store", "mem", "settings", "get"])
        .output()
        .unwrap();
    assert_eq!(
        output.status.code(),
        Some(0),
        "a file name is a file name: {}",
        stderr(&output)
    );
}

#[test]
fn other_errors_exit_1_and_print_the_typed_error() {
    let mock = MockLlm::start();
    let output = structure(Some(&mock), &["run", "--schema", "contcat", "x"], None);
    assert_eq!(output.status.code(), Some(1));
    let error = stdout_json(&output);
    assert_eq!(error["error"]["kind"], "schema-not-found");
    assert_eq!(error["error"]["suggestions"], json!(["contact"]));
    assert_eq!(
        stderr(&output).trim(),
        "structure: no schema named \"contcat\" in the registry; did you mean contact?"
    );

    let output = structure(
        Some(&mock),
        &["--tenant", "Bad Tenant", "run", "--schema", "contact", "x"],
        None,
    );
    assert_eq!(output.status.code(), Some(2));
    assert_eq!(stdout_json(&output)["error"]["field"], "tenant");

    mock.push(Reply::error(401, "invalid_api_key", "bad key"));
    let output = structure(
        Some(&mock),
        &["run", "--schema", "contact", "Ada, ada@example.com"],
        None,
    );
    assert_eq!(output.status.code(), Some(1));
    assert_eq!(stdout_json(&output)["error"]["status"], 401);
}

#[test]
fn a_missing_key_or_endpoint_gives_one_sentence_saying_what_to_set() {
    // A provider's model named without its key (with nothing at all configured, the embedded
    // model answers: host/tests/local_model.rs).
    let output = structure(
        None,
        &[
            "--model",
            "openai/gpt-4.1-mini",
            "run",
            "--schema",
            "contact",
            "Ada, ada@example.com",
        ],
        None,
    );
    assert_eq!(output.status.code(), Some(1));
    let message = stderr(&output);
    assert_eq!(message.lines().count(), 1, "{message}");
    assert!(
        message.contains("set OPENAI_API_KEY") && message.contains("OPENAI_BASE_URL"),
        "{message}"
    );
}

#[test]
fn flags_override_the_environment() {
    let mock = MockLlm::start();
    mock.push(Reply::answer(
        json!({ "name": "Ada", "email": "ada@example.com" }),
    ));
    let output = structure(
        Some(&mock),
        &[
            "run",
            "--schema",
            "contact",
            "--model",
            "vllm/my-model",
            "--set",
            "structure_max_output_tokens=77",
            "Ada, ada@example.com",
        ],
        None,
    );
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let sent = mock.requests()[0].json();
    assert_eq!(sent["model"], "my-model");
    assert_eq!(sent["max_tokens"], 77);
    assert_eq!(stdout_json(&output)["trace"]["providerProfile"], "vllm");
}

#[test]
fn every_provider_takes_its_sdks_environment_variables() {
    let mock = MockLlm::start();
    let base = format!("http://{}", mock.address());
    mock.push(mock_llm::wire::Wire::Anthropic.answer(
        mock_llm::wire::Form::Text,
        json!({ "name": "Ada", "email": "ada@example.com" }),
    ));
    mock.push(mock_llm::wire::Wire::Gemini.answer(
        mock_llm::wire::Form::Text,
        json!({ "name": "Ada", "email": "ada@example.com" }),
    ));
    for (model, key, url) in [
        (
            "anthropic/claude-sonnet-4-5",
            "ANTHROPIC_API_KEY",
            "ANTHROPIC_BASE_URL",
        ),
        (
            "google/gemini-2.5-flash",
            "GEMINI_API_KEY",
            "GEMINI_BASE_URL",
        ),
    ] {
        let mut command = Command::new(env!("CARGO_BIN_EXE_structure"));
        command
            .args([
                "run",
                "--store",
                "memory",
                "--schema",
                "contact",
                "Ada, ada@example.com",
            ])
            .env("STRUCTURE_MODEL", model)
            .env(key, "secret-from-env")
            .env(url, &base);
        let output = command.output().unwrap();
        assert_eq!(
            output.status.code(),
            Some(0),
            "{model}: {}",
            stderr(&output)
        );
    }
    let requests = mock.requests();
    assert_eq!(requests[0].header("x-api-key"), Some("secret-from-env"));
    assert_eq!(
        requests[1].header("x-goog-api-key"),
        Some("secret-from-env")
    );
    let output = structure(
        None,
        &[
            "run",
            "--schema",
            "contact",
            "--model",
            "anthropic/claude-sonnet-4-5",
            "x",
        ],
        None,
    );
    assert!(
        stderr(&output).contains("set ANTHROPIC_API_KEY"),
        "{}",
        stderr(&output)
    );
}

#[test]
fn schemas_and_tool_definition_list_what_the_component_offers() {
    let output = structure(None, &["schemas"], None);
    assert_eq!(output.status.code(), Some(0));
    let table = String::from_utf8_lossy(&output.stdout);
    assert!(
        table
            .lines()
            .any(|line| line.starts_with("user-action-record") && line.contains("bundled")),
        "{table}"
    );
    let output = structure(None, &["schemas", "--json"], None);
    let list = stdout_json(&output);
    assert_eq!(list.as_array().unwrap().len(), 5);
    assert_eq!(list[0]["name"], "contact");
    let output = structure(None, &["tool-definition"], None);
    assert_eq!(stdout_json(&output)["name"], "structure");
}

#[test]
fn the_registry_settings_and_text_mode_from_the_command_line() {
    let mock = MockLlm::start();
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store.db");
    let store = store.to_str().unwrap();
    let run = |args: &[&str]| {
        let mut command = Command::new(env!("CARGO_BIN_EXE_structure"));
        command
            .args(["--store", store])
            .args(args)
            .env("STRUCTURE_MODEL", "openai/gpt-4.1-mini")
            .env("OPENAI_BASE_URL", mock.base_url());
        command.output().unwrap()
    };
    a_tenant_registers_a_schema_only_it_sees(&run, dir.path());
    a_tenant_registers_a_skill(&run, dir.path());
    a_tenant_sets_its_settings_but_no_secret(&run);
    text_mode_infers_the_schema_with_the_tenants_model(&run, &mock);
    let output = run(&["--tenant", "acme", "schemas", "deregister", "lead"]);
    assert_eq!(output.status.code(), Some(0));
    let output = run(&["--tenant", "acme", "schemas", "deregister", "lead"]);
    assert_eq!(output.status.code(), Some(1));
    assert!(stderr(&output).contains("lead is not registered at tenant acme"));
}

/// `schemas register` with a manual and a version, seen by `schemas show` and the list at
/// tenant `acme`, not at another tenant.
fn a_tenant_registers_a_schema_only_it_sees(run: &dyn Fn(&[&str]) -> Output, dir: &Path) {
    let schema = dir.join("lead.json");
    std::fs::write(&schema, json!({ "type": "object", "properties": { "name": { "type": "string" } }, "required": ["name"] }).to_string()).unwrap();
    let manual = dir.join("lead.md");
    std::fs::write(&manual, "Leads come from the sales inbox.").unwrap();
    let output = run(&[
        "--tenant",
        "acme",
        "schemas",
        "register",
        "lead",
        "--file",
        schema.to_str().unwrap(),
        "--manual",
        manual.to_str().unwrap(),
        "--version",
        "1.0",
    ]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert_eq!(stdout_json(&output)["origin"], "tenant:acme");
    let output = run(&["--tenant", "acme", "schemas", "show", "lead"]);
    assert_eq!(
        stdout_json(&output)["manual"],
        "Leads come from the sales inbox."
    );
    let output = run(&["--tenant", "acme", "schemas"]);
    assert!(String::from_utf8_lossy(&output.stdout).contains("tenant:acme"));
    let output = run(&["--tenant", "other", "schemas", "show", "lead"]);
    assert_eq!(
        output.status.code(),
        Some(1),
        "another tenant does not see it"
    );
}

/// `schemas register-skill` of a folder with a `SKILL.md`.
fn a_tenant_registers_a_skill(run: &dyn Fn(&[&str]) -> Output, dir: &Path) {
    let skill = dir.join("skill");
    std::fs::create_dir_all(&skill).unwrap();
    std::fs::write(skill.join("SKILL.md"), "---\nname: triage\noutput_schema: { type: object, properties: { level: { type: integer } } }\n---\nTriage.\n").unwrap();
    let output = run(&[
        "--tenant",
        "acme",
        "schemas",
        "register-skill",
        skill.to_str().unwrap(),
    ]);
    assert_eq!(
        stdout_json(&output)["name"],
        "triage",
        "{}",
        stderr(&output)
    );
}

/// `settings set` and `settings get` at tenant `acme`; a secret is a usage error.
fn a_tenant_sets_its_settings_but_no_secret(run: &dyn Fn(&[&str]) -> Output) {
    let output = run(&[
        "--tenant",
        "acme",
        "settings",
        "set",
        "maxLoops=4",
        "model=openai/tenant-model",
    ]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let output = run(&["--tenant", "acme", "settings", "get"]);
    assert_eq!(stdout_json(&output)["effective"]["maxLoops"], 4);
    let output = run(&["--tenant", "acme", "settings", "set", "openaiApiKey=sk-x"]);
    assert_eq!(output.status.code(), Some(2));
}

/// `run --schema-mode text`: the schema inferred from a description, then the call, both with
/// the model the tenant set.
fn text_mode_infers_the_schema_with_the_tenants_model(
    run: &dyn Fn(&[&str]) -> Output,
    mock: &MockLlm,
) {
    mock.push(Reply::text(&json!({ "schema": { "type": "object", "properties": [{ "key": "city", "value": { "type": "string" } }], "required": ["city"] }, "confidence": 0.9, "clarifyingQuestions": [] }).to_string()));
    mock.push(Reply::answer(json!({ "city": "Bern" })));
    let output = run(&[
        "--tenant",
        "acme",
        "run",
        "--schema",
        "the city mentioned",
        "--schema-mode",
        "text",
        "I live in Bern.",
    ]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let result = stdout_json(&output);
    assert_eq!(
        (result["data"].clone(), result["schemaOrigin"].clone()),
        (json!({ "city": "Bern" }), json!("inferred"))
    );
    assert_eq!(
        mock.requests()[1].json()["model"],
        "tenant-model",
        "the tenant's model setting applies"
    );
}

#[test]
fn bad_input_on_the_command_line_is_a_usage_error_naming_what_is_wrong() {
    let mock = MockLlm::start();
    let object = r#"{"type":"object","properties":{"a":{"type":"string"}}}"#;
    let deep = (0..40).fold(r#"{"type":"string"}"#.to_owned(), |inner, _| {
        format!(r#"{{"type":"object","properties":{{"a":{inner}}}}}"#)
    });
    let cases = [usage_error_cases(object), schema_error_cases(&deep)].concat();
    for (args, code, says) in cases {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let output = structure(Some(&mock), &args, None);
        assert_eq!(
            output.status.code(),
            Some(i32::from(code)),
            "{args:?}: {}",
            stderr(&output)
        );
        assert!(
            stderr(&output).contains(says),
            "{args:?}: {:?} does not say {says:?}",
            stderr(&output)
        );
    }
    assert!(mock.requests().is_empty(), "no LLM call for bad input");
}

/// A command line, each argument owned.
fn line(args: &[&str]) -> Vec<String> {
    args.iter().map(|&arg| arg.to_owned()).collect()
}

/// Command lines wrong in their arguments (exit 2), with a piece of the message.
fn usage_error_cases(object: &str) -> Vec<(Vec<String>, u8, &'static str)> {
    vec![
        (line(&["run", "--schema", object, "  "]), 2, "prompt"),
        (
            line(&["run", "--schema", object, "--max-loops", "0", "p"]),
            2,
            "maxLoops",
        ),
        (
            line(&["run", "--schema", object, "--max-loops", "300", "p"]),
            2,
            "300",
        ),
        (
            line(&["run", "--schema", object, "--max-loops", "-1", "p"]),
            2,
            "-1",
        ),
        (
            line(&["run", "--schema", "contact", "--schema-mode", "yaml", "p"]),
            2,
            "yaml",
        ),
        (
            line(&[
                "run",
                "--schema",
                "../etc/passwd",
                "--schema-mode",
                "named",
                "p",
            ]),
            2,
            "not a valid schema name",
        ),
        (
            line(&[
                "run",
                "--schema",
                object,
                "--with",
                "openaiApiKey=sk-x",
                "p",
            ]),
            2,
            "openaiApiKey",
        ),
        (
            line(&["run", "--schema", object, "--set", "nokey", "p"]),
            2,
            "key=value",
        ),
        (line(&["run", "p"]), 2, "--schema"),
    ]
}

/// Command lines whose schema cannot be used or found (exit 1), with a piece of the message.
fn schema_error_cases(deep: &str) -> Vec<(Vec<String>, u8, &'static str)> {
    vec![
        (
            line(&["run", "--schema", r##"{"$ref":"#"}"##, "p"]),
            1,
            "reference back to itself",
        ),
        (
            line(&[
                "run",
                "--schema",
                r#"{"properties":{},"tpye":"object"}"#,
                "p",
            ]),
            1,
            "did you mean \"type\"",
        ),
        (
            line(&[
                "run",
                "--schema",
                r#"{"type":"object","properties":{"a":{"$ref":"https://example.com/s.json"}}}"#,
                "p",
            ]),
            1,
            "external reference",
        ),
        (
            line(&["run", "--schema", deep, "p"]),
            1,
            "structure_max_schema_depth",
        ),
        (line(&["schemas", "show", "contakt"]), 1, "contact"),
    ]
}

/// The command with the mock as its model, from a clean environment whose data folder
/// (`XDG_DATA_HOME`, where the default store is) is under `home`.
fn command_on(mock: &MockLlm, home: &std::path::Path) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_structure"));
    for (name, _) in std::env::vars() {
        if name.starts_with("STRUCTURE_") || name.starts_with("OPENAI_") || name.starts_with("XDG_")
        {
            command.env_remove(name);
        }
    }
    command
        .env("XDG_DATA_HOME", home.join(".local/share"))
        .env("STRUCTURE_MODEL", "openai/gpt-4.1-mini")
        .env("OPENAI_BASE_URL", mock.base_url())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    command
}

#[test]
fn eight_commands_at_once_share_the_default_sqlite_store() {
    let mock = MockLlm::start();
    let home = tempfile::tempdir().unwrap();
    let schema =
        r#"{"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}"#;
    let file = home.path().join("lead.json");
    std::fs::write(&file, schema).unwrap();
    for _ in 0..4 {
        mock.push(Reply::answer(
            json!({ "name": "Ada", "email": "ada@example.org" }),
        ));
    }
    // Eight processes at once: four register a schema of their own, four run a call each.
    let children: Vec<_> = (0..8)
        .map(|index| {
            let mut command = command_on(&mock, home.path());
            if index % 2 == 0 {
                command.args(["schemas", "register", &format!("lead-{index}"), "--file"]);
                command.arg(&file);
            } else {
                command.args(["run", "--schema", "contact", "Ada, ada@example.org"]);
            }
            command.spawn().unwrap()
        })
        .collect();
    for child in children {
        let output = child.wait_with_output().unwrap();
        assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    }
    let output = command_on(&mock, home.path())
        .args(["schemas", "list", "--json"])
        .output()
        .unwrap();
    let names: Vec<String> = stdout_json(&output)
        .as_array()
        .unwrap()
        .iter()
        .map(|info| info["name"].as_str().unwrap().to_owned())
        .collect();
    for index in [0, 2, 4, 6] {
        assert!(names.contains(&format!("lead-{index}")), "{names:?}");
    }
    assert!(
        home.path()
            .join(".local/share/structure/sqlite_key_value.db")
            .exists()
    );
}

#[test]
fn the_old_redb_store_at_the_default_path_is_not_silently_left_behind() {
    let mock = MockLlm::start();
    let home = tempfile::tempdir().unwrap();
    let old = home.path().join(".local/share/structure/store.redb");
    std::fs::create_dir_all(old.parent().unwrap()).unwrap();
    std::fs::write(&old, b"redb").unwrap();
    let output = command_on(&mock, home.path())
        .args(["schemas", "list"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    let message = stderr(&output);
    assert!(
        message.contains("store.redb")
            && message.contains("sqlite_key_value.db")
            && message.contains("Re-register"),
        "{message}"
    );
    // Pointing at a store explicitly is always possible.
    let output = command_on(&mock, home.path())
        .args(["--store", "memory", "schemas", "list"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
}
