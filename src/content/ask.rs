//! One LLM call of a stage: the request for the conversation so far, sent with retries, read
//! into a completion — and never started when it could take the request over its token budget.

use std::borrow::Cow;
use std::time::Duration;

use crate::answer::format::AnswerFormat;
use crate::content::dialogue::{Dialogue, Judge, Settled};
use crate::error::{ErrorKind, StructureError};
use crate::keys;
use crate::outcome::Usage;
use crate::ports::{HttpRequest, HttpResponse, Ports, TransportError};
use crate::provider::retry::{self, RetryPolicy, Verdict};
use crate::provider::window::Exceeded;
use crate::provider::wire::CONTEXT_LENGTH_EXCEEDED;
use crate::provider::{Completion, Conversation, Provider};
use crate::settings::Settings;

/// Bytes of a request per token, for estimating a prompt before it is sent (JSON-heavy text
/// runs at three to four; the lower figure errs on the side of stopping).
pub const BYTES_PER_TOKEN: u64 = 3;

/// The tokens one request may spend in all: the schema builder's calls and the content stage's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Budget {
    /// `structure_token_budget`, held to the operator's `structure_max_token_budget`.
    pub limit: u64,
    /// The setting that binds: the call's own budget, or the operator's ceiling over it.
    pub set_by: &'static str,
    /// Tokens spent before this stage (the schema builder's).
    pub spent_before: u64,
    /// The most one answer may take (`structure_max_output_tokens`).
    pub max_output_tokens: u32,
}

impl Budget {
    /// The budget `settings` give a stage after `spent_before` tokens, if they give one.
    pub fn of(settings: &Settings, spent_before: u64) -> Option<Self> {
        let limit = settings.token_budget?;
        let ceiling = settings.limits.max_token_budget == Some(limit);
        Some(Self {
            limit,
            set_by: if ceiling {
                keys::MAX_TOKEN_BUDGET
            } else {
                keys::TOKEN_BUDGET
            },
            spent_before,
            max_output_tokens: settings.max_output_tokens,
        })
    }

    /// Refuses `requests` when their prompt estimates plus the longest answers would take the
    /// request past the budget, given what `usage` says this stage has spent.
    pub fn check(&self, usage: Usage, requests: &[&HttpRequest]) -> Result<(), StructureError> {
        let spent = self.spent_before + usage.prompt_tokens + usage.completion_tokens;
        let (prompt, answers) = requests.iter().fold((0, 0), |(prompt, answers), request| {
            let (more_prompt, more_answer) = match request.tokens {
                // The provider's estimate, the answer clamped to the model's window.
                Some(tokens) => (u64::from(tokens.prompt), u64::from(tokens.output)),
                None => (
                    (request.body.len() as u64).div_ceil(BYTES_PER_TOKEN),
                    u64::from(self.max_output_tokens),
                ),
            };
            (prompt + more_prompt, answers + more_answer)
        });
        let next = prompt + answers;
        if spent + next <= self.limit {
            return Ok(());
        }
        let calls = match requests.len() {
            1 => "the call".to_owned(),
            n => format!("the next {n} calls"),
        };
        Err(StructureError::new(
            ErrorKind::BudgetExhausted,
            format!(
                "stopped before the next LLM call: {spent} of the {}-token budget are spent and \
                 {calls} may take up to {next} more (a prompt of about {prompt} and up to \
                 {answers} for the answer); {}",
                self.limit,
                self.way_out()
            ),
        )
        .with_usage(usage))
    }
}

impl Budget {
    /// What the caller can do about a budget spent: raise the setting that binds (the
    /// operator's ceiling is not the caller's to raise), or ask for shorter answers.
    fn way_out(&self) -> String {
        if self.set_by == keys::MAX_TOKEN_BUDGET {
            format!(
                "this deployment holds every call to {} tokens ({}): ask its operator to raise \
                 it, or lower {}",
                self.limit,
                keys::MAX_TOKEN_BUDGET,
                keys::MAX_OUTPUT_TOKENS
            )
        } else {
            format!(
                "raise {} or lower {}",
                keys::TOKEN_BUDGET,
                keys::MAX_OUTPUT_TOKENS
            )
        }
    }
}

/// What the answer to a started request comes to ([`Caller::answered`]).
#[derive(Debug)]
pub enum Answered {
    Completed(Completion),
    /// Worth another attempt once this wait is over.
    RetryAfter(Duration),
}

/// What a stage's calls share: the provider, the ports, the retry policy and the budget.
#[derive(Clone, Copy)]
pub struct Caller<'a> {
    pub provider: &'a dyn Provider,
    pub ports: &'a Ports<'a>,
    pub retry: RetryPolicy,
    pub budget: Option<Budget>,
}

impl Caller<'_> {
    /// Runs `dialogue` to its end, one request at a time (`first`, when given, is its next
    /// request, already made), adding what it cost to `usage` and its retries to `retries`.
    pub(super) fn converse<J: Judge>(
        &self,
        dialogue: &mut Dialogue<'_>,
        judge: &J,
        first: Option<HttpRequest>,
        usage: &mut Usage,
        retries: &mut u32,
    ) -> Result<Settled<J::Accepted>, StructureError> {
        let mut next = first;
        loop {
            let request = next.take().unwrap_or_else(|| dialogue.request());
            let completion = self.send(&request, usage, retries)?;
            if let Some(settled) = dialogue.take(completion, judge, *usage)? {
                return Ok(settled);
            }
        }
    }

    /// Asks for the next answer in `conversation` (retrying what may pass), adding what it
    /// cost to `usage` (an error carries the total spent).
    pub fn ask(
        &self,
        conversation: &Conversation,
        format: &AnswerFormat,
        usage: &mut Usage,
        retries: &mut u32,
    ) -> Result<Completion, StructureError> {
        self.send(&self.provider.request(conversation, format), usage, retries)
    }

    /// Sends `request` (waiting out and sending the retries that may pass, one at a time),
    /// adding what it cost to `usage`.
    pub fn send(
        &self,
        request: &HttpRequest,
        usage: &mut Usage,
        retries: &mut u32,
    ) -> Result<Completion, StructureError> {
        let sent = self.start(request, &[], usage)?;
        let answer = self.ports.transport.send(&sent);
        let response = retry::settle(
            request,
            answer,
            self.provider,
            self.ports,
            self.retry,
            usage,
            retries,
        )?;
        self.complete(request, &response, usage)
    }

    /// `request` as it may be started now, counted in `usage`, while `in_flight` are under way:
    /// refused when they and it could take the request past its budget, or when the call is
    /// out of time. Its answer goes to [`Caller::answered`].
    pub fn start<'r>(
        &self,
        request: &'r HttpRequest,
        in_flight: &[&HttpRequest],
        usage: &mut Usage,
    ) -> Result<Cow<'r, HttpRequest>, StructureError> {
        if let Some(tokens) = request.tokens
            && !tokens.fits
        {
            return Err(self.overflow(tokens.prompt).with_usage(*usage));
        }
        if let Some(budget) = self.budget {
            let mut all = in_flight.to_vec();
            all.push(request);
            budget.check(*usage, &all)?;
        }
        self.restart(request, usage)
    }

    /// `request` as it may be started again now (a retry, which the budget check before its
    /// first attempt covered), counted in `usage`; refused when the call is out of time.
    pub fn restart<'r>(
        &self,
        request: &'r HttpRequest,
        usage: &mut Usage,
    ) -> Result<Cow<'r, HttpRequest>, StructureError> {
        let clamped = retry::clamp(request, self.retry, self.ports, *usage)?;
        usage.llm_calls += 1;
        Ok(clamped)
    }

    /// What `answer`, to attempt `attempt` (0: the first) at a started `request`, comes to:
    /// its completion, its cost added to `usage`, or a retry to start once its wait is over
    /// ([`Caller::restart`]). The caller keeps other requests going meanwhile.
    pub fn answered(
        &self,
        request: &HttpRequest,
        answer: Result<HttpResponse, TransportError>,
        attempt: u32,
        usage: &mut Usage,
    ) -> Result<Answered, StructureError> {
        let now = self.ports.clock.now_unix_millis();
        let verdict = retry::verdict(
            request,
            answer,
            self.provider,
            self.retry,
            attempt,
            now,
            *usage,
        )?;
        match verdict {
            Verdict::Answered(response) => self
                .complete(request, &response, usage)
                .map(Answered::Completed),
            Verdict::RetryAfter(wait) => Ok(Answered::RetryAfter(wait)),
        }
    }

    /// The completion `response` (to `request`) holds, its cost added to `usage` (an error
    /// carries the total). A refusal for length teaches the provider's window.
    fn complete(
        &self,
        request: &HttpRequest,
        response: &HttpResponse,
        usage: &mut Usage,
    ) -> Result<Completion, StructureError> {
        let completion = self.provider.completion(response).map_err(|error| {
            self.learn(request, &error);
            let mut total = *usage;
            total.add(error.usage);
            error.with_usage(total)
        })?;
        usage.add(completion.usage);
        if let Some(tokens) = request.tokens {
            (self.provider.endpoint()).observe(tokens.prompt_bytes, completion.usage.prompt_tokens);
        }
        Ok(completion)
    }

    /// What `error`, the answer to `request`, teaches of the model's window, taken by the
    /// endpoint: the requests built from now on fit what the server said.
    fn learn(&self, request: &HttpRequest, error: &StructureError) {
        let ErrorKind::Provider {
            code: Some(code), ..
        } = &error.kind
        else {
            return;
        };
        if code != CONTEXT_LENGTH_EXCEEDED {
            return;
        }
        let endpoint = self.provider.endpoint();
        let estimated = request.tokens.map(|tokens| tokens.prompt);
        if let Some(learned) = Exceeded::read(&error.message, Some(code))
            .and_then(|exceeded| exceeded.teaches(endpoint.window(), estimated))
        {
            endpoint.learn(learned);
        }
    }

    /// The error of a request whose prompt of about `prompt` tokens leaves its answer no room
    /// in the model's window: it is never sent.
    fn overflow(&self, prompt: u32) -> StructureError {
        let window = self.provider.endpoint().window();
        StructureError::configuration(
            keys::CONTEXT_TOKENS,
            format!(
                "the next request would not fit the model's context window: its prompt takes \
                 about {prompt} of the {} tokens, leaving no room for an answer; use a model with \
                 a larger window or a smaller schema, or set {} if the window is larger",
                window.tokens,
                keys::CONTEXT_TOKENS
            ),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(bytes: usize) -> HttpRequest {
        HttpRequest {
            method: "POST",
            url: "http://model/v1".to_owned(),
            headers: Vec::new(),
            body: vec![b'x'; bytes],
            timeout: std::time::Duration::from_secs(1),
            max_response_bytes: 1,
            tokens: None,
        }
    }

    #[test]
    fn a_call_that_could_pass_the_budget_is_never_started() {
        let budget = Budget {
            limit: 1_000,
            set_by: keys::TOKEN_BUDGET,
            spent_before: 0,
            max_output_tokens: 500,
        };
        // 300 bytes ≈ 100 tokens of prompt, + 500 for the answer: 600 of 1000.
        assert!(budget.check(Usage::default(), &[&request(300)]).is_ok());
        let spent = Usage {
            prompt_tokens: 300,
            completion_tokens: 150,
            ..Usage::default()
        };
        let error = budget.check(spent, &[&request(300)]).unwrap_err();
        assert_eq!(error.kind, ErrorKind::BudgetExhausted);
        assert!(
            error.message.contains("450 of the 1000-token budget"),
            "{}",
            error.message
        );
        assert!(error.message.contains("raise structure_token_budget"));
        // The first call too, when the answer alone could pass it.
        let tight = Budget {
            max_output_tokens: 4096,
            ..budget
        };
        assert!(tight.check(Usage::default(), &[&request(30)]).is_err());
        // The operator's ceiling binds: the caller is not told to raise its own budget.
        let ceiling = Budget {
            set_by: keys::MAX_TOKEN_BUDGET,
            ..budget
        };
        let error = ceiling.check(spent, &[&request(300)]).unwrap_err();
        assert!(
            error.message.contains("ask its operator")
                && error.message.contains("structure_max_token_budget")
                && !error.message.contains("raise structure_token_budget"),
            "{}",
            error.message
        );
    }

    #[test]
    fn the_schema_builders_tokens_count() {
        let budget = Budget {
            limit: 1_000,
            set_by: keys::TOKEN_BUDGET,
            spent_before: 450,
            max_output_tokens: 500,
        };
        let error = budget
            .check(Usage::default(), &[&request(300)])
            .unwrap_err();
        assert!(
            error.message.contains("450 of the 1000-token budget"),
            "{}",
            error.message
        );
    }
}
