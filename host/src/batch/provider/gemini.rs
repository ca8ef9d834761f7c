//! Gemini batch mode: the requests inline in one `POST {model}:batchGenerateContent` (each
//! with its key in `metadata`), the long-running operation polled (`GET batches/{id}`) until
//! `done`, the inlined responses read from it, joined by key (or by order, which the API
//! keeps, where a key was not echoed).

use serde_json::{Value, json};

use super::http::{Check, Failure, Http, Outcome};
use super::requests::{Group, Key};
use crate::relay::Relayed;

/// Creates the batch of `requests`; its name (`batches/...`).
pub async fn submit(
    http: &Http,
    group: &Group,
    requests: &[(Key, Relayed)],
) -> Result<String, Failure> {
    let inline: Vec<Value> = (requests.iter())
        .map(|(key, request)| {
            let request: Value = serde_json::from_slice(&request.body).unwrap_or(Value::Null);
            json!({ "request": request, "metadata": { "key": key } })
        })
        .collect();
    let body = json!({ "batch": {
        "display_name": "structure",
        "input_config": { "requests": { "requests": inline } },
    } });
    let url = format!("{}/{}:batchGenerateContent", group.base, group.target);
    let operation = http.json("POST", &url, group, Some(&body)).await?;
    (operation["name"].as_str().map(str::to_owned))
        .ok_or_else(|| Failure::Again(format!("{url} answered with no name: {operation}")))
}

/// Where batch `name` is; once it is done, each request's outcome (`keys` in the order they
/// were sent).
pub async fn check(http: &Http, group: &Group, name: &str, keys: &[Key]) -> Result<Check, Failure> {
    let operation = (http.json("GET", &format!("{}/{name}", group.base), group, None)).await?;
    let state = operation["metadata"]["state"].as_str().unwrap_or_default();
    // The SDKs rename BATCH_STATE_* to JOB_STATE_*; take either.
    let state = state.rsplit('_').next().unwrap_or_default();
    if operation["done"] != true
        && !matches!(state, "SUCCEEDED" | "FAILED" | "CANCELLED" | "EXPIRED")
    {
        return Ok(Check::Running);
    }
    match state {
        "SUCCEEDED" => {}
        "FAILED" => {
            let error = &operation["error"];
            let status = error["code"]
                .as_u64()
                .and_then(|code| u16::try_from(code).ok());
            return Ok(Check::Failed(Outcome::of(
                status.unwrap_or(400),
                &json!({ "error": error }),
            )));
        }
        other => {
            return Ok(Check::Failed(Outcome::Again(format!(
                "the batch ended {other}"
            ))));
        }
    }
    let responses = (operation.pointer("/response/inlinedResponses/inlinedResponses"))
        .or_else(|| operation.pointer("/metadata/output/inlinedResponses/inlinedResponses"))
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let outcomes = (responses.iter().enumerate())
        .filter_map(|(at, inlined)| {
            let key = match inlined["metadata"]["key"].as_str() {
                Some(key) => Key(key.to_owned()),
                None => keys.get(at)?.clone(),
            };
            Some((key, outcome(inlined)))
        })
        .collect();
    Ok(Check::Done(outcomes))
}

/// The outcome of one inlined response: the response, or its error (a `google.rpc.Status`).
fn outcome(inlined: &Value) -> Outcome {
    match inlined.get("error") {
        None => Outcome::of(200, &inlined["response"]),
        Some(error) => {
            let status = error["code"]
                .as_u64()
                .and_then(|code| u16::try_from(code).ok());
            Outcome::of(status.unwrap_or(500), &json!({ "error": error }))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::relay::Answer;

    #[test]
    fn inlined_responses_give_answers_refusals_and_retries() {
        let ok = json!({ "response": { "candidates": [] }, "metadata": { "key": "k1" } });
        assert_eq!(
            outcome(&ok),
            Outcome::Answered(Answer {
                status: 200,
                body: bytes::Bytes::from(r#"{"candidates":[]}"#)
            })
        );
        let invalid = json!({ "error": { "code": 400, "message": "bad schema" } });
        assert!(matches!(
            outcome(&invalid),
            Outcome::Answered(Answer { status: 400, .. })
        ));
        let internal = json!({ "error": { "code": 500, "message": "internal" } });
        assert!(matches!(outcome(&internal), Outcome::Again(_)));
    }
}
