//! The edges of the core: small traits a host implements. No WASI type appears here; the
//! component implements them over WASI (`crate::wasi`), tests over plain Rust values.

use std::time::Duration;

/// An outbound HTTP request, fully buffered: LLM requests and answers are small.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HttpRequest {
    pub method: &'static str,
    pub url: String,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
    /// The longest the whole exchange may take.
    pub timeout: Duration,
    /// The most response bytes to read; a longer response is an error.
    pub max_response_bytes: usize,
    /// An LLM request's estimated share of the model's context; `None` for other requests.
    pub tokens: Option<TokenEstimate>,
}

/// What an LLM request is estimated to take of the model's context window.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TokenEstimate {
    /// The bytes of the prompt the model reads (the request's, less a schema it does not).
    pub prompt_bytes: usize,
    /// The prompt's tokens (those bytes at the window's bytes per token).
    pub prompt: u32,
    /// The answer's limit as sent: `structure_max_output_tokens`, or what the window leaves.
    pub output: u32,
    /// Whether the window leaves the answer a useful size: a request that does not fit is
    /// never sent.
    pub fits: bool,
}

/// The pieces of an `http(s)://authority/path?query` URL a request line needs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UrlParts {
    pub https: bool,
    pub authority: String,
    pub path_and_query: String,
}

impl HttpRequest {
    pub fn url_parts(&self) -> Result<UrlParts, String> {
        let (https, rest) = if let Some(rest) = self.url.strip_prefix("https://") {
            (true, rest)
        } else if let Some(rest) = self.url.strip_prefix("http://") {
            (false, rest)
        } else {
            return Err(format!("{} is not an http:// or https:// URL", self.url));
        };
        let (authority, path) = match rest.find(['/', '?']) {
            Some(index) => (&rest[..index], &rest[index..]),
            None => (rest, "/"),
        };
        if authority.is_empty() {
            return Err(format!("{} has no host", self.url));
        }
        let path_and_query = if path.starts_with('?') {
            format!("/{path}")
        } else {
            path.to_owned()
        };
        Ok(UrlParts {
            https,
            authority: authority.to_owned(),
            path_and_query,
        })
    }
}

/// A buffered HTTP response.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HttpResponse {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl HttpResponse {
    /// The first header of that name (case-insensitive).
    pub fn header(&self, name: &str) -> Option<&str> {
        header(&self.headers, name)
    }
}

/// The first of `headers` named `name` (case-insensitive).
pub fn header<'a>(headers: &'a [(String, String)], name: &str) -> Option<&'a str> {
    headers
        .iter()
        .find(|(key, _)| key.eq_ignore_ascii_case(name))
        .map(|(_, value)| value.as_str())
}

/// Why an HTTP exchange did not produce a response.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TransportError {
    pub message: String,
    /// Whether trying again may succeed: a refused or dropped connection, not a timeout (the
    /// full timeout was already spent), a DNS failure or a denied address.
    pub retryable: bool,
}

impl TransportError {
    /// A failure that trying again will not fix.
    pub fn new(message: impl Into<String>) -> Self {
        Self {
            message: message.into(),
            retryable: false,
        }
    }

    /// A connection failure that may pass.
    pub fn retryable(message: impl Into<String>) -> Self {
        Self {
            message: message.into(),
            retryable: true,
        }
    }
}

/// Sends LLM requests. The component's implementation is `wasi:http/outgoing-handler`.
pub trait Transport {
    fn send(&self, request: &HttpRequest) -> Result<HttpResponse, TransportError>;

    /// Keeps up to `max_in_flight` of `work`'s requests in flight, starting the next one as soon
    /// as one is answered (or a wait `work` asks for is over), until `work` has none to start
    /// and none is in flight. The component starts them over `wasi:http` and waits on their
    /// pollables, and on a timer for a retry's wait, together; this default sends one at a time
    /// (with none in flight, `work` never asks it to wait).
    fn pump(&self, max_in_flight: usize, work: &mut dyn Pump) {
        let _ = max_in_flight;
        while let Next::Start(id, request) = work.next() {
            let result = self.send(&request);
            work.done(id, result);
        }
    }
}

/// Requests kept in flight by [`Transport::pump`].
pub trait Pump {
    /// What to start now.
    fn next(&mut self) -> Next;
    /// The answer to request `id`, in whatever order the answers come.
    fn done(&mut self, id: usize, result: Result<HttpResponse, TransportError>);
}

/// What a [`Pump`] has to start now.
#[derive(Debug)]
pub enum Next {
    /// This request, with the id its answer comes back with.
    Start(usize, HttpRequest),
    /// Nothing before this wait is over (a retry's backoff): ask again then, or after the next
    /// answer if that comes first. Only while requests are in flight: with none, the pump's
    /// work waits itself.
    Wait(Duration),
    /// Nothing until the next answer; with none in flight, nothing more.
    Idle,
}

/// Settings and secrets by key (`structure_model`, `openai_api_key`, ...). The component's
/// implementation is `wasi:config/store`.
pub trait Config {
    /// The value of `key`, `Ok(None)` when it is not set, `Err` with a message when the store
    /// could not be read.
    fn get(&self, key: &str) -> Result<Option<String>, String>;
}

/// A key-value store: registry overrides and cached schema-builder results live here. The
/// component's implementation is `wasi:keyvalue/store` (the host's store named `default`).
/// Errors are messages; a failing store never fails a call that could go on without it.
pub trait KeyValue {
    fn get(&self, key: &str) -> Result<Option<Vec<u8>>, String>;
    fn set(&self, key: &str, value: &[u8]) -> Result<(), String>;
    fn delete(&self, key: &str) -> Result<(), String>;
    /// Every key that starts with `prefix`, in any order.
    fn keys(&self, prefix: &str) -> Result<Vec<String>, String>;
    /// Replaces the value at `key` with `change(the value there)`, as one step: when another
    /// writer comes between, `change` runs again on what it wrote (so it may run more than once,
    /// and its last run is the one stored). The component's is `wasi:keyvalue/atomics`'
    /// compare-and-swap.
    fn update(
        &self,
        key: &str,
        change: &mut dyn FnMut(Option<Vec<u8>>) -> Vec<u8>,
    ) -> Result<(), String>;
}

/// A key-value store in memory, for native embedders and tests.
#[derive(Debug, Default)]
pub struct MemoryKeyValue {
    entries: std::sync::Mutex<std::collections::BTreeMap<String, Vec<u8>>>,
}

impl MemoryKeyValue {
    /// A copy of every entry, to compare before and after.
    pub fn snapshot(&self) -> std::collections::BTreeMap<String, Vec<u8>> {
        self.entries().clone()
    }

    fn entries(&self) -> std::sync::MutexGuard<'_, std::collections::BTreeMap<String, Vec<u8>>> {
        self.entries
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

impl KeyValue for MemoryKeyValue {
    fn get(&self, key: &str) -> Result<Option<Vec<u8>>, String> {
        Ok(self.entries().get(key).cloned())
    }

    fn set(&self, key: &str, value: &[u8]) -> Result<(), String> {
        self.entries().insert(key.to_owned(), value.to_vec());
        Ok(())
    }

    fn delete(&self, key: &str) -> Result<(), String> {
        self.entries().remove(key);
        Ok(())
    }

    fn update(
        &self,
        key: &str,
        change: &mut dyn FnMut(Option<Vec<u8>>) -> Vec<u8>,
    ) -> Result<(), String> {
        let mut entries = self.entries();
        let value = change(entries.get(key).cloned());
        entries.insert(key.to_owned(), value);
        Ok(())
    }

    fn keys(&self, prefix: &str) -> Result<Vec<String>, String> {
        Ok(self
            .entries()
            .range(prefix.to_owned()..)
            .map(|(key, _)| key)
            .take_while(|key| key.starts_with(prefix))
            .cloned()
            .collect())
    }
}

/// The current time, for resolving relative dates in the input, and waiting before a retry.
pub trait Clock {
    /// Milliseconds since the Unix epoch, UTC.
    fn now_unix_millis(&self) -> u64;
    /// Blocks for `duration`.
    fn sleep(&self, duration: Duration);
}

/// The system clock (`wasi:clocks/wall-clock` inside the component).
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now_unix_millis(&self) -> u64 {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|elapsed| elapsed.as_millis() as u64)
            .unwrap_or(0)
    }

    fn sleep(&self, duration: Duration) {
        std::thread::sleep(duration);
    }
}

/// The ports one `structure` call uses.
#[derive(Clone, Copy)]
pub struct Ports<'a> {
    pub transport: &'a dyn Transport,
    pub config: &'a dyn Config,
    pub key_value: &'a dyn KeyValue,
    pub clock: &'a dyn Clock,
}
