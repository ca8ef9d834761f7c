//! `GET /v1/insights`: each schema's calls over the last 24 hours or 7 days at the caller's own
//! level (`?window=24h|7d`, JSON, or CSV with `?format=csv`), and the recording of every call
//! the API and MCP answer ([`crate::insights`]).

use serde_json::Value;

use super::exchange::{ApiRequest, ApiResponse};
use crate::error::StructureError;
use crate::insights::{self, Asked, Call, Window, schema_label};
use crate::keys;
use crate::ports::Ports;
use crate::scope::Scope;

/// Whether the operator left insights on (`structure_insights`: `on`, the default, or `off`).
fn enabled(ports: &Ports<'_>) -> Result<bool, StructureError> {
    let value = (ports.config.get(keys::INSIGHTS)).map_err(|message| {
        StructureError::configuration(
            keys::INSIGHTS,
            format!("cannot read {}: {message}", keys::INSIGHTS),
        )
    })?;
    match value.as_deref().map(str::trim) {
        None | Some("" | "on") => Ok(true),
        Some("off") => Ok(false),
        Some(other) => Err(StructureError::configuration(
            keys::INSIGHTS,
            format!("{} is {other:?}; it is on or off", keys::INSIGHTS),
        )),
    }
}

/// `GET /v1/insights`: what was counted; a 500 naming the setting when it is neither on nor
/// off (the calls are not counted then either).
pub fn get(request: &ApiRequest, scope: &Scope, ports: &Ports<'_>) -> ApiResponse {
    if let Err(error) = enabled(ports) {
        return ApiResponse::from_error(&error);
    }
    let window = match Window::parse(request.query("window").unwrap_or("24h")) {
        Ok(window) => window,
        Err(error) => return ApiResponse::from_error(&error),
    };
    let now = ports.clock.now_unix_millis();
    let tallies = match insights::read(ports.key_value, scope, window, now) {
        Ok(tallies) => tallies,
        Err(error) => return ApiResponse::from_error(&error),
    };
    match request.query("format") {
        Some("csv") => {
            let file = format!(
                "attachment; filename=\"structure-insights-{}.csv\"",
                window.name()
            );
            ApiResponse::file(
                "text/csv; charset=utf-8",
                insights::csv(&tallies).as_bytes(),
            )
            .with_header("content-disposition", &file)
        }
        None | Some("json") => ApiResponse::json(200, &insights::json(window, &tallies)),
        Some(other) => ApiResponse::error(
            400,
            "invalid-request",
            &format!("format {other:?} is not one of json, csv"),
            serde_json::json!({ "field": "format" }),
        ),
    }
}

/// Counts one call the API or MCP answered: `arguments` as the caller sent them, `result` the
/// outcome or `{"error": ...}` as answered, `started` when the call began (unix ms). A store
/// that cannot count it does not fail the call: the call's answer matters more than its count.
pub fn record(arguments: &Value, result: &Value, started: u64, scope: &Scope, ports: &Ports<'_>) {
    if enabled(ports) != Ok(true) {
        return;
    }
    let Some(asked) = Asked::of_arguments(arguments) else {
        return;
    };
    let error_kind = result.pointer("/error/kind").and_then(Value::as_str);
    let origin = result.get("schemaOrigin").and_then(Value::as_str);
    let schema = schema_label(asked, origin, error_kind);
    let usage = crate::outcome::usage_in(result);
    let reasons = (result
        .pointer("/trace/reasons")
        .and_then(Value::as_array)
        .into_iter()
        .flatten())
    .filter_map(|reason| {
        let category = reason.get("category")?.as_str()?;
        let pointer = reason.get("pointer")?.as_str()?;
        Some((category.to_owned(), pointer.to_owned()))
    })
    .collect();
    let now = ports.clock.now_unix_millis();
    let call = Call {
        status: match error_kind {
            Some(_) => "error".to_owned(),
            None => result
                .get("status")
                .and_then(Value::as_str)
                .unwrap_or("error")
                .to_owned(),
        },
        iterations: result
            .get("iterations")
            .and_then(Value::as_u64)
            .unwrap_or(0) as u32,
        reasons,
        prompt_tokens: usage.prompt_tokens,
        completion_tokens: usage.completion_tokens,
        latency_ms: now.saturating_sub(started),
    };
    // A shard at random, so that calls at once seldom rewrite one document; none to hand, the
    // clock's milliseconds spread them less well.
    let shard = getrandom::u64().unwrap_or(now);
    let _ = insights::record(ports.key_value, scope, &schema, &call, now, shard);
}
