//! The providers' batch APIs, as their documentation describes them: OpenAI Batch (`POST
//! /v1/files` with a JSONL file, `POST /v1/batches`, `GET /v1/batches/{id}`, `GET
//! /v1/files/{id}/content`), Anthropic Message Batches (`POST /v1/messages/batches`, `GET
//! /v1/messages/batches/{id}` and its `/results`) and Gemini batch mode (`POST
//! /v1beta/models/{model}:batchGenerateContent`, `GET /v1beta/batches/{id}`).
//!
//! Each request of a batch is answered as the same request sent alone would be (the queued
//! replies, the responder, the standing reply), and recorded with its endpoint's path. A batch
//! follows its [`Plan`]: the polls it stays running for, the requests that fail in it, the
//! requests left unrun when it expires, or a refusal of the batch itself.

use std::collections::{HashMap, VecDeque};
use std::sync::Mutex;

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::{Recorded, Reply, Script};

/// How the next batch created goes.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct Plan {
    /// Polls answered "still running" before the batch ends.
    pub polls: u32,
    /// Its first `failing` requests fail with a 500 (a partial failure).
    pub failing: usize,
    /// It expires with its last `unrun` requests not run (Gemini: a whole batch expires, with
    /// no results).
    pub unrun: usize,
    /// The creation itself is answered with this status and an error.
    pub refuse: Option<u16>,
}

/// A batch created: its API, its requests' ids and replies, and how it goes.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Created {
    pub id: String,
    pub api: &'static str,
    pub ids: Vec<String>,
    #[serde(skip)]
    replies: Vec<Option<Reply>>,
    #[serde(skip)]
    plan: Plan,
    /// Polls answered so far.
    pub polled: u32,
}

/// The batches and files of one server.
#[derive(Default)]
pub struct Batches {
    plans: VecDeque<Plan>,
    created: Vec<Created>,
    files: HashMap<String, String>,
}

impl Batches {
    pub fn plan(&mut self, plan: Plan) {
        self.plans.push_back(plan);
    }

    pub fn created(&self) -> Vec<Created> {
        self.created.clone()
    }

    /// Ends every batch at its next poll.
    pub fn end_all(&mut self) {
        for created in &mut self.created {
            created.plan.polls = 0;
        }
    }
}

fn lock(script: &Mutex<Script>) -> std::sync::MutexGuard<'_, Script> {
    script
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// The answer to a request of a batch API, if it is one.
pub(crate) fn route(
    script: &Mutex<Script>,
    method: &str,
    path: &str,
    body: &[u8],
) -> Option<Reply> {
    let reply = match (method, path) {
        ("POST", path) if path.ends_with("/v1/files") => upload(script, body),
        ("POST", path) if path.ends_with("/v1/batches") => {
            let request: Value = serde_json::from_slice(body).ok()?;
            let file = request["input_file_id"].as_str().unwrap_or_default();
            let lines = lock(script)
                .batches
                .files
                .get(file)
                .cloned()
                .unwrap_or_default();
            let requests = (lines.lines())
                .filter_map(|line| serde_json::from_str::<Value>(line).ok())
                .map(|line| {
                    (
                        line["custom_id"].as_str().unwrap_or_default().to_owned(),
                        line["url"].as_str().unwrap_or_default().to_owned(),
                        line["body"].clone(),
                    )
                })
                .collect();
            create(script, "openai", requests)
        }
        ("POST", "/v1/messages/batches") => {
            let request: Value = serde_json::from_slice(body).ok()?;
            let requests = (request["requests"].as_array()?.iter())
                .map(|one| {
                    (
                        one["custom_id"].as_str().unwrap_or_default().to_owned(),
                        "/v1/messages".to_owned(),
                        one["params"].clone(),
                    )
                })
                .collect();
            create(script, "anthropic", requests)
        }
        ("POST", path) if path.ends_with(":batchGenerateContent") => {
            let request: Value = serde_json::from_slice(body).ok()?;
            let url = path.replace(":batchGenerateContent", ":generateContent");
            let inline = request
                .pointer("/batch/input_config/requests/requests")?
                .as_array()?;
            let requests = (inline.iter())
                .map(|one| {
                    (
                        one["metadata"]["key"]
                            .as_str()
                            .unwrap_or_default()
                            .to_owned(),
                        url.clone(),
                        one["request"].clone(),
                    )
                })
                .collect();
            create(script, "gemini", requests)
        }
        ("GET", path) if path.starts_with("/v1/files/") && path.ends_with("/content") => {
            let id = &path["/v1/files/".len()..path.len() - "/content".len()];
            let content = lock(script).batches.files.get(id).cloned()?;
            Reply::raw(200, &content)
        }
        ("GET", path) if path.contains("/batches/") => {
            let (id, results) = match path.strip_suffix("/results") {
                Some(batch) => (batch.rsplit('/').next()?, true),
                None => (path.rsplit('/').next()?, false),
            };
            poll(script, id, results)?
        }
        _ => return None,
    };
    Some(reply)
}

/// `POST /v1/files`: the `file` part of the multipart form, kept.
fn upload(script: &Mutex<Script>, body: &[u8]) -> Reply {
    let form = String::from_utf8_lossy(body);
    let Some(content) = (form.split("\r\n--"))
        .find(|part| part.contains("name=\"file\""))
        .and_then(|part| part.split_once("\r\n\r\n"))
        .map(|(_, content)| content.trim_end_matches("\r\n").to_owned())
    else {
        return Reply::error(400, "invalid_request_error", "no file in the form");
    };
    let mut script = lock(script);
    let id = format!("file-{}", script.batches.files.len() + 1);
    script.batches.files.insert(id.clone(), content);
    Reply::raw(
        200,
        &json!({ "id": id, "object": "file", "purpose": "batch", "status": "processed" })
            .to_string(),
    )
}

/// Creates a batch of `requests` (id, endpoint path, body), answering each as it would be
/// answered alone, unless the plan refuses the batch.
fn create(
    script: &Mutex<Script>,
    api: &'static str,
    requests: Vec<(String, String, Value)>,
) -> Reply {
    let plan = lock(script).batches.plans.pop_front().unwrap_or_default();
    if let Some(status) = plan.refuse {
        return Reply::error(
            status,
            "batch_refused",
            "the batch was refused as the plan says",
        );
    }
    let count = requests.len();
    let mut ids = Vec::new();
    let mut replies = Vec::new();
    for (at, (id, path, body)) in requests.into_iter().enumerate() {
        // Gemini's batches expire whole: none of their requests is run.
        let unrun = at >= count.saturating_sub(plan.unrun) || (api == "gemini" && plan.unrun > 0);
        let reply = if unrun {
            None
        } else if at < plan.failing {
            Some(Reply::error(
                500,
                "server_error",
                "the batch worker failed on this request",
            ))
        } else {
            let recorded = Recorded {
                method: "POST".into(),
                path,
                headers: Vec::new(),
                body: body.to_string(),
            };
            let reply = crate::next_reply(script, recorded);
            lock(script).in_flight -= 1;
            Some(reply)
        };
        ids.push(id);
        replies.push(reply);
    }
    let mut script = lock(script);
    let id = match api {
        "openai" => format!("batch_{}", script.batches.created.len() + 1),
        "anthropic" => format!("msgbatch_{}", script.batches.created.len() + 1),
        _ => format!("batches/{}", script.batches.created.len() + 1),
    };
    let created = Created {
        id: id.clone(),
        api,
        ids,
        replies,
        plan,
        polled: 0,
    };
    let reply = state(&created, false);
    script.batches.created.push(created);
    reply
}

/// `GET` of a batch (or of its results): where it is; once it has ended, its results.
fn poll(script: &Mutex<Script>, id: &str, results: bool) -> Option<Reply> {
    let mut script = lock(script);
    let at = (script.batches.created.iter())
        .position(|created| created.id == id || created.id.ends_with(&format!("/{id}")))?;
    if !results {
        script.batches.created[at].polled += 1;
    }
    let created = script.batches.created[at].clone();
    let ended = created.polled > created.plan.polls;
    if created.api == "openai" && ended {
        let (output, errors) = openai_files(&created);
        script.batches.files.insert(format!("{id}-output"), output);
        script.batches.files.insert(format!("{id}-errors"), errors);
    }
    Some(if results {
        anthropic_results(&created)
    } else {
        state(&created, ended)
    })
}

/// The batch object each API answers with.
fn state(created: &Created, ended: bool) -> Reply {
    let expired = created.plan.unrun > 0;
    let body = match created.api {
        "openai" => json!({
            "id": created.id, "object": "batch", "endpoint": "/v1/chat/completions",
            "status": match (ended, expired) { (false, _) => "in_progress", (true, false) => "completed", (true, true) => "expired" },
            "output_file_id": ended.then(|| format!("{}-output", created.id)),
            "error_file_id": ended.then(|| format!("{}-errors", created.id)),
            "request_counts": { "total": created.ids.len() },
        }),
        "anthropic" => json!({
            "id": created.id, "type": "message_batch",
            "processing_status": if ended { "ended" } else { "in_progress" },
            "results_url": ended.then(|| format!("https://elsewhere.example/v1/messages/batches/{}/results", created.id)),
        }),
        _ => {
            let state = match (ended, expired) {
                (false, _) => "BATCH_STATE_RUNNING",
                (true, false) => "BATCH_STATE_SUCCEEDED",
                (true, true) => "BATCH_STATE_EXPIRED",
            };
            let mut operation =
                json!({ "name": created.id, "metadata": { "name": created.id, "state": state } });
            if ended && !expired {
                let inlined: Vec<Value> = (created.ids.iter().zip(&created.replies))
                    .map(|(key, reply)| gemini_inlined(key, reply.as_ref()))
                    .collect();
                operation["done"] = json!(true);
                operation["response"] =
                    json!({ "inlinedResponses": { "inlinedResponses": inlined } });
            } else if ended {
                operation["done"] = json!(true);
            }
            operation
        }
    };
    Reply::raw(200, &body.to_string())
}

fn body_of(reply: &Reply) -> Value {
    serde_json::from_str(&reply.body).unwrap_or(Value::Null)
}

/// OpenAI's output file (the 200s) and error file (the rest, and the unrun as expired).
fn openai_files(created: &Created) -> (String, String) {
    let (mut output, mut errors) = (String::new(), String::new());
    for (at, (key, reply)) in created.ids.iter().zip(&created.replies).enumerate() {
        let line = match reply {
            Some(reply) => {
                json!({ "id": format!("batch_req_{at}"), "custom_id": key, "response": { "status_code": reply.status, "request_id": format!("req_{at}"), "body": body_of(reply) }, "error": null })
            }
            None => {
                json!({ "id": format!("batch_req_{at}"), "custom_id": key, "response": null, "error": { "code": "batch_expired", "message": "This request could not be executed before the completion window expired." } })
            }
        };
        let file = if reply.as_ref().is_some_and(|reply| reply.status == 200) {
            &mut output
        } else {
            &mut errors
        };
        file.push_str(&line.to_string());
        file.push('\n');
    }
    (output, errors)
}

/// Anthropic's results: one line a request.
fn anthropic_results(created: &Created) -> Reply {
    let mut lines = String::new();
    for (key, reply) in created.ids.iter().zip(&created.replies) {
        let result = match reply {
            Some(reply) if reply.status == 200 => {
                json!({ "type": "succeeded", "message": body_of(reply) })
            }
            Some(reply) => {
                let kind = if reply.status >= 500 {
                    "api_error"
                } else {
                    "invalid_request_error"
                };
                let message = body_of(reply)["error"]["message"].clone();
                json!({ "type": "errored", "error": { "type": "error", "error": { "type": kind, "message": message } } })
            }
            None => json!({ "type": "expired" }),
        };
        lines.push_str(&json!({ "custom_id": key, "result": result }).to_string());
        lines.push('\n');
    }
    Reply::raw(200, &lines)
}

/// Gemini's inlined response of one request.
fn gemini_inlined(key: &str, reply: Option<&Reply>) -> Value {
    match reply {
        Some(reply) if reply.status == 200 => {
            json!({ "response": body_of(reply), "metadata": { "key": key } })
        }
        Some(reply) => {
            json!({ "error": { "code": reply.status, "message": body_of(reply)["error"]["message"] }, "metadata": { "key": key } })
        }
        None => {
            json!({ "error": { "code": 504, "message": "not run" }, "metadata": { "key": key } })
        }
    }
}
