//! Which server a model runs on, and how much it reads at once, found out before the first LLM
//! call: a model reached as `openai/<model>` at a base URL may be served by llama.cpp (or
//! llama-cpp-python), Ollama or vLLM, which want requests of their own profile, and a local
//! server's context window is whatever it was started with. Each says so where it can:
//!
//! | server | asked | says |
//! |---|---|---|
//! | vLLM | `GET /v1/models` | `max_model_len`, `owned_by: "vllm"` |
//! | llama.cpp | `GET /v1/models`, `GET /props` | `owned_by: "llamacpp"`; `meta.n_ctx` or `n_ctx`; `total_slots` (requests served at once) |
//! | llama-cpp-python | `GET /v1/models` | `owned_by: "me"` (no window: 2,048 unless a refusal says more) |
//! | Ollama | `GET /api/version`, `/api/ps`, `POST /api/show` | the context a loaded model runs with, or `num_ctx` |
//!
//! What a server said (or a refusal taught) is kept in the key-value store per base URL and
//! model for a day ([`FACTS_TTL_MILLIS`]), so a fresh instance asks again only then. A server
//! that answers none of these keeps the generic `openai-compatible` profile; a probe that
//! fails never fails the call.

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use std::time::Duration;

use crate::error::StructureError;
use crate::keys;
use crate::ports::{HttpRequest, HttpResponse, Ports};
use crate::provider::endpoint;
use crate::provider::model::ModelRef;
use crate::provider::profile::Profile;
use crate::provider::window::{self, Window, WindowSource};
use crate::provider::wire;
use crate::settings::Settings;

/// How long what a server said is trusted.
pub const FACTS_TTL_MILLIS: u64 = 24 * 60 * 60 * 1000;
/// The longest a probe may take: a server that does not answer this fast is asked nothing more.
const PROBE_TIMEOUT: Duration = Duration::from_secs(5);
/// The most bytes of a probe's answer read (a model list, a model's details).
const PROBE_RESPONSE_BYTES: usize = 1 << 20;
/// Where the facts are kept: outside every tenant's keys (`t/…`).
const FACTS_PREFIX: &str = "servers/";

/// What is known of the server of one model.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Server {
    /// The kind of server behind an `openai/` model at a base URL, when it said.
    pub kind: Option<Profile>,
    /// The context window, when a setting, the table, the server or a refusal gave it.
    pub window: Option<Window>,
    /// How many requests the server serves at once, when it said (llama.cpp's slots).
    pub slots: Option<u32>,
}

/// What is kept in the key-value store for a base URL and model.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct Facts {
    kind: Option<String>,
    window: Option<Window>,
    #[serde(default)]
    slots: Option<u32>,
    /// When they were learned (unix milliseconds).
    at: u64,
}

impl Server {
    /// What the settings and the table of hosted models say of `model`, without asking.
    pub fn known(settings: &Settings, model: &ModelRef) -> Self {
        let name = format!("{}/{}", model.provider, model.name);
        let window = match settings
            .context_tokens
            .as_ref()
            .and_then(|set| set.for_model(&name))
        {
            Some(tokens) => Some(Window::new(tokens, WindowSource::Setting)),
            None => window::hosted(&model.provider, &model.name)
                .map(|tokens| Window::new(tokens, WindowSource::Table)),
        };
        Self {
            kind: None,
            window,
            slots: None,
        }
    }

    /// What is known of `model`'s server: [`Server::known`], else what the server said or
    /// its answers taught before (kept in the store), else what it says now. Only servers of
    /// the OpenAI wire format at a base URL of their own are asked, and only when no setting
    /// names the profile or the window and the model is not a hosted one.
    pub fn discover(settings: &Settings, model: &ModelRef, ports: &Ports<'_>) -> Self {
        let known = Self::known(settings, model);
        if known.window.is_some() {
            return known;
        }
        let Some(base_url) = chat_base_url(settings, model) else {
            return known;
        };
        let key = facts_key(&base_url, &model.name);
        let now = ports.clock.now_unix_millis();
        if let Some(facts) = crate::store::read_lenient::<Facts>(ports.key_value, &key)
            && now.saturating_sub(facts.at) < FACTS_TTL_MILLIS
        {
            return facts.server();
        }
        if !worth_asking(settings, model) {
            return known;
        }
        let Some(found) = probe(&base_url, &model.name, ports) else {
            return known;
        };
        let facts = Facts {
            kind: found.kind.map(|kind| kind.name().to_owned()),
            window: found.window,
            slots: found.slots,
            at: now,
        };
        // The facts only save the next call a probe: a store that cannot keep them costs
        // nothing else.
        let _ = crate::store::write(ports.key_value, &key, &facts);
        found
    }

    /// Keeps what a refusal taught of `model`'s window at its base URL, so the next call plans
    /// with it from the start.
    pub fn remember(
        settings: &Settings,
        model: &ModelRef,
        kind: Option<Profile>,
        learned: Window,
        ports: &Ports<'_>,
    ) -> Result<(), StructureError> {
        let Some(base_url) = chat_base_url(settings, model) else {
            return Ok(());
        };
        // A window the settings or the table give is never replaced by a kept one (see
        // [`Server::discover`]): keeping one would cost every call a store write for nothing.
        if Self::known(settings, model).window.is_some() {
            return Ok(());
        }
        let facts = Facts {
            kind: kind.map(|kind| kind.name().to_owned()),
            window: Some(learned),
            slots: None,
            at: ports.clock.now_unix_millis(),
        };
        crate::store::write(ports.key_value, &facts_key(&base_url, &model.name), &facts)
    }
}

impl Facts {
    fn server(&self) -> Server {
        Server {
            kind: self.kind.as_deref().and_then(Profile::named),
            window: self.window,
            slots: self.slots,
        }
    }
}

/// The base URL of `model`'s chat server, for the models that speak the OpenAI wire format.
fn chat_base_url(settings: &Settings, model: &ModelRef) -> Option<String> {
    let kind = match model.provider.as_str() {
        "openai" if settings.openai_api == "chat" => Profile::OpenAiCompatible,
        "ollama" => Profile::Ollama,
        "llamacpp" => Profile::LlamaCpp,
        "vllm" => Profile::Vllm,
        _ => return None,
    };
    endpoint::base_url(settings, keys::OPENAI_BASE_URL, kind.default_base_url()).ok()
}

/// Whether `model`'s server is worth asking what it is (see [`Server::discover`]): not when a
/// setting names its profile, nor when it is OpenAI itself or a port names it already.
fn worth_asking(settings: &Settings, model: &ModelRef) -> bool {
    settings.provider_profile.is_none()
        && (model.provider != "openai"
            || Profile::select(model, settings.openai_base_url.as_deref(), None, None).ok()
                == Some(Profile::OpenAiCompatible))
}

/// The store key of what the server at `base_url` said of `model`.
fn facts_key(base_url: &str, model: &str) -> String {
    let digest = Sha256::digest(format!("{base_url}\n{model}").as_bytes());
    let hex: String = digest.iter().map(|byte| format!("{byte:02x}")).collect();
    format!("{FACTS_PREFIX}{hex}")
}

/// Asks the server at `base_url` what it is and how much `model` reads at once; `None` when it
/// answered nothing (unreachable): nothing is learned, and nothing kept.
fn probe(base_url: &str, model: &str, ports: &Ports<'_>) -> Option<Server> {
    let root = base_url.strip_suffix("/v1").unwrap_or(base_url);
    let models = get_json(&format!("{base_url}/models"), ports);
    if models == Answer::Unreachable {
        return None;
    }
    if let Answer::Json(list) = &models
        && let Some(entry) = model_entry(list, model)
    {
        if let Some(tokens) = number(entry, "/max_model_len") {
            return Some(found(Profile::Vllm, Some(tokens)));
        }
        match entry.get("owned_by").and_then(Value::as_str) {
            Some("llamacpp") => {
                // Recent builds say the slot's context here; older ones only in `/props`,
                // which also says how many requests it serves at once.
                let props = llama_cpp_props(root, ports);
                let tokens = number(entry, "/meta/n_ctx").or_else(|| n_ctx(&props));
                return Some(with_slots(found(Profile::LlamaCpp, tokens), &props));
            }
            // llama-cpp-python's server: it states no window.
            Some("me") if entry.get("permissions").is_some() => {
                return Some(found(Profile::LlamaCpp, None));
            }
            _ => {}
        }
        // Gateways that list hosted models (OpenRouter, Together) state each one's window.
        if let Some(tokens) = number(entry, "/context_length") {
            return Some(Server {
                kind: None,
                window: found(Profile::OpenAiCompatible, Some(tokens)).window,
                slots: None,
            });
        }
    }
    if let Answer::Json(version) = get_json(&format!("{root}/api/version"), ports)
        && let Some(version) = version.get("version").and_then(Value::as_str)
    {
        return Some(ollama(root, model, version, ports));
    }
    let props = llama_cpp_props(root, ports);
    if n_ctx(&props).is_some() {
        return Some(with_slots(found(Profile::LlamaCpp, n_ctx(&props)), &props));
    }
    Some(Server::default())
}

/// A llama.cpp server's `/props` (its context per slot, its slots), or `null`.
fn llama_cpp_props(root: &str, ports: &Ports<'_>) -> Value {
    match get_json(&format!("{root}/props"), ports) {
        Answer::Json(props) => props,
        _ => Value::Null,
    }
}

/// `server` with the slots llama.cpp's `/props` says it has (`total_slots`).
fn with_slots(server: Server, props: &Value) -> Server {
    Server {
        slots: number(props, "/total_slots").filter(|&slots| slots > 0),
        ..server
    }
}

/// An Ollama server's window for `model`: the context it runs the model with now (`/api/ps`,
/// when the model is loaded), else the `num_ctx` its parameters set (`/api/show`), else the
/// default of that `version` (2,048 before 0.6.7, 4,096 since; a longer prompt is cut
/// silently, so the smallest default a version may run with). The model's trained
/// `context_length` is not what it runs with.
fn ollama(root: &str, model: &str, version: &str, ports: &Ports<'_>) -> Server {
    let running = match get_json(&format!("{root}/api/ps"), ports) {
        Answer::Json(ps) => ps
            .get("models")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .find(|entry| ollama_names(entry, model))
            .and_then(|entry| number(entry, "/context_length")),
        _ => None,
    };
    let request = probe_request(
        "POST",
        &format!("{root}/api/show"),
        json!({ "model": model }),
    );
    let set = || match answer(&request, ports) {
        Answer::Json(show) => show
            .get("parameters")
            .and_then(Value::as_str)
            .and_then(num_ctx),
        _ => None,
    };
    let default = if older_than(version, [0, 6, 7]) {
        2_048
    } else {
        4_096
    };
    found(Profile::Ollama, running.or_else(set).or(Some(default)))
}

/// Whether an `/api/ps` entry is `model` (`llama3.2` names `llama3.2:latest`).
fn ollama_names(entry: &Value, model: &str) -> bool {
    ["name", "model"].iter().any(|key| {
        entry
            .get(*key)
            .and_then(Value::as_str)
            .is_some_and(|name| name == model || name.strip_suffix(":latest") == Some(model))
    })
}

/// Whether version `text` (`0.6.6`, `0.12.3-rc1`) is older than `than`; an unreadable one is
/// taken as old (the smaller default).
fn older_than(text: &str, than: [u64; 3]) -> bool {
    let mut parts = text
        .split(['.', '-', '+'])
        .map(|part| part.parse::<u64>().ok());
    let mut version = [0; 3];
    for slot in &mut version {
        match parts.next() {
            Some(Some(number)) => *slot = number,
            Some(None) => return true,
            None => break,
        }
    }
    version < than
}

/// `num_ctx 8192` among the lines of an Ollama model's parameters.
fn num_ctx(parameters: &str) -> Option<u32> {
    parameters.lines().find_map(|line| {
        let mut words = line.split_whitespace();
        (words.next() == Some("num_ctx"))
            .then(|| words.next()?.parse().ok())
            .flatten()
    })
}

/// llama.cpp's context size: `default_generation_settings.n_ctx`, or `n_ctx` at the top in
/// older versions.
fn n_ctx(props: &Value) -> Option<u32> {
    number(props, "/default_generation_settings/n_ctx").or_else(|| number(props, "/n_ctx"))
}

fn found(kind: Profile, tokens: Option<u32>) -> Server {
    Server {
        kind: Some(kind),
        window: tokens
            .filter(|&tokens| u64::from(tokens) >= crate::settings::MIN_CONTEXT_TOKENS)
            .map(|tokens| Window::new(tokens, WindowSource::Server)),
        slots: None,
    }
}

/// The entry of a `/v1/models` list for `model` (by id), else its only or first entry.
fn model_entry<'v>(list: &'v Value, model: &str) -> Option<&'v Value> {
    let data = list.get("data")?.as_array()?;
    data.iter()
        .find(|entry| entry.get("id").and_then(Value::as_str) == Some(model))
        .or_else(|| data.first())
}

fn number(value: &Value, pointer: &str) -> Option<u32> {
    value
        .pointer(pointer)?
        .as_u64()
        .and_then(|n| u32::try_from(n).ok())
}

/// What a probe (or a count, `tokenizer`) came to.
#[derive(Debug, PartialEq)]
pub(super) enum Answer {
    Json(Value),
    /// An error status, or a body that is not JSON.
    Other,
    /// No answer at all.
    Unreachable,
}

fn get_json(url: &str, ports: &Ports<'_>) -> Answer {
    answer(&probe_request("GET", url, Value::Null), ports)
}

/// A request asking the server about itself: `body` as JSON (none when null), within the
/// probe's time and size limits.
pub(super) fn probe_request(method: &'static str, url: &str, body: Value) -> HttpRequest {
    let (headers, body) = if body.is_null() {
        (Vec::new(), Vec::new())
    } else {
        (
            vec![("content-type".to_owned(), "application/json".to_owned())],
            wire::json_bytes(&body, 0),
        )
    };
    HttpRequest {
        method,
        url: url.to_owned(),
        headers,
        body,
        timeout: PROBE_TIMEOUT,
        max_response_bytes: PROBE_RESPONSE_BYTES,
        tokens: None,
    }
}

/// What the server said to `request`.
pub(super) fn answer(request: &HttpRequest, ports: &Ports<'_>) -> Answer {
    match ports.transport.send(request) {
        Ok(HttpResponse { status, body, .. }) if (200..300).contains(&status) => {
            serde_json::from_slice(&body).map_or(Answer::Other, Answer::Json)
        }
        Ok(_) => Answer::Other,
        Err(_) => Answer::Unreachable,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ollamas_parameters_give_num_ctx() {
        assert_eq!(
            num_ctx("stop \"<|eot_id|>\"\nnum_ctx 8192\ntemperature 0.6"),
            Some(8192)
        );
        assert_eq!(num_ctx("stop \"<|eot_id|>\""), None);
    }

    #[test]
    fn llama_cpps_props_give_n_ctx_in_either_place() {
        assert_eq!(
            n_ctx(&json!({ "default_generation_settings": { "n_ctx": 4096 } })),
            Some(4096)
        );
        assert_eq!(n_ctx(&json!({ "n_ctx": 2048 })), Some(2048));
        assert_eq!(n_ctx(&json!({ "total_slots": 1 })), None);
        let slots = |props: Value| with_slots(Server::default(), &props).slots;
        assert_eq!(slots(json!({ "total_slots": 4 })), Some(4));
        assert_eq!(slots(json!({ "total_slots": 0 })), None);
        assert_eq!(slots(Value::Null), None);
    }

    #[test]
    fn ollama_versions_are_compared_by_number() {
        assert!(older_than("0.6.6", [0, 6, 7]));
        assert!(!older_than("0.6.7", [0, 6, 7]));
        assert!(!older_than("0.12.3-rc1", [0, 6, 7]));
        assert!(older_than("dev", [0, 6, 7]));
    }

    #[test]
    fn facts_keys_are_outside_every_tenant() {
        let key = facts_key("http://127.0.0.1:8080/v1", "smollm2");
        assert!(
            key.starts_with(FACTS_PREFIX) && !key.starts_with("t/"),
            "{key}"
        );
        assert_ne!(key, facts_key("http://127.0.0.1:8081/v1", "smollm2"));
    }
}
