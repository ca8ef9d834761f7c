//! What every provider is to the content stage: the [`Provider`] trait, its requests in its wire
//! format and its responses read back into completions or typed errors.

use std::time::Duration;

use serde_json::Value;

use crate::answer::format::{AnswerFormat, Shape};
use crate::error::StructureError;
use crate::outcome::Usage;
use crate::ports::{HttpRequest, HttpResponse};
use crate::provider::conversation::{Completion, Conversation, Delivered, Token};
use crate::provider::delivery::Delivery;
use crate::provider::endpoint::Endpoint;
use crate::schema::subset::Subset;

/// One provider (or provider profile), ready to be called.
pub trait Provider {
    /// The server the requests go to, and how this call uses it.
    fn endpoint(&self) -> &Endpoint;
    /// `provider/model`, as the trace shows it.
    fn model(&self) -> &str {
        &self.endpoint().model
    }
    /// The profile the requests are shaped for.
    fn profile_name(&self) -> &'static str {
        self.endpoint().profile
    }
    /// The delivery mode chosen for this call.
    fn delivery(&self) -> Delivery {
        self.endpoint().delivery
    }
    /// The schema subset this provider accepts in its delivery mode.
    fn subset(&self) -> &'static Subset {
        self.endpoint().subset
    }
    /// The answer format for `target` (the envelope with the need path), in this provider's subset.
    fn answer_format(&self, target: &Value, shape: Shape) -> AnswerFormat {
        AnswerFormat::build(target, self.subset(), shape)
    }
    /// Whether the system prompt must carry the schema (the provider may not show it to the
    /// model or enforce it): in prompt mode.
    fn schema_in_prompt(&self) -> bool {
        self.delivery() == Delivery::Prompt
    }
    /// The HTTP request asking for the next answer.
    fn request(&self, conversation: &Conversation, format: &AnswerFormat) -> HttpRequest;
    /// What a 2xx response's JSON `body` delivers, or the typed error it stands for.
    fn read(&self, body: &Value) -> Result<Delivered, StructureError>;
    /// What a 2xx response's JSON `body` says the call cost.
    fn usage(&self, body: &Value) -> Usage;
    /// The tokens of the answer's text in a 2xx response's JSON `body`, with their
    /// log-probabilities, when it holds them.
    fn tokens(&self, _body: &Value) -> Vec<Token> {
        Vec::new()
    }
    /// The completion in `response`, or the typed error it stands for (with the tokens it cost).
    fn completion(&self, response: &HttpResponse) -> Result<Completion, StructureError> {
        let body = self.endpoint().json_response(response)?;
        let usage = self.usage(&body);
        self.read(&body)
            .map(|delivered| Completion {
                delivered,
                usage,
                tokens: self.tokens(&body),
            })
            .map_err(|error| error.with_usage(usage))
    }
    /// How long the provider asks to wait before trying `response`'s request again, when its
    /// body says so (headers are read by [`crate::provider::retry`] for every provider).
    fn retry_hint(&self, _response: &HttpResponse) -> Option<Duration> {
        None
    }
}
