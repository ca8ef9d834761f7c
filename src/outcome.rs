//! The result of a `structure` call, as the tool definition's `returns` describes it.

use std::collections::BTreeMap;

use serde::{Serialize, Serializer};
#[cfg(feature = "json-schema")]
use serde_json::Map;
use serde_json::Value;

/// What the content stage arrived at. The data of a valid answer lives only in [`Answer::Ok`], so
/// a stale or incomplete result can never be mistaken for a valid one.
#[derive(Debug, Clone, PartialEq)]
pub enum Answer {
    /// The object validated against the full target schema.
    Ok(Value),
    /// The input lacks a required value; the text says which.
    NeedMoreInput(String),
    /// No valid answer within `maxLoops`; the validator messages of the last iteration.
    Stale(Vec<String>),
}

impl Answer {
    pub fn status(&self) -> &'static str {
        match self {
            Answer::Ok(_) => "ok",
            Answer::NeedMoreInput(_) => "need-more-input",
            Answer::Stale(_) => "stale",
        }
    }
}

/// Tokens spent on every LLM call of one request.
#[cfg_attr(
    feature = "json-schema",
    derive(schemars::JsonSchema),
    schemars(deny_unknown_fields)
)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Usage {
    pub llm_calls: u32,
    pub prompt_tokens: u64,
    pub completion_tokens: u64,
    pub cached_prompt_tokens: u64,
}

impl Usage {
    pub fn add(&mut self, other: Usage) {
        self.llm_calls += other.llm_calls;
        self.prompt_tokens += other.prompt_tokens;
        self.completion_tokens += other.completion_tokens;
        self.cached_prompt_tokens += other.cached_prompt_tokens;
    }
}

/// The kind of constraint a violation breaks, for counting which ones models break most.
#[cfg_attr(feature = "json-schema", derive(schemars::JsonSchema))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Category {
    /// The value's JSON type.
    Type,
    /// A required property is missing.
    Required,
    /// A property the schema does not allow.
    AdditionalProperty,
    /// Not one of the allowed values (`enum`, `const`).
    Enum,
    /// `pattern` (or a pattern too costly to check).
    Pattern,
    /// `format`.
    Format,
    /// Numeric bounds: `minimum`, `maximum`, their exclusive forms, `multipleOf`.
    Range,
    /// String length.
    Length,
    /// Array size, uniqueness, `contains`.
    Items,
    /// Object size, property names.
    Properties,
    /// `anyOf`, `oneOf`, `not`, `false`.
    Combination,
    /// The answer is not JSON.
    Unreadable,
    /// A value the text does not hold (`structure_grounding=require`).
    Ungrounded,
    /// A built schema that is not usable (the schema builder).
    Schema,
    /// A rule across fields (`x-kubernetes-validations`, `x-structure-rules`) the value breaks.
    Rule,
    /// Anything else the validator reports.
    Other,
}

impl Category {
    /// As the trace and the metrics write it: `additional-property`.
    pub fn name(self) -> &'static str {
        match self {
            Category::Type => "type",
            Category::Required => "required",
            Category::AdditionalProperty => "additional-property",
            Category::Enum => "enum",
            Category::Pattern => "pattern",
            Category::Format => "format",
            Category::Range => "range",
            Category::Length => "length",
            Category::Items => "items",
            Category::Properties => "properties",
            Category::Combination => "combination",
            Category::Unreadable => "unreadable",
            Category::Ungrounded => "ungrounded",
            Category::Schema => "schema",
            Category::Rule => "rule",
            Category::Other => "other",
        }
    }
}

/// One violation fed back to the model: in which iteration, where, of what kind.
#[cfg_attr(
    feature = "json-schema",
    derive(schemars::JsonSchema),
    schemars(deny_unknown_fields)
)]
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Reason {
    /// The iteration whose answer broke it (1 for the first answer).
    pub iteration: u32,
    /// JSON pointer into that answer.
    pub pointer: String,
    pub category: Category,
}

/// What was sent and repaired on the way.
#[cfg_attr(
    feature = "json-schema",
    derive(schemars::JsonSchema),
    schemars(deny_unknown_fields)
)]
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Trace {
    /// `provider/model` as called.
    pub model: String,
    /// The provider profile the request was shaped for.
    pub provider_profile: String,
    /// How the answer was delivered: `native`, `tool` or `prompt`.
    #[cfg_attr(feature = "json-schema", schemars(extend("enum" = ["native", "tool", "prompt"])))]
    pub delivery: String,
    /// What the schema holds that checks nothing: keywords JSON Schema does not define, formats
    /// no one checks (kept as annotations).
    pub warnings: Vec<String>,
    /// How the schema sent to the provider differs from the target schema.
    pub schema_transforms: Vec<String>,
    /// Repairs made to near-JSON answers before validation.
    pub repairs: Vec<String>,
    /// Each reason message fed back to the model, in order.
    pub feedback: Vec<String>,
    /// Each violation those messages named, with its category.
    pub reasons: Vec<Reason>,
    /// LLM requests repeated after a rate limit, an overload or a dropped connection.
    pub retries: u32,
    /// The schema builder's part, in `text` mode.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub schema_builder: Option<BuilderTrace>,
    /// The model's context window the requests were fitted to, and where its figure came from.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub context_window: Option<ContextWindow>,
    /// Records mode and long texts: the chunks the text was read in (one conversation each).
    #[serde(skip_serializing_if = "is_zero")]
    pub chunks: u32,
    /// A long text: the chunk (from 0) each value of `data` came from, by JSON pointer.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub chunk_of: BTreeMap<String, u32>,
    /// Escalation (`structure_escalate`): each model tried, in order; the last one answered.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub attempts: Vec<Attempt>,
    /// `structure_min_confidence`: the optional values dropped for a confidence below it, by
    /// JSON pointer into the answer.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub low_confidence: Vec<String>,
    /// Values the answer needs that the model was unsure of (under `structure_min_confidence`)
    /// and that a second reading of the text gave again: kept, not asked for, by JSON pointer
    /// into the answer (`data`, or `partial`). Check them (`trace.secondLooks` says what each reading found).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub in_doubt: Vec<String>,
    /// What a second look found: at a value the answer needs that the model was unsure of (the
    /// text read again for it alone), and, in a long text, at each field the threshold left
    /// out, in the few passages of the text about it (`content::second_look`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub second_looks: Vec<String>,
    /// How sure the model was of its answer's form (the tokens that write no value), where the
    /// provider gave log-probabilities; `structure_min_confidence=auto` trusts the values'
    /// confidence only when this is high enough.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub form_confidence: Option<f64>,
    /// What an `ok` answer was given without: each optional value that stayed invalid after
    /// every reason message, and each part of a long text whose answer did (where it is), with
    /// why.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub left_out: Vec<String>,
    /// A PDF document: each page's size as shown, so a client can scale the sources' boxes.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub page_sizes: Vec<PageSize>,
}

/// A page of a PDF document as it is shown (its crop box, turned by its `/Rotate`), in points.
#[cfg_attr(
    feature = "json-schema",
    derive(schemars::JsonSchema),
    schemars(deny_unknown_fields)
)]
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct PageSize {
    /// From 1.
    pub page: u32,
    pub width: f64,
    pub height: f64,
}

/// Where a line of a value stands on a page of a PDF, in points from the top-left corner of
/// the page as it is shown (the convention pdfplumber and Docling give words in).
#[cfg_attr(
    feature = "json-schema",
    derive(schemars::JsonSchema),
    schemars(deny_unknown_fields)
)]
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct PageBox {
    /// From 1.
    pub page: u32,
    pub x0: f64,
    pub top: f64,
    pub x1: f64,
    pub bottom: f64,
}

/// One model's try at a call that escalates.
#[cfg_attr(
    feature = "json-schema",
    derive(schemars::JsonSchema),
    schemars(deny_unknown_fields)
)]
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Attempt {
    /// `provider/model`.
    pub model: String,
    /// The status it came to (`ok`, `need-more-input`, `stale`), or the kind of its error
    /// (`provider`, `transport`, `truncated`, ...).
    pub outcome: String,
    /// What it cost.
    pub usage: Usage,
}

/// A model's context window as the trace shows it.
#[cfg_attr(
    feature = "json-schema",
    derive(schemars::JsonSchema),
    schemars(deny_unknown_fields)
)]
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ContextWindow {
    pub tokens: u32,
    /// `setting`, `table` (a hosted model's published window), `server` (it said), `learned`
    /// (a refusal said), `default`.
    #[cfg_attr(
        feature = "json-schema",
        schemars(extend("enum" = ["setting", "table", "server", "learned", "default"]))
    )]
    pub from: String,
}

fn is_zero(count: &u32) -> bool {
    *count == 0
}

impl Trace {
    /// Adds what one conversation recorded: its repairs, feedback and reasons.
    pub fn absorb(&mut self, conversation: Trace) {
        self.repairs.extend(conversation.repairs);
        self.feedback.extend(conversation.feedback);
        self.reasons.extend(conversation.reasons);
        self.retries += conversation.retries;
        self.left_out.extend(conversation.left_out);
    }
}

/// What the schema builder did for a `text` mode call.
#[cfg_attr(
    feature = "json-schema",
    derive(schemars::JsonSchema),
    schemars(deny_unknown_fields)
)]
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct BuilderTrace {
    /// The builder's `provider/model`.
    pub model: String,
    /// The schema came from the cache: no builder call was made.
    pub cache_hit: bool,
    /// What the builder's calls cost (also counted in the outcome's usage).
    pub usage: Usage,
    /// The schema built (or found), when there is one.
    #[cfg_attr(feature = "json-schema", schemars(with = "Option<Map<String, Value>>"))]
    pub schema: Option<Value>,
}

/// How a value of `data` is supported by the text.
#[cfg_attr(feature = "json-schema", derive(schemars::JsonSchema))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Match {
    /// A span of the text equals the value.
    Exact,
    /// A span equals the value after normalisation: case and whitespace, a number as written
    /// (`1,200` → 1200), a date written out (`14 April 2025` → `2025-04-14`), an enum value named
    /// in other words (`failed` → `failure`).
    Normalized,
    /// No span of the text supports the value: the model worked it out (or made it up).
    Derived,
}

/// Where a span of the text is: Unicode code points, and UTF-16 code units for JavaScript
/// (`text.slice(utf16Start, utf16End)`).
#[cfg_attr(
    feature = "json-schema",
    derive(schemars::JsonSchema),
    schemars(deny_unknown_fields)
)]
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Span {
    /// The first code point of the span.
    pub start: usize,
    /// One past the last code point.
    pub end: usize,
    /// The span as the text writes it.
    pub text: String,
    pub utf16_start: usize,
    pub utf16_end: usize,
}

/// Where one leaf of `data` (a string, number or array item) comes from.
#[cfg_attr(
    feature = "json-schema",
    derive(schemars::JsonSchema),
    schemars(deny_unknown_fields)
)]
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Source {
    /// JSON pointer to the value in `data`.
    pub pointer: String,
    /// The span that supports it; none when it is derived.
    #[serde(flatten)]
    pub span: Option<Span>,
    #[serde(rename = "match")]
    pub matched: Match,
    /// The page of a PDF document the span is on (from 1); none in the prompt or a text.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub page: Option<u32>,
    /// A PDF document: one box per line the span runs over, on the page it is on.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub boxes: Vec<PageBox>,
    /// A spreadsheet: the cell the span is in, as Excel names it (`Lines!B14`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cell: Option<String>,
    /// How sure the model was of the value (0–1): the probability of the tokens it wrote the
    /// value with; none where the provider gives no token log-probabilities.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub confidence: Option<f64>,
}

impl Source {
    /// The source of the value at `pointer`: `span` (none for a derived value), matched so; no
    /// page, box, cell or confidence yet (the document and the model's tokens add them).
    pub fn spanned(pointer: String, span: Option<Span>, matched: Match) -> Self {
        Source {
            pointer,
            span,
            matched,
            page: None,
            boxes: Vec::new(),
            cell: None,
            confidence: None,
        }
    }
}

/// Records mode: a record the text holds without a value its schema requires. It is not
/// invented; the record is listed with what it lacks.
#[cfg_attr(
    feature = "json-schema",
    derive(schemars::JsonSchema),
    schemars(deny_unknown_fields)
)]
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Incomplete {
    /// The values the text gives for it.
    #[cfg_attr(feature = "json-schema", schemars(with = "Map<String, Value>"))]
    pub record: Value,
    /// What is missing: `the text gives no value for /date`.
    pub need: String,
    /// Where its values come from (pointers into `record`).
    pub sources: Vec<Source>,
}

/// Where a result sent to review (`structure_review`) stands.
#[cfg_attr(feature = "json-schema", derive(schemars::JsonSchema))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ReviewStatus {
    /// Waiting for a reviewer.
    Pending,
    /// A reviewer has taken it.
    Claimed,
    /// A reviewer confirmed or corrected it: the reviewed data is final.
    Reviewed,
}

/// A value a person is asked to look at, and why.
#[cfg_attr(feature = "json-schema", derive(schemars::JsonSchema))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct ReviewField {
    /// JSON pointer into `data` (or `partial`; empty: the whole result).
    pub pointer: String,
    /// Why: `confidence 0.62, under 0.8`, `derived: no span of the text supports it`, ...
    pub reason: String,
}

/// A result sent to review: the queue item a reviewer confirms it in, and the values in doubt.
#[cfg_attr(feature = "json-schema", derive(schemars::JsonSchema))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct ReviewTicket {
    /// The item's id: `GET /v1/review/{id}`.
    pub id: String,
    pub status: ReviewStatus,
    /// The values in doubt, doubtful first (empty under `structure_review=all` when none is).
    pub fields: Vec<ReviewField>,
}

/// The outcome of a `structure` call.
#[derive(Debug, Clone, PartialEq)]
pub struct Outcome {
    pub answer: Answer,
    /// Where each value of an `ok` answer's data (or of a `need-more-input`'s [`Outcome::partial`])
    /// comes from; empty otherwise. In records mode the pointers start with the record's index:
    /// `/3/name`.
    pub sources: Vec<Source>,
    /// `need-more-input` only: what the text did give, the answer without the values `need`
    /// names. It does not validate against the schema (it lacks them), so it is never `data`.
    pub partial: Option<Value>,
    /// Records mode (`Some` only then): the records that lack a required value.
    pub incomplete: Option<Vec<Incomplete>>,
    /// `inline`, `registry:bundled`, `registry:tenant:<id>`, `registry:project:<id>` or `inferred`.
    pub schema_origin: String,
    /// Content-stage iterations consumed.
    pub iterations: u32,
    pub usage: Usage,
    pub trace: Trace,
    /// The text that was read (the prompt and a document's extracted text), when the request
    /// asked for it (`returnText`): what `sources` count their offsets in.
    pub text: Option<String>,
    /// Where the result waits for a person, when `structure_review` sent it there.
    pub review: Option<ReviewTicket>,
}

impl Outcome {
    /// The outcome as the JSON object of the tool definition's `returns`.
    pub fn to_json(&self) -> Value {
        serde_json::to_value(self).expect("an outcome always serialises")
    }
}

/// What a tool result spent, read back from its `usage`: an outcome's, or an error's
/// `error.usage` (`{"error": {...}}`, [`crate::StructureError::to_json`]); a missing count is 0.
/// Every reader of a result's spending goes through here.
pub fn usage_in(result: &Value) -> Usage {
    let usage = match result.get("error") {
        Some(error) => error.get("usage"),
        None => result.get("usage"),
    };
    let count = |key: &str| (usage.and_then(|usage| usage.get(key)?.as_u64())).unwrap_or(0);
    Usage {
        llm_calls: u32::try_from(count("llmCalls")).unwrap_or(u32::MAX),
        prompt_tokens: count("promptTokens"),
        completion_tokens: count("completionTokens"),
        cached_prompt_tokens: count("cachedPromptTokens"),
    }
}

/// A tool result's `usage` object (an outcome's or an error's), to change.
pub fn usage_in_mut(result: &mut Value) -> Option<&mut Value> {
    if result.get("error").is_some() {
        return result.get_mut("error")?.get_mut("usage");
    }
    result.get_mut("usage")
}

impl Serialize for Outcome {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        Written::of(self).serialize(serializer)
    }
}

/// The outcome as the tool form writes it: the one shape that is serialised, and (with the
/// `json-schema` feature) the one the published `returns` is generated from. A status's own
/// fields are present only with it (the `oneOf` that [`present_iff`] adds says which).
#[derive(Serialize)]
#[cfg_attr(
    feature = "json-schema",
    derive(schemars::JsonSchema),
    schemars(
        rename = "Outcome",
        description = "An outcome: ok (data, with where each value comes from), need-more-input \
                       (what the text lacks) or stale (the last violations).",
        deny_unknown_fields,
        transform = present_iff
    )
)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Written<'a> {
    status: Status,
    /// Validated JSON, present iff status=ok: the object, in records mode (or for an array root)
    /// the array of records, for a scalar root the value.
    #[serde(skip_serializing_if = "Option::is_none")]
    data: Option<&'a Value>,
    /// Where each value of data comes from, present with status=ok (and with partial): one entry
    /// per string, number or array item, by JSON pointer into data (in records mode it starts with the record's
    /// index: /3/name). 'exact': a span of the prompt equals the value; 'normalized': it does
    /// after folding case and whitespace, reading a number as written (1,200), a date written
    /// out, or an enum value named in other words; 'derived': no span supports it. start/end
    /// count Unicode code points of the prompt, utf16Start/utf16End UTF-16 code units
    /// (JavaScript's string indices).
    #[serde(skip_serializing_if = "Option::is_none")]
    sources: Option<&'a [Source]>,
    /// Present only with status=need-more-input, when the text gave the rest: the answer without
    /// the values need names. Not valid against the schema (it lacks them); sources point into
    /// it.
    #[serde(skip_serializing_if = "Option::is_none")]
    partial: Option<&'a Value>,
    /// Records mode, present iff status=ok: the records the text holds without a value the
    /// schema requires, not invented: each with the values the text gives, what it lacks, and
    /// their sources (pointers into the record).
    #[serde(skip_serializing_if = "Option::is_none")]
    incomplete: Option<&'a [Incomplete]>,
    /// Human-readable description of missing input, present iff status=need-more-input.
    #[serde(skip_serializing_if = "Option::is_none")]
    need: Option<&'a str>,
    /// Validator messages from the last failed iteration, present iff status=stale.
    #[serde(skip_serializing_if = "Option::is_none")]
    errors: Option<&'a [String]>,
    /// 'inline' | 'registry:bundled' | 'registry:tenant:<id>' | 'registry:project:<id>' |
    /// 'inferred'. Useful for debugging.
    schema_origin: &'a str,
    /// Number of content-stage iterations consumed.
    iterations: u32,
    /// Tokens spent on every LLM call of this request.
    usage: &'a Usage,
    /// What was sent and repaired on the way: model, provider profile, delivery mode, schema
    /// transforms, repairs, each reason fed back, and retries.
    trace: &'a Trace,
    /// The text that was read, when returnText was set: the prompt, then a document's extracted
    /// text (pages apart by a form feed on a line of its own).
    #[serde(skip_serializing_if = "Option::is_none")]
    text: Option<&'a str>,
    /// Present when structure_review sent the result to a person: the queue item's id
    /// (GET /v1/review/{id} gives the reviewed data once a reviewer confirmed it), its status,
    /// and the values in doubt with why.
    #[serde(skip_serializing_if = "Option::is_none")]
    review: Option<&'a ReviewTicket>,
}

/// What the call came to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "json-schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "kebab-case")]
enum Status {
    /// `data` validated against the full schema.
    Ok,
    /// The input lacks a required value; `need` says which.
    NeedMoreInput,
    /// No valid answer within `maxLoops`; `errors` holds the last iteration's violations.
    Stale,
}

impl<'a> Written<'a> {
    fn of(outcome: &'a Outcome) -> Self {
        let mut written = Written {
            status: Status::Ok,
            data: None,
            sources: None,
            partial: None,
            incomplete: None,
            need: None,
            errors: None,
            schema_origin: &outcome.schema_origin,
            iterations: outcome.iterations,
            usage: &outcome.usage,
            trace: &outcome.trace,
            text: outcome.text.as_deref(),
            review: outcome.review.as_ref(),
        };
        match &outcome.answer {
            Answer::Ok(data) => {
                written.data = Some(data);
                written.sources = Some(&outcome.sources);
                written.incomplete = outcome.incomplete.as_deref();
            }
            Answer::NeedMoreInput(need) => {
                written.status = Status::NeedMoreInput;
                written.need = Some(need);
                if let Some(partial) = &outcome.partial {
                    written.partial = Some(partial);
                    written.sources = Some(&outcome.sources);
                }
            }
            Answer::Stale(errors) => {
                written.status = Status::Stale;
                written.errors = Some(errors);
            }
        }
        written
    }
}

/// The fields each status comes with, as [`Written::of`] writes them: `data` and `sources`
/// (and in records mode `incomplete`) only when ok, `need` (and `partial` with its `sources`)
/// only when the input lacks a value, a non-empty `errors` only when stale.
#[cfg(feature = "json-schema")]
fn present_iff(schema: &mut schemars::Schema) {
    let only = |status: &str, required: &[&str], absent: &[&str], extra: Value| {
        let absent: Vec<Value> = absent
            .iter()
            .map(|field| serde_json::json!({ "required": [field] }))
            .collect();
        let mut branch = serde_json::json!({
            "properties": { "status": { "const": status } },
            "required": required,
            "not": { "anyOf": absent },
        });
        if let (Some(properties), Value::Object(extra)) =
            (branch["properties"].as_object_mut(), extra)
        {
            properties.extend(extra);
        }
        branch
    };
    let mut need = only(
        "need-more-input",
        &["need"],
        &["data", "errors", "incomplete"],
        Value::Null,
    );
    need["dependentRequired"] = serde_json::json!({ "sources": ["partial"] });
    schema.insert(
        "oneOf".into(),
        serde_json::json!([
            only(
                "ok",
                &["data", "sources"],
                &["need", "errors", "partial"],
                Value::Null
            ),
            need,
            only(
                "stale",
                &["errors"],
                &["data", "sources", "need", "incomplete", "partial"],
                serde_json::json!({ "errors": { "minItems": 1 } }),
            ),
        ]),
    );
}
