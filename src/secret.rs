//! Secrets: a value whose `Debug` never shows it, and cutting every configured secret out of a
//! text (providers quote requests, and so keys, in their errors: no message may carry one on).
//! A leaf module.

use std::fmt;

/// A secret whose `Debug` never shows it.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(String);

impl Secret {
    /// Wraps `value`.
    pub fn new(value: String) -> Self {
        Self(value)
    }

    /// The secret itself, for the one place that sends it.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Secret(..)")
    }
}

/// `text` with each of `secrets` replaced by `[redacted]`.
pub fn redact<'a>(text: &str, secrets: impl IntoIterator<Item = &'a Secret>) -> String {
    secrets
        .into_iter()
        // A one-character "key" would blank out half a message and protect nothing.
        .filter(|secret| secret.expose().len() >= 8)
        .fold(text.to_owned(), |text, secret| {
            text.replace(secret.expose(), "[redacted]")
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_are_cut_out_and_never_shown() {
        let key = Secret::new("sk-test-0123456789".to_owned());
        let short = Secret::new("abc".to_owned());
        assert_eq!(
            redact("bad key sk-test-0123456789 (abc)", [&key, &short]),
            "bad key [redacted] (abc)"
        );
        assert_eq!(format!("{key:?}"), "Secret(..)");
    }
}
