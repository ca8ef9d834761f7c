//! Documents a model reads as pictures: an image, a PDF whose pages have no text layer, a PDF
//! with some of each. Given to a model that reads them as its provider's own parts; refused
//! before any LLM call, naming the ways out, where the model cannot or the provider's limits
//! are passed.

mod support;

use mock_llm::Reply;
use mock_llm::pdf;
use serde_json::{Value, json};
use structure::request::Document;
use structure::{Answer, ErrorKind, Outcome, SchemaInput, StructureError, StructureRequest};

use support::{MapConfig, ScriptedTransport, ports};

/// A 1×1 PNG.
const PNG: &[u8] = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR\0\0\0\x01\0\0\0\x01\x08\x06\0\0\0\x1f\x15\xc4\x89\0\0\0\rIDATx\x9cc\xf8\xff\xff?\0\x05\xfe\x02\xfe\xa7\x35\x81\x84\0\0\0\0IEND\xaeB`\x82";

fn schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "buyer": { "type": "string" },
            "total": { "type": "string" },
        },
        "required": ["buyer", "total"],
    })
}

fn request(bytes: Vec<u8>, media_type: &str) -> StructureRequest {
    let document = Document::new(bytes, media_type).unwrap();
    StructureRequest::for_document(document, SchemaInput::Inline(schema()), None).unwrap()
}

fn run(
    request: &StructureRequest,
    replies: Vec<Reply>,
    config: &MapConfig,
) -> (Result<Outcome, StructureError>, ScriptedTransport) {
    let transport = ScriptedTransport::new(replies);
    let result = structure::structure(
        request,
        &structure::Scope::default(),
        &ports(&transport, config),
    );
    (result, transport)
}

/// A local OpenAI-compatible server, its model told to read images or not.
fn local(vision: &str) -> MapConfig {
    let mut config = MapConfig::local();
    config
        .values
        .insert("structure_vision".into(), vision.into());
    config
}

fn reason(error: &StructureError) -> &str {
    match &error.kind {
        ErrorKind::InvalidDocument { reason } => reason,
        other => panic!("not a document error: {other:?}"),
    }
}

fn answer() -> Reply {
    Reply::answer(json!({ "buyer": "Mary Jackson", "total": "12.50 EUR" }))
}

#[test]
fn an_image_goes_to_a_model_that_reads_it_and_its_values_are_derived() {
    let (result, transport) = run(
        &request(PNG.to_vec(), "image/png"),
        vec![answer()],
        &local("on"),
    );
    let outcome = result.unwrap();
    assert_eq!(
        outcome.answer,
        Answer::Ok(json!({ "buyer": "Mary Jackson", "total": "12.50 EUR" }))
    );
    let content = &transport.body(0)["messages"][1]["content"];
    assert_eq!(content[0]["type"], "text");
    assert_eq!(
        content[0]["text"],
        "The text to structure is in the attached document."
    );
    let url = content[1]["image_url"]["url"].as_str().unwrap();
    assert!(
        url.starts_with("data:image/png;base64,iVBORw0KGgo"),
        "{url}"
    );
    // No text holds the values: each is derived, with no span, page or box.
    let sources = serde_json::to_value(&outcome.sources).unwrap();
    for source in sources.as_array().unwrap() {
        assert_eq!(source["match"], "derived", "{source}");
        assert_eq!(source.get("start"), None, "{source}");
    }
}

#[test]
fn a_model_that_does_not_read_images_is_refused_before_any_call_naming_the_ways_out() {
    for vision in ["auto", "off"] {
        let (result, transport) = run(&request(PNG.to_vec(), "image/png"), vec![], &local(vision));
        let error = result.unwrap_err();
        assert_eq!(reason(&error), "needs-vision", "{error}");
        for way_out in ["structure_vision", "ocrmypdf", "openai/test-model"] {
            assert!(error.message.contains(way_out), "{way_out}: {error}");
        }
        assert_eq!(transport.count(), 0);
    }
}

#[test]
fn an_image_over_the_providers_limit_is_too_large_before_any_call() {
    let config = MapConfig::with(&[
        ("structure_model", "anthropic/claude-sonnet-4-5"),
        ("anthropic_api_key", "sk-ant-test"),
    ]);
    let mut big = PNG.to_vec();
    big.resize(5 * 1024 * 1024 + 1, 0);
    let (result, transport) = run(&request(big, "image/png"), vec![], &config);
    let error = result.unwrap_err();
    assert_eq!(reason(&error), "too-large", "{error}");
    assert!(error.message.contains("5242880"), "{error}");
    assert_eq!(transport.count(), 0);
}

#[test]
fn a_scan_goes_whole_to_a_model_that_reads_pdfs_and_is_refused_by_one_that_does_not() {
    let scan = pdf::with_scans(&[None, None]);
    let config = MapConfig::with(&[
        ("structure_model", "anthropic/claude-sonnet-4-5"),
        ("anthropic_api_key", "sk-ant-test"),
    ]);
    let reply = mock_llm::wire::Wire::Anthropic.answer(
        mock_llm::wire::Form::Text,
        json!({ "buyer": "Mary Jackson", "total": "12.50 EUR" }),
    );
    let (result, transport) = run(
        &request(scan.clone(), "application/pdf"),
        vec![reply],
        &config,
    );
    assert!(matches!(result.unwrap().answer, Answer::Ok(_)));
    let block = &transport.body(0)["messages"][0]["content"][0];
    assert_eq!(block["type"], "document");
    assert_eq!(block["source"]["media_type"], "application/pdf");

    let (result, transport) = run(&request(scan, "application/pdf"), vec![], &local("auto"));
    let error = result.unwrap_err();
    assert_eq!(reason(&error), "no-text-layer", "{error}");
    assert!(error.message.contains("ocrmypdf"), "{error}");
    assert_eq!(transport.count(), 0);
}

#[test]
fn a_pdf_of_text_and_scanned_pages_reads_the_text_and_names_the_scanned_pages() {
    let mixed = pdf::with_scans(&[
        Some("Buyer: Mary Jackson"),
        None,
        Some("Total: 12.50 EUR"),
        None,
    ]);
    // A model that reads PDFs gets the text pages' text and the PDF; the values the text
    // holds keep their spans and pages.
    let (result, transport) = run(
        &request(mixed.clone(), "application/pdf"),
        vec![answer()],
        &local("on"),
    );
    let outcome = result.unwrap();
    let content = &transport.body(0)["messages"][1]["content"];
    let text = content[0]["text"].as_str().unwrap();
    assert!(
        text.contains("Buyer: Mary Jackson") && text.contains("Total: 12.50 EUR"),
        "{text}"
    );
    assert_eq!(content[1]["type"], "file");
    let pages: Vec<Option<u32>> = outcome.sources.iter().map(|source| source.page).collect();
    assert_eq!(pages, [Some(1), Some(3)]);
    // One that does not: an error naming the pages it cannot read.
    let (result, transport) = run(&request(mixed, "application/pdf"), vec![], &local("auto"));
    let error = result.unwrap_err();
    assert_eq!(reason(&error), "no-text-layer");
    assert!(error.message.contains("pages 2, 4"), "{error}");
    assert_eq!(transport.count(), 0);
}

#[test]
fn grounding_require_says_what_it_cannot_check_in_a_picture() {
    let mut config = local("on");
    config
        .values
        .insert("structure_grounding".into(), "require".into());
    let (result, _) = run(&request(PNG.to_vec(), "image/png"), vec![answer()], &config);
    let outcome = result.unwrap();
    assert!(
        matches!(outcome.answer, Answer::Ok(_)),
        "{:?}",
        outcome.answer
    );
    assert!(
        (outcome.trace.warnings.iter())
            .any(|warning| warning.contains("grounding require cannot check")),
        "{:?}",
        outcome.trace.warnings
    );
}

#[test]
fn a_pdf_with_nothing_on_its_pages_is_refused_when_read() {
    let (result, transport) = run(
        &request(pdf::blank(2), "application/pdf"),
        vec![],
        &local("on"),
    );
    let error = result.unwrap_err();
    assert_eq!(reason(&error), "no-text-layer", "{error}");
    assert_eq!(transport.count(), 0);
}
