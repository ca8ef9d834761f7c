//! The settings of one call, read from the config port under the keys of [`crate::keys`] and
//! checked once ([`read`]): a missing or malformed setting is a `configuration` error naming its
//! key, before any LLM call. [`cascade`] layers the overrides of a call, a project and a tenant
//! over the host's configuration; [`choices`] holds the defaults and what each setting allows.

pub mod cascade;
pub mod choices;
pub mod read;

pub use cascade::{Cascade, OVERRIDABLE};
pub use choices::{
    ContextTokens, DEFAULT_ALIASES, DEFAULT_CHUNK_TOKENS_HOSTED, DEFAULT_CHUNK_TOKENS_LOCAL,
    DEFAULT_CONFIDENCE_THRESHOLD, DEFAULT_MAX_CONCURRENT_CALLS, DEFAULT_MAX_OUTPUT_TOKENS,
    DEFAULT_MAX_RETRIES, DEFAULT_MAX_RETRY_WAIT, DEFAULT_MODEL, DEFAULT_REQUEST_TIMEOUT,
    DeliveryChoice, Extractive, Grounding, LOCAL_PROFILES, Logprobs, MAX_MAX_CONCURRENT_CALLS,
    MIN_CONTEXT_TOKENS, MinConfidence, ReviewPolicy, Vision,
};
pub use read::Settings;
