//! The `structure:tool/structuring` exports: WIT values to the core's types and back.

use serde_json::{Map, Value};

use crate::error::{ErrorKind, StructureError};
use crate::outcome::{
    Answer, Category, Match, Outcome, ReviewStatus, ReviewTicket, Source, Trace, Usage,
};
use crate::request::{Document, SchemaInput, StructureRequest};
use crate::schema::registry::{Registration, SchemaInfo};
use crate::schema::skill::SkillFiles;
use crate::scope::Scope;
use crate::wasi::bindings::exports::structure::tool::structuring as api;
use crate::wasi::component::Component;
use crate::wasi::pages::ReadEveryPageOnReturn;
use crate::wasi::ports::with_ports;
use crate::{api as core, tool_definition};

impl api::Guest for Component {
    fn structure(scope: api::Scope, request: api::Request) -> Result<api::Outcome, api::Error> {
        let _pages = ReadEveryPageOnReturn;
        let scope = to_scope(scope)?;
        let schema = match request.schema {
            api::SchemaInput::Inline(text) => SchemaInput::Inline(parse_json("schema", &text)?),
            api::SchemaInput::Named(name) => SchemaInput::Named(name),
            api::SchemaInput::Described(text) => SchemaInput::Described(text),
            api::SchemaInput::Examples(text) => match parse_json("schema", &text)? {
                Value::Array(examples) => SchemaInput::Examples(examples),
                example => SchemaInput::Examples(vec![example]),
            },
        };
        let settings = match request.settings {
            None => Map::new(),
            Some(text) => match parse_json("settings", &text)? {
                Value::Object(settings) => settings,
                _ => {
                    return Err(invalid(
                        "settings",
                        "settings must be a JSON object of overrides",
                    ));
                }
            },
        };
        let document = request
            .document
            .map(|document| Document::new(document.data, &document.media_type))
            .transpose()
            .map_err(to_wit_error)?;
        let checked = match document {
            Some(document) if request.prompt.trim().is_empty() => {
                StructureRequest::for_document(document, schema, request.max_loops)
            }
            Some(document) => StructureRequest::new(request.prompt, schema, request.max_loops)
                .map(|checked| checked.with_document(document)),
            None => StructureRequest::new(request.prompt, schema, request.max_loops),
        };
        let request = checked
            .map_err(to_wit_error)?
            .with_settings(settings)
            .with_records(request.records)
            .with_return_text(request.return_text);
        with_ports(|ports| core::structure(&request, &scope, ports))
            .map(to_wit_outcome)
            .map_err(to_wit_error)
    }

    fn call_tool(scope: api::Scope, arguments: String) -> Result<String, api::Error> {
        let _pages = ReadEveryPageOnReturn;
        let scope = to_scope(scope)?;
        let arguments = parse_json("arguments", &arguments)?;
        with_ports(|ports| core::call_tool(&arguments, &scope, ports))
            .map(|outcome| outcome.to_string())
            .map_err(to_wit_error)
    }

    fn tool_definition() -> String {
        let _pages = ReadEveryPageOnReturn;
        tool_definition::tool_definition().to_string()
    }

    fn list_schemas(scope: api::Scope) -> Result<Vec<api::SchemaInfo>, api::Error> {
        let _pages = ReadEveryPageOnReturn;
        let scope = to_scope(scope)?;
        with_ports(|ports| core::list_schemas(&scope, ports))
            .map(|list| list.into_iter().map(to_wit_info).collect())
            .map_err(to_wit_error)
    }

    fn get_schema(scope: api::Scope, name: String) -> Result<api::RegisteredSchema, api::Error> {
        let _pages = ReadEveryPageOnReturn;
        let scope = to_scope(scope)?;
        with_ports(|ports| core::get_schema(&scope, &name, ports))
            .map(|found| api::RegisteredSchema {
                info: to_wit_info(found.info()),
                schema: found.schema.to_string(),
                manual: found.manual,
            })
            .map_err(to_wit_error)
    }

    fn register_schema(
        scope: api::Scope,
        registration: api::Registration,
    ) -> Result<api::SchemaInfo, api::Error> {
        let _pages = ReadEveryPageOnReturn;
        let scope = to_scope(scope)?;
        let registration = Registration {
            name: registration.name,
            schema: parse_json("schema", &registration.schema)?,
            manual: registration.manual,
            version: registration.version,
        };
        with_ports(|ports| core::register_schema(&scope, registration, ports))
            .map(to_wit_info)
            .map_err(to_wit_error)
    }

    fn register_skill(scope: api::Scope, skill: api::Skill) -> Result<api::SchemaInfo, api::Error> {
        let _pages = ReadEveryPageOnReturn;
        let scope = to_scope(scope)?;
        let skill = SkillFiles {
            skill_md: skill.skill_md,
            files: skill.files,
        };
        with_ports(|ports| core::register_skill(&scope, &skill, ports))
            .map(to_wit_info)
            .map_err(to_wit_error)
    }

    fn deregister_schema(scope: api::Scope, name: String) -> Result<bool, api::Error> {
        let _pages = ReadEveryPageOnReturn;
        let scope = to_scope(scope)?;
        with_ports(|ports| core::deregister_schema(&scope, &name, ports)).map_err(to_wit_error)
    }

    fn get_settings(scope: api::Scope) -> Result<String, api::Error> {
        let _pages = ReadEveryPageOnReturn;
        let scope = to_scope(scope)?;
        with_ports(|ports| core::settings_of(&scope, ports))
            .map(|settings| settings.to_string())
            .map_err(to_wit_error)
    }

    fn set_settings(scope: api::Scope, overrides: String) -> Result<(), api::Error> {
        let _pages = ReadEveryPageOnReturn;
        let scope = to_scope(scope)?;
        let Value::Object(overrides) = parse_json("settings", &overrides)? else {
            return Err(invalid(
                "settings",
                "settings must be a JSON object of overrides",
            ));
        };
        with_ports(|ports| core::set_settings(&scope, &overrides, ports)).map_err(to_wit_error)
    }
}

fn to_scope(scope: api::Scope) -> Result<Scope, api::Error> {
    Scope::new(&scope.tenant, scope.project.as_deref()).map_err(to_wit_error)
}

fn parse_json(field: &str, text: &str) -> Result<Value, api::Error> {
    serde_json::from_str(text)
        .map_err(|error| invalid(field, &format!("{field} is not valid JSON: {error}")))
}

fn invalid(field: &str, message: &str) -> api::Error {
    to_wit_error(StructureError::invalid_request(field, message))
}

fn to_wit_info(info: SchemaInfo) -> api::SchemaInfo {
    api::SchemaInfo {
        name: info.name,
        title: info.title,
        description: info.description,
        version: info.version,
        origin: info.origin,
        has_manual: info.has_manual,
    }
}

fn to_wit_usage(usage: Usage) -> api::Usage {
    api::Usage {
        llm_calls: usage.llm_calls,
        prompt_tokens: usage.prompt_tokens,
        completion_tokens: usage.completion_tokens,
        cached_prompt_tokens: usage.cached_prompt_tokens,
    }
}

fn to_wit_outcome(outcome: Outcome) -> api::Outcome {
    let partial = outcome.partial.map(|partial| partial.to_string());
    let (status, data, need, errors) = match outcome.answer {
        Answer::Ok(data) => (api::Status::Ok, Some(data.to_string()), None, Vec::new()),
        Answer::NeedMoreInput(need) => (api::Status::NeedMoreInput, None, Some(need), Vec::new()),
        Answer::Stale(errors) => (api::Status::Stale, None, None, errors),
    };
    api::Outcome {
        status,
        data,
        sources: outcome.sources.into_iter().map(to_wit_source).collect(),
        partial,
        incomplete: outcome.incomplete.map(|records| {
            records
                .into_iter()
                .map(|incomplete| api::IncompleteRecord {
                    record: incomplete.record.to_string(),
                    need: incomplete.need,
                    sources: incomplete.sources.into_iter().map(to_wit_source).collect(),
                })
                .collect()
        }),
        text: outcome.text,
        need,
        errors,
        schema_origin: outcome.schema_origin,
        iterations: outcome.iterations,
        usage: to_wit_usage(outcome.usage),
        trace: to_wit_trace(outcome.trace),
        review: outcome.review.map(to_wit_review),
    }
}

fn to_wit_review(ticket: ReviewTicket) -> api::ReviewTicket {
    api::ReviewTicket {
        id: ticket.id,
        status: match ticket.status {
            ReviewStatus::Pending => api::ReviewStatus::Pending,
            ReviewStatus::Claimed => api::ReviewStatus::Claimed,
            ReviewStatus::Reviewed => api::ReviewStatus::Reviewed,
        },
        fields: (ticket.fields.into_iter())
            .map(|field| api::ReviewField {
                pointer: field.pointer,
                reason: field.reason,
            })
            .collect(),
    }
}

fn to_wit_trace(trace: Trace) -> api::Trace {
    api::Trace {
        model: trace.model,
        provider_profile: trace.provider_profile,
        delivery: trace.delivery,
        warnings: trace.warnings,
        schema_transforms: trace.schema_transforms,
        repairs: trace.repairs,
        feedback: trace.feedback,
        reasons: trace
            .reasons
            .into_iter()
            .map(|reason| api::Reason {
                iteration: reason.iteration,
                pointer: reason.pointer,
                category: to_wit_category(reason.category),
            })
            .collect(),
        retries: trace.retries,
        schema_builder: trace.schema_builder.map(|builder| api::BuilderTrace {
            model: builder.model,
            cache_hit: builder.cache_hit,
            usage: to_wit_usage(builder.usage),
            schema: builder.schema.map(|schema| schema.to_string()),
        }),
        context_window: (trace.context_window).map(|window| api::ContextWindow {
            tokens: window.tokens,
            source: window.from,
        }),
        chunks: trace.chunks,
        chunk_of: trace.chunk_of.into_iter().collect(),
        attempts: (trace.attempts.into_iter())
            .map(|attempt| api::Attempt {
                model: attempt.model,
                outcome: attempt.outcome,
                usage: to_wit_usage(attempt.usage),
            })
            .collect(),
        low_confidence: trace.low_confidence,
        in_doubt: trace.in_doubt,
        second_looks: trace.second_looks,
        form_confidence: trace.form_confidence,
        left_out: trace.left_out,
        page_sizes: (trace.page_sizes.into_iter())
            .map(|size| api::PageSize {
                page: size.page,
                width: size.width,
                height: size.height,
            })
            .collect(),
    }
}

fn to_wit_category(category: Category) -> api::ReasonCategory {
    match category {
        Category::Type => api::ReasonCategory::Type,
        Category::Required => api::ReasonCategory::Required,
        Category::AdditionalProperty => api::ReasonCategory::AdditionalProperty,
        Category::Enum => api::ReasonCategory::Enum,
        Category::Pattern => api::ReasonCategory::Pattern,
        Category::Format => api::ReasonCategory::Format,
        Category::Range => api::ReasonCategory::Range,
        Category::Length => api::ReasonCategory::Length,
        Category::Items => api::ReasonCategory::Items,
        Category::Properties => api::ReasonCategory::Properties,
        Category::Combination => api::ReasonCategory::Combination,
        Category::Unreadable => api::ReasonCategory::Unreadable,
        Category::Ungrounded => api::ReasonCategory::Ungrounded,
        Category::Schema => api::ReasonCategory::Schema,
        Category::Rule => api::ReasonCategory::Rule,
        Category::Other => api::ReasonCategory::Other,
    }
}

fn to_wit_source(source: Source) -> api::Source {
    let offset = |offset: usize| u32::try_from(offset).unwrap_or(u32::MAX);
    api::Source {
        pointer: source.pointer,
        span: source.span.map(|span| api::Span {
            start: offset(span.start),
            end: offset(span.end),
            text: span.text,
            utf16_start: offset(span.utf16_start),
            utf16_end: offset(span.utf16_end),
        }),
        matched: match source.matched {
            Match::Exact => api::SourceMatch::Exact,
            Match::Normalized => api::SourceMatch::Normalized,
            Match::Derived => api::SourceMatch::Derived,
        },
        page: source.page,
        boxes: (source.boxes.into_iter())
            .map(|line| api::PageBox {
                page: line.page,
                x0: line.x0,
                top: line.top,
                x1: line.x1,
                bottom: line.bottom,
            })
            .collect(),
        cell: source.cell,
        confidence: source.confidence,
    }
}

fn to_wit_error(error: StructureError) -> api::Error {
    let kind = match error.kind {
        ErrorKind::InvalidRequest { field } => api::ErrorKind::InvalidRequest(field),
        ErrorKind::SchemaNotFound { name, suggestions } => {
            api::ErrorKind::SchemaNotFound(api::NotFound { name, suggestions })
        }
        ErrorKind::InvalidSchema { pointer } => api::ErrorKind::InvalidSchema(pointer),
        ErrorKind::Configuration { key } => api::ErrorKind::Configuration(key),
        ErrorKind::Provider {
            status,
            retryable,
            code,
        } => api::ErrorKind::Provider(api::ProviderFailure {
            status,
            retryable,
            code,
        }),
        ErrorKind::Transport => api::ErrorKind::Transport,
        ErrorKind::Refusal => api::ErrorKind::Refusal,
        ErrorKind::Blocked { reason } => api::ErrorKind::Blocked(reason),
        ErrorKind::Truncated => api::ErrorKind::Truncated,
        ErrorKind::InvalidResponse => api::ErrorKind::InvalidResponse,
        ErrorKind::StructuredOutputFailed => api::ErrorKind::StructuredOutputFailed,
        ErrorKind::BudgetExhausted => api::ErrorKind::BudgetExhausted,
        ErrorKind::Storage => api::ErrorKind::Storage,
        ErrorKind::Unsupported => api::ErrorKind::Unsupported,
        ErrorKind::InvalidDocument { reason } => api::ErrorKind::InvalidDocument(reason),
    };
    api::Error {
        kind,
        message: error.message,
        usage: to_wit_usage(error.usage),
    }
}
