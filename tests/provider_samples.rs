//! Every recorded response and error body (tests/provider-api/samples and corpus: real
//! captures of OpenAI Chat Completions and Responses, Anthropic and Gemini) parses into the
//! outcome `tests/provider-api/outcomes.json` states for it, and every error sample keeps its
//! status, message and retryability.

mod support;

use serde_json::Value;
use structure::ErrorKind;
use structure::ports::HttpResponse;
use structure::provider::{Provider, connect};
use structure::settings::Settings;
use support::{MapConfig, provider_api, root};

fn provider(kind: &str) -> Box<dyn Provider> {
    let settings: &[(&str, &str)] = match kind {
        "openai-chat" => &[
            ("structure_model", "openai/gpt-4.1-mini"),
            ("openai_api_key", "sk"),
        ],
        "openai-responses" => &[
            ("structure_model", "openai/gpt-5-nano"),
            ("openai_api_key", "sk"),
            ("structure_openai_api", "responses"),
        ],
        "anthropic" => &[
            ("structure_model", "anthropic/claude-sonnet-4-5"),
            ("anthropic_api_key", "sk"),
        ],
        "gemini" => &[
            ("structure_model", "google/gemini-2.5-flash"),
            ("gemini_api_key", "g"),
        ],
        other => panic!("unknown provider {other}"),
    };
    {
        let settings = Settings::load(&MapConfig::with(settings)).unwrap();
        connect(&settings, &settings.model).unwrap()
    }
}

/// The status and raw body of an error file: samples are raw bodies (status in the file name);
/// the corpus keeps the SDK's error text (`Error: 400 {…}`, `Error: ApiError: {…}`).
fn error_response(path: &str, file: &Value) -> (u16, Vec<u8>) {
    let name = path.rsplit('/').next().unwrap();
    if let Ok(status) = name[..3].parse::<u16>() {
        return (status, file.to_string().into_bytes());
    }
    let wrapped = file["error"]
        .as_str()
        .expect("corpus errors wrap the SDK's message");
    if let Some(rest) = wrapped.strip_prefix("Error: ApiError: ") {
        let inner: Value = serde_json::from_str(rest.trim()).unwrap();
        let status = inner["error"]["code"].as_u64().unwrap() as u16;
        return (status, inner.to_string().into_bytes());
    }
    let rest = wrapped.strip_prefix("Error: ").unwrap();
    (rest[..3].parse().unwrap(), rest.as_bytes()[4..].to_vec())
}

fn outcome(result: Result<structure::provider::Completion, structure::StructureError>) -> String {
    match result {
        Ok(_) => "text".to_owned(),
        Err(error) => match error.kind {
            ErrorKind::Truncated => "truncated".to_owned(),
            ErrorKind::Refusal => "refusal".to_owned(),
            ErrorKind::Blocked { .. } => "blocked".to_owned(),
            ErrorKind::InvalidResponse => "invalid-response".to_owned(),
            ErrorKind::Provider { status, .. } => format!("provider-error:{status}"),
            other => format!("unexpected {other:?}: {}", error.message),
        },
    }
}

#[test]
fn every_recorded_body_parses_into_its_outcome() {
    let table: Value = serde_json::from_str(
        &std::fs::read_to_string(root().join("tests/provider-api/outcomes.json")).unwrap(),
    )
    .unwrap();
    let table = table.as_object().unwrap();
    assert!(table.len() > 400, "the whole corpus is listed");
    let mut mismatches = Vec::new();
    for (path, expected) in table {
        let file = provider_api(path);
        let provider = provider(expected["provider"].as_str().unwrap());
        let expected = expected["outcome"].as_str().unwrap();
        let (status, body) = if expected.starts_with("provider-error") {
            error_response(path, &file)
        } else {
            (200, file.to_string().into_bytes())
        };
        let result = provider.completion(&HttpResponse {
            status,
            headers: vec![],
            body,
        });
        if let Ok(completion) = &result
            && file.get("usage").or(file.get("usageMetadata")).is_some()
        {
            assert!(completion.usage.prompt_tokens > 0, "{path}: usage is read");
        }
        let got = outcome(result);
        if got != expected {
            mismatches.push(format!("{path}: expected {expected}, got {got}"));
        }
    }
    assert!(mismatches.is_empty(), "{mismatches:#?}");
}

/// An error sample: the provider, its file, the status, whether it is retryable, the
/// provider's error code, and a piece of the message made of it.
type ErrorSample = (
    &'static str,
    &'static str,
    u16,
    bool,
    &'static str,
    &'static str,
);

/// Anthropic's error samples.
fn anthropic_error_samples() -> Vec<ErrorSample> {
    vec![
        (
            "anthropic",
            "samples/anthropic/errors/400_invalid_request.json",
            400,
            false,
            "invalid_request_error",
            "role 'system' is not supported",
        ),
        (
            "anthropic",
            "samples/anthropic/errors/401_authentication_error.json",
            401,
            false,
            "authentication_error",
            "check ANTHROPIC_API_KEY",
        ),
        (
            "anthropic",
            "samples/anthropic/errors/429_rate_limit_error.json",
            429,
            true,
            "rate_limit_error",
            "retry later",
        ),
        (
            "anthropic",
            "samples/anthropic/errors/500_api_error.json",
            500,
            true,
            "api_error",
            "Anthropic answered 500",
        ),
        (
            "anthropic",
            "samples/anthropic/errors/529_overloaded_error.json",
            529,
            true,
            "overloaded_error",
            "overloaded",
        ),
    ]
}

/// Gemini's error samples.
fn gemini_error_samples() -> Vec<ErrorSample> {
    vec![
        (
            "gemini",
            "samples/gemini/errors/400_api_key_invalid.json",
            400,
            false,
            "INVALID_ARGUMENT",
            "API key not valid",
        ),
        (
            "gemini",
            "samples/gemini/errors/400_invalid_argument_unknown_field.json",
            400,
            false,
            "INVALID_ARGUMENT",
            "exclusiveMinimum",
        ),
        (
            "gemini",
            "samples/gemini/errors/429_resource_exhausted.json",
            429,
            true,
            "RESOURCE_EXHAUSTED",
            "Gemini answered 429",
        ),
        (
            "gemini",
            "samples/gemini/errors/503_unavailable.json",
            503,
            true,
            "UNAVAILABLE",
            "Gemini answered 503",
        ),
    ]
}

#[test]
fn error_samples_keep_status_code_message_and_retryability() {
    let cases = [anthropic_error_samples(), gemini_error_samples()].concat();
    for (kind, path, status, retryable, code, text) in cases {
        let body = provider_api(path).to_string().into_bytes();
        let error = provider(kind)
            .completion(&HttpResponse {
                status,
                headers: vec![],
                body,
            })
            .unwrap_err();
        assert_eq!(
            error.kind,
            ErrorKind::Provider {
                status,
                retryable,
                code: Some(code.to_owned())
            },
            "{path}"
        );
        assert!(error.message.contains(text), "{path}: {}", error.message);
    }
}

#[test]
fn provider_specific_outcomes_carry_their_reason_and_usage() {
    let parse = |kind: &str, path: &str| {
        provider(kind).completion(&HttpResponse {
            status: 200,
            headers: vec![],
            body: provider_api(path).to_string().into_bytes(),
        })
    };
    let blocked = parse("gemini", "samples/gemini/prompt_blocked.response.json").unwrap_err();
    assert_eq!(
        blocked.kind,
        ErrorKind::Blocked {
            reason: "SAFETY".into()
        }
    );
    assert_eq!(blocked.message, "Gemini blocked the prompt (SAFETY)");
    assert_eq!(blocked.usage.prompt_tokens, 12);
    let stopped = parse("gemini", "samples/gemini/finish_safety.response.json").unwrap_err();
    assert_eq!(
        stopped.kind,
        ErrorKind::Blocked {
            reason: "SAFETY".into()
        }
    );
    let refusal = parse("anthropic", "samples/anthropic/refusal.response.json").unwrap_err();
    assert_eq!(
        refusal.message,
        "the model refused to answer: I can't help with that."
    );
    // Anthropic counts cache reads and writes apart from input tokens.
    let cached = parse(
        "anthropic",
        "corpus/chatCompletionsAnthropicCacheControlParam/anthropic/followup-response.json",
    )
    .unwrap();
    assert_eq!(
        (
            cached.usage.prompt_tokens,
            cached.usage.cached_prompt_tokens
        ),
        (205 + 5 + 12963, 12963)
    );
    // Gemini's thoughts are billed as output.
    let thoughts = parse(
        "gemini",
        "samples/gemini/response_json_schema.response.json",
    )
    .unwrap();
    assert_eq!(
        (
            thoughts.usage.prompt_tokens,
            thoughts.usage.completion_tokens
        ),
        (17, 26 + 63)
    );
    let text = parse(
        "openai-responses",
        "samples/openai/responses/structured_output.response.json",
    )
    .unwrap();
    assert!(
        text.delivered.text().starts_with('{'),
        "{}",
        text.delivered.text()
    );
}
