//! The defaults of the settings, and the choices the settings that take a word or a table
//! allow (delivery, extractive mode, grounding, log-probabilities, context windows).

use std::collections::BTreeMap;
use std::time::Duration;

/// The model when none is set: the `fast` alias.
pub const DEFAULT_MODEL: &str = "default:fast";
/// What the built-in aliases stand for unless configured.
pub const DEFAULT_ALIASES: &[(&str, &str)] = &[
    ("fast", "openai/gpt-4.1-mini"),
    ("analyze", "openai/gpt-4.1"),
];
pub const DEFAULT_MAX_OUTPUT_TOKENS: u32 = 4096;
/// One request's time limit for a hosted provider.
pub const DEFAULT_REQUEST_TIMEOUT: Duration = Duration::from_secs(120);
/// One request's time limit for a server of local models ([`LOCAL_PROFILES`]): on two CPU
/// cores a 0.5B model takes 30 to 100 s to read a 15,000-character contract, and more on a
/// busy machine (EVAL.md, "A model that reads").
pub const DEFAULT_REQUEST_TIMEOUT_LOCAL: Duration = Duration::from_secs(600);
/// A whole call's time limit for a hosted provider ([`crate::limits::CallLimits::call_timeout`]).
pub const DEFAULT_CALL_TIMEOUT: Duration = Duration::from_secs(300);
/// A whole call's for a server of local models: a long document read there takes several
/// such requests, one after another.
pub const DEFAULT_CALL_TIMEOUT_LOCAL: Duration = Duration::from_secs(1800);
pub const DEFAULT_MAX_RETRIES: u32 = 2;
pub const DEFAULT_MAX_RETRY_WAIT: Duration = Duration::from_secs(30);
pub const DEFAULT_CONFIDENCE_THRESHOLD: f64 = 0.8;
/// Records mode's chunk for the servers of local models, whose contexts are small (Ollama's
/// default is 2,048 to 4,096 tokens), and for hosted models (whose recall drops on long inputs
/// well before their contexts fill).
pub const DEFAULT_CHUNK_TOKENS_LOCAL: u32 = 1_500;
pub const DEFAULT_CHUNK_TOKENS_HOSTED: u32 = 6_000;
/// Calls in flight at once to a server that can take several (hosted providers, vLLM).
pub const DEFAULT_MAX_CONCURRENT_CALLS: u32 = 4;
/// The profiles whose servers answer one request at a time unless started otherwise
/// (llama.cpp with one slot, llama-cpp-python, Ollama): more in flight only queue there, and
/// a queued request's time runs against its timeout.
pub const ONE_AT_A_TIME_PROFILES: &[&str] = &["ollama", "llamacpp"];
/// The smallest context window a setting may state: less cannot hold the instructions.
pub const MIN_CONTEXT_TOKENS: u64 = 256;
/// The most calls in flight a setting may ask for.
pub const MAX_MAX_CONCURRENT_CALLS: u64 = 64;

/// Which results a person reviews (`structure_review`; a schema's `x-structure-review` may ask
/// for more). Ordered: a later choice sends more.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Default)]
pub enum ReviewPolicy {
    #[default]
    Off,
    /// Results with a value in doubt, a question, or no valid answer.
    Doubtful,
    /// Every result.
    All,
}

impl ReviewPolicy {
    /// The policy a setting or a schema's keyword names, if it is one.
    pub fn named(name: &str) -> Option<Self> {
        match name {
            "off" => Some(Self::Off),
            "doubtful" => Some(Self::Doubtful),
            "all" => Some(Self::All),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Self::Off => "off",
            Self::Doubtful => "doubtful",
            Self::All => "all",
        }
    }
}

/// The least confidence a value of an `ok` answer may have (`structure_min_confidence`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum MinConfidence {
    /// [`AUTO_MIN_CONFIDENCE`] for an answer whose form says the model's probabilities mean
    /// something ([`FORM_CONFIDENCE_FLOOR`]); off for the others.
    Auto,
    Off,
    At(f64),
}

/// The threshold `auto` holds answers to: on the eval's reading model every value below it
/// was wrong (so on held-out cases: the 5 values under 0.7 wrong, 81 of the 93 above right),
/// and holding to it asked for the absent values it had invented without losing an exact
/// answer (EVAL.md, "A model that reads").
pub const AUTO_MIN_CONFIDENCE: f64 = 0.7;
/// How sure a model must be of its answer's form — the keys and punctuation the schema fixes,
/// which a model that follows the format writes with probabilities near 1 — for `auto` to
/// trust its probabilities of the values. A model that does not read (SmolLM2-135M: 0.03 to
/// 0.49 on the eval's cases) is as unsure of values it copied right as of those it made up;
/// one that reads (Qwen2.5-0.5B: 0.83 to 0.99) is not.
pub const FORM_CONFIDENCE_FLOOR: f64 = 0.7;

impl MinConfidence {
    /// The threshold for an answer whose form the model wrote with confidence `form` (`None`:
    /// no log-probabilities), if any.
    pub fn threshold(self, form: Option<f64>) -> Option<f64> {
        match self {
            MinConfidence::At(min) => Some(min),
            MinConfidence::Off => None,
            MinConfidence::Auto => form
                .filter(|form| *form >= FORM_CONFIDENCE_FLOOR)
                .map(|_| AUTO_MIN_CONFIDENCE),
        }
    }

    /// Whether `auto` finds the model's probabilities meaningless by the form it wrote its
    /// answer with (`form`, under [`FORM_CONFIDENCE_FLOOR`]): a model that does not read.
    pub fn unsure_reader(self, form: Option<f64>) -> bool {
        self == MinConfidence::Auto && form.is_some_and(|form| form < FORM_CONFIDENCE_FLOOR)
    }

    /// As the settings describe it: `auto`, `off` or the number.
    pub fn to_json(self) -> serde_json::Value {
        match self {
            MinConfidence::Auto => "auto".into(),
            MinConfidence::Off => "off".into(),
            MinConfidence::At(min) => min.into(),
        }
    }
}

/// When a request asks for the tokens' log-probabilities (`structure_logprobs`), which give
/// each value its confidence.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Logprobs {
    /// Where the provider and model are known to give them: OpenAI's models but the reasoning
    /// ones, llama.cpp, vLLM, Ollama.
    Auto,
    /// Wherever the wire format has the field (Gemini too, which refuses it for many models:
    /// a refusal that names log-probabilities turns them off for the call).
    On,
    Off,
}

impl Logprobs {
    /// Whether to ask a provider of which `known` says whether it gives them.
    pub fn ask(self, known: bool) -> bool {
        match self {
            Logprobs::Auto => known,
            Logprobs::On => true,
            Logprobs::Off => false,
        }
    }
}

/// Whether the model reads images and PDFs given as they are (`structure_vision`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Vision {
    /// Where the provider's model is known to read them (`provider::vision`).
    Auto,
    /// The model reads both (a local vision model, a gateway the table does not know).
    On,
    Off,
}

/// How the answer is delivered (spec 001).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DeliveryChoice {
    /// The strongest mode the provider has: native, else tool, else (if allowed) prompt.
    Auto,
    /// The provider's structured-output mode.
    Native,
    /// A forced call of the internal `__structured_output__` tool.
    Tool,
    /// The schema in the prompt, the answer read leniently.
    Prompt,
}

/// Whether plain strings and numbers are offered as the text's spans and numbers
/// (`structure_extractive`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Extractive {
    /// On for the local-server profiles, whose small models invent values; off for hosted
    /// providers.
    Auto,
    On,
    Off,
}

/// The profiles [`Extractive::Auto`] turns extractive mode on for: servers of local models.
pub const LOCAL_PROFILES: &[&str] = &["ollama", "llamacpp", "vllm"];

impl Extractive {
    /// Whether extractive mode is on for a provider of `profile`.
    pub fn for_profile(self, profile: &str) -> bool {
        match self {
            Extractive::Auto => LOCAL_PROFILES.contains(&profile),
            Extractive::On => true,
            Extractive::Off => false,
        }
    }

    /// As the settings describe it: `auto`, `true` or `false`.
    pub fn name(self) -> &'static str {
        match self {
            Extractive::Auto => "auto",
            Extractive::On => "true",
            Extractive::Off => "false",
        }
    }
}

/// How values are held to the text (`structure_grounding`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Grounding {
    /// No provenance.
    Off,
    /// Every value's source in the result.
    Report,
    /// Also: a value no span supports (in a field not marked derived) is a violation.
    Require,
}

impl Grounding {
    /// As the settings write it.
    pub fn name(self) -> &'static str {
        match self {
            Grounding::Off => "off",
            Grounding::Report => "report",
            Grounding::Require => "require",
        }
    }
}

/// `structure_context_tokens`: the window of every model, or of each `provider/model` named.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ContextTokens {
    All(u32),
    ByModel(BTreeMap<String, u32>),
}

impl ContextTokens {
    /// The window stated for `model` (`provider/model`), if any.
    pub fn for_model(&self, model: &str) -> Option<u32> {
        match self {
            ContextTokens::All(tokens) => Some(*tokens),
            ContextTokens::ByModel(windows) => windows.get(model).copied(),
        }
    }

    /// As the settings write it: a number, or an object by model.
    pub fn to_json(&self) -> serde_json::Value {
        match self {
            ContextTokens::All(tokens) => (*tokens).into(),
            ContextTokens::ByModel(windows) => serde_json::json!(windows),
        }
    }
}
