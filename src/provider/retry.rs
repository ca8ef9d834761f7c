//! Retries of one LLM request after a rate limit, an overload, a server error or a dropped
//! connection: exponential backoff with jitter, or exactly the wait the provider asks for
//! (`retry-after-ms`, `retry-after` in seconds or as an HTTP date, or a hint in the body).
//! Retries never count as content-stage iterations.

use std::borrow::Cow;
use std::time::Duration;

use crate::error::StructureError;
use crate::outcome::Usage;
use crate::ports::{HttpRequest, HttpResponse, Ports, TransportError};
use crate::provider::contract::Provider;
use crate::provider::wire;
use crate::settings::Settings;

const FIRST_BACKOFF: Duration = Duration::from_millis(500);
const MAX_BACKOFF: Duration = Duration::from_secs(8);

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetryPolicy {
    pub max_retries: u32,
    /// A provider asking for a longer wait is not retried: its error comes back at once.
    pub max_wait: Duration,
    /// When the call started (unix milliseconds).
    pub started_unix_millis: u64,
    /// The call's time limit: no request starts after it is spent, and none may run past it.
    pub call_timeout: Duration,
}

impl RetryPolicy {
    /// The policy of a call that started at `started_unix_millis`, its time limit a hosted
    /// provider's until the provider is known ([`RetryPolicy::for_profile`]).
    pub fn from_settings(settings: &Settings, started_unix_millis: u64) -> Self {
        Self {
            max_retries: settings.max_retries,
            max_wait: settings.max_retry_wait,
            started_unix_millis,
            call_timeout: settings.call_timeout(""),
        }
    }

    /// The policy with the time limit of a call to a provider of `profile` (a local server's
    /// is longer unless `structure_call_timeout_ms` is set).
    pub fn for_profile(self, settings: &Settings, profile: &str) -> Self {
        Self {
            call_timeout: settings.call_timeout(profile),
            ..self
        }
    }

    /// When the whole call must be over (unix milliseconds).
    fn deadline_unix_millis(&self) -> u64 {
        let limit = u64::try_from(self.call_timeout.as_millis()).unwrap_or(u64::MAX);
        self.started_unix_millis.saturating_add(limit)
    }

    /// The time left at `now`, or the error saying the call is out of time.
    fn remaining(&self, now_unix_millis: u64, usage: Usage) -> Result<Duration, StructureError> {
        match self.deadline_unix_millis().checked_sub(now_unix_millis) {
            Some(left) if left > 0 => Ok(Duration::from_millis(left)),
            _ => Err(StructureError::new(
                crate::error::ErrorKind::BudgetExhausted,
                format!(
                    "the call ran out of time: it may take {} ms in all ({})",
                    self.call_timeout.as_millis(),
                    crate::keys::CALL_TIMEOUT_MS
                ),
            )
            .with_usage(usage)),
        }
    }
}

/// `request` as it may be sent now: its timeout cut to the time the call has left (an error
/// once none is left).
pub fn clamp<'r>(
    request: &'r HttpRequest,
    policy: RetryPolicy,
    ports: &Ports<'_>,
    usage: Usage,
) -> Result<Cow<'r, HttpRequest>, StructureError> {
    let left = policy.remaining(ports.clock.now_unix_millis(), usage)?;
    if request.timeout <= left {
        return Ok(Cow::Borrowed(request));
    }
    Ok(Cow::Owned(HttpRequest {
        timeout: left,
        ..request.clone()
    }))
}

/// What the answer to a started request comes to.
#[derive(Debug)]
pub enum Verdict {
    /// The response: a success, or an error status that is not retried (or no longer), for the
    /// provider to turn into its typed error.
    Answered(HttpResponse),
    /// Worth another attempt once this wait is over.
    RetryAfter(Duration),
}

/// What `sent`, the answer to attempt `attempt` at `request` (0: the first), comes to at `now`
/// (unix milliseconds), given what `usage` has spent. No retry is offered past the call's
/// deadline: a wait that would reach it is not taken, and an answer after it is out of time.
pub fn verdict(
    request: &HttpRequest,
    sent: Result<HttpResponse, TransportError>,
    provider: &dyn Provider,
    policy: RetryPolicy,
    attempt: u32,
    now: u64,
    usage: Usage,
) -> Result<Verdict, StructureError> {
    let left = policy.remaining(now, usage)?;
    match sent {
        Ok(response) if !wire::retryable(&response) => Ok(Verdict::Answered(response)),
        Ok(response) => {
            let wait =
                requested_wait(&response, provider, now).unwrap_or_else(|| backoff(attempt, now));
            if attempt >= policy.max_retries || wait > policy.max_wait || wait >= left {
                Ok(Verdict::Answered(response))
            } else {
                Ok(Verdict::RetryAfter(wait))
            }
        }
        Err(error)
            if error.retryable && attempt < policy.max_retries && backoff(attempt, now) < left =>
        {
            Ok(Verdict::RetryAfter(backoff(attempt, now)))
        }
        Err(error) => {
            let after = if attempt > 0 {
                format!(" (after {attempt} retries)")
            } else {
                String::new()
            };
            Err(StructureError::transport(format!(
                "could not reach {}: {}{after}",
                request.url, error.message
            ))
            .with_usage(usage))
        }
    }
}

/// What the first attempt at `request` (already sent and counted in `usage.llm_calls`) comes to,
/// waiting out and sending each retry [`verdict`] offers: every attempt counts in
/// `usage.llm_calls`, retries also in `retries`.
pub fn settle(
    request: &HttpRequest,
    mut sent: Result<HttpResponse, TransportError>,
    provider: &dyn Provider,
    ports: &Ports<'_>,
    policy: RetryPolicy,
    usage: &mut Usage,
    retries: &mut u32,
) -> Result<HttpResponse, StructureError> {
    let mut attempt = 0;
    loop {
        let now = ports.clock.now_unix_millis();
        match verdict(request, sent, provider, policy, attempt, now, *usage)? {
            Verdict::Answered(response) => return Ok(response),
            Verdict::RetryAfter(wait) => ports.clock.sleep(wait),
        }
        attempt += 1;
        *retries += 1;
        let clamped = clamp(request, policy, ports, *usage)?;
        usage.llm_calls += 1;
        sent = ports.transport.send(&clamped);
    }
}

/// `500ms · 2^attempt`, at most 8 s, spread by ±25 % so that many clients do not retry in step.
pub fn backoff(attempt: u32, now_unix_millis: u64) -> Duration {
    let base = FIRST_BACKOFF
        .saturating_mul(1 << attempt.min(16))
        .min(MAX_BACKOFF);
    let jitter = (now_unix_millis % 1000) as f64 / 1000.0;
    base.mul_f64(0.75 + 0.5 * jitter)
}

/// The wait the provider asked for, from the standard headers or the provider's body.
fn requested_wait(
    response: &HttpResponse,
    provider: &dyn Provider,
    now_unix_millis: u64,
) -> Option<Duration> {
    if let Some(millis) = response
        .header("retry-after-ms")
        .and_then(|value| value.trim().parse::<f64>().ok())
    {
        return duration_from_secs(millis / 1000.0);
    }
    if let Some(value) = response.header("retry-after") {
        let value = value.trim();
        if let Ok(seconds) = value.parse::<f64>() {
            return duration_from_secs(seconds);
        }
        if let Some(at) = crate::time::parse_http_date(value) {
            return Some(Duration::from_millis(
                (at * 1000).saturating_sub(now_unix_millis),
            ));
        }
    }
    provider.retry_hint(response)
}

/// Seconds as a duration, if they are a real, non-negative number.
pub fn duration_from_secs(seconds: f64) -> Option<Duration> {
    (seconds.is_finite() && seconds >= 0.0).then(|| Duration::from_secs_f64(seconds.min(86_400.0)))
}

/// `1.92s`, `20ms`, `6m0s`, `1h2m3.5s` (Go's duration format, as OpenAI and Gemini write
/// waits) → a duration.
pub fn parse_duration_text(text: &str) -> Option<Duration> {
    let text = text.trim();
    if text.is_empty() {
        return None;
    }
    let mut total = 0.0;
    let mut rest = text;
    while !rest.is_empty() {
        let number_end = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(rest.len());
        let (number, after) = rest.split_at(number_end);
        let value: f64 = number.parse().ok()?;
        let unit_end = after
            .find(|c: char| c.is_ascii_digit() || c == '.')
            .unwrap_or(after.len());
        let (unit, next) = after.split_at(unit_end);
        total += value
            * match unit {
                "ms" => 0.001,
                "s" => 1.0,
                "m" => 60.0,
                "h" => 3600.0,
                _ => return None,
            };
        rest = next;
    }
    duration_from_secs(total)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_doubles_up_to_a_ceiling_with_jitter() {
        assert_eq!(backoff(0, 500), Duration::from_millis(500));
        assert_eq!(backoff(1, 500), Duration::from_secs(1));
        assert_eq!(backoff(10, 500), MAX_BACKOFF);
        assert_eq!(backoff(0, 0), Duration::from_millis(375));
        assert_eq!(
            backoff(0, 999),
            Duration::from_millis(624) + Duration::from_micros(750)
        );
    }

    #[test]
    fn go_style_durations_are_read() {
        assert_eq!(
            parse_duration_text("1.92s"),
            Some(Duration::from_millis(1920))
        );
        assert_eq!(parse_duration_text("20ms"), Some(Duration::from_millis(20)));
        assert_eq!(parse_duration_text("6m0s"), Some(Duration::from_secs(360)));
        assert_eq!(
            parse_duration_text("1h2m3s"),
            Some(Duration::from_secs(3723))
        );
        assert_eq!(parse_duration_text("soon"), None);
        assert_eq!(parse_duration_text("3x"), None);
    }
}
