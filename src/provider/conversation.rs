//! What a provider is sent and gives back, whatever its wire format: the conversation so far
//! (system prompt and turns), the model's answer, what it cost, and its tokens.

use crate::media_type::Attachment;
use crate::outcome::Usage;

/// What the model answered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Delivered {
    /// Plain text (native and prompt modes, or a model ignoring the tool).
    Text(String),
    /// A call of the answer tool: the provider's call id and the arguments as JSON text.
    ToolCall { id: String, arguments: String },
}

impl Delivered {
    /// The JSON text the answer is read from.
    pub fn text(&self) -> &str {
        match self {
            Delivered::Text(text) => text,
            Delivered::ToolCall { arguments, .. } => arguments,
        }
    }
}

/// One turn of the short-lived conversation of a `structure` call (spec §4.1).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Turn {
    /// The input text.
    User(String),
    /// A previous answer, kept so the model sees what it wrote.
    Model(Delivered),
    /// Why the previous answer was rejected (or a reminder to call the tool). After a tool
    /// call it is sent as that call's result, otherwise as a user message.
    Feedback(String),
}

/// The system prompt in two parts: what stays the same across calls with the same schema (the
/// rules, the schema, the manual: worth a provider's prompt cache), and what changes (the time).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SystemPrompt {
    pub stable: String,
    pub volatile: String,
    /// Whether the stable part is worth caching (it holds a manual).
    pub cacheable: bool,
}

impl SystemPrompt {
    /// Both parts as one text.
    pub fn text(&self) -> String {
        if self.volatile.is_empty() {
            return self.stable.clone();
        }
        format!("{}\n{}", self.stable, self.volatile)
    }
}

/// The system prompt and the turns so far.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Conversation {
    pub system: SystemPrompt,
    pub turns: Vec<Turn>,
    /// A document the model is given as it is (an image, a scanned PDF), with the first user
    /// turn.
    pub attachment: Option<Attachment>,
}

impl Conversation {
    /// The document the turn at `index` carries: the attachment, with the first turn.
    pub fn attached_to(&self, index: usize) -> Option<&Attachment> {
        self.attachment.as_ref().filter(|_| index == 0)
    }

    /// The tool call a feedback turn at `index` answers, if the turn before it was one.
    pub fn answered_call(&self, index: usize) -> Option<&str> {
        match index
            .checked_sub(1)
            .and_then(|previous| self.turns.get(previous))
        {
            Some(Turn::Model(Delivered::ToolCall { id, .. })) => Some(id),
            _ => None,
        }
    }
}

/// A model's answer and what it cost.
#[derive(Debug, Clone, PartialEq)]
pub struct Completion {
    pub delivered: Delivered,
    pub usage: Usage,
    /// The tokens the answer's text was written with and their log-probabilities, where the
    /// provider gave them (empty otherwise).
    pub tokens: Vec<Token>,
}

/// One token of an answer and the natural log of the probability the model gave it.
#[derive(Debug, Clone, PartialEq)]
pub struct Token {
    pub text: String,
    /// The token's bytes, where the provider gives them: a token that ends inside a
    /// character has no text of its own.
    pub bytes: Option<Vec<u8>>,
    pub logprob: f64,
}
