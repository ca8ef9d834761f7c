//! Relays: an instance's LLM requests answered by someone other than the network. A provider
//! batch ([`crate::batch`]) relays each item's requests into the providers' batch APIs and
//! answers them when the batch is done; the component cannot tell the difference.
//!
//! The embedded engine ([`crate::local`]) answers the requests to its reserved origin in
//! process, as a llama.cpp server would.
//!
//! A relay sees each request read whole, and answers it with a status and a body, or never
//! (the call waiting for it is then dropped by whoever holds it). A relay may stop a relayed
//! instance's wall clock at its [`Relay::clock`]: a provider batch's does, so that the date the
//! component writes into its prompts is the same in every run, and so is every request, body
//! for body.

use std::future::Future;
use std::pin::Pin;
use std::time::{Duration, SystemTime};

use bytes::Bytes;
use wasmtime_wasi::HostWallClock;

/// A request the component sent, read whole.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Relayed {
    /// `POST`, as a rule.
    pub method: String,
    /// The whole URL, with scheme and authority.
    pub url: String,
    /// Its headers (the credentials among them), in order.
    pub headers: Vec<(String, String)>,
    pub body: Bytes,
}

/// What a relay answers: a status and a JSON body, as the provider would have.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Answer {
    pub status: u16,
    pub body: Bytes,
}

/// The answer, once there is one.
pub type Answering = Pin<Box<dyn Future<Output = Answer> + Send>>;

/// Who answers an instance's LLM requests instead of the network.
pub trait Relay: Send + Sync {
    /// Whether a request with this method and URL goes to the relay (the others go out as
    /// usual: a server's `/props`, say).
    fn takes(&self, method: &str, url: &str) -> bool;

    /// The answer to `request`.
    fn relay(&self, request: Relayed) -> Answering;

    /// The instant the instance's wall clock stands at, if the relay stops it (`None`: the
    /// clock runs).
    fn clock(&self) -> Option<SystemTime>;
}

/// A wall clock standing at one instant.
pub(crate) struct Frozen(pub(crate) SystemTime);

impl HostWallClock for Frozen {
    fn resolution(&self) -> Duration {
        Duration::from_nanos(1)
    }

    fn now(&self) -> Duration {
        self.0
            .duration_since(SystemTime::UNIX_EPOCH)
            .unwrap_or_default()
    }
}
