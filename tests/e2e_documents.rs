//! Documents end to end: a PDF through the real .wasm in the wasmtime host, read page by page
//! inside the component; a long one read in parts with its pages; one whose stream inflates
//! past the reader's bound refused with a typed error in bounded time, the next call unharmed.

mod support;

use std::io::Write;

use mock_llm::document::{Reader, terms_schema};
use mock_llm::{MockLlm, Reply};
use serde_json::{Value, json};
use structure_host::{CallError, ErrorKind, Request, SchemaInput, Scope, Status};

fn request(schema: Value) -> Request {
    Request {
        prompt: String::new(),
        schema: SchemaInput::Inline(schema.to_string()),
        max_loops: None,
        settings: None,
        records: false,
        document: None,
        return_text: true,
    }
}

#[tokio::test]
async fn a_long_pdf_is_read_in_parts_and_each_value_has_its_page() {
    let mock = MockLlm::start();
    mock.read_document(Reader::default());
    // Forty pages of contract, its terms on the first, the middle and the last.
    let mut pages: Vec<String> = (0..40)
        .map(|page| {
            format!("Section {page}. Each obligation survives the return of the information.\n")
                .repeat(12)
        })
        .collect();
    pages[0].insert_str(
        0,
        "This Agreement is effective as of 2021-03-04. Party: Acme Widgets. ",
    );
    pages[20].insert_str(0, "Party: Zoe Kim. ");
    pages[39].insert_str(0, "This Agreement is governed by the laws of Delaware. ");
    let pages: Vec<&str> = pages.iter().map(String::as_str).collect();
    let pdf = mock_llm::pdf::with_pages(&pages);
    let structure = support::host_client(&mock, &[("structure_context_tokens", "4096")]);
    let request = request(terms_schema()).with_document(pdf, "application/pdf");
    let outcome = structure
        .structure(&Scope::default(), &request)
        .await
        .unwrap();
    assert_eq!(
        outcome.status,
        Status::Ok,
        "{:?} {:?}",
        outcome.errors,
        outcome.need
    );
    let data: Value = serde_json::from_str(outcome.data.as_deref().unwrap()).unwrap();
    assert_eq!(data["parties"], json!(["Acme Widgets", "Zoe Kim"]));
    assert!(outcome.trace.chunks > 3, "{}", outcome.trace.chunks);
    let page = |pointer: &str| {
        outcome
            .sources
            .iter()
            .find(|source| source.pointer == pointer)
            .and_then(|source| source.page)
    };
    assert_eq!(page("/effective_date"), Some(1));
    assert_eq!(page("/parties/1"), Some(21));
    assert_eq!(page("/governing_law"), Some(40));
    let text = outcome.text.unwrap();
    assert_eq!(
        text.matches('\u{c}').count(),
        39,
        "pages apart by a form feed"
    );
}

#[tokio::test]
async fn a_pdf_that_inflates_past_the_readers_bound_is_refused_and_the_next_call_is_unharmed() {
    let mock = MockLlm::start();
    let structure = support::host_client(&mock, &[]);
    let schema = json!({ "type": "object", "properties": { "signer": { "type": "string" } } });
    let bomb = request(schema.clone()).with_document(flate_bomb(1280 << 20), "application/pdf");
    let started = std::time::Instant::now();
    let error = structure
        .structure(&Scope::default(), &bomb)
        .await
        .unwrap_err();
    let CallError::Structure(error) = error else {
        panic!("a typed error, not a trap: {error:?}");
    };
    assert_eq!(
        error.kind,
        ErrorKind::InvalidDocument("too-large".into()),
        "{error:?}"
    );
    assert!(error.message.contains("inflates past"), "{}", error.message);
    assert!(started.elapsed().as_secs() < 60, "stopped in bounded time");
    assert!(mock.requests().is_empty(), "no LLM call");
    mock.push(Reply::answer(json!({ "signer": "Zoë Kim" })));
    let fine = request(schema).with_document(
        mock_llm::pdf::with_pages(&["Signed by Zoë Kim."]),
        "application/pdf",
    );
    let outcome = structure.structure(&Scope::default(), &fine).await.unwrap();
    assert_eq!(outcome.status, Status::Ok);
}

/// A one-page PDF whose content stream, a few megabytes deflated, inflates to `inflated` bytes.
fn flate_bomb(inflated: usize) -> Vec<u8> {
    let mut encoder = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::fast());
    let block = vec![b' '; 1 << 20];
    for _ in 0..inflated / block.len() {
        encoder.write_all(&block).unwrap();
    }
    let stream = encoder.finish().unwrap();
    let mut pdf = b"%PDF-1.4\n".to_vec();
    let mut offsets = Vec::new();
    let objects: [&[u8]; 3] = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R >>",
    ];
    for (index, object) in objects.iter().enumerate() {
        offsets.push(pdf.len());
        pdf.extend_from_slice(format!("{} 0 obj\n", index + 1).as_bytes());
        pdf.extend_from_slice(object);
        pdf.extend_from_slice(b"\nendobj\n");
    }
    offsets.push(pdf.len());
    pdf.extend_from_slice(
        format!(
            "4 0 obj\n<< /Length {} /Filter /FlateDecode >>\nstream\n",
            stream.len()
        )
        .as_bytes(),
    );
    pdf.extend_from_slice(&stream);
    pdf.extend_from_slice(b"\nendstream\nendobj\n");
    let xref = pdf.len();
    pdf.extend_from_slice(b"xref\n0 5\n0000000000 65535 f \n");
    for offset in offsets {
        pdf.extend_from_slice(format!("{offset:010} 00000 n \n").as_bytes());
    }
    pdf.extend_from_slice(
        format!("trailer\n<< /Size 5 /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n").as_bytes(),
    );
    pdf
}
