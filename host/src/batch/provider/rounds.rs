//! The rounds of a provider batch. Every item runs in the component as usual, its model
//! requests relayed here; a request with no answer yet parks the item (its instance is
//! dropped, it holds no memory but its arguments). When no item is left running, every request
//! parked is sent in one batch per provider endpoint; as a batch ends, its answers are
//! journaled and the items waiting on them run again from the start, their earlier requests
//! answered at once from what is known, up to their next request: the component's loop goes on
//! (violations fed back, the next model of an escalation) round after round.
//!
//! A request that failed in a batch (a 5xx, a 429, expired, canceled) goes in the next batch,
//! up to [`ProviderBatch::resubmissions`] more times; one the provider refused (a 4xx) is
//! answered with the refusal, which the component reports as it would any.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde_json::Value;
use tokio::sync::{Semaphore, oneshot};

use super::http::{Check, Failure, Http, Outcome, synthetic};
use super::journal::{Event, Journal, Pending, Restored};
use super::requests::{Api, Group, Key};
use super::{anthropic, gemini, openai};
use crate::bindings::Scope;
use crate::client::{CallError, Structure};
use crate::relay::{Answer, Answering, Relay, Relayed};

/// How a provider batch polls and how often it sends a failed request again.
#[derive(Debug, Clone)]
pub struct ProviderBatch {
    /// The first wait before polling a batch; each poll after waits twice as long.
    pub first_poll: Duration,
    /// The longest wait between two polls.
    pub longest_poll: Duration,
    /// How many more batches a request that failed in one is sent in.
    pub resubmissions: u32,
}

impl Default for ProviderBatch {
    fn default() -> Self {
        Self {
            first_poll: Duration::from_secs(5),
            longest_poll: Duration::from_secs(300),
            resubmissions: 3,
        }
    }
}

/// The rounds of one provider batch.
pub struct Rounds {
    state: Mutex<State>,
    journal: Mutex<Option<Journal>>,
    http: Http,
    options: ProviderBatch,
    /// Items running in the component at once.
    running: Semaphore,
}

#[derive(Default)]
struct State {
    answers: HashMap<Key, Answer>,
    /// Requests asked and not answered yet, with their group.
    asked: HashMap<Key, (Group, Relayed)>,
    /// Asked, in no batch yet.
    queued: Vec<Key>,
    /// In a batch not ended: its id.
    in_batch: HashMap<Key, String>,
    /// Batches a journal holds, not polled yet this run: polled once an item asks for one of
    /// their requests (which gives the credentials to poll with).
    restored: HashMap<String, Pending>,
    /// Batches each request was sent in.
    sent: HashMap<Key, u32>,
    waiting: HashMap<Key, Vec<oneshot::Sender<()>>>,
    /// Each item's clock (unix milliseconds), once journaled.
    clocks: HashMap<String, u64>,
    /// Items not parked and not done.
    active: usize,
    /// Why the batch cannot go on (its journal could not be written).
    broken: Option<String>,
    pollers: Vec<tokio::task::AbortHandle>,
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

impl Rounds {
    /// Rounds writing to `journal` (what it held restored), `jobs` items running at once.
    pub fn new(
        journal: Journal,
        restored: Restored,
        http: Http,
        options: ProviderBatch,
        jobs: usize,
    ) -> Arc<Self> {
        let mut state = State {
            answers: restored.answers,
            clocks: restored.clocks,
            ..State::default()
        };
        for pending in restored.pending {
            for key in &pending.requests {
                state.in_batch.insert(key.clone(), pending.batch.clone());
            }
            state.restored.insert(pending.batch.clone(), pending);
        }
        Arc::new(Self {
            state: Mutex::new(state),
            journal: Mutex::new(Some(journal)),
            http,
            options,
            running: Semaphore::new(jobs.max(1)),
        })
    }

    /// Counts `items` about to run (before any of them parks, so that no batch leaves early).
    pub fn expect(&self, items: usize) {
        lock(&self.state).active += items;
    }

    /// Runs one item to its end, round after round; its result's `usage` says how many of its
    /// model calls a provider batch answered (`batchPricedCalls`).
    pub async fn run(
        self: Arc<Self>,
        client: Arc<Structure>,
        scope: Scope,
        item: String,
        arguments: Value,
    ) -> Result<Value, CallError> {
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap_or_default();
        let clock = (lock(&self.state).clocks.get(&item).copied())
            .unwrap_or(u64::try_from(now.as_millis()).unwrap_or(u64::MAX));
        loop {
            let (parked, parked_here) = oneshot::channel();
            let relay = Arc::new(ItemRelay {
                rounds: self.clone(),
                item: item.clone(),
                clock,
                parked: Mutex::new(Some(parked)),
                answered: Mutex::new(0),
            });
            let permit = self.running.acquire().await;
            tokio::select! {
                result = client.call_tool_relayed(&scope, &arguments, relay.clone()) => {
                    drop(permit);
                    self.finished();
                    let calls = *lock(&relay.answered);
                    return result.map(|mut result| {
                        mark_batch_priced(&mut result, calls);
                        result
                    });
                }
                Ok(wake) = parked_here => {
                    drop(permit);
                    // Woken once the request it parked on is answered; then it runs again.
                    if wake.await.is_err() {
                        let reason = self.broken().unwrap_or_else(|| "the provider batch stopped".into());
                        return Err(CallError::Host(anyhow::anyhow!(reason)));
                    }
                }
            }
        }
    }

    /// Why the batch cannot go on, if it cannot.
    pub fn broken(&self) -> Option<String> {
        lock(&self.state).broken.clone()
    }

    /// Stops polling; the journal keeps what a rerun needs.
    pub fn stop(&self) {
        for poller in lock(&self.state).pollers.drain(..) {
            poller.abort();
        }
    }

    /// Removes the journal once every item has its line: nothing is pending.
    pub fn finish(&self) -> Result<(), String> {
        match lock(&self.journal).take() {
            Some(journal) => journal.remove(),
            None => Ok(()),
        }
    }

    fn finished(self: &Arc<Self>) {
        let mut state = lock(&self.state);
        state.active -= 1;
        self.flush_if_idle(&mut state);
    }

    /// The answer to `request` if there is one; else `item` parks on it (its clock journaled
    /// first, so that a rerun asks the same request), and this says how it will be woken.
    fn ask(
        self: &Arc<Self>,
        item: &ItemRelay,
        key: Key,
        group: Group,
        request: Relayed,
    ) -> Result<Answer, oneshot::Receiver<()>> {
        let (wake, woken) = oneshot::channel();
        let clock_journaled = {
            let state = lock(&self.state);
            if let Some(answer) = state.answers.get(&key) {
                return Ok(answer.clone());
            }
            state.clocks.contains_key(&item.item)
        };
        if !clock_journaled {
            let event = Event::Clock {
                item: item.item.clone(),
                clock: item.clock,
            };
            if self.journal(&event).is_err() {
                return Err(woken);
            }
        }
        let mut state = lock(&self.state);
        state.clocks.insert(item.item.clone(), item.clock);
        if let Some(answer) = state.answers.get(&key) {
            return Ok(answer.clone());
        }
        state.waiting.entry(key.clone()).or_default().push(wake);
        state.active -= 1;
        if !state.asked.contains_key(&key) {
            state.asked.insert(key.clone(), (group.clone(), request));
            match state.in_batch.get(&key).cloned() {
                Some(batch) => {
                    if let Some(pending) = state.restored.remove(&batch) {
                        self.spawn_poll(&mut state, group, pending.batch, pending.requests);
                    }
                }
                None => state.queued.push(key),
            }
        }
        self.flush_if_idle(&mut state);
        Err(woken)
    }

    /// Sends every queued request when no item is running: they are all the round has.
    fn flush_if_idle(self: &Arc<Self>, state: &mut State) {
        if state.active > 0 || state.queued.is_empty() {
            return;
        }
        let mut groups: HashMap<Group, Vec<Key>> = HashMap::new();
        for key in std::mem::take(&mut state.queued) {
            let group = state.asked[&key].0.clone();
            *state.sent.entry(key.clone()).or_default() += 1;
            groups.entry(group).or_default().push(key);
        }
        for (group, keys) in groups {
            for chunk in keys.chunks(max_requests(group.api)) {
                let rounds = self.clone();
                let (group, keys) = (group.clone(), chunk.to_vec());
                for key in &keys {
                    state.in_batch.insert(key.clone(), String::new());
                }
                let task = tokio::spawn(async move { rounds.submit(group, keys).await });
                state.pollers.push(task.abort_handle());
            }
        }
    }

    async fn submit(self: Arc<Self>, group: Group, keys: Vec<Key>) {
        let requests: Vec<(Key, Relayed)> = {
            let state = lock(&self.state);
            keys.iter()
                .map(|key| (key.clone(), state.asked[key].1.clone()))
                .collect()
        };
        let submitted = match group.api {
            Api::OpenAi => openai::submit(&self.http, &group, &requests).await,
            Api::Anthropic => anthropic::submit(&self.http, &group, &requests).await,
            Api::Gemini => gemini::submit(&self.http, &group, &requests).await,
        };
        let batch = match submitted {
            Ok(batch) => batch,
            Err(failure) => {
                let outcome = match failure {
                    // Said as the batch API's refusal: a server with no batch API (a local
                    // one) answers 404 here, which alone would say little.
                    Failure::Refused(answer) => Outcome::Answered(synthetic(
                        answer.status,
                        &format!(
                            "the provider's batch API refused the batch ({} {}): {}; \
                             --provider-batch needs OpenAI's, Anthropic's or Gemini's batch API",
                            answer.status,
                            group.base,
                            String::from_utf8_lossy(&answer.body)
                        ),
                    )),
                    Failure::Again(reason) => {
                        // Not at once again: the provider (or the way to it) needs a moment.
                        tokio::time::sleep(self.options.first_poll).await;
                        Outcome::Again(reason)
                    }
                };
                let outcomes = keys.into_iter().map(|key| (key, outcome.clone())).collect();
                return self.settle(None, outcomes);
            }
        };
        let event = Event::Submitted {
            batch: batch.clone(),
            api: group.api,
            requests: keys.clone(),
        };
        if self.journal(&event).is_err() {
            return;
        }
        {
            let mut state = lock(&self.state);
            for key in &keys {
                state.in_batch.insert(key.clone(), batch.clone());
            }
        }
        self.poll(group, batch, keys).await;
    }

    /// Polls a batch a journal held, with the credentials of the first item asking for it.
    fn spawn_poll(
        self: &Arc<Self>,
        state: &mut State,
        group: Group,
        batch: String,
        keys: Vec<Key>,
    ) {
        let rounds = self.clone();
        let task = tokio::spawn(async move { rounds.poll(group, batch, keys).await });
        state.pollers.push(task.abort_handle());
    }

    /// Polls `batch` until it ends (waiting longer each time), then settles its requests.
    async fn poll(self: Arc<Self>, group: Group, batch: String, keys: Vec<Key>) {
        let mut wait = self.options.first_poll;
        loop {
            tokio::time::sleep(wait).await;
            wait = (wait * 2).min(self.options.longest_poll);
            let checked = match group.api {
                Api::OpenAi => openai::check(&self.http, &group, &batch).await,
                Api::Anthropic => anthropic::check(&self.http, &group, &batch).await,
                Api::Gemini => gemini::check(&self.http, &group, &batch, &keys).await,
            };
            let outcomes: Vec<(Key, Outcome)> = match checked {
                Ok(Check::Running) | Err(Failure::Again(_)) => continue,
                Ok(Check::Done(outcomes)) => outcomes,
                Ok(Check::Failed(outcome)) => keys
                    .iter()
                    .map(|key| (key.clone(), outcome.clone()))
                    .collect(),
                // The batch is gone (a 404, say): its requests go again.
                Err(Failure::Refused(answer)) => {
                    let reason = format!("polling it answered {}", answer.status);
                    keys.iter()
                        .map(|key| (key.clone(), Outcome::Again(reason.clone())))
                        .collect()
                }
            };
            let given: std::collections::HashSet<&Key> =
                outcomes.iter().map(|(key, _)| key).collect();
            let missing: Vec<(Key, Outcome)> = (keys.iter())
                .filter(|key| !given.contains(key))
                .map(|key| {
                    (
                        key.clone(),
                        Outcome::Again("the batch's results left it out".into()),
                    )
                })
                .collect();
            let outcomes = outcomes.into_iter().chain(missing).collect();
            return self.settle(Some(batch), outcomes);
        }
    }

    /// Records each request's outcome: an answer wakes the items waiting on it; passing
    /// trouble queues it for the next batch, or answers it with the trouble once it has been
    /// sent as often as it may be.
    fn settle(self: &Arc<Self>, batch: Option<String>, outcomes: Vec<(Key, Outcome)>) {
        let limit = 1 + self.options.resubmissions;
        for (key, outcome) in outcomes {
            let answer = {
                let mut state = lock(&self.state);
                state.in_batch.remove(&key);
                let asked = state.asked.contains_key(&key);
                let sent = state.sent.get(&key).copied().unwrap_or(0);
                match outcome {
                    // Kept even when no item has asked for it yet (a batch a journal held).
                    Outcome::Answered(answer) => Some(answer),
                    // Sent again once an item asks for it.
                    Outcome::Again(_) if !asked => None,
                    Outcome::Again(reason) if sent >= limit => Some(synthetic(
                        503,
                        &format!(
                            "the provider's batch API did not answer this request in {limit} \
                             batches: {reason}"
                        ),
                    )),
                    Outcome::Again(_) => {
                        state.queued.push(key.clone());
                        None
                    }
                }
            };
            if let Some(answer) = answer {
                let event = Event::Answered {
                    answer: key.clone(),
                    status: answer.status,
                    body: String::from_utf8_lossy(&answer.body).into_owned(),
                };
                if self.journal(&event).is_err() {
                    return;
                }
                let mut state = lock(&self.state);
                state.asked.remove(&key);
                state.answers.insert(key.clone(), answer);
                for wake in state.waiting.remove(&key).unwrap_or_default() {
                    state.active += 1;
                    let _ = wake.send(());
                }
            }
        }
        if let Some(batch) = batch
            && self.journal(&Event::Ended { ended: batch }).is_err()
        {
            return;
        }
        let mut state = lock(&self.state);
        self.flush_if_idle(&mut state);
    }

    /// Writes `event`; a journal that cannot be written breaks the batch (nothing more is
    /// sent: what was sent could not be found again).
    fn journal(&self, event: &Event) -> Result<(), ()> {
        let written = match lock(&self.journal).as_mut() {
            Some(journal) => journal.write(event),
            None => Err("the journal is closed".to_owned()),
        };
        written.map_err(|error| {
            let mut state = lock(&self.state);
            state.broken = Some(error);
            for wake in state.waiting.drain().flat_map(|(_, wakes)| wakes) {
                drop(wake);
            }
        })
    }
}

/// The most requests one batch of `api` takes (OpenAI 50,000, Anthropic 100,000; Gemini's
/// inline requests are bounded by size, 20 MB, which a few thousand short texts fit).
fn max_requests(api: Api) -> usize {
    match api {
        Api::OpenAi => 50_000,
        Api::Anthropic => 100_000,
        Api::Gemini => 2_000,
    }
}

/// Notes in `result`'s usage how many of its model calls a provider batch answered.
fn mark_batch_priced(result: &mut Value, calls: u32) {
    if let Some(Value::Object(usage)) = structure::outcome::usage_in_mut(result) {
        usage.insert("batchPricedCalls".into(), calls.into());
    }
}

/// One item's relay: answers from the rounds, or parks the item.
struct ItemRelay {
    rounds: Arc<Rounds>,
    /// The item's id.
    item: String,
    /// Its instance's clock, in unix milliseconds.
    clock: u64,
    /// Told, once, that the item parked, and how it will be woken.
    parked: Mutex<Option<oneshot::Sender<oneshot::Receiver<()>>>>,
    /// Model calls answered from a batch.
    answered: Mutex<u32>,
}

impl Relay for ItemRelay {
    fn takes(&self, method: &str, url: &str) -> bool {
        let probe = Relayed {
            method: method.to_owned(),
            url: url.to_owned(),
            headers: Vec::new(),
            body: bytes::Bytes::new(),
        };
        Group::of(&probe).is_some()
    }

    fn relay(&self, request: Relayed) -> Answering {
        let Some(group) = Group::of(&request) else {
            return Box::pin(async { synthetic(400, "not a model request") });
        };
        let key = Key::of(&request);
        match self.rounds.ask(self, key, group, request) {
            Ok(answer) => {
                *lock(&self.answered) += 1;
                Box::pin(async move { answer })
            }
            Err(woken) => {
                if let Some(parked) = lock(&self.parked).take() {
                    let _ = parked.send(woken);
                }
                // The item's call is dropped; this never answers.
                Box::pin(std::future::pending())
            }
        }
    }

    fn clock(&self) -> Option<SystemTime> {
        Some(UNIX_EPOCH + Duration::from_millis(self.clock))
    }
}
