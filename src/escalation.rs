//! Escalation (`structure_escalate`): when the call's model does not get there — its answer
//! stays invalid (`stale`), is cut off, refused, blocked, or its provider stays down after the
//! retries — the same request goes to the next model of the list, with the last violations fed
//! in. The token budget and the call timeout cover every attempt; `usage` sums them, and
//! `trace.attempts` says what each model came to. A `need-more-input` never escalates: the
//! text lacks the value, and a stronger model cannot find it either.
//!
//! The schema builder (`text` mode) escalates the same way, from `structure_schema_builder_model`
//! through the list, when it cannot build a usable schema or its provider fails.
//!
//! Every model of the list is configured before the first call (a missing key is an error
//! then, not after the first model spent its tokens). When the last model fails too, the last
//! `stale` outcome stands if there was one (nothing already paid for is lost), else the last
//! error.

use crate::content;
use crate::content::builder::{self, Built};
use crate::error::{ErrorKind, StructureError};
use crate::media_type::Attachment;
use crate::outcome::{Answer, Attempt, Outcome, Usage};
use crate::ports::Ports;
use crate::provider::retry::RetryPolicy;
use crate::provider::{self, Provider};
use crate::schema::TargetSchema;
use crate::scope::Scope;
use crate::settings::{Grounding, Settings};

/// What every attempt of one call shares.
pub struct Plan<'a> {
    pub text: &'a str,
    /// A document the model is given as it is (an image, a PDF with pages without a text
    /// layer), and those pages (from 1).
    pub attachment: Option<&'a Attachment>,
    pub scanned: &'a [u32],
    pub target: &'a TargetSchema,
    pub settings: &'a Settings,
    pub retry: RetryPolicy,
    pub max_loops: u8,
    pub records: bool,
    /// Tokens spent before the content stage (the schema builder's).
    pub spent_before: Usage,
}

/// Runs the content stage with the call's model, then with each model of `structure_escalate`
/// while the one before did not get there.
pub fn run(plan: &Plan<'_>, ports: &Ports<'_>) -> Result<Outcome, StructureError> {
    let settings = plan.settings;
    let models = models(&settings.model, settings)?;
    let escalating = models.len() > 1;
    let mut attempts = Vec::new();
    let mut spent = Usage::default();
    let mut violations: Vec<String> = Vec::new();
    let mut stale: Option<Outcome> = None;
    for (index, model) in models.iter().enumerate() {
        let last = index + 1 == models.len();
        let result = attempt(plan, model, spent, &violations, ports);
        let (outcome, usage) = match &result {
            Ok(outcome) => (outcome.answer.status(), outcome.usage),
            Err(error) => (error.kind.name(), error.usage),
        };
        spent.add(usage);
        if escalating {
            attempts.push(Attempt {
                model: (*model).to_owned(),
                outcome: outcome.to_owned(),
                usage,
            });
        }
        match result {
            Ok(outcome) => match &outcome.answer {
                Answer::Stale(errors) if !last => {
                    violations.clone_from(errors);
                    stale = Some(outcome);
                }
                _ => return Ok(with_attempts(outcome, attempts, spent)),
            },
            Err(error) if !last && escalates(&error.kind) => {}
            Err(error) => {
                return match stale {
                    Some(outcome) => Ok(with_attempts(outcome, attempts, spent)),
                    None => Err(error.with_usage(spent)),
                };
            }
        }
    }
    unreachable!("the last model's attempt always returns")
}

/// Builds the schema `description` asks for with the schema builder's model, then with each
/// model of `structure_escalate` while the one before built nothing usable or failed.
pub fn build(
    description: &str,
    scope: &Scope,
    settings: &Settings,
    retry: RetryPolicy,
    ports: &Ports<'_>,
) -> Result<Built, StructureError> {
    let models = models(&settings.schema_builder_model, settings)?;
    let mut spent = Usage::default();
    for (index, model) in models.iter().enumerate() {
        let last = index + 1 == models.len();
        let spent_before = spent.prompt_tokens + spent.completion_tokens;
        let built = provider::open(settings, model, ports).and_then(|provider| {
            builder::build(
                description,
                scope,
                provider.as_ref(),
                ports,
                settings,
                retry.for_profile(settings, provider.profile_name()),
                spent_before,
            )
        });
        match built {
            Ok(Built::Unusable(outcome)) if !last => spent.add(outcome.usage),
            Ok(Built::Ready { target, mut trace }) => {
                trace.usage.add(spent);
                return Ok(Built::Ready { target, trace });
            }
            Ok(Built::Finished(mut outcome) | Built::Unusable(mut outcome)) => {
                outcome.usage.add(spent);
                if let Some(trace) = &mut outcome.trace.schema_builder {
                    trace.usage = outcome.usage;
                }
                return Ok(Built::Finished(outcome));
            }
            Err(error) if !last && escalates(&error.kind) => spent.add(error.usage),
            Err(error) => {
                let mut usage = spent;
                usage.add(error.usage);
                return Err(error.with_usage(usage));
            }
        }
    }
    unreachable!("the last model's build always returns")
}

/// `first`, then the models of `structure_escalate`, each of those configured before any call
/// (a missing key is an error now, not after `first` spent its tokens).
fn models<'a>(first: &'a str, settings: &'a Settings) -> Result<Vec<&'a str>, StructureError> {
    for model in &settings.escalate {
        provider::connect(settings, model)?;
    }
    Ok(std::iter::once(first)
        .chain(settings.escalate.iter().map(String::as_str))
        .collect())
}

/// Whether a call that ended in an error of `kind` goes to the next model: what another model
/// may do better, never what the request or the deployment got wrong.
pub fn escalates(kind: &ErrorKind) -> bool {
    matches!(
        kind,
        ErrorKind::Provider { .. }
            | ErrorKind::Transport
            | ErrorKind::Refusal
            | ErrorKind::Blocked { .. }
            | ErrorKind::Truncated
            | ErrorKind::InvalidResponse
            | ErrorKind::StructuredOutputFailed
    )
}

/// `outcome` (the last attempt's) with every attempt and what they all cost.
fn with_attempts(mut outcome: Outcome, attempts: Vec<Attempt>, usage: Usage) -> Outcome {
    outcome.trace.attempts = attempts;
    outcome.usage = usage;
    outcome
}

/// One model's attempt: its provider opened, the content stage run with what the attempts
/// before it spent counted against the budget, and `violations` (the last attempt's) fed in.
fn attempt(
    plan: &Plan<'_>,
    model: &str,
    spent: Usage,
    violations: &[String],
    ports: &Ports<'_>,
) -> Result<Outcome, StructureError> {
    let settings = plan.settings;
    let provider = provider::open(settings, model, ports)?;
    if let Some(attachment) = plan.attachment {
        let endpoint = provider.endpoint();
        (endpoint.vision).check(attachment, plan.scanned, &endpoint.model)?;
    }
    let window = provider.endpoint().window();
    let mut before = plan.spent_before;
    before.add(spent);
    let profile = provider.profile_name();
    let limits = content::Limits {
        max_loops: plan.max_loops,
        retry: plan.retry.for_profile(settings, profile),
        budget: content::Budget::of(settings, before.prompt_tokens + before.completion_tokens),
        extractive: settings.extractive.for_profile(profile),
        // What the model reads in a picture is in no text: nothing a span could be required of
        // (and, `pictured`, nothing narrowed to the text's spans).
        grounding: match plan.attachment {
            Some(_) => settings.grounding.min(Grounding::Report),
            None => settings.grounding,
        },
        reference_time: settings.reference_time,
        records: plan.records,
        chunk_bytes: settings.chunk_tokens(profile) as usize * content::BYTES_PER_TOKEN as usize,
        max_concurrent: settings.max_concurrent_calls(profile, provider.endpoint().slots) as usize,
        max_chunks: settings.limits.max_chunks,
        min_confidence: settings.min_confidence,
        pictured: plan.attachment.is_some(),
    };
    let result = content::run(
        plan.text,
        plan.attachment,
        plan.target,
        limits,
        provider.as_ref(),
        violations,
        ports,
    );
    remember_window(settings, model, provider.as_ref(), window, ports);
    result.map(|mut outcome| {
        if plan.attachment.is_some() && settings.grounding == Grounding::Require {
            outcome.trace.warnings.push(UNGROUNDED.to_owned());
        }
        outcome
    })
}

/// What `structure_grounding=require` cannot check when the model reads a picture.
const UNGROUNDED: &str = "grounding require cannot check values read from the attached image or \
     the PDF's pages without a text layer: no text holds them, so they are reported as derived";

/// Keeps what a refusal and the server's counts taught of `model`'s window during the call (it
/// was `before`), so the next call is planned with it from the start. A store that cannot keep
/// it costs the next call one refusal, nothing else.
fn remember_window(
    settings: &Settings,
    model: &str,
    provider: &dyn Provider,
    before: provider::window::Window,
    ports: &Ports<'_>,
) {
    let window = provider.endpoint().window_for_next_call();
    if window == before {
        return;
    }
    let Ok(model) = provider::ModelRef::parse(model) else {
        return;
    };
    // Only the kind of a server of local models is worth keeping: the others are the default.
    let kind = provider::profile::Profile::named(provider.profile_name())
        .filter(|kind| kind.schema_is_grammar());
    let _ = provider::server::Server::remember(settings, &model, kind, window, ports);
}
