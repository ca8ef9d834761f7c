//! OpenAI Batch: the requests uploaded as a JSONL file (`POST /files`, purpose `batch`), the
//! batch created over it (`POST /batches`, one endpoint a batch, a 24-hour window), polled
//! (`GET /batches/{id}`), its output and error files read (`GET /files/{id}/content`), each
//! line joined to its request by `custom_id`.

use bytes::Bytes;
use serde_json::{Value, json};

use super::http::{Check, Failure, Http, Outcome};
use super::requests::{Group, Key};
use crate::relay::Relayed;

/// The multipart boundary of the upload (the lines are JSON: it never occurs in them).
const BOUNDARY: &str = "structure-provider-batch-3a9c";

/// Uploads `requests` and creates their batch; its id.
pub async fn submit(
    http: &Http,
    group: &Group,
    requests: &[(Key, Relayed)],
) -> Result<String, Failure> {
    let mut lines = String::new();
    for (key, request) in requests {
        let body: Value = serde_json::from_slice(&request.body).unwrap_or(Value::Null);
        let line = json!({ "custom_id": key, "method": "POST", "url": group.target, "body": body });
        lines.push_str(&line.to_string());
        lines.push('\n');
    }
    let form = format!(
        "--{BOUNDARY}\r\nContent-Disposition: form-data; name=\"purpose\"\r\n\r\nbatch\r\n\
         --{BOUNDARY}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"structure.jsonl\"\r\n\
         Content-Type: application/jsonl\r\n\r\n{lines}\r\n--{BOUNDARY}--\r\n"
    );
    let content_type = format!("multipart/form-data; boundary={BOUNDARY}");
    let url = format!("{}/files", group.base);
    let file = http
        .send(
            "POST",
            &url,
            group,
            Some((&content_type, Bytes::from(form))),
        )
        .await?;
    let file: Value = serde_json::from_slice(&file).unwrap_or_default();
    let file_id = id_of(&file, &url)?;
    let create =
        json!({ "input_file_id": file_id, "endpoint": group.target, "completion_window": "24h" });
    let url = format!("{}/batches", group.base);
    let batch = http.json("POST", &url, group, Some(&create)).await?;
    id_of(&batch, &url)
}

/// Where batch `id` is; once it has ended, each request's outcome.
pub async fn check(http: &Http, group: &Group, id: &str) -> Result<Check, Failure> {
    let batch = (http.json("GET", &format!("{}/batches/{id}", group.base), group, None)).await?;
    match batch["status"].as_str().unwrap_or_default() {
        "completed" | "expired" | "cancelled" => {}
        "failed" => {
            let message = format!("OpenAI's Batch API refused the batch: {}", batch["errors"]);
            let body = json!({ "error": { "type": "invalid_request_error", "message": message } });
            return Ok(Check::Failed(Outcome::of(400, &body)));
        }
        _ => return Ok(Check::Running),
    }
    let mut outcomes = Vec::new();
    for file in ["output_file_id", "error_file_id"] {
        let Some(file) = batch[file].as_str() else {
            continue;
        };
        let url = format!("{}/files/{file}/content", group.base);
        let lines = http.send("GET", &url, group, None).await?;
        outcomes.extend(lines.split(|byte| *byte == b'\n').filter_map(outcome));
    }
    Ok(Check::Done(outcomes))
}

/// The outcome of a line of an output or error file: the response it holds (a 200 or the
/// provider's error), or, with no response (`batch_expired`, cancelled), another try.
fn outcome(line: &[u8]) -> Option<(Key, Outcome)> {
    let line: Value = serde_json::from_slice(line).ok()?;
    let key = Key(line["custom_id"].as_str()?.to_owned());
    let response = &line["response"];
    let outcome = match response["status_code"].as_u64() {
        Some(status) => Outcome::of(u16::try_from(status).unwrap_or(500), &response["body"]),
        None => Outcome::Again(format!("not run: {}", line["error"])),
    };
    Some((key, outcome))
}

fn id_of(object: &Value, url: &str) -> Result<String, Failure> {
    (object["id"].as_str().map(str::to_owned))
        .ok_or_else(|| Failure::Again(format!("{url} answered with no id: {object}")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::relay::Answer;

    #[test]
    fn result_lines_give_answers_errors_and_retries() {
        let ok = br#"{"id":"r1","custom_id":"k1","response":{"status_code":200,"request_id":"q","body":{"id":"chatcmpl-1"}},"error":null}"#;
        let (key, answer) = outcome(ok).unwrap();
        assert_eq!(key, Key("k1".into()));
        assert_eq!(
            answer,
            Outcome::Answered(Answer {
                status: 200,
                body: Bytes::from(r#"{"id":"chatcmpl-1"}"#)
            })
        );
        let refused = br#"{"custom_id":"k2","response":{"status_code":400,"body":{"error":{"message":"too long"}}},"error":null}"#;
        assert!(matches!(
            outcome(refused).unwrap().1,
            Outcome::Answered(Answer { status: 400, .. })
        ));
        let overloaded =
            br#"{"custom_id":"k3","response":{"status_code":503,"body":{}},"error":null}"#;
        assert!(matches!(outcome(overloaded).unwrap().1, Outcome::Again(_)));
        let expired = br#"{"custom_id":"k4","response":null,"error":{"code":"batch_expired","message":"This request could not be executed before the completion window expired."}}"#;
        assert!(
            matches!(outcome(expired).unwrap().1, Outcome::Again(reason) if reason.contains("batch_expired"))
        );
        assert_eq!(outcome(b""), None);
    }
}
