//! One conversation of the content loop: the model's answer judged, its violations fed back,
//! until an answer is accepted, the model repeats itself or `maxLoops` is spent. It sends
//! nothing itself: the caller sends [`Dialogue::request`] — alone, or together with other
//! dialogues' requests in records mode — and hands back what came.

use crate::answer::format::AnswerFormat;
use crate::error::{ErrorKind, StructureError};
use crate::outcome::{Reason, Trace, Usage};
use crate::ports::HttpRequest;
use crate::provider::{
    ANSWER_TOOL, Completion, Conversation, Delivered, Delivery, Provider, Token, Turn,
};
use crate::schema::violation::Violation;

use super::reason;

/// Plain-text answers tolerated in tool mode before giving up (spec 001).
pub const MAX_TOOL_REMINDERS: u32 = 2;

/// Reads one answer: what it stands for, or the violations to feed back.
pub(super) trait Judge {
    type Accepted;
    fn judge(
        &self,
        text: &str,
        format: &AnswerFormat,
        repairs: &mut Vec<String>,
    ) -> Result<Self::Accepted, Vec<Violation>>;

    /// What to accept of an answer that stayed invalid (`violations` are what it breaks) when
    /// the conversation is over: the answer without the values that broke the schema, when it
    /// can do without them, and a line for each left out (pointer and why); `None` when it
    /// cannot (the conversation is stale).
    fn without_invalid(
        &self,
        _text: &str,
        _format: &AnswerFormat,
        _violations: &[Violation],
    ) -> Option<(Self::Accepted, Vec<String>)> {
        None
    }
}

/// What a dialogue came to.
pub(super) enum Settled<T> {
    Accepted(T),
    /// No valid answer within `maxLoops`: the last answer's violations.
    Stale(Vec<Violation>),
}

pub(super) struct Dialogue<'a> {
    provider: &'a dyn Provider,
    pub format: AnswerFormat,
    conversation: Conversation,
    max_loops: u8,
    /// The repairs, feedback and reasons of this conversation.
    pub trace: Trace,
    /// Answers judged so far.
    pub iterations: u32,
    reminders: u32,
    last_answer: Option<String>,
    /// The accepted answer's text and its tokens, where the provider gave log-probabilities.
    pub answered: Option<(String, Vec<Token>)>,
}

impl<'a> Dialogue<'a> {
    pub fn new(
        provider: &'a dyn Provider,
        format: AnswerFormat,
        conversation: Conversation,
        max_loops: u8,
    ) -> Self {
        Self {
            provider,
            format,
            conversation,
            max_loops,
            trace: Trace::default(),
            iterations: 0,
            reminders: 0,
            last_answer: None,
            answered: None,
        }
    }

    /// The request for the next answer.
    pub fn request(&self) -> HttpRequest {
        self.provider.request(&self.conversation, &self.format)
    }

    /// Takes the answer to the last request: `Some` once the dialogue is settled, `None` when
    /// it asks again. `usage` (what the call has spent) goes with an error.
    pub fn take<J: Judge>(
        &mut self,
        completion: Completion,
        judge: &J,
        usage: Usage,
    ) -> Result<Option<Settled<J::Accepted>>, StructureError> {
        let Completion {
            delivered, tokens, ..
        } = completion;
        if self.provider.delivery() == Delivery::Tool && matches!(delivered, Delivered::Text(_)) {
            self.reminders += 1;
            self.remind(delivered, usage)?;
            return Ok(None);
        }
        self.iterations += 1;
        let violations = match judge.judge(delivered.text(), &self.format, &mut self.trace.repairs)
        {
            Ok(accepted) => {
                if !tokens.is_empty() {
                    self.answered = Some((delivered.text().to_owned(), tokens));
                }
                return Ok(Some(Settled::Accepted(accepted)));
            }
            Err(violations) => violations,
        };
        // At temperature 0 a model that repeats an invalid answer after the reason message
        // repeats it again: another call would only cost.
        let answer = delivered.text().trim().to_owned();
        let repeated = self.last_answer.as_ref() == Some(&answer);
        self.last_answer = Some(answer);
        if repeated || self.iterations >= u32::from(self.max_loops) {
            if let Some((kept, left_out)) =
                judge.without_invalid(delivered.text(), &self.format, &violations)
            {
                self.trace.left_out.extend(left_out);
                return Ok(Some(Settled::Accepted(kept)));
            }
            return Ok(Some(Settled::Stale(violations)));
        }
        let iteration = self.iterations;
        self.trace
            .reasons
            .extend(violations.iter().map(|violation| Reason {
                iteration,
                pointer: violation.pointer.clone(),
                category: violation.category,
            }));
        let reason = reason::reason_message(&violations, self.format.need);
        self.feed_back(delivered, reason);
        Ok(None)
    }

    /// A plain-text answer in tool mode: remind the model to call the tool, up to
    /// [`MAX_TOOL_REMINDERS`] times.
    fn remind(&mut self, delivered: Delivered, usage: Usage) -> Result<(), StructureError> {
        if self.reminders > MAX_TOOL_REMINDERS {
            return Err(StructureError::new(
                ErrorKind::StructuredOutputFailed,
                format!(
                    "the model answered in plain text instead of calling {ANSWER_TOOL}, \
                     {MAX_TOOL_REMINDERS} reminders notwithstanding"
                ),
            )
            .with_usage(usage));
        }
        self.feed_back(delivered, reason::tool_reminder());
        Ok(())
    }

    /// Keeps the model's answer in the conversation, followed by `feedback`.
    fn feed_back(&mut self, delivered: Delivered, feedback: String) {
        self.trace.feedback.push(feedback.clone());
        self.conversation.turns.push(Turn::Model(delivered));
        self.conversation.turns.push(Turn::Feedback(feedback));
    }
}
