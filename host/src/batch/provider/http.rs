//! The batch's own requests to a provider (uploads, submissions, polls, result downloads),
//! over the host's pooled connections, and how their failures are told apart: a provider that
//! refuses (a 4xx) answers every request of the batch with its refusal; a passing trouble (a
//! 429, a 5xx, a dropped connection) is tried again.

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use hyper::Request;
use serde_json::Value;

use super::requests::{Group, Key};
use crate::egress::ConnectionPool;
use crate::relay::Answer;

/// How long one of the batch's own requests may take (an upload of many requests included).
const TIMEOUT: Duration = Duration::from_secs(300);

/// Why a request of the batch's own did not give what was asked.
#[derive(Debug, Clone, PartialEq)]
pub enum Failure {
    /// The provider refused: every request of the batch gets this answer.
    Refused(Answer),
    /// Passing trouble: ask again later.
    Again(String),
}

/// A client for the batch's own requests.
#[derive(Clone)]
pub struct Http {
    pool: Arc<ConnectionPool>,
}

impl Http {
    pub fn new(pool: Arc<ConnectionPool>) -> Self {
        Self { pool }
    }

    /// Sends `body` (of `content_type`) to `url` with `group`'s credentials; the answer's body
    /// when its status is 2xx.
    pub async fn send(
        &self,
        method: &str,
        url: &str,
        group: &Group,
        body: Option<(&str, Bytes)>,
    ) -> Result<Bytes, Failure> {
        let mut request = Request::builder().method(method).uri(url);
        for (name, value) in &group.headers {
            request = request.header(name, value);
        }
        let (content_type, body) = body.unwrap_or(("application/json", Bytes::new()));
        let request = (request.header("content-type", content_type).body(body))
            .map_err(|error| Failure::Again(format!("cannot make a request to {url}: {error}")))?;
        let (status, body) = (self.pool.clone().exchange(request, TIMEOUT).await)
            .map_err(|error| Failure::Again(format!("{method} {url} failed: {error}")))?;
        match status {
            200..=299 => Ok(body),
            _ if passing(status) => Err(Failure::Again(format!(
                "{method} {url} answered {status}: {}",
                String::from_utf8_lossy(&body)
            ))),
            _ => Err(Failure::Refused(Answer { status, body })),
        }
    }

    /// [`Self::send`] with a JSON body, the answer read as JSON.
    pub async fn json(
        &self,
        method: &str,
        url: &str,
        group: &Group,
        body: Option<&Value>,
    ) -> Result<Value, Failure> {
        let body = body.map(|body| ("application/json", Bytes::from(body.to_string())));
        let answer = self.send(method, url, group, body).await?;
        serde_json::from_slice(&answer).map_err(|error| {
            Failure::Again(format!("{method} {url} answered with no JSON: {error}"))
        })
    }
}

/// Whether `status` is passing trouble (a rate limit, a server's error), worth another try.
fn passing(status: u16) -> bool {
    matches!(status, 429 | 500..=599)
}

/// The answer a request gets when its batch could not: `status` with an OpenAI-style error
/// body, which every provider module of the component reads.
pub fn synthetic(status: u16, message: &str) -> Answer {
    let body = serde_json::json!({ "error": { "type": "provider_batch", "message": message } });
    Answer {
        status,
        body: Bytes::from(body.to_string()),
    }
}

/// A request's own outcome inside a batch's results: its answer, or passing trouble (a 429, a
/// 5xx, expired, canceled) that sends it in the next batch.
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    Answered(Answer),
    Again(String),
}

impl Outcome {
    /// The outcome of an answer with `status` and `body`.
    pub fn of(status: u16, body: &Value) -> Self {
        if passing(status) {
            return Outcome::Again(format!("answered {status}: {body}"));
        }
        Outcome::Answered(Answer {
            status,
            body: Bytes::from(body.to_string()),
        })
    }
}

/// Whether a batch is done, as its provider says.
pub enum Check {
    Running,
    /// Every request's outcome that the batch gives (a request it leaves out goes again).
    Done(Vec<(Key, Outcome)>),
    /// The batch as a whole ended without answers (failed, cancelled): each of its requests
    /// gets this outcome.
    Failed(Outcome),
}
