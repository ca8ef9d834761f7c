//! Provider batches (`structure batch --provider-batch`): every item's model requests go
//! through the providers' batch APIs, at half the price, in rounds ([`rounds`]); what was sent
//! and received is journaled beside the output ([`journal`]), so a restart polls the same
//! batches and never pays for an answer twice.
//!
//! | file | what it is |
//! |---|---|
//! | `requests` | which batch API a request goes to, and the key that names it |
//! | `http` | the batch's own requests to a provider, and their failures |
//! | `journal` | the batches and answers, kept beside the output file |
//! | `rounds` | items parked on their requests, batches sent when no item runs, items woken |
//! | `openai`, `anthropic`, `gemini` | each provider's batch API |

mod anthropic;
mod gemini;
mod http;
mod journal;
mod openai;
mod requests;
mod rounds;

pub use http::Http;
pub use journal::{Journal, beside};
pub use rounds::{ProviderBatch, Rounds};
