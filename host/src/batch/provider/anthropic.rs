//! Anthropic Message Batches: the requests in one `POST /v1/messages/batches` (each request's
//! body as its `params`), polled (`GET /v1/messages/batches/{id}`) until `ended`, the results
//! read as JSON lines, each joined to its request by `custom_id`.

use bytes::Bytes;
use serde_json::{Value, json};

use super::http::{Check, Failure, Http, Outcome};
use super::requests::{Group, Key};
use crate::relay::{Answer, Relayed};

/// Creates the batch of `requests`; its id.
pub async fn submit(
    http: &Http,
    group: &Group,
    requests: &[(Key, Relayed)],
) -> Result<String, Failure> {
    let requests: Vec<Value> = (requests.iter())
        .map(|(key, request)| {
            let params: Value = serde_json::from_slice(&request.body).unwrap_or(Value::Null);
            json!({ "custom_id": key, "params": params })
        })
        .collect();
    let url = format!("{}/v1/messages/batches", group.base);
    let batch = (http.json("POST", &url, group, Some(&json!({ "requests": requests })))).await?;
    (batch["id"].as_str().map(str::to_owned))
        .ok_or_else(|| Failure::Again(format!("{url} answered with no id: {batch}")))
}

/// Where batch `id` is; once it has ended, each request's outcome.
pub async fn check(http: &Http, group: &Group, id: &str) -> Result<Check, Failure> {
    let url = format!("{}/v1/messages/batches/{id}", group.base);
    let batch = http.json("GET", &url, group, None).await?;
    if batch["processing_status"] != "ended" {
        return Ok(Check::Running);
    }
    // The results are where the batch says, unless that is elsewhere than the API (the
    // credentials go only to it).
    let results = match batch["results_url"].as_str() {
        Some(results) if results.starts_with(&group.base) => results.to_owned(),
        _ => format!("{url}/results"),
    };
    let lines = http.send("GET", &results, group, None).await?;
    Ok(Check::Done(
        lines
            .split(|byte| *byte == b'\n')
            .filter_map(outcome)
            .collect(),
    ))
}

/// The outcome of a result line: the message, the provider's refusal (an invalid request,
/// say), or another try (rate limits, overload, server errors, canceled, expired).
fn outcome(line: &[u8]) -> Option<(Key, Outcome)> {
    let line: Value = serde_json::from_slice(line).ok()?;
    let key = Key(line["custom_id"].as_str()?.to_owned());
    let result = &line["result"];
    let outcome = match result["type"].as_str().unwrap_or_default() {
        "succeeded" => Outcome::Answered(Answer {
            status: 200,
            body: Bytes::from(result["message"].to_string()),
        }),
        "errored" => {
            let error = &result["error"];
            let status = match error["error"]["type"].as_str().unwrap_or_default() {
                "invalid_request_error" => 400,
                "authentication_error" => 401,
                "billing_error" => 402,
                "permission_error" => 403,
                "not_found_error" => 404,
                "rate_limit_error" => 429,
                "overloaded_error" => 529,
                _ => 500,
            };
            Outcome::of(status, error)
        }
        other => Outcome::Again(format!("the request was {other}")),
    };
    Some((key, outcome))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn result_lines_give_answers_refusals_and_retries() {
        let ok = br#"{"custom_id":"k1","result":{"type":"succeeded","message":{"id":"msg_1","type":"message"}}}"#;
        assert_eq!(
            outcome(ok).unwrap(),
            (
                Key("k1".into()),
                Outcome::Answered(Answer {
                    status: 200,
                    body: Bytes::from(r#"{"id":"msg_1","type":"message"}"#)
                })
            )
        );
        let invalid = br#"{"custom_id":"k2","result":{"type":"errored","error":{"type":"error","error":{"type":"invalid_request_error","message":"max_tokens: too many"}}}}"#;
        let Outcome::Answered(answer) = outcome(invalid).unwrap().1 else {
            panic!("a refusal is an answer")
        };
        assert_eq!(answer.status, 400);
        assert!(String::from_utf8_lossy(&answer.body).contains("max_tokens: too many"));
        for again in [
            br#"{"custom_id":"k3","result":{"type":"errored","error":{"type":"error","error":{"type":"overloaded_error","message":"x"}}}}"#.as_slice(),
            br#"{"custom_id":"k4","result":{"type":"expired"}}"#,
            br#"{"custom_id":"k5","result":{"type":"canceled"}}"#,
        ] {
            assert!(matches!(outcome(again).unwrap().1, Outcome::Again(_)));
        }
    }
}
