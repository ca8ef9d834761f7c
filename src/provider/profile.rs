//! What each server speaking the OpenAI Chat Completions wire format needs: which schema subset,
//! which `response_format` form, which token-limit field, whether the prompt must carry the
//! schema. Selected from the model's provider prefix and the base URL, or set explicitly.

use serde_json::{Value, json};

use crate::answer::format::AnswerFormat;
use crate::error::StructureError;
use crate::keys;
use crate::provider::delivery::{Capabilities, Delivery};
use crate::provider::model::ModelRef;
use crate::schema::subset::{FULL, GRAMMAR_WITHOUT_PATTERNS, OPENAI_STRICT, Subset};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Profile {
    /// api.openai.com: strict `json_schema`, OpenAI's subset.
    OpenAi,
    /// Any other server behind an `openai/` model and a custom base URL: OpenAI's strict form,
    /// the schema also in the prompt in case the server ignores `response_format`.
    OpenAiCompatible,
    /// Ollama's `/v1` endpoint: `json_schema` turned into a grammar by llama.cpp.
    Ollama,
    /// llama.cpp's server (and llama-cpp-python): `json_object` with a `schema`.
    LlamaCpp,
    /// vLLM: `json_schema` through guided decoding.
    Vllm,
}

const ALL: [Profile; 5] = [
    Profile::OpenAi,
    Profile::OpenAiCompatible,
    Profile::Ollama,
    Profile::LlamaCpp,
    Profile::Vllm,
];

impl Profile {
    pub fn name(self) -> &'static str {
        match self {
            Profile::OpenAi => "openai",
            Profile::OpenAiCompatible => "openai-compatible",
            Profile::Ollama => "ollama",
            Profile::LlamaCpp => "llamacpp",
            Profile::Vllm => "vllm",
        }
    }

    /// The profile named `name` (`llamacpp`), if there is one.
    pub fn named(name: &str) -> Option<Self> {
        ALL.into_iter().find(|profile| profile.name() == name)
    }

    /// The profile for `model` at `base_url`, unless `explicit` names one; `discovered` is the
    /// kind of server the base URL said it is ([`crate::provider::server`]).
    pub fn select(
        model: &ModelRef,
        base_url: Option<&str>,
        explicit: Option<&str>,
        discovered: Option<Profile>,
    ) -> Result<Self, StructureError> {
        if let Some(name) = explicit {
            return Self::named(name).ok_or_else(|| {
                StructureError::configuration(
                    keys::PROVIDER_PROFILE,
                    format!(
                        "provider profile {name:?} is unknown; use one of {}",
                        names()
                    ),
                )
            });
        }
        match model.provider.as_str() {
            "openai" => Ok(match base_url {
                None => Profile::OpenAi,
                Some(url) if host_of(url) == "api.openai.com" => Profile::OpenAi,
                Some(url) if port_of(url) == Some("11434") => Profile::Ollama,
                Some(_) => discovered.unwrap_or(Profile::OpenAiCompatible),
            }),
            "ollama" => Ok(Profile::Ollama),
            "llamacpp" => Ok(Profile::LlamaCpp),
            "vllm" => Ok(Profile::Vllm),
            other => Err(StructureError::configuration(
                keys::MODEL,
                format!(
                    "provider {other:?} is not supported; write the model as openai/<model>, \
                     ollama/<model>, llamacpp/<model> or vllm/<model> (set STRUCTURE_MODEL / structure_model)"
                ),
            )),
        }
    }

    /// Where the server listens when no base URL is configured.
    pub fn default_base_url(self) -> &'static str {
        match self {
            Profile::OpenAi | Profile::OpenAiCompatible => keys::OPENAI_DEFAULT_URL,
            Profile::Ollama => keys::OLLAMA_DEFAULT_URL,
            Profile::LlamaCpp => keys::LLAMACPP_DEFAULT_URL,
            Profile::Vllm => keys::VLLM_DEFAULT_URL,
        }
    }

    /// Only OpenAI itself refuses requests without a key; local servers take any or none.
    pub fn requires_api_key(self) -> bool {
        self == Profile::OpenAi
    }

    /// What the server enforces: strict `json_schema` everywhere; forced, schema-constrained
    /// function calls on OpenAI and vLLM (Ollama and llama.cpp cannot force a tool call).
    pub fn capabilities(self) -> Capabilities {
        Capabilities {
            native: true,
            tool: matches!(
                self,
                Profile::OpenAi | Profile::OpenAiCompatible | Profile::Vllm
            ),
        }
    }

    /// The schema subset the server takes in `delivery`.
    pub fn subset(self, delivery: Delivery) -> &'static Subset {
        match (self, delivery) {
            (_, Delivery::Prompt) => &FULL,
            (Profile::OpenAi | Profile::OpenAiCompatible, _) => &OPENAI_STRICT,
            (Profile::Ollama | Profile::LlamaCpp, _) => &GRAMMAR_WITHOUT_PATTERNS,
            (Profile::Vllm, _) => &FULL,
        }
    }

    /// Servers that only constrain the grammar never show the schema's descriptions to the
    /// model, and some ignore `response_format` altogether: the prompt carries the schema.
    /// OpenAI shows the model the schema it enforces.
    pub fn schema_in_prompt(self) -> bool {
        self != Profile::OpenAi
    }

    /// Whether the server turns the schema into a grammar that constrains decoding, without
    /// showing it to the model (it takes no room in the context).
    pub fn schema_is_grammar(self) -> bool {
        matches!(self, Profile::Ollama | Profile::LlamaCpp | Profile::Vllm)
    }

    /// The `response_format` of a Chat Completions request, and where in the body the answer's
    /// schema goes: it holds a placeholder there, which the body writes the schema over
    /// (`endpoint::LlmBody`).
    pub fn response_format(self, format: &AnswerFormat) -> (Value, &'static [&'static str]) {
        match self {
            Profile::LlamaCpp => (
                json!({ "type": "json_object", "schema": null }),
                &["response_format", "schema"],
            ),
            _ => (
                json!({ "type": "json_schema", "json_schema": {
                    "name": format.name, "schema": null, "strict": true,
                } }),
                &["response_format", "json_schema", "schema"],
            ),
        }
    }

    /// OpenAI replaced `max_tokens` with `max_completion_tokens`; compatible servers know the
    /// older name.
    pub fn token_limit_field(self) -> &'static str {
        if self == Profile::OpenAi {
            "max_completion_tokens"
        } else {
            "max_tokens"
        }
    }

    /// Whether the server gives `model`'s token log-probabilities when asked (`logprobs`):
    /// llama.cpp, vLLM and Ollama do; OpenAI does but for its reasoning models, which refuse
    /// the field; of any other server nothing is known.
    pub fn gives_logprobs(self, model: &str) -> bool {
        match self {
            Profile::OpenAi => !openai_reasoning(model),
            Profile::Ollama | Profile::LlamaCpp | Profile::Vllm => true,
            Profile::OpenAiCompatible => false,
        }
    }

    /// Local models extract best at temperature 0; OpenAI's reasoning models reject any
    /// temperature but the default, so none is sent there.
    pub fn temperature(self) -> Option<f64> {
        match self {
            Profile::Ollama | Profile::LlamaCpp | Profile::Vllm => Some(0.0),
            Profile::OpenAi | Profile::OpenAiCompatible => None,
        }
    }
}

/// OpenAI's reasoning models (`o1`, `o3-mini`, `o4-mini`, `gpt-5`, ...), which refuse
/// `logprobs`.
pub fn openai_reasoning(model: &str) -> bool {
    let model = model.to_ascii_lowercase();
    let o_series = model.starts_with('o') && model[1..].starts_with(|c: char| c.is_ascii_digit());
    o_series || model.starts_with("gpt-5")
}

fn names() -> String {
    ALL.iter()
        .map(|profile| profile.name())
        .collect::<Vec<_>>()
        .join(", ")
}

/// `https://user@host:8080/v1` → `host:8080`.
fn authority(url: &str) -> &str {
    let rest = url.split_once("://").map_or(url, |(_, rest)| rest);
    let authority = rest.split(['/', '?', '#']).next().unwrap_or_default();
    authority
        .rsplit_once('@')
        .map_or(authority, |(_, host)| host)
}

fn host_of(url: &str) -> String {
    let authority = authority(url);
    let host = match authority.rsplit_once(':') {
        Some((host, port)) if port.chars().all(|c| c.is_ascii_digit()) => host,
        _ => authority,
    };
    host.to_ascii_lowercase()
}

fn port_of(url: &str) -> Option<&str> {
    authority(url)
        .rsplit_once(':')
        .map(|(_, port)| port)
        .filter(|port| !port.is_empty() && port.chars().all(|c| c.is_ascii_digit()))
}
