//! What every provider shares about the server it talks to and how this call uses it: the
//! model as configured and as the server knows it, the base URL, the headers that carry the
//! key, the time and size limits of a request, the profile, delivery mode and schema subset;
//! posting JSON, and reading a response's status and JSON body into a typed error.

use std::cell::Cell;
use std::sync::Arc;
use std::time::Duration;

use serde_json::value::RawValue;
use serde_json::{Map, Value};

use crate::error::StructureError;
use crate::ports::{HttpRequest, HttpResponse, TokenEstimate};
use crate::provider::delivery::{self, Capabilities, Delivery};
use crate::provider::model::ModelRef;
use crate::provider::vision::{self, Vision};
use crate::provider::window::{Window, WindowSource};
use crate::provider::wire::{self, WithShared};
use crate::schema::subset::{FULL, Subset};
use crate::settings::Settings;

/// One provider's server, ready to be posted to.
#[derive(Debug, Clone)]
pub struct Endpoint {
    /// `provider/model` as configured (the trace shows it).
    pub model: String,
    /// The model's name as the server knows it.
    pub model_name: String,
    /// How messages name the server: `OpenAI`, `the ollama server at http://…`.
    pub server: String,
    /// Without a trailing slash.
    pub base_url: String,
    /// The config key of the API key, for the message of a 401 or 403.
    key_setting: &'static str,
    /// The config key of the base URL, for the message of a 404.
    base_url_setting: &'static str,
    /// What every request carries besides the content type: the key, a version.
    headers: Vec<(String, String)>,
    /// The most one answer may take (`structure_max_output_tokens`); less when the window
    /// leaves less after the prompt.
    pub max_output_tokens: u32,
    /// The model's context window: what it is known to be, and what a refusal taught.
    window: Cell<Window>,
    /// The window with what the server's counts of this call's prompts taught of the bytes a
    /// token holds: for the next call (this one was planned with `window`).
    measured: Cell<Option<Window>>,
    /// The window with the bytes a token of this call's text holds, as the server counted them
    /// ([`Endpoint::plan_with_count`]): for this call's requests only.
    counted: Cell<Option<Window>>,
    timeout: Duration,
    /// Requests the server serves at once, when it said (llama.cpp's slots).
    pub slots: Option<u32>,
    max_response_bytes: usize,
    /// The profile the requests are shaped for (`openai`, `anthropic`, ...).
    pub profile: &'static str,
    /// The delivery mode chosen for this call.
    pub delivery: Delivery,
    /// The schema subset the provider takes in that mode.
    pub subset: &'static Subset,
    /// Whether requests ask for the answer's token log-probabilities; a server that refuses
    /// them turns this off ([`Endpoint::refused_logprobs`]).
    logprobs: Cell<bool>,
    /// What the model reads besides text, and the provider's limits on it.
    pub vision: Vision,
}

impl Endpoint {
    /// The endpoint of `model` on `server` (as messages name it) at `base_url` (checked by
    /// [`base_url`]); `key_setting` and `base_url_setting` are the config keys messages point at.
    pub fn new(
        model: &ModelRef,
        server: String,
        base_url: String,
        key_setting: &'static str,
        base_url_setting: &'static str,
        settings: &Settings,
        window: Window,
    ) -> Self {
        Self {
            model: format!("{}/{}", model.provider, model.name),
            model_name: model.name.clone(),
            server,
            base_url,
            key_setting,
            base_url_setting,
            headers: Vec::new(),
            max_output_tokens: settings.max_output_tokens,
            window: Cell::new(window),
            measured: Cell::new(None),
            counted: Cell::new(None),
            timeout: settings.request_timeout(&model.provider),
            slots: None,
            max_response_bytes: settings.limits.response_bytes,
            profile: "",
            delivery: Delivery::Prompt,
            subset: &FULL,
            logprobs: Cell::new(false),
            vision: vision::of(
                &model.provider,
                &model.name,
                settings.vision,
                settings.limits.document_bytes,
            ),
        }
    }

    /// Requests ask for the answer's token log-probabilities when `ask` (the provider knows the
    /// model gives them, and `structure_logprobs` allows it).
    pub fn asking_logprobs(self, ask: bool) -> Self {
        self.logprobs.set(ask);
        self
    }

    /// Whether the next request asks for log-probabilities: never for an answer delivered as
    /// a tool call, whose arguments no provider gives them for.
    pub fn asks_logprobs(&self) -> bool {
        self.logprobs.get() && self.delivery != Delivery::Tool
    }

    /// Whether `error` is the server refusing log-probabilities for this model (a 400 that
    /// names them): the requests built from now on do not ask, and the call is worth planning
    /// again.
    pub fn refused_logprobs(&self, error: &StructureError) -> bool {
        let refused = self.asks_logprobs()
            && matches!(
                error.kind,
                crate::error::ErrorKind::Provider { status: 400, .. }
            )
            && error.message.to_ascii_lowercase().contains("logprob");
        if refused {
            self.logprobs.set(false);
        }
        refused
    }

    /// Requests shaped for `profile`, the answer delivered in `delivery` mode, the schema in
    /// `enforced` (the subset the provider enforces; in prompt mode, where nothing is
    /// enforced, the full schema).
    /// The same endpoint delivering as `settings` choose among the server's `capabilities`
    /// ([`delivery::select_for`]), for `profile`, held to the subset `enforced` names for the
    /// delivery chosen.
    pub fn delivering_chosen(
        self,
        settings: &Settings,
        capabilities: Capabilities,
        (profile, enforced): (&'static str, impl Fn(Delivery) -> &'static Subset),
    ) -> Result<Self, StructureError> {
        let delivery = delivery::select_for(settings, capabilities, &self.model)?;
        Ok(self.delivering(profile, delivery, enforced(delivery)))
    }

    pub fn delivering(
        mut self,
        profile: &'static str,
        delivery: Delivery,
        enforced: &'static Subset,
    ) -> Self {
        self.profile = profile;
        self.delivery = delivery;
        self.subset = if delivery == Delivery::Prompt {
            &FULL
        } else {
            enforced
        };
        self
    }

    /// Requests that wait at most `timeout` each, to a server that serves `slots` at once (when
    /// it said).
    pub fn serving(mut self, timeout: Duration, slots: Option<u32>) -> Self {
        self.timeout = timeout;
        self.slots = slots;
        self
    }

    /// A header every request carries (`authorization`, `x-api-key`, a version).
    pub fn with_header(mut self, name: &str, value: impl Into<String>) -> Self {
        self.headers.push((name.to_owned(), value.into()));
        self
    }

    /// The model's context window as known now.
    pub fn window(&self) -> Window {
        self.window.get()
    }

    /// Takes what a refusal taught about the window: requests built from now on fit it.
    pub fn learn(&self, window: Window) {
        self.window.set(window);
    }

    /// Notes what the server's count of a prompt of `prompt_bytes` (`prompt_tokens`) says of
    /// the bytes a token holds (see [`Window::observed`]), for the calls after this one: this
    /// one keeps the estimate it was planned with.
    pub fn observe(&self, prompt_bytes: usize, prompt_tokens: u64) {
        let known = self.measured.get().unwrap_or_else(|| self.window());
        if let Some(window) = known.observed(prompt_bytes, prompt_tokens) {
            self.measured.set(Some(window));
        }
    }

    /// Plans the requests from now on with the server's count of a prompt of `prompt_bytes`:
    /// `tokens` of text (see [`Window::counted`]), until [`Endpoint::forget_count`]. The window
    /// that is kept for the next call is not changed: the count holds for this text alone.
    pub fn plan_with_count(&self, prompt_bytes: usize, tokens: u64) -> Window {
        let counted = self.window().counted(prompt_bytes, tokens);
        self.counted.set(Some(counted));
        counted
    }

    /// Plans with the window again, as before [`Endpoint::plan_with_count`].
    pub fn forget_count(&self) {
        self.counted.set(None);
    }

    /// The window the next call should plan with: this one's, with the bytes a token holds as
    /// the server's counts measured them.
    pub fn window_for_next_call(&self) -> Window {
        let window = self.window();
        match self.measured.get() {
            Some(measured)
                if !window.measured || measured.bytes_per_token < window.bytes_per_token =>
            {
                Window {
                    bytes_per_token: measured.bytes_per_token,
                    measured: true,
                    ..window
                }
            }
            _ => window,
        }
    }

    /// `POST {base_url}{path}` with the LLM request `body` as JSON, its answer limit set at
    /// `limit_at` (a path of keys, created as needed) to what the window leaves after the
    /// prompt: the body's bytes less `unread_bytes`, what the server does not show the model (a
    /// schema it turns into a grammar). The request carries the estimate.
    pub fn post_llm(
        &self,
        path: &str,
        body: LlmBody,
        limit_at: &[&str],
        unread_bytes: usize,
    ) -> HttpRequest {
        let LlmBody { mut fields, schema } = body;
        let schema = schema.as_ref().map(|(at, text)| (*at, &**text));
        let window = self.counted.get().unwrap_or_else(|| self.window());
        let whole = WithShared {
            fields: &fields,
            shared: schema,
        };
        // A new key of the body's own object goes last: it is written after the bytes counted.
        // A limit anywhere else goes into the fields, and the body is written once it is there
        // (counted before, not written).
        let appendable = match limit_at {
            [key] if !fields.contains_key(*key) => Some((*key, wire::json_bytes(&whole, 0))),
            _ => None,
        };
        let body_bytes = match &appendable {
            Some((_, bytes)) => bytes.len(),
            None => wire::json_len(&whole),
        };
        let prompt_bytes = body_bytes.saturating_sub(unread_bytes);
        let mut output = window.output_tokens(prompt_bytes, self.max_output_tokens);
        let least = Window::MIN_OUTPUT_TOKENS.min(self.max_output_tokens);
        if output < least && window.source == WindowSource::Default {
            // A guessed window never refuses a request: it is sent with the answer's own limit,
            // and a server whose window is smaller says so (which teaches the window).
            output = self.max_output_tokens;
        }
        let estimate = TokenEstimate {
            prompt_bytes,
            prompt: window.prompt_tokens(prompt_bytes),
            output,
            fits: output >= least,
        };
        let limit = Value::from(output.max(1));
        let bytes = match appendable {
            Some((key, mut bytes)) => {
                wire::append_entry(&mut bytes, key, &limit);
                bytes
            }
            None => {
                insert_at(&mut fields, limit_at, limit);
                let body = WithShared {
                    fields: &fields,
                    shared: schema,
                };
                // Room for the body as counted, and the answer limit with its key.
                wire::json_bytes(&body, body_bytes + 64)
            }
        };
        let mut request = self.post(path, bytes);
        request.tokens = Some(estimate);
        request
    }

    /// `POST {base_url}{path}` with `body` as JSON.
    pub fn post_json(&self, path: &str, body: Map<String, Value>) -> HttpRequest {
        self.post(path, wire::json_bytes(&body, 0))
    }

    /// `POST {base_url}{path}` with `body`, bytes of JSON.
    fn post(&self, path: &str, body: Vec<u8>) -> HttpRequest {
        let mut headers = vec![("content-type".to_owned(), "application/json".to_owned())];
        headers.extend(self.headers.iter().cloned());
        HttpRequest {
            method: "POST",
            url: format!("{}{path}", self.base_url),
            headers,
            body,
            timeout: self.timeout,
            max_response_bytes: self.max_response_bytes,
            tokens: None,
        }
    }

    /// The JSON body of a 2xx `response`; the typed error any other status or body stands for.
    pub fn json_response(&self, response: &HttpResponse) -> Result<Value, StructureError> {
        if !(200..300).contains(&response.status) {
            return Err(wire::http_error(
                &self.server,
                response,
                &format!("{} / {}", self.key_setting.to_uppercase(), self.key_setting),
                &self.base_url_setting.to_uppercase(),
            ));
        }
        wire::json_body(&self.server, response)
    }
}

/// The body of an LLM request: its fields, and the answer's schema with where it goes, a path
/// of keys and of indices into arrays at which the fields hold a placeholder. The schema is
/// written in as the instance keeps it written out ([`wire::schema_text`]) when the body is
/// serialised: a copy of it in every body was a tenth of a whole call's instructions, and
/// writing it out again most of writing the body.
pub struct LlmBody {
    fields: Map<String, Value>,
    schema: Option<(&'static [&'static str], Arc<RawValue>)>,
}

impl LlmBody {
    /// A body that takes `schema` at `at`; none without a place for it (prompt delivery
    /// writes the schema in the prompt).
    pub fn new(
        fields: Map<String, Value>,
        at: Option<&'static [&'static str]>,
        schema: &Arc<Value>,
    ) -> Self {
        Self {
            fields,
            schema: at.map(|at| (at, wire::schema_text(schema))),
        }
    }

    /// The bytes of the schema the body carries (none without a place for it).
    pub fn schema_bytes(&self) -> usize {
        self.schema.as_ref().map_or(0, |(_, text)| text.get().len())
    }
}

/// `value` at `path` in `body`, the objects on the way made as needed.
fn insert_at(body: &mut Map<String, Value>, path: &[&str], value: Value) {
    let Some((last, parents)) = path.split_last() else {
        return;
    };
    let mut object = body;
    for key in parents {
        let next = object
            .entry(*key)
            .or_insert_with(|| Value::Object(Map::new()));
        if !next.is_object() {
            *next = Value::Object(Map::new());
        }
        match next {
            Value::Object(inner) => object = inner,
            _ => return,
        }
    }
    object.insert((*last).to_owned(), value);
}

/// The base URL `settings` configure under `key` (or `default`), checked and without a
/// trailing slash.
pub fn base_url(settings: &Settings, key: &str, default: &str) -> Result<String, StructureError> {
    let url = settings
        .base_url(key)
        .unwrap_or(default)
        .trim_end_matches('/')
        .to_owned();
    if url.starts_with("http://") || url.starts_with("https://") {
        Ok(url)
    } else {
        Err(StructureError::configuration(
            key,
            format!(
                "base URL {url:?} must start with http:// or https:// (set {} / {key})",
                key.to_uppercase()
            ),
        ))
    }
}
