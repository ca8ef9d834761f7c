//! Who is calling: bearer tokens from the host's configuration (`structure_api_tokens`), each
//! mapped to a tenant, an optional project and a role. The scope of a call comes from its token,
//! never from its body. Tokens are compared in constant time.

use serde::Deserialize;
use sha2::{Digest, Sha256};

use crate::keys::{API_AUTH, API_TOKENS};
use crate::ports::Config;
use crate::scope::Scope;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// May structure text and read the registry.
    User,
    /// May also confirm and correct results in the review queue (`/v1/review`).
    Reviewer,
    /// May also register and deregister schemas.
    Admin,
}

impl Role {
    pub fn name(self) -> &'static str {
        match self {
            Role::User => "user",
            Role::Reviewer => "reviewer",
            Role::Admin => "admin",
        }
    }
}

/// An authenticated caller.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Caller {
    pub scope: Scope,
    pub role: Role,
    /// Who: the token's `name`, else `token:` and the first digits of its SHA-256 (what a
    /// review records as its reviewer; never the token).
    pub name: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct TokenEntry {
    token: String,
    tenant: String,
    #[serde(default)]
    project: Option<String>,
    role: Role,
    #[serde(default)]
    name: Option<String>,
}

/// Why a caller is not let in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Denied {
    /// No or an unknown token (401).
    Unauthenticated(String),
    /// The host's token configuration is unusable (500).
    Misconfigured(String),
}

/// The caller the `Authorization` header stands for.
pub fn authenticate(authorization: Option<&str>, config: &dyn Config) -> Result<Caller, Denied> {
    let read = |key: &str| {
        config
            .get(key)
            .map_err(|message| Denied::Misconfigured(format!("cannot read {key}: {message}")))
    };
    if read(API_AUTH)?.as_deref().map(str::trim) == Some("none") {
        return Ok(Caller {
            scope: Scope::default(),
            role: Role::Admin,
            name: "local".to_owned(),
        });
    }
    let Some(text) = read(API_TOKENS)?.filter(|text| !text.trim().is_empty()) else {
        return Err(Denied::Unauthenticated(format!(
            "no API tokens are configured: set {API_TOKENS} (STRUCTURE_API_TOKENS) to a JSON array of \
             {{\"token\", \"tenant\", \"project\", \"role\"}}, or {API_AUTH}=none for local use"
        )));
    };
    let entries: Vec<TokenEntry> = serde_json::from_str(&text).map_err(|error| {
        Denied::Misconfigured(format!("{API_TOKENS} is not a valid token list: {error}"))
    })?;
    let presented = authorization
        .and_then(|value| {
            value
                .trim()
                .strip_prefix("Bearer ")
                .or_else(|| value.trim().strip_prefix("bearer "))
        })
        .map(str::trim)
        .filter(|token| !token.is_empty())
        .ok_or_else(|| {
            Denied::Unauthenticated("send an API token: Authorization: Bearer <token>".to_owned())
        })?;
    let presented = Sha256::digest(presented.as_bytes());
    // Every entry is compared, in constant time, so neither the match nor its position leaks.
    let mut found = None;
    for entry in &entries {
        let known = Sha256::digest(entry.token.as_bytes());
        let difference = known
            .iter()
            .zip(presented.iter())
            .fold(0u8, |acc, (a, b)| acc | (a ^ b));
        if difference == 0 && found.is_none() {
            found = Some(entry);
        }
    }
    let entry =
        found.ok_or_else(|| Denied::Unauthenticated("the API token is not valid".to_owned()))?;
    let scope = Scope::new(&entry.tenant, entry.project.as_deref())
        .map_err(|error| Denied::Misconfigured(format!("{API_TOKENS}: {}", error.message)))?;
    let fingerprint: String = (presented.iter().take(4))
        .map(|byte| format!("{byte:02x}"))
        .collect();
    Ok(Caller {
        scope,
        role: entry.role,
        name: (entry.name.clone()).unwrap_or_else(|| format!("token:{fingerprint}")),
    })
}
