//! The library's functions: what every surface (the component's exports, the HTTP API, MCP,
//! native embedders) calls. Each resolves the settings cascade for its scope and runs the
//! stages below it.

use serde_json::{Map, Value};

use crate::content::builder::Built;
use crate::error::StructureError;
use crate::insights::{Asked, schema_label};
use crate::outcome::{Outcome, Usage};
use crate::ports::Ports;
use crate::request::{SchemaInput, StructureRequest};
use crate::schema::registry::{RegisteredSchema, Registration, Registry, SchemaInfo};
use crate::schema::skill::SkillFiles;
use crate::scope::Scope;
use crate::settings::cascade::{self, Cascade};
use crate::settings::{ReviewPolicy, Settings};
use crate::{content, document, escalation, provider, review, schema};

/// Builds, before the first call, what calls would otherwise build on their way: the
/// meta-schema validators, the date patterns grounding reads with, the bundled schemas compiled,
/// and their answer envelopes in the hosted providers' subsets, written out as requests carry
/// them. The component runs it once at build time (its `wizer-initialize` export,
/// for `wasmtime-wizer`), so every fresh instance starts with them in memory; a native embedder
/// may call it to warm a thread.
pub fn prepare() {
    use crate::answer::format::{AnswerFormat, Shape};
    use crate::schema::subset::{ANTHROPIC, GEMINI, OPENAI_STRICT};
    use crate::schema::target::TargetSchema;
    use crate::schema::validator;
    use std::sync::Arc;

    validator::prepare();
    content::grounding::prepare();
    for bundled in schema::registry::bundled_schemas() {
        // Bundled schemas are checked by the test suite: neither step can fail for them. Each
        // is made a target as a call makes it: compiled, and its warnings kept.
        let _ = TargetSchema::stored(Arc::clone(&bundled.schema), None, String::new());
        for subset in [&OPENAI_STRICT, &ANTHROPIC, &GEMINI] {
            let format = AnswerFormat::build(&bundled.schema, subset, Shape::One);
            provider::wire::schema_text(&format.schema);
        }
    }
}

/// Structures `request.prompt` into an object that validates against the requested schema,
/// for `scope` (whose registry, settings and cache apply).
///
/// Schema problems and missing settings are reported before any LLM call.
pub fn structure(
    request: &StructureRequest,
    scope: &Scope,
    ports: &Ports<'_>,
) -> Result<Outcome, StructureError> {
    let started = ports.clock.now_unix_millis();
    let layers = cascade::stored_layers(scope, ports.key_value)?;
    let cascade = Cascade::new(ports.config).with_layer(&request.settings, "settings")?;
    let cascade = layers.into_iter().try_fold(cascade, |cascade, layer| {
        cascade.with_layer(&layer, "settings")
    })?;
    let settings = Settings::load(&cascade)?;
    // Providers quote requests in their errors; a key must not travel on in a message.
    structure_with(request, scope, ports, &settings, started)
        .map_err(|error| error.redacted(settings.secrets()))
}

fn structure_with(
    request: &StructureRequest,
    scope: &Scope,
    ports: &Ports<'_>,
    settings: &Settings,
    started: u64,
) -> Result<Outcome, StructureError> {
    settings.limits.check_prompt(&request.prompt)?;
    let read = document::read(&request.prompt, request.document.as_ref(), &settings.limits)?;
    let (outcome, reviewed) = structure_text(request, &read, scope, ports, settings, started)?;
    let text = reviewed.is_some().then(|| read.text.clone());
    let mut outcome = with_read(outcome, read, request.return_text);
    if let (Some((policy, schema)), Some(text)) = (reviewed, text) {
        let asked = Asked::of_input(&request.schema);
        let schema_name = schema_label(asked, Some(&outcome.schema_origin), None);
        let sent = review::Sent {
            schema: &schema,
            schema_name: &schema_name,
            records: request.records,
            text: &text,
            threshold: settings.confidence_threshold,
            document: request.document.as_ref(),
        };
        outcome.review = review::send(policy, &outcome, &sent, scope, ports)
            .map_err(|error| error.with_usage(outcome.usage))?;
    }
    Ok(outcome)
}

/// `outcome` with the page and the boxes of each source in the document (and the pages'
/// sizes), or its spreadsheet cell, and the text read when asked for.
fn with_read(mut outcome: Outcome, read: document::Read, return_text: bool) -> Outcome {
    if !read.pages.is_empty() {
        let incomplete = outcome.incomplete.iter_mut().flatten();
        let sources = (outcome.sources.iter_mut())
            .chain(incomplete.flat_map(|record| record.sources.iter_mut()));
        for source in sources {
            if let Some(span) = &source.span {
                source.page = read.page_at(span.start);
                source.boxes = read.boxes(span.start, span.end);
            }
        }
        outcome.trace.page_sizes = read.sizes.clone();
    }
    if read.is_spreadsheet() {
        let incomplete = outcome.incomplete.iter_mut().flatten();
        let sources = (outcome.sources.iter_mut())
            .chain(incomplete.flat_map(|record| record.sources.iter_mut()));
        for source in sources {
            source.cell = (source.span.as_ref()).and_then(|span| read.cell_at(span.start));
        }
    }
    if return_text {
        outcome.text = Some(read.text);
    }
    outcome
}

/// Structures what `request` reads: the text, and a document given to the model as it is;
/// with the review policy and the schema asked for where the result may go to review.
fn structure_text(
    request: &StructureRequest,
    read: &document::Read,
    scope: &Scope,
    ports: &Ports<'_>,
    settings: &Settings,
    started: u64,
) -> Result<(Outcome, Option<(ReviewPolicy, Value)>), StructureError> {
    let retry = provider::retry::RetryPolicy::from_settings(settings, started);
    let (target, builder_trace) = match &request.schema {
        SchemaInput::Described(description) => {
            match escalation::build(description, scope, settings, retry, ports)? {
                Built::Finished(outcome) | Built::Unusable(outcome) => return Ok((outcome, None)),
                Built::Ready { target, trace } => (target, Some(trace)),
            }
        }
        input => (
            schema::resolve(
                input,
                &Registry::new(ports.key_value, scope),
                &settings.limits,
            )?,
            None,
        ),
    };
    let spent_building = builder_trace
        .as_ref()
        .map(|trace| trace.usage)
        .unwrap_or_default();
    let add_building = |mut usage: Usage| {
        usage.add(spent_building);
        usage
    };
    // The schema a result sent to review is checked against, kept only where one may go.
    let policy = review::policy(settings.review, &target.schema);
    let asked = (policy != ReviewPolicy::Off).then(|| (policy, Value::clone(&target.schema)));
    let (target, root) = schema::root::plan(target, request.records)?;
    let plan = escalation::Plan {
        text: &read.text,
        attachment: read.attachment.as_ref(),
        scanned: &read.scanned,
        target: &target,
        settings,
        retry,
        max_loops: request.max_loops.unwrap_or(settings.max_loops),
        records: root.records(),
        spent_before: spent_building,
    };
    match escalation::run(&plan, ports) {
        Ok(outcome) => {
            let mut outcome = root.finish(outcome);
            outcome.usage = add_building(outcome.usage);
            outcome.trace.schema_builder = builder_trace;
            Ok((outcome, asked))
        }
        Err(error) => {
            let usage = add_building(error.usage);
            Err(error.with_usage(usage))
        }
    }
}

/// The tool form: `arguments` as an LLM tool call carries them, the outcome as JSON.
pub fn call_tool(
    arguments: &Value,
    scope: &Scope,
    ports: &Ports<'_>,
) -> Result<Value, StructureError> {
    let request = StructureRequest::from_tool_arguments(arguments)?;
    structure(&request, scope, ports).map(|outcome| outcome.to_json())
}

/// The schemas `scope` can use by name (project → tenant → bundled, first match wins).
pub fn list_schemas(scope: &Scope, ports: &Ports<'_>) -> Result<Vec<SchemaInfo>, StructureError> {
    Registry::new(ports.key_value, scope).list()
}

/// The schema `scope` gets for `name`, with its manual and origin.
pub fn get_schema(
    scope: &Scope,
    name: &str,
    ports: &Ports<'_>,
) -> Result<RegisteredSchema, StructureError> {
    Registry::new(ports.key_value, scope).find(name)
}

/// Registers a schema at `scope`'s own level (its project, else its tenant).
pub fn register_schema(
    scope: &Scope,
    registration: Registration,
    ports: &Ports<'_>,
) -> Result<SchemaInfo, StructureError> {
    let limits = Settings::load(&Cascade::new(ports.config))?.limits;
    Registry::new(ports.key_value, scope).register(registration, &limits)
}

/// Registers the output schema a skill's `SKILL.md` declares, with its body as the manual.
pub fn register_skill(
    scope: &Scope,
    skill: &SkillFiles,
    ports: &Ports<'_>,
) -> Result<SchemaInfo, StructureError> {
    register_schema(scope, schema::skill::registration(skill)?, ports)
}

/// Removes `name` from `scope`'s own level; `false` when it was not registered there.
pub fn deregister_schema(
    scope: &Scope,
    name: &str,
    ports: &Ports<'_>,
) -> Result<bool, StructureError> {
    Registry::new(ports.key_value, scope).deregister(name)
}

/// Replaces the setting overrides of `scope`'s own level (its project, else its tenant); an
/// empty object clears them.
pub fn set_settings(
    scope: &Scope,
    overrides: &Map<String, Value>,
    ports: &Ports<'_>,
) -> Result<(), StructureError> {
    cascade::store_layer(scope, overrides, ports)
}

/// The settings `scope` gets (overrides resolved over the host's configuration) and its own
/// level's overrides.
pub fn settings_of(scope: &Scope, ports: &Ports<'_>) -> Result<Value, StructureError> {
    cascade::describe(scope, ports)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ports::{
        Config, HttpRequest, HttpResponse, MemoryKeyValue, SystemClock, Transport, TransportError,
    };

    /// An OpenAI server whose model finds the contact.
    struct Canned;
    impl Transport for Canned {
        fn send(&self, _request: &HttpRequest) -> Result<HttpResponse, TransportError> {
            let content = r#"{"answer": {"name": "Ada Lovelace", "email": "ada@example.org"}}"#;
            let body = serde_json::json!({
                "choices": [{ "message": { "role": "assistant", "content": content }, "finish_reason": "stop" }],
                "usage": { "prompt_tokens": 120, "completion_tokens": 14 }
            });
            Ok(HttpResponse {
                status: 200,
                headers: vec![],
                body: body.to_string().into_bytes(),
            })
        }
    }

    struct OpenAi;
    impl Config for OpenAi {
        fn get(&self, key: &str) -> Result<Option<String>, String> {
            Ok(match key {
                "structure_model" => Some("openai/gpt-4.1-mini".to_owned()),
                "openai_api_key" => Some("sk-test".to_owned()),
                _ => None,
            })
        }
    }

    #[test]
    fn a_prepared_instance_builds_nothing_again_for_a_bundled_schema() {
        prepare();
        let contact = schema::registry::bundled_schemas()
            .into_iter()
            .find(|bundled| bundled.name == "contact")
            .unwrap()
            .schema
            .to_string();
        let compiled = schema::validator::BUILT_HERE.with_borrow(|built| built.len());
        let enveloped = crate::answer::format::BUILT_HERE.with_borrow(|built| built.len());
        assert!(
            compiled >= 5 && enveloped >= 15,
            "prepare built the bundled schemas"
        );

        let key_value = MemoryKeyValue::default();
        let ports = Ports {
            transport: &Canned,
            config: &OpenAi,
            key_value: &key_value,
            clock: &SystemClock,
        };
        let request = StructureRequest::new(
            "Ada Lovelace, ada@example.org",
            SchemaInput::Named("contact".into()),
            None,
        )
        .unwrap();
        let outcome = structure(&request, &Scope::default(), &ports).unwrap();
        assert!(
            matches!(outcome.answer, crate::Answer::Ok(_)),
            "{outcome:?}"
        );
        let compiled_after: Vec<String> =
            schema::validator::BUILT_HERE.with_borrow(|built| built[compiled..].to_vec());
        let enveloped_after: Vec<String> =
            crate::answer::format::BUILT_HERE.with_borrow(|built| built[enveloped..].to_vec());
        assert!(
            !compiled_after.contains(&contact),
            "the call compiled the bundled schema again"
        );
        assert!(
            !enveloped_after.contains(&contact),
            "the call built the envelope again"
        );
    }
}
