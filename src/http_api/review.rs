//! `/v1/review`: the review queue ([`crate::review`]) for the `reviewer` role (and admins).
//!
//! | route | method | what |
//! |---|---|---|
//! | `/v1/review?status=pending` | GET | the items of a status (`pending`, `claimed`, `reviewed`), oldest first |
//! | `/v1/review/corrections` | GET | what reviewers corrected, per schema and field, from what to what |
//! | `/v1/review/{id}` | GET | one item: its result, text, schema, values in doubt, claim, and once reviewed the reviewed result |
//! | `/v1/review/{id}/claim` | POST | take the item (no body): 409 while another reviewer holds it |
//! | `/v1/review/{id}/example` | POST | (admin) the reviewed data made an example of its registered schema: its next minor version |
//! | `/v1/review/{id}` | POST | `{"data": …}`: the confirmed or corrected data; 422 with each violation at its pointer when it breaks the schema or a rule |

use serde_json::{Value, json};

use super::auth::Caller;
use super::exchange::{ApiRequest, ApiResponse};
use crate::api;
use crate::error::StructureError;
use crate::outcome::ReviewStatus;
use crate::ports::Ports;
use crate::review::{Item, Queue, Refused, corrections, example};
use crate::schema::violation::Violation;

/// `GET /v1/review?status=…`.
pub fn list(request: &ApiRequest, caller: &Caller, ports: &Ports<'_>) -> ApiResponse {
    let asked = request.query("status").unwrap_or("pending");
    let status = match asked {
        "pending" => ReviewStatus::Pending,
        "claimed" => ReviewStatus::Claimed,
        "reviewed" => ReviewStatus::Reviewed,
        other => {
            let message = format!("status must be pending, claimed or reviewed, not {other:?}");
            return ApiResponse::from_error(&StructureError::invalid_request("status", message));
        }
    };
    match Queue::new(&caller.scope, ports).list(status) {
        Ok(items) => ApiResponse::json(200, &json!({ "items": items })),
        Err(error) => ApiResponse::from_error(&error),
    }
}

/// `GET /v1/review/corrections`.
pub fn corrections(caller: &Caller, ports: &Ports<'_>) -> ApiResponse {
    match Queue::new(&caller.scope, ports).items(ReviewStatus::Reviewed) {
        Ok(items) => ApiResponse::json(200, &json!({ "schemas": corrections::of(&items) })),
        Err(error) => ApiResponse::from_error(&error),
    }
}

/// `GET /v1/review/{id}`.
pub fn get(id: &str, caller: &Caller, ports: &Ports<'_>) -> ApiResponse {
    answer(Queue::new(&caller.scope, ports).get(id))
}

/// `POST /v1/review/{id}/claim`.
pub fn claim(id: &str, caller: &Caller, ports: &Ports<'_>) -> ApiResponse {
    answer(Queue::new(&caller.scope, ports).claim(id, &caller.name))
}

/// `POST /v1/review/{id}/example`: the reviewed data added to the item's schema's `examples`.
pub fn example(id: &str, caller: &Caller, ports: &Ports<'_>) -> ApiResponse {
    let item = match Queue::new(&caller.scope, ports).get(id) {
        Ok(item) if item.reviewed.is_some() => item,
        Ok(_) => {
            let message = "only a reviewed item's data can become an example: review it first";
            return ApiResponse::error(409, "conflict", message, json!({}));
        }
        Err(refused) => return answer(Err(refused)),
    };
    let registered = match api::get_schema(&caller.scope, &item.schema_name, ports) {
        Ok(registered) => registered,
        Err(_) => return answer(Err(Refused::NotNamed(item.schema_name.clone()))),
    };
    let registration = match example::registration(&item, &registered) {
        Ok(registration) => registration,
        Err(refused) => return answer(Err(refused)),
    };
    match api::register_schema(&caller.scope, registration, ports) {
        Ok(info) => ApiResponse::json(200, &json!({ "schema": info })),
        Err(error) => ApiResponse::from_error(&error),
    }
}

/// `POST /v1/review/{id}` with `{"data": …}`.
pub fn submit(id: &str, body: Value, caller: &Caller, ports: &Ports<'_>) -> ApiResponse {
    let Some(data) = body.get("data").cloned() else {
        return ApiResponse::from_error(&StructureError::invalid_request(
            "data",
            "send the reviewed data: {\"data\": …}",
        ));
    };
    answer(Queue::new(&caller.scope, ports).submit(id, &caller.name, data))
}

/// What a violation says, without its pointer (which goes beside it).
fn problem(violation: &Violation) -> String {
    match &violation.actual {
        Some(actual) => format!("{} (was {actual})", violation.constraint),
        None => violation.constraint.clone(),
    }
}

/// An item as the API writes it (with the reviewed result once there is one), or the error
/// response to what the queue refused.
fn answer(result: Result<Item, Refused>) -> ApiResponse {
    match result {
        Ok(item) => {
            let reviewed = item.reviewed_result();
            let mut body = serde_json::to_value(&item).unwrap_or_default();
            if let (Some(reviewed), Some(object)) = (reviewed, body.as_object_mut()) {
                object.insert("reviewedResult".into(), reviewed);
            }
            ApiResponse::json(200, &body)
        }
        Err(Refused::NotFound(id)) => ApiResponse::error(
            404,
            "not-found",
            &format!("no review item {id:?} in this tenant"),
            json!({}),
        ),
        Err(Refused::Claimed(claim)) => ApiResponse::error(
            409,
            "conflict",
            &format!("{} holds this item since {}", claim.by, claim.at),
            json!({ "claim": claim }),
        ),
        Err(Refused::NotClaimed) => ApiResponse::error(
            409,
            "conflict",
            "claim the item first: POST /v1/review/{id}/claim",
            json!({}),
        ),
        Err(Refused::Reviewed) => {
            ApiResponse::error(409, "conflict", "this item is reviewed already", json!({}))
        }
        Err(Refused::NotNamed(how)) => ApiResponse::error(
            409,
            "conflict",
            &format!(
                "the item's schema was given {how}, not by a name of the registry: only a \
                 registered schema keeps examples"
            ),
            json!({}),
        ),
        Err(Refused::Invalid(violations)) => {
            let problems: Vec<Value> = (violations.iter())
                .map(|violation| json!({ "pointer": violation.pointer, "message": problem(violation) }))
                .collect();
            ApiResponse::error(
                422,
                "invalid-edit",
                &format!(
                    "the edit does not validate against the schema: {}",
                    violations
                        .iter()
                        .map(ToString::to_string)
                        .collect::<Vec<_>>()
                        .join("; ")
                ),
                json!({ "problems": problems }),
            )
        }
        Err(Refused::Store(error)) => ApiResponse::from_error(&error),
    }
}
