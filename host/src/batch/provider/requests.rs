//! Which provider batch API a request the component sent belongs to, and the key that names it.
//!
//! The component's requests are deterministic: the same item asks the same request, body for
//! body, every time it runs up to the same point. So a request is named by the digest of its
//! method, URL and body, and a run after a restart finds its answers under the same names.

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::relay::Relayed;

/// A provider's batch API.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Api {
    /// OpenAI Batch (`/v1/files` + `/v1/batches`): Chat Completions and Responses bodies.
    #[serde(rename = "openai")]
    OpenAi,
    /// Anthropic Message Batches (`/v1/messages/batches`).
    Anthropic,
    /// Gemini batch mode (`models/{model}:batchGenerateContent`).
    Gemini,
}

/// A request's name: the hex digest of its method, URL and body (40 characters, fit for every
/// provider's `custom_id`).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Key(pub String);

impl Key {
    pub fn of(request: &Relayed) -> Self {
        let mut digest = Sha256::new();
        for part in [request.method.as_bytes(), request.url.as_bytes()] {
            digest.update(part);
            digest.update([0]);
        }
        digest.update(&request.body);
        Key(crate::artifact::hex(&digest.finalize()[..20]))
    }
}

/// The requests that can go in one batch: the same API, endpoint and credentials.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Group {
    pub api: Api,
    /// What the batch API's paths follow: `https://api.openai.com/v1`,
    /// `https://api.anthropic.com`, `https://generativelanguage.googleapis.com/v1beta`.
    pub base: String,
    /// OpenAI: the endpoint's path (`/v1/chat/completions`); Gemini: the model
    /// (`models/gemini-2.5-flash`); Anthropic: empty.
    pub target: String,
    /// The credential and version headers of the requests, sent with the batch's own.
    pub headers: Vec<(String, String)>,
}

/// Headers a batch's own requests carry over from the component's.
const CARRIED: [&str; 5] = [
    "authorization",
    "x-api-key",
    "anthropic-version",
    "anthropic-beta",
    "x-goog-api-key",
];

impl Group {
    /// The group of `request`, if it is a model request a batch API takes.
    pub fn of(request: &Relayed) -> Option<Self> {
        if request.method != "POST" {
            return None;
        }
        let url = request.url.split('?').next().unwrap_or_default();
        let (api, base, target) = if let Some(base) = url.strip_suffix("/v1/messages") {
            (Api::Anthropic, base, String::new())
        } else if let Some(base) =
            (url.strip_suffix("/chat/completions")).or_else(|| url.strip_suffix("/responses"))
        {
            (Api::OpenAi, base, path_of(url)?.to_owned())
        } else {
            let model_url = url.strip_suffix(":generateContent")?;
            let at = model_url.rfind("/models/")?;
            let (base, model) = (&model_url[..at], &model_url[at + 1..]);
            (Api::Gemini, base, model.to_owned())
        };
        let headers = (request.headers.iter())
            .filter(|(name, _)| {
                CARRIED
                    .iter()
                    .any(|carried| name.eq_ignore_ascii_case(carried))
            })
            .cloned()
            .collect();
        Some(Group {
            api,
            base: base.to_owned(),
            target,
            headers,
        })
    }
}

/// The path of `url` (`/v1/chat/completions` of `https://api.openai.com/v1/chat/completions`).
fn path_of(url: &str) -> Option<&str> {
    let after_scheme = url.split_once("://")?.1;
    Some(&after_scheme[after_scheme.find('/')?..])
}

#[cfg(test)]
mod tests {
    use super::*;
    use bytes::Bytes;

    fn post(url: &str, headers: &[(&str, &str)]) -> Relayed {
        Relayed {
            method: "POST".into(),
            url: url.into(),
            headers: (headers.iter())
                .map(|(name, value)| (name.to_string(), value.to_string()))
                .collect(),
            body: Bytes::from("{}"),
        }
    }

    #[test]
    fn each_providers_model_requests_have_their_group() {
        let openai = Group::of(&post(
            "https://api.openai.com/v1/chat/completions",
            &[
                ("Authorization", "Bearer k"),
                ("content-type", "application/json"),
            ],
        ))
        .unwrap();
        assert_eq!(
            openai,
            Group {
                api: Api::OpenAi,
                base: "https://api.openai.com/v1".into(),
                target: "/v1/chat/completions".into(),
                headers: vec![("Authorization".into(), "Bearer k".into())],
            }
        );
        let responses = Group::of(&post("http://127.0.0.1:9/v1/responses", &[])).unwrap();
        assert_eq!(
            (responses.api, responses.target.as_str()),
            (Api::OpenAi, "/v1/responses")
        );
        let anthropic = Group::of(&post(
            "https://api.anthropic.com/v1/messages",
            &[("x-api-key", "k"), ("anthropic-version", "2023-06-01")],
        ))
        .unwrap();
        assert_eq!(
            (anthropic.api, anthropic.base.as_str()),
            (Api::Anthropic, "https://api.anthropic.com")
        );
        assert_eq!(anthropic.headers.len(), 2);
        let gemini = Group::of(&post(
            "https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-flash:generateContent",
            &[("x-goog-api-key", "k")],
        ))
        .unwrap();
        assert_eq!(
            (gemini.api, gemini.base.as_str(), gemini.target.as_str()),
            (
                Api::Gemini,
                "https://generativelanguage.googleapis.com/v1beta",
                "models/gemini-2.5-flash"
            )
        );
        let mut probe = post("http://127.0.0.1:9/props", &[]);
        assert_eq!(Group::of(&probe), None);
        probe.method = "GET".into();
        probe.url = "http://127.0.0.1:9/v1/chat/completions".into();
        assert_eq!(Group::of(&probe), None, "only POSTs are model requests");
    }

    #[test]
    fn a_request_is_named_by_what_it_sends() {
        let request = post(
            "https://api.openai.com/v1/chat/completions",
            &[("authorization", "Bearer a")],
        );
        let mut other_key = request.clone();
        other_key.headers[0].1 = "Bearer b".into();
        assert_eq!(
            Key::of(&request),
            Key::of(&other_key),
            "credentials are not the request"
        );
        assert_eq!(Key::of(&request).0.len(), 40);
        let mut other_body = request.clone();
        other_body.body = Bytes::from("{\"a\":1}");
        assert_ne!(Key::of(&request), Key::of(&other_body));
    }
}
