//! Documents beside the prompt: a PDF's text layer read page by page inside the core, the
//! sources of its values with their pages, the text read returned on request, and every way a
//! document can fail a typed error before any LLM call.

mod support;

use base64::Engine as _;
use mock_llm::Reply;
use mock_llm::pdf;
use serde_json::{Value, json};
use structure::request::Document;
use structure::{Answer, ErrorKind, Outcome, SchemaInput, StructureError, StructureRequest};

use support::{MapConfig, ScriptedTransport, ports};

fn schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "party": { "type": "string" },
            "date": { "type": "string", "format": "date" },
            "days": { "type": "integer" },
        },
        "required": ["party"],
    })
}

fn config(extra: &[(&str, &str)]) -> MapConfig {
    let mut config = MapConfig::local();
    for (key, value) in extra {
        config.values.insert((*key).to_owned(), (*value).to_owned());
    }
    config
}

fn run(
    request: &StructureRequest,
    replies: Vec<Reply>,
    config: &MapConfig,
) -> (Result<Outcome, StructureError>, usize) {
    let transport = ScriptedTransport::new(replies);
    let result = structure::structure(
        request,
        &structure::Scope::default(),
        &ports(&transport, config),
    );
    (result, transport.count())
}

fn contract() -> Vec<u8> {
    pdf::with_pages(&[
        "NON-DISCLOSURE AGREEMENT\nThis Agreement is effective as of 2021-03-04.",
        "Party: Zoë Kim of Kraków.\nThe term is 15 days.",
    ])
}

#[test]
fn a_pdfs_values_come_with_their_pages_and_the_text_read_on_request() {
    let document = Document::new(contract(), "application/pdf").unwrap();
    let request = StructureRequest::for_document(document, SchemaInput::Inline(schema()), None)
        .unwrap()
        .with_return_text(true);
    let answer = json!({ "party": "Zoë Kim", "date": "2021-03-04", "days": 15 });
    let (result, calls) = run(&request, vec![Reply::answer(answer.clone())], &config(&[]));
    let outcome = result.unwrap();
    assert_eq!(outcome.answer, Answer::Ok(answer));
    assert_eq!(calls, 1);
    let text = outcome.text.as_deref().unwrap();
    assert!(text.starts_with("NON-DISCLOSURE AGREEMENT\n"), "{text:?}");
    assert!(
        text.contains("\n\u{c}\nParty: Zoë Kim"),
        "pages apart by a form feed: {text:?}"
    );
    let page = |pointer: &str| {
        let source = outcome
            .sources
            .iter()
            .find(|s| s.pointer == pointer)
            .unwrap();
        let span = source.span.as_ref().unwrap();
        let by_chars: String = text
            .chars()
            .skip(span.start)
            .take(span.end - span.start)
            .collect();
        assert_eq!(by_chars, span.text, "offsets count in the text returned");
        source.page
    };
    assert_eq!(page("/date"), Some(1));
    assert_eq!(page("/party"), Some(2));
    assert_eq!(page("/days"), Some(2));
    // Each value's box on its page, inside the page as shown; the pages' sizes in the trace.
    let sizes: Vec<(u32, f64, f64)> = (outcome.trace.page_sizes.iter())
        .map(|size| (size.page, size.width, size.height))
        .collect();
    assert_eq!(sizes, [(1, 612.0, 792.0), (2, 612.0, 792.0)]);
    for source in &outcome.sources {
        let [line] = &source.boxes[..] else {
            panic!("one line, one box: {source:?}");
        };
        assert_eq!(Some(line.page), source.page);
        assert!(
            0.0 < line.x0 && line.x0 < line.x1 && line.x1 < 612.0,
            "{line:?}"
        );
        assert!(
            0.0 < line.top && line.top < line.bottom && line.bottom < 792.0,
            "{line:?}"
        );
    }
    // The model was sent the document's text.
    let sent = serde_json::to_string(&outcome.trace).unwrap();
    assert!(!sent.is_empty());
}

#[test]
fn a_prompt_before_the_document_has_no_page_and_a_text_document_none_either() {
    let document = Document::new(contract(), "application/pdf").unwrap();
    let request =
        StructureRequest::new("Sent by Ada Lovelace.", SchemaInput::Inline(schema()), None)
            .unwrap()
            .with_document(document);
    let answer = json!({ "party": "Ada Lovelace", "date": "2021-03-04" });
    let (result, _) = run(&request, vec![Reply::answer(answer)], &config(&[]));
    let outcome = result.unwrap();
    assert_eq!(outcome.text, None, "not asked for");
    let party = outcome
        .sources
        .iter()
        .find(|s| s.pointer == "/party")
        .unwrap();
    assert_eq!((party.span.as_ref().unwrap().start, party.page), (8, None));
    assert_eq!(party.boxes, [], "the prompt is on no page");
    let date = outcome
        .sources
        .iter()
        .find(|s| s.pointer == "/date")
        .unwrap();
    assert_eq!(date.page, Some(1));

    let text = Document::new("Party: Zoë Kim.".as_bytes().to_vec(), "text/plain").unwrap();
    let request =
        StructureRequest::for_document(text, SchemaInput::Inline(schema()), None).unwrap();
    let (result, _) = run(
        &request,
        vec![Reply::answer(json!({ "party": "Zoë Kim" }))],
        &config(&[]),
    );
    let outcome = result.unwrap();
    assert_eq!(outcome.sources[0].page, None);
    assert_eq!(outcome.sources[0].boxes, []);
    assert_eq!(outcome.trace.page_sizes, []);
    assert_eq!(outcome.sources[0].span.as_ref().unwrap().start, 7);
}

#[test]
fn every_unreadable_document_is_a_typed_error_before_any_call() {
    let good = contract();
    // The document, its media type, the settings, the reason expected, and what the message says.
    type Case<'a> = (Vec<u8>, &'a str, &'a [(&'a str, &'a str)], &'a str, &'a str);
    let cases: Vec<Case> = vec![
        (
            pdf::encrypted(&["secret"]),
            "application/pdf",
            &[],
            "encrypted",
            "password",
        ),
        (
            pdf::without_text(3),
            "application/pdf",
            &[],
            "no-text-layer",
            "OCR",
        ),
        (
            good[..good.len() / 2].to_vec(),
            "application/pdf",
            &[],
            "unreadable",
            "damaged",
        ),
        (
            b"%PDF-1.7 nothing else".to_vec(),
            "application/pdf",
            &[],
            "unreadable",
            "cannot be read",
        ),
        (
            good.clone(),
            "application/pdf",
            &[("structure_max_document_bytes", "100")],
            "too-large",
            "structure_max_document_bytes",
        ),
        (
            good.clone(),
            "application/pdf",
            &[("structure_max_document_pages", "1")],
            "too-many-pages",
            "structure_max_document_pages",
        ),
        (
            vec![b'Z', 0xeb, b'!'],
            "text/plain",
            &[],
            "not-utf8",
            "UTF-8",
        ),
    ];
    for (bytes, media_type, settings, reason, says) in cases {
        let document = Document::new(bytes, media_type).unwrap();
        let request =
            StructureRequest::for_document(document, SchemaInput::Inline(schema()), None).unwrap();
        let (result, calls) = run(&request, vec![], &config(settings));
        let error = result.unwrap_err();
        assert_eq!(
            error.kind,
            ErrorKind::InvalidDocument {
                reason: reason.to_owned()
            },
            "{reason}: {error:?}"
        );
        assert!(error.message.contains(says), "{reason}: {}", error.message);
        assert_eq!(calls, 0, "{reason}: no LLM call");
    }
}

#[test]
fn a_page_tree_that_loops_is_read_in_bounded_time() {
    // A page that names itself as its parent: a reader that looks inherited attributes up the
    // parent chain without a guard never stops; this one walks the tree down, each node once.
    let bytes = pdf::parent_loop("Term: 2 years.");
    assert!(String::from_utf8_lossy(&bytes).contains("/Parent 4 0 R"));
    let (sent, answer) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = sent.send(structure::document::pdf::pages(&bytes, 10));
    });
    let read = answer
        .recv_timeout(std::time::Duration::from_secs(20))
        .expect("the reader came back");
    assert_eq!(read.unwrap(), ["Term: 2 years."]);
}

#[test]
fn the_tool_arguments_take_a_document_in_base64() {
    let data = base64::engine::general_purpose::STANDARD.encode(contract());
    let arguments = json!({
        "document": { "mediaType": "application/pdf", "data": data },
        "schema": schema(),
        "returnText": true,
    });
    let transport = ScriptedTransport::new([Reply::answer(json!({ "party": "Zoë Kim" }))]);
    let config = config(&[]);
    let result = structure::call_tool(
        &arguments,
        &structure::Scope::default(),
        &ports(&transport, &config),
    )
    .unwrap();
    assert_eq!(result["status"], "ok");
    assert_eq!(result["sources"][0]["page"], 2);
    assert!(result["text"].as_str().unwrap().contains("Party: Zoë Kim"));

    for (arguments, field, says) in [
        (json!({ "schema": schema() }), "prompt", "or a document"),
        (
            json!({ "document": { "mediaType": "application/pdf", "data": "@@@" }, "schema": schema() }),
            "document",
            "base64",
        ),
        (
            json!({ "document": { "mediaType": "application/zip", "data": "AAAA" }, "schema": schema() }),
            "document",
            "application/pdf, text/plain, text/html",
        ),
        (
            json!({ "document": "a.pdf", "schema": schema() }),
            "document",
            "data (base64), and mediaType or name",
        ),
        (
            json!({ "document": { "name": 7, "data": "AAAA" }, "schema": schema() }),
            "document.name",
            "a file name",
        ),
        (
            json!({ "document": { "mediaType": "text/plain", "data": "AAAA", "file": "x" }, "schema": schema() }),
            "document",
            "unknown document field",
        ),
        (
            json!({ "prompt": "x", "schema": schema(), "returnText": "yes" }),
            "returnText",
            "true or false",
        ),
    ] {
        let error = StructureRequest::from_tool_arguments(&arguments).unwrap_err();
        assert_eq!(
            error.kind,
            ErrorKind::InvalidRequest {
                field: field.to_owned()
            },
            "{arguments}"
        );
        assert!(error.message.contains(says), "{}", error.message);
    }
}

#[test]
fn a_document_without_a_media_type_is_told_by_its_name_or_else_its_bytes() {
    let encode = |bytes: &[u8]| base64::engine::general_purpose::STANDARD.encode(bytes);
    let docx = mock_llm::docx::with_paragraphs(&["Party: Zoë Kim"]);
    let html = b"<p>Party: <b>Zo&euml; Kim</b></p>";
    for (document, read) in [
        (
            json!({ "data": encode(&contract()) }),
            "Party: Zoë Kim of Kraków.",
        ),
        (json!({ "data": encode(&docx) }), "Party: Zoë Kim"),
        (
            json!({ "data": encode(html), "name": "party.HTML" }),
            "Party: Zoë Kim",
        ),
        (
            json!({ "data": encode(html) }),
            "<p>Party: <b>Zo&euml; Kim</b></p>",
        ),
        (
            json!({ "data": encode(html), "mediaType": "text/html; charset=utf-8" }),
            "Party: Zoë Kim",
        ),
    ] {
        let arguments = json!({ "document": document, "schema": schema(), "returnText": true });
        let request = StructureRequest::from_tool_arguments(&arguments).unwrap();
        let (result, _) = run(
            &request,
            vec![Reply::answer(json!({ "party": "Zoë Kim" }))],
            &config(&[]),
        );
        let outcome = result.unwrap();
        let text = outcome.text.unwrap();
        assert!(text.contains(read), "{document}: {text:?}");
    }
}

#[test]
fn records_from_a_pdf_carry_their_pages() {
    let document = Document::new(
        pdf::with_pages(&["Party: Ada Lovelace.", "Party: Zoë Kim."]),
        "application/pdf",
    )
    .unwrap();
    let request = StructureRequest::for_document(
        document,
        SchemaInput::Inline(json!({ "type": "object", "properties": { "party": { "type": "string" } }, "required": ["party"] })),
        None,
    )
    .unwrap()
    .with_records(true);
    let answer = json!({ "records": [{ "party": "Ada Lovelace" }, { "party": "Zoë Kim" }] });
    let (result, _) = run(&request, vec![Reply::answer(answer)], &config(&[]));
    let outcome = result.unwrap();
    let pages: Vec<Option<u32>> = outcome.sources.iter().map(|source| source.page).collect();
    assert_eq!(pages, [Some(1), Some(2)]);
    let boxes: Vec<u32> = (outcome.sources.iter())
        .flat_map(|source| source.boxes.iter().map(|line| line.page))
        .collect();
    assert_eq!(boxes, [1, 2], "records mode gives boxes too");
}
