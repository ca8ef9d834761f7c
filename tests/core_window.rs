//! The model's context window: known (set, discovered from the server, learned from a
//! refusal), every request's answer clamped to what it leaves, a text read whole when it fits
//! (by the estimate, or by the server's own count), the calls in flight and their timeouts
//! fitted to the server's kind.

mod support;

use mock_llm::Reply;
use mock_llm::document::{Terms, planted_document, terms_schema};
use mock_llm::servers::Server;
use serde_json::{Value, json};
use structure::ports::MemoryKeyValue;
use structure::{ErrorKind, SchemaInput, StructureRequest};

use support::contract_model::{
    ContractModel, Twisted, asked_text, config, data, run, run_against, run_request, run_terms,
};

#[test]
fn a_text_the_window_holds_is_one_call() {
    let text = planted_document(1_500, &Terms::default());
    let model = ContractModel::new(Server::default());
    let outcome = run(
        &text,
        &model,
        &config(&[("structure_context_tokens", "8192")]),
        &MemoryKeyValue::default(),
    )
    .unwrap();
    assert_eq!(data(&outcome)["parties"].as_array().unwrap().len(), 3);
    assert_eq!(outcome.usage.llm_calls, 1);
    assert_eq!(outcome.trace.chunks, 0);
}

#[test]
fn a_text_the_estimate_puts_over_the_window_is_one_call_when_the_server_counts_it_in() {
    // Three bytes a token puts this text over a 4,096-token window; the servers count four.
    let text = planted_document(10_000, &Terms::default());
    let window = ("structure_context_tokens", "4096");
    // The kind of server named, or not (a window set is not probed for it): asked each way.
    for (kind, profile, count) in [
        (Server::LlamaCpp { n_ctx: 4096 }, None, "POST /tokenize"),
        (
            Server::LlamaCppPython { n_ctx: 4096 },
            None,
            "POST /extras/tokenize/count",
        ),
        (
            Server::LlamaCppPython { n_ctx: 4096 },
            Some("llamacpp"),
            "POST /extras/tokenize/count",
        ),
        (
            Server::Vllm {
                max_model_len: 4096,
            },
            Some("vllm"),
            "POST /tokenize",
        ),
    ] {
        let model = ContractModel::new(kind);
        let mut settings = vec![window];
        settings.extend(profile.map(|profile| ("structure_provider_profile", profile)));
        let outcome = run(
            &text,
            &model,
            &config(&settings),
            &MemoryKeyValue::default(),
        )
        .unwrap();
        assert_eq!(outcome.trace.chunks, 0, "{kind:?}");
        assert_eq!(outcome.usage.llm_calls, 1, "{kind:?}");
        assert_eq!(data(&outcome)["governing_law"], "Delaware", "{kind:?}");
        assert_eq!(*model.refused.borrow(), 0, "{kind:?}");
        assert!(
            model.probes.borrow().iter().any(|probe| probe == count),
            "{kind:?}"
        );
    }
    // A server that counts nothing keeps the estimate: the text is read in parts.
    let ollama = ContractModel::new(Server::Ollama {
        num_ctx: Some(4096),
    });
    let outcome = run(
        &text,
        &ollama,
        &config(&[window]),
        &MemoryKeyValue::default(),
    )
    .unwrap();
    assert!(outcome.trace.chunks > 1);
    // A text the count would put over the window too is read in parts, no request refused;
    // one too long at even five bytes a token is not counted at all.
    for (chars, counted) in [(15_000, true), (20_000, false)] {
        let longer = planted_document(chars, &Terms::default());
        let model = ContractModel::new(Server::LlamaCpp { n_ctx: 4096 });
        let key_value = MemoryKeyValue::default();
        let outcome = run(&longer, &model, &config(&[window]), &key_value).unwrap();
        assert!(outcome.trace.chunks > 1, "{chars}");
        assert_eq!(*model.refused.borrow(), 0, "{chars}");
        assert_eq!(data(&outcome)["governing_law"], "Delaware", "{chars}");
        let asked = (model.probes.borrow().iter()).any(|probe| probe == "POST /tokenize");
        assert_eq!(asked, counted, "{chars}");
    }
}

#[test]
fn a_refusal_for_length_teaches_the_window_and_the_call_is_read_in_parts() {
    let text = planted_document(30_000, &Terms::default());
    let model = ContractModel::new(Server::OpenAi {
        context_limit: Some(2048),
    });
    let key_value = MemoryKeyValue::default();
    // No window set, the server says none: the default (8,192) is too large for this one.
    let outcome = run(&text, &model, &config(&[]), &key_value).unwrap();
    assert_eq!(data(&outcome)["governing_law"], "Delaware");
    let window = outcome.trace.context_window.as_ref().unwrap();
    assert_eq!((window.tokens, window.from.as_str()), (2048, "learned"));
    assert!(outcome.trace.chunks > 1);
    assert_eq!(*model.refused.borrow(), 1, "the whole text, once");
    // The refused call counts: it was made.
    assert_eq!(outcome.usage.llm_calls as usize, model.sent.borrow().len());
    // The next call is planned with what was learned: no request is refused.
    let again = run(&text, &model, &config(&[]), &key_value).unwrap();
    assert_eq!(data(&again)["governing_law"], "Delaware");
    assert_eq!(*model.refused.borrow(), 1, "no refusal the second time");
    assert_eq!(again.trace.context_window.as_ref().unwrap().from, "learned");
}

#[test]
fn a_request_that_cannot_leave_its_answer_room_is_never_sent() {
    let model = ContractModel::new(Server::default());
    let mut schema = terms_schema();
    schema["description"] = json!("x".repeat(3_000));
    let request = StructureRequest::new("Party: Ada.", SchemaInput::Inline(schema), None).unwrap();
    let config = config(&[
        ("structure_context_tokens", "512"),
        ("structure_delivery", "native"),
    ]);
    let error = run_request(&request, &model, &config, &MemoryKeyValue::default()).unwrap_err();
    assert!(
        matches!(&error.kind, ErrorKind::Configuration { key } if key == "structure_context_tokens"),
        "{error:?}"
    );
    assert!(model.sent.borrow().is_empty(), "nothing was sent");
}

#[test]
fn the_server_says_its_kind_and_window_and_is_asked_once() {
    let text = planted_document(1_000, &Terms::default());
    for (kind, profile, tokens, from) in [
        (Server::LlamaCpp { n_ctx: 4096 }, "llamacpp", 4096, "server"),
        (
            Server::LlamaCppPython { n_ctx: 4096 },
            "llamacpp",
            2048,
            "default",
        ),
        (
            Server::Ollama {
                num_ctx: Some(8192),
            },
            "ollama",
            8192,
            "server",
        ),
        (Server::Ollama { num_ctx: None }, "ollama", 4096, "server"),
        (
            Server::Vllm {
                max_model_len: 16384,
            },
            "vllm",
            16384,
            "server",
        ),
        (Server::default(), "openai-compatible", 8192, "default"),
    ] {
        let model = ContractModel::new(kind);
        let key_value = MemoryKeyValue::default();
        let outcome = run(&text, &model, &config(&[]), &key_value).unwrap();
        assert_eq!(outcome.trace.provider_profile, profile, "{kind:?}");
        let window = outcome.trace.context_window.as_ref().unwrap();
        assert_eq!(
            (window.tokens, window.from.as_str()),
            (tokens, from),
            "{kind:?}"
        );
        assert!(!model.probes.borrow().is_empty());
        // What the server said is kept: the next call asks nothing.
        let asked = model.probes.borrow().len();
        run(&text, &model, &config(&[]), &key_value).unwrap();
        assert_eq!(model.probes.borrow().len(), asked, "{kind:?}");
    }
}

#[test]
fn a_server_is_not_asked_when_the_profile_the_window_or_the_model_is_known() {
    let text = planted_document(1_000, &Terms::default());
    for extra in [
        [("structure_provider_profile", "llamacpp")],
        [("structure_context_tokens", "4096")],
        [("structure_model", "openai/gpt-4.1-mini")],
    ] {
        let model = ContractModel::new(Server::LlamaCpp { n_ctx: 4096 });
        run(&text, &model, &config(&extra), &MemoryKeyValue::default()).unwrap();
        assert!(
            model.probes.borrow().is_empty(),
            "{extra:?}: {:?}",
            model.probes.borrow()
        );
    }
}

#[test]
fn nothing_is_kept_of_a_server_whose_window_the_settings_or_the_table_give() {
    // What the store would keep is never read for such a model (the setting or the table wins),
    // so each call writing it was a store write for nothing.
    let text = planted_document(1_000, &Terms::default());
    for extra in [
        [("structure_context_tokens", "4096")],
        [("structure_model", "openai/gpt-4.1-mini")],
    ] {
        let model = ContractModel::new(Server::LlamaCpp { n_ctx: 4096 });
        let key_value = MemoryKeyValue::default();
        for _ in 0..2 {
            let outcome = run(&text, &model, &config(&extra), &key_value).unwrap();
            assert!(
                outcome.usage.prompt_tokens > 0,
                "{extra:?}: the answers said their tokens"
            );
        }
        let kept: Vec<String> = key_value
            .snapshot()
            .into_keys()
            .filter(|key| key.starts_with("servers/"))
            .collect();
        assert!(kept.is_empty(), "{extra:?}: {kept:?}");
    }
    // A server whose window nothing gives keeps what it said, for the next call.
    let model = ContractModel::new(Server::LlamaCpp { n_ctx: 4096 });
    let key_value = MemoryKeyValue::default();
    run(&text, &model, &config(&[]), &key_value).unwrap();
    assert!(
        key_value
            .snapshot()
            .keys()
            .any(|key| key.starts_with("servers/")),
        "{:?}",
        key_value.snapshot().keys().collect::<Vec<_>>()
    );
}

#[test]
fn a_per_model_window_applies_to_its_model_only() {
    let text = planted_document(1_000, &Terms::default());
    let model = ContractModel::new(Server::default());
    let windows = r#"{"openai/test-model": 3000, "openai/other": 9000}"#;
    let outcome = run(
        &text,
        &model,
        &config(&[("structure_context_tokens", windows)]),
        &MemoryKeyValue::default(),
    )
    .unwrap();
    let window = outcome.trace.context_window.as_ref().unwrap();
    assert_eq!((window.tokens, window.from.as_str()), (3000, "setting"));
}

#[test]
fn a_text_that_leaves_an_objects_answer_room_is_read_whole_in_one_call() {
    // About 6,000 tokens of an 8,192 window at three bytes a token: a quarter of the window is
    // not left for the answer, a thirty-second is, and one object needs no more.
    let text = planted_document(18_000, &Terms::default());
    let model = ContractModel::new(Server::default());
    let config = config(&[("structure_context_tokens", "8192")]);
    let outcome = run(&text, &model, &config, &MemoryKeyValue::default()).unwrap();
    assert_eq!(data(&outcome)["parties"].as_array().unwrap().len(), 3);
    assert_eq!((outcome.usage.llm_calls, outcome.trace.chunks), (1, 0));
}

#[test]
fn an_answer_the_window_cuts_off_is_read_in_parts_instead() {
    let text = planted_document(18_000, &Terms::default());
    let model = ContractModel::new(Server::default());
    let whole = text.clone();
    let cut = move |body: &Value| {
        (asked_text(body) == whole).then(|| Reply::truncated(r#"{"answer": {"parties": ["Acme"#))
    };
    let twisted = Twisted::new(&model, &cut);
    let config = config(&[("structure_context_tokens", "8192")]);
    let outcome = run_terms(&text, &twisted, &config);
    assert_eq!(data(&outcome)["governing_law"], "Delaware");
    assert!(outcome.trace.chunks > 1, "read in parts");
    assert_eq!(
        outcome.usage.llm_calls as usize,
        model.sent.borrow().len(),
        "the cut-off call counts"
    );
}

#[test]
fn calls_in_flight_and_request_timeouts_fit_the_servers_kind() {
    let text = planted_document(40_000, &Terms::default());
    let none = |_: &Value| None;
    // llama.cpp (it says so, and its one slot): one request at a time, ten minutes each.
    let model = ContractModel::new(Server::LlamaCpp { n_ctx: 2048 });
    let twisted = Twisted::new(&model, &none);
    let outcome = run_against(
        terms_schema(),
        &text,
        &twisted,
        &config(&[]),
        &MemoryKeyValue::default(),
    )
    .unwrap();
    assert!(outcome.trace.chunks > 1);
    assert_eq!(*twisted.in_flight.borrow(), [1]);
    assert!(twisted.timeouts.borrow().iter().all(|t| t.as_secs() == 600));
    // vLLM serves many at once; a setting says what it says.
    for (server, set, calls) in [
        (
            Server::Vllm {
                max_model_len: 2048,
            },
            None,
            4,
        ),
        (Server::LlamaCpp { n_ctx: 2048 }, Some("3"), 3),
    ] {
        let model = ContractModel::new(server);
        let twisted = Twisted::new(&model, &none);
        let config = match set {
            Some(calls) => config(&[("structure_max_concurrent_calls", calls)]),
            None => config(&[]),
        };
        run_terms(&text, &twisted, &config);
        assert_eq!(*twisted.in_flight.borrow(), [calls]);
    }
    // A hosted provider's requests keep two minutes.
    let model = ContractModel::new(Server::default());
    let twisted = Twisted::new(&model, &none);
    let config = config(&[
        ("structure_context_tokens", "2048"),
        ("structure_provider_profile", "openai-compatible"),
    ]);
    run_terms(&text, &twisted, &config);
    assert!(twisted.timeouts.borrow().iter().all(|t| t.as_secs() == 120));
}

#[test]
fn a_guessed_window_never_refuses_a_request_before_it_is_sent() {
    // A schema of about 12,000 tokens against a server that states no window (8,192 guessed).
    let mut schema = terms_schema();
    schema["description"] = json!("A contract's terms. ".repeat(1_800));
    let model = ContractModel::new(Server::default());
    let outcome = run_against(
        schema.clone(),
        "Party: Ada Lovelace. This Agreement is effective as of 2021-03-04.",
        &model,
        &config(&[]),
        &MemoryKeyValue::default(),
    )
    .unwrap();
    assert_eq!(data(&outcome)["parties"], json!(["Ada Lovelace"]));
    assert_eq!(outcome.usage.llm_calls, 1);
    assert_eq!(
        outcome.trace.context_window.as_ref().unwrap().from,
        "default"
    );
    // A window that was set is known: the same request is refused before it is sent.
    let model = ContractModel::new(Server::default());
    let error = run_against(
        schema,
        "Party: Ada Lovelace.",
        &model,
        &config(&[("structure_context_tokens", "8192")]),
        &MemoryKeyValue::default(),
    )
    .unwrap_err();
    assert!(
        matches!(&error.kind, ErrorKind::Configuration { key } if key == "structure_context_tokens"),
        "{error:?}"
    );
    assert!(model.sent.borrow().is_empty());
}
