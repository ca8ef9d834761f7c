//! The configuration the component reads: every config key, and the provider endpoints a
//! base-URL key falls back to. The keys are valid Spin variable names; a host maps environment
//! variables onto them by lower-casing (`STRUCTURE_MODEL` → `structure_model`, `OPENAI_API_KEY`
//! → `openai_api_key`). The one list of them: the settings, the HTTP API, the host's
//! environment and egress rules, and the Spin manifest's test all read it. A leaf module.

/// `provider/model` (`openai/gpt-4.1-mini`, `anthropic/claude-sonnet-4-5`,
/// `google/gemini-2.5-flash`, `ollama/llama3.2`, ...) or an alias such as `default:fast`.
pub const MODEL: &str = "structure_model";
/// Aliases: `default:<name>` resolves to the model in `structure_model_<name>`.
pub const ALIAS_PREFIX: &str = "structure_model_";
/// Forces a provider profile instead of deriving it from the model and the base URL.
pub const PROVIDER_PROFILE: &str = "structure_provider_profile";
/// How the answer is delivered: `auto` (default), `native`, `tool` or `prompt`.
pub const DELIVERY: &str = "structure_delivery";
/// `true` (default): only provider-enforced output (native or strict tool), never `prompt`.
pub const REQUIRE_PROVIDER_STRICT_OUTPUT: &str = "structure_require_provider_strict_output";
/// `true`: plain strings and numbers are offered as the spans and numbers the text writes
/// (for small local models; see the content stage's grounding); `auto` (default): on for
/// the local-server profiles (`ollama`, `llamacpp`, `vllm`), off for hosted providers.
pub const EXTRACTIVE: &str = "structure_extractive";
/// How values are held to the text: `off`, `report` (default: every value's source in the
/// result) or `require` (a value the text does not support is fed back as a violation).
pub const GROUNDING: &str = "structure_grounding";
/// The instant relative dates in the text are resolved against, RFC 3339 (default: now),
/// e.g. the date an email was sent; also makes runs reproducible.
pub const REFERENCE_TIME: &str = "structure_reference_time";
/// The most tokens one answer may take.
pub const MAX_OUTPUT_TOKENS: &str = "structure_max_output_tokens";
/// The longest one LLM request may take, in milliseconds.
pub const REQUEST_TIMEOUT_MS: &str = "structure_request_timeout_ms";
/// Retries of one LLM request after a rate limit, an overload or a connection failure.
pub const MAX_RETRIES: &str = "structure_max_retries";
/// The longest wait before a retry, in milliseconds; a provider asking for more is not retried.
pub const MAX_RETRY_WAIT_MS: &str = "structure_max_retry_wait_ms";
/// Tokens (prompt + completion) one request may spend; unset means no limit.
pub const TOKEN_BUDGET: &str = "structure_token_budget";
/// The operator's ceiling on a call's token budget: a call's budget is the smaller of its own
/// and this (unset: no ceiling). Not a setting callers can change.
pub const MAX_TOKEN_BUDGET: &str = "structure_max_token_budget";
/// The fewest tokens a caller's `chunkTokens` may ask for (default 200).
pub const MIN_CHUNK_TOKENS: &str = "structure_min_chunk_tokens";
/// The most chunks one call may read a text in (default 200).
pub const MAX_CHUNKS: &str = "structure_max_chunks";
/// Records mode: the tokens of text one call is sent; a longer text is read in chunks of this
/// size (default from the provider profile: 1,500 for local servers, 6,000 for hosted models).
pub const CHUNK_TOKENS: &str = "structure_chunk_tokens";
/// The tokens the model's context holds (prompt and answer): an integer, or a JSON object of
/// them by `provider/model`. Unset: what the server says, the table of hosted models, or a
/// default (see [`crate::provider::window`]).
pub const CONTEXT_TOKENS: &str = "structure_context_tokens";
/// Records mode and long texts: LLM calls in flight at once, one per chunk (default 4).
pub const MAX_CONCURRENT_CALLS: &str = "structure_max_concurrent_calls";
/// The model of the schema builder (`text` mode); an alias or `provider/model`.
pub const SCHEMA_BUILDER_MODEL: &str = "structure_schema_builder_model";
/// The schema builder's confidence below which the call asks for more input (default 0.8).
pub const CONFIDENCE_THRESHOLD: &str = "structure_confidence_threshold";
/// Models to try next when a call's model does not get there (stale, truncated, refused, or its
/// provider down after its retries): a comma-separated list of `provider/model`s or aliases,
/// tried in order (default: none).
pub const ESCALATE: &str = "structure_escalate";
/// The least confidence a value of an `ok` answer may have (0–1; default: off): a required
/// value below it makes the call `need-more-input`, an optional one is dropped.
pub const MIN_CONFIDENCE: &str = "structure_min_confidence";
/// Which results go to a person's review queue: `off` (default), `doubtful` (a value under the
/// confidence threshold, derived, left out or in doubt; need-more-input; stale), `all`.
pub const REVIEW: &str = "structure_review";
/// The most items a tenant's review queue holds (default 10,000): a result to review beyond
/// them is an error saying so.
pub const REVIEW_MAX_ITEMS: &str = "structure_review_max_items";
/// How many days a review item is kept, reviewed or not (default 30).
pub const REVIEW_KEEP_DAYS: &str = "structure_review_keep_days";
/// Where a reviewed result is sent (`POST`, signed): the operator's URL; none by default.
pub const REVIEW_WEBHOOK: &str = "structure_review_webhook";
/// The key the webhook's body is signed with (HMAC-SHA256, `x-structure-signature`).
pub const REVIEW_WEBHOOK_SECRET: &str = "structure_review_webhook_secret";
/// `auto` (default): ask for token log-probabilities where the provider and model are known to
/// give them (each value's `confidence`); `on`: wherever the wire format has the field; `off`.
pub const LOGPROBS: &str = "structure_logprobs";
/// `auto` (default): images and PDFs go to the model as they are where the provider's model is
/// known to read them (the table in `provider::vision`); `on`: the endpoint's model reads
/// both (a local vision model, a gateway); `off`: never send them.
pub const VISION: &str = "structure_vision";
/// Settings (by their names in the cascade, comma-separated) that only the host's
/// configuration sets: a tenant, a project or a call setting one is refused.
pub const HOST_ONLY_SETTINGS: &str = "structure_host_only_settings";
/// Content-stage iterations when a call does not say (default 3).
pub const MAX_LOOPS: &str = "structure_max_loops";
/// Limits of one call (see [`crate::limits`]): prompt bytes (default 256 KiB).
pub const MAX_PROMPT_BYTES: &str = "structure_max_prompt_bytes";
/// Bytes of a document beside the prompt, as sent (default 20 MiB).
pub const MAX_DOCUMENT_BYTES: &str = "structure_max_document_bytes";
/// Pages of a PDF document (default 500).
pub const MAX_DOCUMENT_PAGES: &str = "structure_max_document_pages";
/// Bytes of a schema's manual (default 64 KiB).
pub const MAX_MANUAL_BYTES: &str = "structure_max_manual_bytes";
/// `annotate` (default): a format no one checks is kept as an annotation, with a warning;
/// `refuse`: such a schema is refused.
pub const UNKNOWN_FORMATS: &str = "structure_unknown_formats";
/// Bytes of a schema as compact JSON (default 256 KiB).
pub const MAX_SCHEMA_BYTES: &str = "structure_max_schema_bytes";
/// Nesting of a schema's objects and arrays (default 32).
pub const MAX_SCHEMA_DEPTH: &str = "structure_max_schema_depth";
/// Properties declared across a schema (default 1000).
pub const MAX_SCHEMA_PROPERTIES: &str = "structure_max_schema_properties";
/// Values of one `enum` (default 1000).
pub const MAX_ENUM_VALUES: &str = "structure_max_enum_values";
/// Bytes read from one provider response (default 8 MiB).
pub const MAX_RESPONSE_BYTES: &str = "structure_max_response_bytes";
/// The whole call, every LLM request, retry and wait included, in milliseconds (default 300 000).
pub const CALL_TIMEOUT_MS: &str = "structure_call_timeout_ms";
/// OpenAI's API: `chat` (Chat Completions, default) or `responses` (the Responses API).
pub const OPENAI_API: &str = "structure_openai_api";
/// Gemini's schema field: `json-schema` (`responseJsonSchema`, default) or `openapi`
/// (`responseSchema`, the OpenAPI subset).
pub const GEMINI_SCHEMA: &str = "structure_gemini_schema";
/// The API key for OpenAI and OpenAI-compatible servers.
pub const OPENAI_API_KEY: &str = "openai_api_key";
/// The base URL of an OpenAI-compatible API, e.g. `http://localhost:11434/v1`.
pub const OPENAI_BASE_URL: &str = "openai_base_url";
pub const ANTHROPIC_API_KEY: &str = "anthropic_api_key";
/// Anthropic's base URL, without `/v1` (as the Anthropic SDKs write it).
pub const ANTHROPIC_BASE_URL: &str = "anthropic_base_url";
pub const GEMINI_API_KEY: &str = "gemini_api_key";
/// Gemini's base URL, without the API version (as the Google Gen AI SDKs write it).
pub const GEMINI_BASE_URL: &str = "gemini_base_url";

/// The bearer tokens of the HTTP API: a JSON array of
/// `{"token": "...", "tenant": "acme", "project": "web", "role": "admin" | "user"}`.
pub const API_TOKENS: &str = "structure_api_tokens";
/// `tokens` (default) or `none`: every caller is an admin of the `default` tenant (local use only).
pub const API_AUTH: &str = "structure_api_auth";
/// The largest HTTP request body accepted, in bytes (default 1 MiB).
pub const MAX_BODY_BYTES: &str = "structure_max_body_bytes";
/// `on` (default) or `off`: whether the HTTP API counts its calls per schema in the key-value
/// store (`/v1/insights`, the console), one read and one write a call.
pub const INSIGHTS: &str = "structure_insights";
/// `on` where the host keeps an instance's memory resident for the next instance (wasmtime's
/// pooling allocator with `linear_memory_keep_resident`): the component then reads every page
/// of its memory before a call returns, so that the reset goes over only the pages it wrote
/// (`src/wasi/pages.rs`). Anything else, or unset (the default), leaves it off.
pub const MEMORY_KEPT_RESIDENT: &str = "structure_memory_kept_resident";

/// Every key above (aliases aside), for hosts that declare them (Spin variables).
pub const ALL: &[&str] = &[
    MODEL,
    PROVIDER_PROFILE,
    DELIVERY,
    REQUIRE_PROVIDER_STRICT_OUTPUT,
    EXTRACTIVE,
    GROUNDING,
    REFERENCE_TIME,
    MAX_OUTPUT_TOKENS,
    REQUEST_TIMEOUT_MS,
    MAX_RETRIES,
    MAX_RETRY_WAIT_MS,
    TOKEN_BUDGET,
    MAX_TOKEN_BUDGET,
    CHUNK_TOKENS,
    MIN_CHUNK_TOKENS,
    MAX_CHUNKS,
    CONTEXT_TOKENS,
    MAX_CONCURRENT_CALLS,
    SCHEMA_BUILDER_MODEL,
    CONFIDENCE_THRESHOLD,
    ESCALATE,
    MIN_CONFIDENCE,
    REVIEW,
    REVIEW_MAX_ITEMS,
    REVIEW_KEEP_DAYS,
    REVIEW_WEBHOOK,
    REVIEW_WEBHOOK_SECRET,
    LOGPROBS,
    VISION,
    HOST_ONLY_SETTINGS,
    MAX_LOOPS,
    MAX_PROMPT_BYTES,
    MAX_DOCUMENT_BYTES,
    MAX_DOCUMENT_PAGES,
    MAX_SCHEMA_BYTES,
    MAX_MANUAL_BYTES,
    UNKNOWN_FORMATS,
    MAX_SCHEMA_DEPTH,
    MAX_SCHEMA_PROPERTIES,
    MAX_ENUM_VALUES,
    MAX_RESPONSE_BYTES,
    CALL_TIMEOUT_MS,
    OPENAI_API,
    GEMINI_SCHEMA,
    OPENAI_API_KEY,
    OPENAI_BASE_URL,
    ANTHROPIC_API_KEY,
    ANTHROPIC_BASE_URL,
    GEMINI_API_KEY,
    GEMINI_BASE_URL,
    API_TOKENS,
    API_AUTH,
    MAX_BODY_BYTES,
    INSIGHTS,
    MEMORY_KEPT_RESIDENT,
];

/// The provider API keys (`openai_api_key`, ...): the keys ending in `_api_key`.
pub fn secrets() -> impl Iterator<Item = &'static str> {
    ALL.iter().copied().filter(|key| key.ends_with("_api_key"))
}

/// The keys that name an endpoint: those ending in `_base_url`.
pub fn base_url_keys() -> impl Iterator<Item = &'static str> {
    ALL.iter().copied().filter(|key| key.ends_with("_base_url"))
}

/// The keys the providers' SDKs also read from the environment, under the upper-cased name
/// (`OPENAI_API_KEY`, `ANTHROPIC_BASE_URL`, ...): every key not of this tool's own.
pub fn provider_keys() -> impl Iterator<Item = &'static str> {
    ALL.iter()
        .copied()
        .filter(|key| !key.starts_with("structure_"))
}

/// OpenAI's API (the `openai` profile and the Responses API).
pub const OPENAI_DEFAULT_URL: &str = "https://api.openai.com/v1";
/// Ollama's OpenAI-compatible endpoint on this machine.
pub const OLLAMA_DEFAULT_URL: &str = "http://localhost:11434/v1";
/// llama.cpp's server (and llama-cpp-python's) on this machine.
pub const LLAMACPP_DEFAULT_URL: &str = "http://localhost:8080/v1";
/// vLLM's server on this machine.
pub const VLLM_DEFAULT_URL: &str = "http://localhost:8000/v1";
/// Anthropic's API, without `/v1` (as the Anthropic SDKs write it).
pub const ANTHROPIC_DEFAULT_URL: &str = "https://api.anthropic.com";
/// Gemini's API, without the version (as the Google Gen AI SDKs write it).
pub const GEMINI_DEFAULT_URL: &str = "https://generativelanguage.googleapis.com";

/// Where requests go when no base URL is configured: the providers' own APIs and the default
/// addresses of the local servers the OpenAI-compatible profiles know.
pub const DEFAULT_BASE_URLS: &[&str] = &[
    OPENAI_DEFAULT_URL,
    ANTHROPIC_DEFAULT_URL,
    GEMINI_DEFAULT_URL,
    OLLAMA_DEFAULT_URL,
    LLAMACPP_DEFAULT_URL,
    VLLM_DEFAULT_URL,
];
