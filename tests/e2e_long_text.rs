//! One object from a long text, end to end: the real .wasm component in the wasmtime host, the
//! mock LLM reading a contract's terms over HTTP, standing for the server kinds whose windows
//! the component finds out, and refusing what does not fit in their words.

mod support;

use std::time::Duration;

use mock_llm::MockLlm;
use mock_llm::document::{Reader, Terms, planted_document, terms_schema};
use mock_llm::servers::Server;
use serde_json::{Value, json};
use structure_host::{Outcome, Request, SchemaInput, Scope, Status};

fn contract_reader(server: Server) -> MockLlm {
    let mock = MockLlm::start();
    mock.read_document(Reader::new(Duration::from_millis(20)));
    mock.serve_as(server);
    mock
}

fn request(text: &str) -> Request {
    Request::new(text, SchemaInput::Inline(terms_schema().to_string()))
}

async fn read(mock: &MockLlm, text: &str, extra: &[(&str, &str)]) -> (Outcome, Value) {
    let structure = support::host_client(mock, extra);
    let outcome = structure
        .structure(&Scope::default(), &request(text))
        .await
        .unwrap();
    assert_eq!(
        outcome.status,
        Status::Ok,
        "{:?} {:?}",
        outcome.errors,
        outcome.need
    );
    let data = serde_json::from_str(outcome.data.as_deref().unwrap()).unwrap();
    (outcome, data)
}

fn expected() -> Value {
    json!({
        "effective_date": "2021-03-04",
        "parties": ["Acme Widgets Inc.", "Zoë Kim", "Łukasz Nowak LLC"],
        "governing_law": "Delaware",
        "term_months": 24,
    })
}

#[tokio::test]
async fn a_hundred_thousand_characters_make_one_object_with_sources_in_the_whole_text() {
    let text = planted_document(100_000, &Terms::default());
    let mock = contract_reader(Server::default());
    let (outcome, data) = read(&mock, &text, &[("structure_context_tokens", "8192")]).await;
    assert_eq!(data, expected());
    let chunks = outcome.trace.chunks;
    assert!(chunks >= 5, "{chunks}");
    assert_eq!(
        outcome.usage.llm_calls,
        chunks + 1,
        "no part disagreed: a call per chunk, and one asking which of the parties the parts \
         gave the document states as parties"
    );
    assert_eq!(mock.requests().len(), chunks as usize + 1);
    assert!(
        mock.max_in_flight() > 1,
        "the parts' calls were in flight together"
    );
    let window = outcome.trace.context_window.as_ref().unwrap();
    assert_eq!((window.tokens, window.source.as_str()), (8192, "setting"));
    let utf16: Vec<u16> = text.encode_utf16().collect();
    let chars: Vec<char> = text.chars().collect();
    for source in &outcome.sources {
        let span = source.span.as_ref().unwrap();
        let by_chars: String = chars[span.start as usize..span.end as usize]
            .iter()
            .collect();
        let by_utf16 =
            String::from_utf16(&utf16[span.utf16_start as usize..span.utf16_end as usize]).unwrap();
        assert_eq!(
            (by_chars.as_str(), by_utf16.as_str()),
            (span.text.as_str(), span.text.as_str())
        );
    }
    let of = |pointer: &str| {
        outcome
            .trace
            .chunk_of
            .iter()
            .find(|(at, _)| at == pointer)
            .map(|(_, chunk)| *chunk)
    };
    assert_eq!(of("/parties/0"), Some(0));
    assert_eq!(of("/parties/2"), Some(chunks - 1));
    assert_eq!(outcome.incomplete, None, "not records mode");
}

#[tokio::test]
async fn a_llama_cpp_server_says_its_window_and_gets_its_profile() {
    let text = planted_document(20_000, &Terms::default());
    let mock = contract_reader(Server::LlamaCpp { n_ctx: 2048 });
    let (outcome, data) = read(&mock, &text, &[("structure_model", "openai/smollm2")]).await;
    assert_eq!(data, expected());
    assert_eq!(outcome.trace.provider_profile, "llamacpp");
    let window = outcome.trace.context_window.as_ref().unwrap();
    assert_eq!((window.tokens, window.source.as_str()), (2048, "server"));
    let asked: Vec<String> = mock
        .probes()
        .iter()
        .map(|p| format!("{} {}", p.method, p.path))
        .collect();
    assert_eq!(
        asked,
        ["GET /v1/models", "GET /props"],
        "the list says the kind and the window, /props the requests it serves at once"
    );
    for request in mock.requests() {
        let body = request.json();
        assert_eq!(
            body["response_format"]["type"], "json_object",
            "llama.cpp's form"
        );
        assert!(body["max_tokens"].as_u64().unwrap() < 2048);
    }
}

#[tokio::test]
async fn a_refusal_in_openais_words_teaches_the_window_and_the_text_is_read_in_parts() {
    let text = planted_document(20_000, &Terms::default());
    let mock = contract_reader(Server::OpenAi {
        context_limit: Some(3000),
    });
    let (outcome, data) = read(&mock, &text, &[("structure_model", "openai/my-model")]).await;
    assert_eq!(data, expected());
    let window = outcome.trace.context_window.as_ref().unwrap();
    assert_eq!((window.tokens, window.source.as_str()), (3000, "learned"));
    assert_eq!(outcome.trace.provider_profile, "openai-compatible");
    // Planned for an unknown server's 8,192 tokens, then refused, then planned again.
    assert!(outcome.trace.chunks > 1);
    let requests = mock.requests();
    assert!(
        requests.len() as u32 > outcome.trace.chunks,
        "the refused ones were sent too"
    );
    assert_eq!(
        outcome.usage.llm_calls as usize,
        requests.len(),
        "and count"
    );
    let text_of = |at: usize| {
        requests[at].json()["messages"][1]["content"]
            .as_str()
            .map(str::len)
    };
    assert!(
        text_of(0) > text_of(requests.len() - 1),
        "the parts got smaller"
    );
}
