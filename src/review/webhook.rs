//! The webhook a reviewed result is sent to: `POST` to the URL the operator sets
//! (`structure_review_webhook`; only the operator's configuration names it, so a result goes
//! nowhere else), the body `{"event": "review.reviewed", "tenant", "id", "result"}`, signed
//! with HMAC-SHA256 under `structure_review_webhook_secret`
//! (`x-structure-signature: sha256=<hex>`), tried up to [`ATTEMPTS`] times while the receiver
//! fails (a dropped connection, 429, 5xx). What came of it is kept with the item; the
//! reviewed result can always be fetched (`GET /v1/review/{id}`) as well.

use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use crate::keys;
use crate::ports::{HttpRequest, Ports};
use crate::time::rfc3339;

/// How many times a delivery is tried.
pub const ATTEMPTS: u32 = 3;
/// The wait before the second try; each next one waits four times as long.
const FIRST_WAIT: Duration = Duration::from_secs(1);
/// One try's time limit.
const TIMEOUT: Duration = Duration::from_secs(10);

/// What came of sending a reviewed result to the webhook.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Delivery {
    /// `delivered` (the receiver answered 2xx) or `failed`.
    pub status: String,
    pub attempts: u32,
    pub at: String,
    /// Why the last try failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// Sends `result` (item `id` of `tenant`, reviewed) to the operator's webhook; `None` when
/// there is none.
pub fn deliver(tenant: &str, id: &str, result: &Value, ports: &Ports<'_>) -> Option<Delivery> {
    let setting =
        |key: &str| (ports.config.get(key).ok().flatten()).filter(|v| !v.trim().is_empty());
    let url = setting(keys::REVIEW_WEBHOOK)?;
    let secret = setting(keys::REVIEW_WEBHOOK_SECRET).unwrap_or_default();
    let body = json!({ "event": "review.reviewed", "tenant": tenant, "id": id, "result": result })
        .to_string()
        .into_bytes();
    let signature: String = (hmac_sha256(secret.as_bytes(), &body).iter())
        .map(|byte| format!("{byte:02x}"))
        .collect();
    let request = HttpRequest {
        method: "POST",
        url: url.trim().to_owned(),
        headers: vec![
            ("content-type".into(), "application/json".into()),
            ("x-structure-event".into(), "review.reviewed".into()),
            ("x-structure-delivery".into(), id.to_owned()),
            (
                "x-structure-signature".into(),
                format!("sha256={signature}"),
            ),
        ],
        body,
        timeout: TIMEOUT,
        max_response_bytes: 64 * 1024,
        tokens: None,
    };
    let mut wait = FIRST_WAIT;
    for attempt in 1..=ATTEMPTS {
        let failed = match ports.transport.send(&request) {
            Ok(response) if (200..300).contains(&response.status) => None,
            Ok(response) if response.status == 429 || response.status >= 500 => {
                Some((format!("the receiver answered {}", response.status), true))
            }
            Ok(response) => Some((format!("the receiver answered {}", response.status), false)),
            Err(failure) => Some((failure.message, failure.retryable)),
        };
        let Some((message, again)) = failed else {
            let at = rfc3339(ports.clock.now_unix_millis());
            let status = "delivered".to_owned();
            return Some(Delivery {
                status,
                attempts: attempt,
                at,
                error: None,
            });
        };
        if !again || attempt == ATTEMPTS {
            let at = rfc3339(ports.clock.now_unix_millis());
            return Some(Delivery {
                status: "failed".into(),
                attempts: attempt,
                at,
                error: Some(message),
            });
        }
        ports.clock.sleep(wait);
        wait *= 4;
    }
    None
}

/// HMAC-SHA256 (RFC 2104) of `data` under `key`.
fn hmac_sha256(key: &[u8], data: &[u8]) -> [u8; 32] {
    const BLOCK: usize = 64;
    let mut block = [0u8; BLOCK];
    match key.len() > BLOCK {
        true => block[..32].copy_from_slice(&Sha256::digest(key)),
        false => block[..key.len()].copy_from_slice(key),
    }
    let pad = |byte: u8| block.map(|b| b ^ byte);
    let inner = Sha256::new()
        .chain_update(pad(0x36))
        .chain_update(data)
        .finalize();
    Sha256::new()
        .chain_update(pad(0x5c))
        .chain_update(inner)
        .finalize()
        .into()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hmac_matches_rfc_4231() {
        let hex = |bytes: [u8; 32]| bytes.iter().map(|b| format!("{b:02x}")).collect::<String>();
        assert_eq!(
            hex(hmac_sha256(b"Jefe", b"what do ya want for nothing?")),
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
        );
        // A key longer than a block is hashed first (test case 6).
        assert_eq!(
            hex(hmac_sha256(
                &[0xaa; 131],
                b"Test Using Larger Than Block-Size Key - Hash Key First"
            )),
            "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54"
        );
    }
}
