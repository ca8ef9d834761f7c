//! The schema builder (spec §3.3): `text` mode turns a description ("a name, an email and a
//! priority from 1 to 5") into a JSON Schema with one LLM call in the provider's strict mode.
//! The answer is `{schema, confidence, clarifyingQuestions}`; the schema must satisfy the bundled
//! meta-schema (the simplified subset of spec §9) and compile as a target, else the reason goes
//! back (at most two attempts, then stale). Low confidence or a clarifying question is a
//! need-more-input, without a content stage.
//!
//! Built schemas are cached in the key-value store per tenant, under the SHA-256 of the
//! normalised description, the builder model and the meta-schema version, for seven days. A
//! cache that fails or holds a corrupt entry is a miss, never an error.

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use crate::answer::format::AnswerFormat;
use crate::answer::lenient;
use crate::content::ask::{Budget, Caller};
use crate::content::reason;
use crate::error::StructureError;
use crate::limits::CallLimits;
use crate::outcome::{Answer, BuilderTrace, Outcome, Reason, Trace, Usage};
use crate::ports::{KeyValue, Ports};
use crate::provider::retry::RetryPolicy;
use crate::provider::{Conversation, Provider, SystemPrompt, Turn};
use crate::schema::TargetSchema;
use crate::schema::registry::META_SCHEMA;
use crate::schema::validator::CompiledSchema;
use crate::schema::violation::{Category, Violation};
use crate::schema::{sense, subset};
use crate::scope::Scope;
use crate::settings::Settings;
use crate::store;

/// Builder calls before giving up (spec §3.3).
pub const MAX_ATTEMPTS: u32 = 2;
/// How long a built schema is reused.
pub const CACHE_TTL_MILLIS: u64 = 7 * 24 * 60 * 60 * 1000;

/// What the builder arrived at. One a call, moved once: boxing a variant would only add an
/// allocation.
#[allow(clippy::large_enum_variant)]
pub enum Built {
    /// A schema for the content stage.
    Ready {
        target: TargetSchema,
        trace: BuilderTrace,
    },
    /// The description is too ambiguous: need-more-input with the builder's questions.
    Finished(Outcome),
    /// No usable schema came: need-more-input when the builder's schemas made no sense (its
    /// questions, else what made none), stale when they were not even JSON Schema of the
    /// subset. Another model may do better ([`crate::escalation`]).
    Unusable(Outcome),
}

/// A cached schema.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct CacheEntry {
    schema: Value,
    confidence: f64,
    expires_at_millis: u64,
}

/// `"Name (string) , DESCRIPTION\n\n( string )"` → `"name (string), description (string)"`:
/// case, whitespace and the spacing around punctuation folded, so rewording that only changes
/// those hits the cache.
pub fn normalise(description: &str) -> String {
    let words = description
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .to_lowercase();
    let mut out = String::with_capacity(words.len());
    for c in words.chars() {
        if matches!(c, ',' | '.' | ';' | ':' | '!' | '?' | ')' | ']' | '}') && out.ends_with(' ') {
            out.pop();
        }
        if c == ' ' && out.ends_with(['(', '[', '{']) {
            continue;
        }
        out.push(c);
    }
    out.trim().to_owned()
}

/// The meta-schema's version, part of the cache key: a new meta-schema builds anew.
fn meta_schema_version() -> String {
    let meta: Value = serde_json::from_str(META_SCHEMA).expect("the meta-schema is valid JSON");
    meta.get("x-version")
        .and_then(Value::as_str)
        .unwrap_or("1.0")
        .to_owned()
}

/// The key of `description`'s cache entry for `scope`'s tenant and `model`.
pub fn cache_key(scope: &Scope, description: &str, model: &str) -> String {
    let mut hash = Sha256::new();
    hash.update(normalise(description).as_bytes());
    hash.update([0]);
    hash.update(model.as_bytes());
    hash.update([0]);
    hash.update(meta_schema_version().as_bytes());
    let hex: String = hash
        .finalize()
        .iter()
        .map(|byte| format!("{byte:02x}"))
        .collect();
    format!("{}builder-cache/{hex}", scope.tenant_prefix())
}

/// The shape of the builder's answer: a schema of the meta-schema's subset, a confidence, and
/// clarifying questions.
pub fn answer_schema() -> Value {
    let meta: Value = serde_json::from_str(META_SCHEMA).expect("the meta-schema is valid JSON");
    json!({
        "type": "object",
        "properties": {
            "schema": { "$ref": "#/$defs/objectSchema" },
            "confidence": {
                "type": "number",
                "minimum": 0,
                "maximum": 1,
                "description": "How sure you are that the schema captures the description: 1 = fully, 0.5 = guessing.",
            },
            "clarifyingQuestions": {
                "type": "array",
                "items": { "type": "string" },
                "description": "Questions to ask when the description is ambiguous; empty when it is clear.",
            },
        },
        "required": ["schema", "confidence", "clarifyingQuestions"],
        "additionalProperties": false,
        "$defs": meta["$defs"],
    })
}

fn system_prompt(now_unix_millis: u64) -> SystemPrompt {
    SystemPrompt {
        stable: "Convert the following description to JSON Schema 2020-12. Output only the schema, no prose.\n\
                 \n\
                 Rules:\n\
                 - Answer with {\"schema\": <the schema>, \"confidence\": <0 to 1>, \"clarifyingQuestions\": [...]}.\n\
                 - The schema's root is an object schema with \"type\": \"object\" and \"properties\"; use only \
                   object, array, string, number, integer and boolean schemas with enum, pattern, minimum, maximum, \
                   minLength, maxLength, minItems, maxItems, format (date-time, date, time, email, uri, uuid), \
                   required and additionalProperties.\n\
                 - Name properties in camelCase; list in \"required\" what the description says must be there; \
                   give each property a short description.\n\
                 - Set confidence below 0.8 and ask clarifying questions when the description is ambiguous or \
                   does not say what to structure; otherwise leave clarifyingQuestions empty.\n"
            .to_owned(),
        volatile: format!(
            "The current date and time is {} (UTC).",
            crate::time::rfc3339(now_unix_millis)
        ),
        cacheable: false,
    }
}

/// Builds (or finds in the cache) the schema `description` asks for.
/// `spent_before` is what earlier builder models spent of the token budget.
pub fn build(
    description: &str,
    scope: &Scope,
    provider: &dyn Provider,
    ports: &Ports<'_>,
    settings: &Settings,
    retry_policy: RetryPolicy,
    spent_before: u64,
) -> Result<Built, StructureError> {
    let mut run = Run {
        spent_before,
        key: cache_key(scope, description, provider.model()),
        now: ports.clock.now_unix_millis(),
        provider,
        ports,
        settings,
        trace: BuilderTrace {
            model: provider.model().to_owned(),
            cache_hit: false,
            usage: Usage::default(),
            schema: None,
        },
    };
    match run.cached() {
        Some(ready) => Ok(ready),
        None => run.ask(description, retry_policy),
    }
}

/// One build: where its result is cached, and what it has cost.
struct Run<'a> {
    spent_before: u64,
    key: String,
    now: u64,
    provider: &'a dyn Provider,
    ports: &'a Ports<'a>,
    settings: &'a Settings,
    trace: BuilderTrace,
}

impl Run<'_> {
    /// The schema built before, if the cache holds it and it has not expired: ready, or, when
    /// the builder was less sure of it than this call's `confidenceThreshold` asks, the same
    /// need-more-input a fresh build would give.
    fn cached(&mut self) -> Option<Built> {
        let entry = store::read_lenient::<CacheEntry>(self.ports.key_value, &self.key)?;
        if entry.expires_at_millis <= self.now {
            // Built anew below, and written over; gone now should that build fail.
            let _ = store::delete(self.ports.key_value, &self.key);
            return None;
        }
        let target =
            TargetSchema::stored(entry.schema.clone(), None, "inferred".to_owned()).ok()?;
        self.trace.cache_hit = true;
        self.trace.schema = Some(entry.schema);
        if entry.confidence < self.settings.confidence_threshold {
            let outer = Trace {
                model: self.provider.model().to_owned(),
                provider_profile: self.provider.profile_name().to_owned(),
                delivery: self.provider.delivery().to_string(),
                ..Trace::default()
            };
            let need = Answer::NeedMoreInput(ambiguous(entry.confidence));
            return Some(finished(need, self.trace.clone(), outer));
        }
        Some(Built::Ready {
            target,
            trace: self.trace.clone(),
        })
    }

    /// Asks the builder model, at most [`MAX_ATTEMPTS`] times.
    fn ask(
        mut self,
        description: &str,
        retry_policy: RetryPolicy,
    ) -> Result<Built, StructureError> {
        let answer_schema = answer_schema();
        let validator = CompiledSchema::compile_checked(&answer_schema)?;
        let format = AnswerFormat::plain(&answer_schema, self.provider.subset());
        let mut conversation = Conversation {
            system: system_prompt(self.now),
            attachment: None,
            turns: vec![Turn::User(description.to_owned())],
        };
        let mut outer = Trace {
            model: self.provider.model().to_owned(),
            provider_profile: self.provider.profile_name().to_owned(),
            delivery: self.provider.delivery().to_string(),
            schema_transforms: format.transforms.clone(),
            ..Trace::default()
        };
        let mut violations = Vec::new();
        let mut questions = Vec::new();
        let caller = Caller {
            provider: self.provider,
            ports: self.ports,
            retry: retry_policy,
            budget: Budget::of(self.settings, self.spent_before),
        };
        for attempt in 0..MAX_ATTEMPTS {
            let completion = caller.ask(
                &conversation,
                &format,
                &mut self.trace.usage,
                &mut outer.retries,
            )?;
            violations = match lenient::parse(completion.delivered.text()) {
                Err(reason) => vec![reason::unreadable(&reason)],
                Ok(parsed) => {
                    outer.repairs.extend(parsed.repairs);
                    let answer = subset::restore(
                        &format.source,
                        parsed.value,
                        format.encoded,
                        &mut outer.repairs,
                    );
                    questions = clarifying_questions(&answer);
                    match accept(&answer, &validator, &self.settings.limits) {
                        Ok(accepted) => return Ok(self.finish(accepted, &answer, outer)),
                        Err(violations) => violations,
                    }
                }
            };
            outer
                .reasons
                .extend(violations.iter().map(|violation| Reason {
                    iteration: attempt + 1,
                    pointer: violation.pointer.clone(),
                    category: violation.category,
                }));
            let feedback = reason::reason_message(&violations, true);
            outer.feedback.push(feedback.clone());
            conversation.turns.push(Turn::Model(completion.delivered));
            conversation.turns.push(Turn::Feedback(feedback));
        }
        outer.feedback.pop();
        let senseless = !violations.is_empty()
            && (violations.iter()).all(|violation| violation.category == Category::Schema);
        let answer = if senseless {
            Answer::NeedMoreInput(match questions.is_empty() {
                true => format!(
                    "the schema built for this description makes no sense ({}): name the \
                     fields to extract and what each holds",
                    violations[0]
                ),
                false => questions.join(" "),
            })
        } else {
            let errors = (violations.iter())
                .map(|violation| format!("schema builder: {violation}"))
                .collect();
            Answer::Stale(errors)
        };
        Ok(Built::Unusable(ended(answer, self.trace, outer)))
    }

    /// The built `target`: ready (and cached) when the builder is sure enough and asks
    /// nothing, else a need-more-input.
    fn finish(mut self, target: TargetSchema, answer: &Value, outer: Trace) -> Built {
        let confidence = answer["confidence"].as_f64().unwrap_or(0.0);
        let questions = clarifying_questions(answer);
        self.trace.schema = Some(Value::clone(&target.schema));
        if confidence < self.settings.confidence_threshold || !questions.is_empty() {
            let need = if questions.is_empty() {
                ambiguous(confidence)
            } else {
                questions.join(" ")
            };
            return finished(Answer::NeedMoreInput(need), self.trace, outer);
        }
        let entry = CacheEntry {
            schema: Value::clone(&target.schema),
            confidence,
            expires_at_millis: self.now + CACHE_TTL_MILLIS,
        };
        // The cache only saves the next call: a store that cannot write costs nothing else.
        let _ = store::write(self.ports.key_value, &self.key, &entry);
        sweep_expired(self.ports.key_value, &self.key, self.now);
        Built::Ready {
            target,
            trace: self.trace,
        }
    }
}

/// How often a tenant's expired cache entries are swept out.
const SWEEP_EVERY_MILLIS: u64 = 24 * 60 * 60 * 1000;

/// Deletes the expired (or unreadable) entries beside `key` in its tenant's cache, at most once
/// a day (a marker beside the folder says when it last ran): an entry no call asks for again
/// would otherwise stay forever. A store that fails only leaves them for the next sweep.
fn sweep_expired(key_value: &dyn KeyValue, key: &str, now: u64) {
    let Some((folder, _)) = key.rsplit_once('/') else {
        return;
    };
    let marker = format!("{folder}-swept");
    if store::read_lenient::<u64>(key_value, &marker)
        .is_some_and(|last| now < last.saturating_add(SWEEP_EVERY_MILLIS))
    {
        return;
    }
    if store::write(key_value, &marker, &now).is_err() {
        return;
    }
    let Ok(keys) = store::keys(key_value, &format!("{folder}/")) else {
        return;
    };
    for key in keys {
        let Ok(Some(bytes)) = key_value.get(&key) else {
            continue;
        };
        let expired = serde_json::from_slice::<CacheEntry>(&bytes)
            .map_or(true, |entry| entry.expires_at_millis <= now);
        if expired {
            let _ = store::delete(key_value, &key);
        }
    }
}

/// The clarifying questions of a builder's `answer`, blank ones left out.
fn clarifying_questions(answer: &Value) -> Vec<String> {
    (answer["clarifyingQuestions"]
        .as_array()
        .into_iter()
        .flatten())
    .filter_map(Value::as_str)
    .map(str::trim)
    .filter(|question| !question.is_empty())
    .map(str::to_owned)
    .collect()
}

/// The need of a description the builder was only `confidence` sure of.
fn ambiguous(confidence: f64) -> String {
    format!(
        "the schema description is ambiguous (the builder is {:.0} % sure): say more precisely which fields to extract",
        confidence * 100.0
    )
}

/// A build that ends the call with `answer` and no content stage.
fn finished(answer: Answer, trace: BuilderTrace, outer: Trace) -> Built {
    Built::Finished(ended(answer, trace, outer))
}

/// The outcome of a call the build ends with `answer`.
fn ended(answer: Answer, trace: BuilderTrace, outer: Trace) -> Outcome {
    Outcome {
        answer,
        sources: Vec::new(),
        partial: None,
        incomplete: None,
        schema_origin: "inferred".to_owned(),
        iterations: 0,
        usage: trace.usage,
        trace: Trace {
            schema_builder: Some(trace),
            ..outer
        },
        text: None,
        review: None,
    }
}

/// A builder answer that satisfies the answer schema (and so the meta-schema), and whose schema
/// compiles as a target.
fn accept(
    answer: &Value,
    validator: &CompiledSchema,
    limits: &CallLimits,
) -> Result<TargetSchema, Vec<Violation>> {
    let violations = validator.violations(answer);
    if !violations.is_empty() {
        return Err(violations);
    }
    let nonsense: Vec<Violation> = sense::nonsense(&answer["schema"])
        .into_iter()
        .map(|violation| Violation {
            pointer: format!("/schema{}", violation.pointer.trim_end_matches('/')),
            ..violation
        })
        .collect();
    if !nonsense.is_empty() {
        return Err(nonsense);
    }
    TargetSchema::new(
        answer["schema"].clone(),
        None,
        "inferred".to_owned(),
        limits,
    )
    .map_err(|error| {
        vec![Violation {
            category: Category::Schema,
            pointer: "/schema".to_owned(),
            constraint: error.message,
            actual: None,
        }]
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rewording_by_case_whitespace_and_punctuation_spacing_folds_away() {
        let a = normalise("Name (string) , description (string) and\n\n priority ( integer 1-5 ).");
        let b = normalise("name (string), DESCRIPTION (string) and priority (integer 1-5).");
        assert_eq!(a, b);
        assert_eq!(
            a,
            "name (string), description (string) and priority (integer 1-5)."
        );
        assert_ne!(normalise("a name"), normalise("a surname"));
        let scope = Scope::default();
        assert_eq!(
            cache_key(&scope, "Name , age", "m"),
            cache_key(&scope, "name, AGE", "m")
        );
        assert_ne!(
            cache_key(&scope, "name, age", "m"),
            cache_key(&scope, "name, age", "other-model")
        );
        let other = Scope::new("other", None).unwrap();
        assert_ne!(
            cache_key(&scope, "name, age", "m"),
            cache_key(&other, "name, age", "m")
        );
        assert!(cache_key(&other, "x", "m").starts_with("t/other/builder-cache/"));
    }

    #[test]
    fn the_answer_schema_compiles_and_takes_a_subset_schema() {
        let validator = CompiledSchema::compile(&answer_schema()).unwrap();
        let answer = json!({
            "schema": { "type": "object", "properties": { "name": { "type": "string" } }, "required": ["name"] },
            "confidence": 0.9,
            "clarifyingQuestions": []
        });
        assert!(validator.is_valid(&answer));
        assert!(!validator.is_valid(
            &json!({ "schema": { "type": "string" }, "confidence": 0.9, "clarifyingQuestions": [] })
        ));
    }
}
