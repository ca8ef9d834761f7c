//! The typed results as JSON, exactly as the component's tool form and HTTP API write them: each
//! is turned into the core's own type and serialised by the core, so the JSON shape of an
//! outcome, an error or a schema's info has one definition.

use serde_json::Value;

use crate::bindings::{
    BuilderTrace, Error, ErrorKind, Outcome, ReasonCategory, ReviewStatus, ReviewTicket,
    SchemaInfo, Source, SourceMatch, Status, Trace, Usage,
};

impl Outcome {
    /// The outcome as the tool form returns it:
    /// `{"status", "data" | "need" | "errors", "schemaOrigin", "iterations", "usage", "trace"}`.
    ///
    /// ```
    /// use structure_host::{Outcome, Status, Trace, Usage};
    ///
    /// let outcome = Outcome {
    ///     status: Status::NeedMoreInput,
    ///     data: None,
    ///     sources: Vec::new(),
    ///     partial: None,
    ///     incomplete: None,
    ///     text: None,
    ///     need: Some("the customer's email".into()),
    ///     errors: Vec::new(),
    ///     schema_origin: "inline".into(),
    ///     iterations: 1,
    ///     usage: Usage { llm_calls: 1, prompt_tokens: 90, completion_tokens: 9, cached_prompt_tokens: 0 },
    ///     trace: Trace {
    ///         model: "openai/gpt-4.1-mini".into(),
    ///         provider_profile: "openai".into(),
    ///         delivery: "native".into(),
    ///         warnings: Vec::new(),
    ///         schema_transforms: Vec::new(),
    ///         repairs: Vec::new(),
    ///         feedback: Vec::new(),
    ///         reasons: Vec::new(),
    ///         retries: 0,
    ///         schema_builder: None,
    ///         context_window: None,
    ///         chunks: 0,
    ///         chunk_of: Vec::new(),
    ///         attempts: Vec::new(),
    ///         low_confidence: Vec::new(),
    ///         in_doubt: Vec::new(),
    ///         second_looks: Vec::new(),
    ///         form_confidence: None,
    ///         left_out: Vec::new(),
    ///         page_sizes: Vec::new(),
    ///     },
    ///     review: None,
    /// };
    /// let json = outcome.to_json();
    /// assert_eq!(json["status"], "need-more-input");
    /// assert_eq!(json["need"], "the customer's email");
    /// assert_eq!(json["usage"]["llmCalls"], 1);
    /// ```
    pub fn to_json(&self) -> Value {
        core_outcome(self).to_json()
    }
}

impl Error {
    /// The error as the tool form returns it: `{"error": {"kind", ...details, "message", "usage"}}`.
    ///
    /// ```
    /// use structure_host::{Error, ErrorKind, Usage};
    ///
    /// let error = Error {
    ///     kind: ErrorKind::Configuration("openai_api_key".into()),
    ///     message: "no OpenAI API key".into(),
    ///     usage: Usage { llm_calls: 0, prompt_tokens: 0, completion_tokens: 0, cached_prompt_tokens: 0 },
    /// };
    /// let json = error.to_json();
    /// assert_eq!(json["error"]["kind"], "configuration");
    /// assert_eq!(json["error"]["key"], "openai_api_key");
    /// ```
    pub fn to_json(&self) -> Value {
        core_error(self).to_json()
    }
}

impl SchemaInfo {
    /// The schema's info as the HTTP API lists it:
    /// `{"name", "title", "description", "version", "origin", "hasManual"}`.
    ///
    /// ```
    /// use structure_host::SchemaInfo;
    ///
    /// let info = SchemaInfo {
    ///     name: "lead".into(),
    ///     title: None,
    ///     description: Some("A sales lead".into()),
    ///     version: "1.0".into(),
    ///     origin: "tenant:acme".into(),
    ///     has_manual: false,
    /// };
    /// assert_eq!(info.to_json()["hasManual"], false);
    /// ```
    pub fn to_json(&self) -> Value {
        let info = structure::SchemaInfo {
            name: self.name.clone(),
            title: self.title.clone(),
            description: self.description.clone(),
            version: self.version.clone(),
            origin: self.origin.clone(),
            has_manual: self.has_manual,
        };
        serde_json::to_value(info).unwrap_or_default()
    }
}

/// JSON text the component wrote; text that is not JSON (it never is) stays a string.
fn parsed(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or_else(|_| Value::String(text.to_owned()))
}

fn core_usage(usage: &Usage) -> structure::Usage {
    structure::Usage {
        llm_calls: usage.llm_calls,
        prompt_tokens: usage.prompt_tokens,
        completion_tokens: usage.completion_tokens,
        cached_prompt_tokens: usage.cached_prompt_tokens,
    }
}

fn core_builder(builder: &BuilderTrace) -> structure::outcome::BuilderTrace {
    structure::outcome::BuilderTrace {
        model: builder.model.clone(),
        cache_hit: builder.cache_hit,
        usage: core_usage(&builder.usage),
        schema: builder.schema.as_deref().map(parsed),
    }
}

fn core_trace(trace: &Trace) -> structure::Trace {
    structure::Trace {
        model: trace.model.clone(),
        provider_profile: trace.provider_profile.clone(),
        delivery: trace.delivery.clone(),
        warnings: trace.warnings.clone(),
        schema_transforms: trace.schema_transforms.clone(),
        repairs: trace.repairs.clone(),
        feedback: trace.feedback.clone(),
        reasons: trace
            .reasons
            .iter()
            .map(|reason| structure::outcome::Reason {
                iteration: reason.iteration,
                pointer: reason.pointer.clone(),
                category: core_category(reason.category),
            })
            .collect(),
        retries: trace.retries,
        schema_builder: trace.schema_builder.as_ref().map(core_builder),
        context_window: trace.context_window.as_ref().map(|window| {
            structure::outcome::ContextWindow {
                tokens: window.tokens,
                from: window.source.clone(),
            }
        }),
        chunks: trace.chunks,
        chunk_of: trace.chunk_of.iter().cloned().collect(),
        attempts: (trace.attempts.iter())
            .map(|attempt| structure::outcome::Attempt {
                model: attempt.model.clone(),
                outcome: attempt.outcome.clone(),
                usage: core_usage(&attempt.usage),
            })
            .collect(),
        low_confidence: trace.low_confidence.clone(),
        in_doubt: trace.in_doubt.clone(),
        second_looks: trace.second_looks.clone(),
        form_confidence: trace.form_confidence,
        left_out: trace.left_out.clone(),
        page_sizes: (trace.page_sizes.iter())
            .map(|size| structure::outcome::PageSize {
                page: size.page,
                width: size.width,
                height: size.height,
            })
            .collect(),
    }
}

fn core_outcome(outcome: &Outcome) -> structure::Outcome {
    let answer = match outcome.status {
        Status::Ok => structure::Answer::Ok(outcome.data.as_deref().map_or(Value::Null, parsed)),
        Status::NeedMoreInput => {
            structure::Answer::NeedMoreInput(outcome.need.clone().unwrap_or_default())
        }
        Status::Stale => structure::Answer::Stale(outcome.errors.clone()),
    };
    structure::Outcome {
        answer,
        sources: outcome.sources.iter().map(core_source).collect(),
        partial: outcome.partial.as_deref().map(parsed),
        incomplete: outcome.incomplete.as_ref().map(|records| {
            records
                .iter()
                .map(|incomplete| structure::outcome::Incomplete {
                    record: parsed(&incomplete.record),
                    need: incomplete.need.clone(),
                    sources: incomplete.sources.iter().map(core_source).collect(),
                })
                .collect()
        }),
        schema_origin: outcome.schema_origin.clone(),
        iterations: outcome.iterations,
        usage: core_usage(&outcome.usage),
        trace: core_trace(&outcome.trace),
        text: outcome.text.clone(),
        review: outcome.review.as_ref().map(core_review),
    }
}

fn core_review(ticket: &ReviewTicket) -> structure::outcome::ReviewTicket {
    use structure::outcome::{ReviewField, ReviewStatus as Core};
    structure::outcome::ReviewTicket {
        id: ticket.id.clone(),
        status: match ticket.status {
            ReviewStatus::Pending => Core::Pending,
            ReviewStatus::Claimed => Core::Claimed,
            ReviewStatus::Reviewed => Core::Reviewed,
        },
        fields: (ticket.fields.iter())
            .map(|field| ReviewField {
                pointer: field.pointer.clone(),
                reason: field.reason.clone(),
            })
            .collect(),
    }
}

fn core_category(category: ReasonCategory) -> structure::outcome::Category {
    use structure::outcome::Category;
    match category {
        ReasonCategory::Type => Category::Type,
        ReasonCategory::Required => Category::Required,
        ReasonCategory::AdditionalProperty => Category::AdditionalProperty,
        ReasonCategory::Enum => Category::Enum,
        ReasonCategory::Pattern => Category::Pattern,
        ReasonCategory::Format => Category::Format,
        ReasonCategory::Range => Category::Range,
        ReasonCategory::Length => Category::Length,
        ReasonCategory::Items => Category::Items,
        ReasonCategory::Properties => Category::Properties,
        ReasonCategory::Combination => Category::Combination,
        ReasonCategory::Unreadable => Category::Unreadable,
        ReasonCategory::Ungrounded => Category::Ungrounded,
        ReasonCategory::Schema => Category::Schema,
        ReasonCategory::Rule => Category::Rule,
        ReasonCategory::Other => Category::Other,
    }
}

fn core_source(source: &Source) -> structure::outcome::Source {
    use structure::outcome::Match;
    structure::outcome::Source {
        pointer: source.pointer.clone(),
        span: source.span.as_ref().map(|span| structure::outcome::Span {
            start: span.start as usize,
            end: span.end as usize,
            text: span.text.clone(),
            utf16_start: span.utf16_start as usize,
            utf16_end: span.utf16_end as usize,
        }),
        matched: match source.matched {
            SourceMatch::Exact => Match::Exact,
            SourceMatch::Normalized => Match::Normalized,
            SourceMatch::Derived => Match::Derived,
        },
        page: source.page,
        boxes: (source.boxes.iter())
            .map(|line| structure::outcome::PageBox {
                page: line.page,
                x0: line.x0,
                top: line.top,
                x1: line.x1,
                bottom: line.bottom,
            })
            .collect(),
        cell: source.cell.clone(),
        confidence: source.confidence,
    }
}

fn core_error(error: &Error) -> structure::StructureError {
    use structure::ErrorKind as Core;
    let kind = match &error.kind {
        ErrorKind::InvalidRequest(field) => Core::InvalidRequest {
            field: field.clone(),
        },
        ErrorKind::SchemaNotFound(not_found) => Core::SchemaNotFound {
            name: not_found.name.clone(),
            suggestions: not_found.suggestions.clone(),
        },
        ErrorKind::InvalidSchema(pointer) => Core::InvalidSchema {
            pointer: pointer.clone(),
        },
        ErrorKind::Configuration(key) => Core::Configuration { key: key.clone() },
        ErrorKind::Provider(failure) => Core::Provider {
            status: failure.status,
            retryable: failure.retryable,
            code: failure.code.clone(),
        },
        ErrorKind::Transport => Core::Transport,
        ErrorKind::Refusal => Core::Refusal,
        ErrorKind::Blocked(reason) => Core::Blocked {
            reason: reason.clone(),
        },
        ErrorKind::Truncated => Core::Truncated,
        ErrorKind::InvalidResponse => Core::InvalidResponse,
        ErrorKind::StructuredOutputFailed => Core::StructuredOutputFailed,
        ErrorKind::BudgetExhausted => Core::BudgetExhausted,
        ErrorKind::Storage => Core::Storage,
        ErrorKind::Unsupported => Core::Unsupported,
        ErrorKind::InvalidDocument(reason) => Core::InvalidDocument {
            reason: reason.clone(),
        },
    };
    structure::StructureError::new(kind, error.message.clone()).with_usage(core_usage(&error.usage))
}
