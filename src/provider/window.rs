//! How much a model reads at once: its context window, in tokens, shared by the prompt and the
//! answer. Every request's answer is clamped to what the window leaves after the prompt, and a
//! text whose request would not leave a useful answer is read in parts (`content::long_text`).
//!
//! Where the figure comes from, first match wins: the `structure_context_tokens` setting; the
//! published window of a hosted model ([`HOSTED`]); what the server says when asked
//! (`provider::server`); the default of the server's kind ([`kind_default`]). A server that
//! answers a request with "This model's maximum context length is 2048 tokens …" teaches the
//! window too ([`Exceeded::read`]).
//!
//! ```
//! use structure::provider::window::{Window, WindowSource};
//!
//! let window = Window::new(2048, WindowSource::Server);
//! // A 3,000-byte prompt is about 1,000 tokens (and 32 for the chat template): the answer may
//! // take the 512 asked for.
//! assert_eq!(window.output_tokens(3_000, 512), 512);
//! // A 5,400-byte one leaves 216 tokens: the answer is clamped to them.
//! assert_eq!(window.output_tokens(5_400, 512), 216);
//! ```

use serde::{Deserialize, Serialize};

use crate::outcome::ContextWindow;
use crate::provider::profile::Profile;

/// Bytes of a prompt per token, for estimating a request before it is sent (English runs at
/// about four, JSON and other scripts lower: three errs on the side of a smaller request).
pub const BYTES_PER_TOKEN: f64 = 3.0;

/// The most bytes a token is taken to hold, however sparse a server's counts say its tokens are.
pub const MAX_BYTES_PER_TOKEN: f64 = 5.0;
/// The fewest: no text a model reads takes more than two tokens for three bytes (CJK runs at
/// about one and a half to three bytes a token); a count that says so counts something else.
pub const MIN_BYTES_PER_TOKEN: f64 = 1.5;

/// The window of a model no table, setting or server names: small enough for most servers of
/// local models, which refuse or silently cut what does not fit.
pub const DEFAULT_CONTEXT_TOKENS: u32 = 8_192;

/// Where a window's figure comes from, as the trace shows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum WindowSource {
    /// `structure_context_tokens`.
    Setting,
    /// The published window of a hosted model ([`HOSTED`]).
    Table,
    /// The server said it when asked (llama.cpp `/props`, Ollama `/api/show`, vLLM `/v1/models`).
    Server,
    /// A request over it was refused with the figure in the message.
    Learned,
    /// Nothing says it: the default of the server's kind, or [`DEFAULT_CONTEXT_TOKENS`].
    Default,
}

impl WindowSource {
    /// As the trace writes it.
    pub fn name(self) -> &'static str {
        match self {
            WindowSource::Setting => "setting",
            WindowSource::Table => "table",
            WindowSource::Server => "server",
            WindowSource::Learned => "learned",
            WindowSource::Default => "default",
        }
    }
}

/// A model's context window.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Window {
    /// Tokens the prompt and the answer share.
    pub tokens: u32,
    #[serde(rename = "from")]
    pub source: WindowSource,
    /// Bytes of a request per token of its prompt: [`BYTES_PER_TOKEN`] unless a server's
    /// refusal said how many tokens a request of known size took.
    #[serde(default = "default_bytes_per_token")]
    pub bytes_per_token: f64,
    /// Whether `bytes_per_token` was measured on the server's answers (else assumed).
    #[serde(default)]
    pub measured: bool,
}

fn default_bytes_per_token() -> f64 {
    BYTES_PER_TOKEN
}

impl Window {
    /// Tokens a chat request takes besides its text (the template's role markers and such).
    pub const REQUEST_OVERHEAD: u32 = 32;
    /// The least an answer is left: a request that would leave less is never sent.
    pub const MIN_OUTPUT_TOKENS: u32 = 64;

    pub fn new(tokens: u32, source: WindowSource) -> Self {
        Self {
            tokens,
            source,
            bytes_per_token: BYTES_PER_TOKEN,
            measured: false,
        }
    }

    /// What a request whose prompt had `prompt_bytes` and took `prompt_tokens` (the server's
    /// count) teaches of the bytes a token takes: the first measure replaces the assumed
    /// [`BYTES_PER_TOKEN`], a later one only lowers it; a fifth to spare, at most
    /// [`MAX_BYTES_PER_TOKEN`], at least [`MIN_BYTES_PER_TOKEN`]. `None` when it teaches nothing
    /// (a prompt too short to tell).
    pub fn observed(&self, prompt_bytes: usize, prompt_tokens: u64) -> Option<Window> {
        let text_tokens = prompt_tokens.saturating_sub(u64::from(Self::REQUEST_OVERHEAD));
        if text_tokens < 128 {
            return None;
        }
        let measured =
            (prompt_bytes as f64 / text_tokens as f64 * 0.8).clamp(1.0, MAX_BYTES_PER_TOKEN);
        let lower = measured < self.bytes_per_token - 0.01;
        ((!self.measured && (measured - self.bytes_per_token).abs() > 0.01)
            || (self.measured && lower))
            .then_some(Window {
                bytes_per_token: measured,
                measured: true,
                ..*self
            })
    }

    /// This window for a prompt of `prompt_bytes` whose text the server counted at `tokens`:
    /// the bytes a token holds as that count says, with a twentieth more tokens to spare for
    /// what later turns add (answers in JSON, which take more tokens a byte than prose), at
    /// least [`MIN_BYTES_PER_TOKEN`] and at most [`MAX_BYTES_PER_TOKEN`].
    pub fn counted(&self, prompt_bytes: usize, tokens: u64) -> Window {
        let spared = (tokens.max(1) as f64) * 1.05;
        Window {
            bytes_per_token: (prompt_bytes as f64 / spared)
                .clamp(MIN_BYTES_PER_TOKEN, MAX_BYTES_PER_TOKEN),
            measured: true,
            ..*self
        }
    }

    /// As the trace shows it.
    pub fn traced(&self) -> ContextWindow {
        ContextWindow {
            tokens: self.tokens,
            from: self.source.name().to_owned(),
        }
    }

    /// The window assumed for a server of `kind` (see [`kind_default`]) when nothing says it.
    pub fn default_for(provider: &str, kind: Option<Profile>) -> Self {
        Self::new(kind_default(provider, kind), WindowSource::Default)
    }

    /// The tokens a prompt of `bytes` is estimated to take, template included.
    pub fn prompt_tokens(&self, bytes: usize) -> u32 {
        let tokens = (bytes as f64 / self.bytes_per_token).ceil();
        (tokens.min(f64::from(u32::MAX - Self::REQUEST_OVERHEAD)) as u32) + Self::REQUEST_OVERHEAD
    }

    /// The bytes of prompt that take about `tokens` tokens, template included.
    pub fn bytes_for(&self, tokens: u32) -> usize {
        (f64::from(tokens.saturating_sub(Self::REQUEST_OVERHEAD)) * self.bytes_per_token) as usize
    }

    /// The answer tokens a request whose prompt has `prompt_bytes` may ask for: `max_output`,
    /// or what the window leaves after the prompt when that is less (0 when nothing is left).
    pub fn output_tokens(&self, prompt_bytes: usize, max_output: u32) -> u32 {
        max_output.min(self.tokens.saturating_sub(self.prompt_tokens(prompt_bytes)))
    }

    /// The answer a text must leave room for to be read in one request: a quarter of the
    /// window, at least [`Window::MIN_OUTPUT_TOKENS`]·4, at most `max_output`.
    pub fn answer_room(&self, max_output: u32) -> u32 {
        (self.tokens / 4)
            .max(Self::MIN_OUTPUT_TOKENS * 4)
            .min(max_output)
    }

    /// The answer a text must leave room for to be read whole, in one request: a thirty-second
    /// of the window (256 tokens of 8,192), at least [`Window::MIN_OUTPUT_TOKENS`]·4, at most
    /// `max_output`. Far less than a part leaves ([`Window::answer_room`]): one object rarely
    /// needs more (and the prompt's estimate errs high, so more is usually left), and an answer
    /// the window cuts off is read in parts after all (`content::one`).
    pub fn whole_text_room(&self, max_output: u32) -> u32 {
        (self.tokens / 32)
            .max(Self::MIN_OUTPUT_TOKENS * 4)
            .min(max_output)
    }

    /// Whether a request whose prompt has `prompt_bytes` leaves an answer `room` tokens.
    pub fn fits(&self, prompt_bytes: usize, room: u32) -> bool {
        self.prompt_tokens(prompt_bytes).saturating_add(room) <= self.tokens
    }
}

/// The published context windows of hosted models, by provider and the start of the model's
/// name (the longest match wins), from the providers' model pages (December 2026).
pub const HOSTED: &[(&str, &str, u32)] = &[
    ("openai", "gpt-4.1", 1_047_576),
    ("openai", "gpt-4o", 128_000),
    ("openai", "gpt-4-turbo", 128_000),
    ("openai", "gpt-5", 400_000),
    ("openai", "o1", 200_000),
    ("openai", "o3", 200_000),
    ("openai", "o4-mini", 200_000),
    ("anthropic", "claude-", 200_000),
    ("google", "gemini-", 1_048_576),
    ("gemini", "gemini-", 1_048_576),
];

/// The published window of `provider/name`, if it is a hosted model of [`HOSTED`].
pub fn hosted(provider: &str, name: &str) -> Option<u32> {
    HOSTED
        .iter()
        .filter(|(host, prefix, _)| *host == provider && name.starts_with(prefix))
        .max_by_key(|(_, prefix, _)| prefix.len())
        .map(|(_, _, tokens)| *tokens)
}

/// The window to assume for a server of `kind` that does not say its own: the smallest its
/// software runs with by default (llama-cpp-python 2,048; Ollama 2,048 before 0.6, and it cuts a
/// longer prompt silently), else [`DEFAULT_CONTEXT_TOKENS`]. Hosted providers that are not in
/// [`HOSTED`] get their families' smallest current window.
pub fn kind_default(provider: &str, kind: Option<Profile>) -> u32 {
    match (provider, kind) {
        (_, Some(Profile::LlamaCpp | Profile::Ollama)) => 2_048,
        (_, Some(Profile::OpenAi)) => 128_000,
        ("anthropic", _) => 200_000,
        ("google" | "gemini", _) => 1_048_576,
        _ => DEFAULT_CONTEXT_TOKENS,
    }
}

/// What a server's refusal of a request over its window says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Exceeded {
    /// The window, when the message states it.
    pub window: Option<u32>,
    /// The tokens the request's prompt took, when the message states them.
    pub prompt_tokens: Option<u32>,
}

impl Exceeded {
    /// Reads a refusal for length from an error `message` (with the error body's fields, as
    /// [`crate::provider::wire`] quotes them) and `code`, in the wordings of OpenAI, vLLM,
    /// llama-cpp-python (OpenAI's), llama.cpp (`exceed_context_size_error`) and Ollama:
    ///
    /// - `This model's maximum context length is 2048 tokens. However, you requested 7079
    ///   tokens (2983 in the messages, 4096 in the completion).`
    /// - `… maximum context length is 16384 tokens. However, you requested 8192 output tokens
    ///   and your prompt contains at least 8193 input tokens …`
    /// - `You passed 9000 input tokens … the model's context length is only 8192 tokens …`
    /// - `request (13392 tokens) exceeds the available context size (8192 tokens), try
    ///   increasing it`
    pub fn read(message: &str, code: Option<&str>) -> Option<Self> {
        let lower = message.to_ascii_lowercase();
        let about_context = [
            "maximum context length",
            "context length is only",
            "available context size",
            "max context size",
            "exceed context window",
            "exceeds the context window",
            "longer than the context length",
        ]
        .iter()
        .any(|phrase| lower.contains(phrase))
            || matches!(
                code,
                Some("context_length_exceeded" | "exceed_context_size_error")
            );
        if !about_context {
            return None;
        }
        let window = [
            "maximum context length is ",
            "context length is only ",
            "available context size (",
            "max context size (",
            "exceed context window of ",
            "n_ctx: ",
            "\"n_ctx\":",
        ]
        .iter()
        .find_map(|marker| number_after(&lower, marker));
        let prompt_tokens = [
            "prompt contains at least ",
            "prompt contains ",
            "your request has ",
            "you passed ",
            "your messages resulted in ",
            "request (",
            "input (",
            "requested tokens (",
            "n_prompt_tokens: ",
            "\"n_prompt_tokens\":",
        ]
        .iter()
        .find_map(|marker| number_after(&lower, marker))
        .or_else(|| number_before(&lower, " in the messages"))
        .or_else(|| number_before(&lower, " tokens in the messages"))
        .or_else(|| number_before(&lower, " in your prompt"));
        Some(Self {
            window,
            prompt_tokens,
        })
    }

    /// What this refusal of a request whose prompt was estimated at `estimated` tokens
    /// teaches about `known`: a smaller window, or fewer bytes to a token than assumed; `None`
    /// when it teaches nothing (the refusal is then an error like any other).
    pub fn teaches(&self, known: Window, estimated: Option<u32>) -> Option<Window> {
        let mut learned = Window {
            source: WindowSource::Learned,
            ..known
        };
        if let Some(window) = self.window.filter(|&window| window < known.tokens) {
            learned.tokens = window;
        }
        if let (Some(actual), Some(estimated)) = (self.prompt_tokens, estimated)
            && actual > estimated
        {
            // The prompt took more tokens than estimated: fewer bytes to a token, with a tenth
            // to spare.
            learned.bytes_per_token =
                known.bytes_per_token * f64::from(estimated) / f64::from(actual) * 0.9;
            learned.measured = true;
        }
        let smaller = learned.tokens < known.tokens;
        let denser = learned.bytes_per_token < known.bytes_per_token;
        (smaller || denser).then_some(learned)
    }
}

/// The number written right after `marker` in `text`.
fn number_after(text: &str, marker: &str) -> Option<u32> {
    let rest = &text[text.find(marker)? + marker.len()..];
    let digits: String = rest
        .trim_start()
        .chars()
        .take_while(|c| c.is_ascii_digit() || *c == ',')
        .filter(char::is_ascii_digit)
        .collect();
    digits.parse().ok()
}

/// The number written right before `marker` in `text`.
fn number_before(text: &str, marker: &str) -> Option<u32> {
    let before = text[..text.find(marker)?].trim_end();
    let start = before
        .rfind(|c: char| !c.is_ascii_digit())
        .map_or(0, |at| at + 1);
    before[start..].parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn openais_wording_gives_the_window_and_the_prompt() {
        let message = "This model's maximum context length is 2048 tokens. However, you requested \
                       7079 tokens (2983 in the messages, 4096 in the completion). Please reduce \
                       the length of the messages or completion.";
        let read = Exceeded::read(message, None).unwrap();
        assert_eq!(read.window, Some(2048));
        assert_eq!(read.prompt_tokens, Some(2983));
        let known = Window::new(8192, WindowSource::Default);
        let learned = read.teaches(known, Some(2_032)).unwrap();
        assert_eq!(learned.tokens, 2048);
        assert_eq!(learned.source, WindowSource::Learned);
        // The prompt took 2,983 tokens, not the 2,032 estimated.
        assert!(learned.bytes_per_token < 2.0, "{learned:?}");
    }

    #[test]
    fn llama_cpps_wording_and_fields_are_read() {
        let current = "request (13392 tokens) exceeds the available context size (8192 tokens), \
                       try increasing it";
        let read = Exceeded::read(current, Some("exceed_context_size_error")).unwrap();
        assert_eq!((read.window, read.prompt_tokens), (Some(8192), Some(13392)));
        // The older wording names neither: the body's fields, as the error message quotes them.
        let older = "the request exceeds the available context size, try increasing it \
                     (n_prompt_tokens: 5860, n_ctx: 4096)";
        let read = Exceeded::read(older, Some("exceed_context_size_error")).unwrap();
        assert_eq!((read.window, read.prompt_tokens), (Some(4096), Some(5860)));
    }

    #[test]
    fn vllms_wordings_are_read() {
        for (message, window, prompt) in [
            (
                "This model's maximum context length is 16384 tokens. However, you requested 8192 \
                 output tokens and your prompt contains at least 8193 input tokens, for a total of \
                 at least 16385 tokens. (parameter=input_tokens, value=8193)",
                16384,
                8193,
            ),
            (
                "You passed 9000 input tokens and requested 512 output tokens. However, the \
                 model's context length is only 8192 tokens, resulting in a maximum input length \
                 of 7680 tokens. Please reduce the length of the input prompt.",
                8192,
                9000,
            ),
            (
                "'max_tokens' or 'max_completion_tokens' is too large: 4096. This model's maximum \
                 context length is 2048 tokens and your request has 1200 input tokens (4096 > 2048 \
                 - 1200).",
                2048,
                1200,
            ),
            (
                "This model's maximum context length is 32768 tokens. However, you requested 39197 \
                 tokens in the messages, Please reduce the length of the messages. None",
                32768,
                39197,
            ),
        ] {
            let read = Exceeded::read(message, None).unwrap();
            assert_eq!(
                (read.window, read.prompt_tokens),
                (Some(window), Some(prompt)),
                "{message}"
            );
        }
    }

    #[test]
    fn other_refusals_teach_nothing() {
        assert_eq!(Exceeded::read("Invalid API key", None), None);
        let read = Exceeded::read("maximum context length is 8192 tokens", None).unwrap();
        // The same window as known: nothing new.
        assert_eq!(
            read.teaches(Window::new(8192, WindowSource::Server), Some(100)),
            None
        );
    }

    #[test]
    fn the_servers_counts_teach_the_bytes_a_token_holds() {
        let assumed = Window::new(2048, WindowSource::Default);
        // 4,500 bytes took 1,032 tokens: about 4.5 bytes a token, taken as 3.6 to spare.
        let measured = assumed.observed(4_500, 1_032).unwrap();
        assert!(measured.measured && (measured.bytes_per_token - 3.6).abs() < 0.01);
        assert!(measured.prompt_tokens(4_500) < assumed.prompt_tokens(4_500));
        // A later, denser measure lowers it; a sparser one does not raise it again.
        let denser = measured.observed(3_000, 1_032).unwrap();
        assert!(denser.bytes_per_token < 2.5);
        assert_eq!(denser.observed(9_000, 1_032), None);
        // A short prompt tells nothing; nor does a count of nothing.
        assert_eq!(assumed.observed(300, 90), None);
        assert_eq!(assumed.observed(300, 0), None);
        // However sparse the counts, a token is taken to hold at most five bytes.
        let sparse = assumed.observed(100_000, 1_032).unwrap();
        assert_eq!(sparse.bytes_per_token, MAX_BYTES_PER_TOKEN);
    }

    #[test]
    fn hosted_models_match_by_the_longest_prefix() {
        assert_eq!(hosted("openai", "gpt-4.1-mini"), Some(1_047_576));
        assert_eq!(hosted("openai", "gpt-4o-mini-2024-07-18"), Some(128_000));
        assert_eq!(hosted("anthropic", "claude-sonnet-4-5"), Some(200_000));
        assert_eq!(hosted("openai", "smollm2-135m-instruct"), None);
        assert_eq!(hosted("llamacpp", "gpt-4.1"), None);
    }

    #[test]
    fn the_answer_is_clamped_to_what_the_prompt_leaves() {
        let window = Window::new(2048, WindowSource::Learned);
        assert_eq!(
            window.output_tokens(0, 4096),
            2048 - Window::REQUEST_OVERHEAD
        );
        assert_eq!(window.output_tokens(30_000, 4096), 0);
        assert!(window.fits(3_000, 512));
        assert!(!window.fits(4_800, 512));
        assert_eq!(window.answer_room(4096), 512);
        assert_eq!(window.answer_room(200), 200);
        assert_eq!(window.whole_text_room(4096), 256);
        assert_eq!(
            Window::new(8192, WindowSource::Setting).whole_text_room(4096),
            256
        );
        assert_eq!(
            Window::new(1_000_000, WindowSource::Table).answer_room(4096),
            4096
        );
    }
}
