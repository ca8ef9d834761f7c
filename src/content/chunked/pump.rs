//! The conversations of a text's chunks, their requests in flight together: up to
//! `structure_max_concurrent_calls` at a time, the next started as soon as one is answered
//! (the transport's [`pump`](crate::ports::Transport::pump)), a retry made for its chunk alone
//! while the others go on. Once a call fails — or, where the caller says so, one chunk's answer
//! is stale — nothing more is started. An answer the model's output limit cut off fails the
//! call too, unless the caller reads such a chunk again in smaller parts ([`OnCut::Keep`]).

use std::collections::VecDeque;
use std::time::Duration;

use crate::content::ask::{Answered, Caller};
use crate::content::dialogue::{Dialogue, Judge, Settled};
use crate::error::{ErrorKind, StructureError};
use crate::outcome::{Trace, Usage};
use crate::ports::{HttpRequest, HttpResponse, Next, Pump, TransportError};

/// One chunk's conversation, and what it came to.
pub(in crate::content) struct ChunkRun<'a, J: Judge> {
    pub dialogue: Dialogue<'a>,
    pub judge: J,
    pub settled: Option<Settled<J::Accepted>>,
    /// Why it has no answer: the model's output limit cut it off ([`OnCut::Keep`]).
    pub cut: Option<StructureError>,
    /// The first request, when it was made before any was sent (for the budget's check).
    prepared: Option<HttpRequest>,
}

impl<'a, J: Judge> ChunkRun<'a, J> {
    pub fn new(dialogue: Dialogue<'a>, judge: J) -> Self {
        Self {
            dialogue,
            judge,
            settled: None,
            cut: None,
            prepared: None,
        }
    }
}

/// What a chunk whose answer stays invalid does to the others.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(in crate::content) enum OnStale {
    /// Nothing more is started: the result is stale.
    Stop,
    /// The others go on: the chunk is left out.
    GoOn,
}

/// What a chunk whose answer the model's output limit cut off does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(in crate::content) enum OnCut {
    /// The call fails with the `truncated` error.
    Fail,
    /// The others go on: the chunk is left without an answer, the error in its
    /// [`ChunkRun::cut`], for the caller to read it again in smaller parts.
    Keep,
}

/// Runs every chunk's conversation to its end, up to `max_concurrent` requests in flight. The
/// budget, when there is one, covers every chunk: none is asked when the first calls alone
/// could pass it.
pub(in crate::content) fn converse<'a, J: Judge>(
    runs: &mut [ChunkRun<'a, J>],
    caller: Caller<'a>,
    max_concurrent: usize,
    (on_stale, on_cut): (OnStale, OnCut),
    usage: &mut Usage,
    trace: &mut Trace,
) -> Result<(), StructureError> {
    if let Some(budget) = caller.budget {
        for run in runs.iter_mut() {
            run.prepared = Some(run.dialogue.request());
        }
        let first: Vec<&HttpRequest> = runs
            .iter()
            .filter_map(|run| run.prepared.as_ref())
            .collect();
        budget.check(*usage, &first)?;
    }
    let mut chunks = Conversations {
        waiting: (0..runs.len()).collect(),
        runs,
        caller,
        in_flight: Vec::new(),
        retrying: Vec::new(),
        usage: *usage,
        retries: 0,
        failed: None,
        on_stale,
        on_cut,
    };
    caller.ports.transport.pump(max_concurrent, &mut chunks);
    *usage = chunks.usage;
    trace.retries += chunks.retries;
    match chunks.failed {
        Some(error) => Err(error.with_usage(*usage)),
        None => Ok(()),
    }
}

/// The chunks' conversations as the transport's pump sees them: the next request of a chunk
/// that waits for one, each answer taken by its chunk, and the retries whose wait is over.
struct Conversations<'r, 'a, J: Judge> {
    runs: &'r mut [ChunkRun<'a, J>],
    caller: Caller<'a>,
    /// Chunks whose next request is to be started, in order.
    waiting: VecDeque<usize>,
    /// The requests under way (for the budget and for retries).
    in_flight: Vec<Attempt>,
    /// Requests to start again once their wait is over; the other chunks go on meanwhile.
    retrying: Vec<(Attempt, u64)>,
    usage: Usage,
    retries: u32,
    /// The first error: nothing more is started, and the call ends with it.
    failed: Option<StructureError>,
    on_stale: OnStale,
    on_cut: OnCut,
}

/// One attempt at a chunk's request.
struct Attempt {
    chunk: usize,
    request: HttpRequest,
    /// 0 for the first.
    attempt: u32,
}

impl<J: Judge> Pump for Conversations<'_, '_, J> {
    fn next(&mut self) -> Next {
        let stale = self.on_stale == OnStale::Stop
            && (self.runs.iter()).any(|run| matches!(run.settled, Some(Settled::Stale(_))));
        if stale || self.failed.is_some() {
            return Next::Idle;
        }
        let now = self.caller.ports.clock.now_unix_millis();
        let soonest = (self.retrying.iter().enumerate())
            .map(|(at, (_, due))| (at, *due))
            .min_by_key(|(_, due)| *due);
        if let Some((at, due)) = soonest
            && due <= now
        {
            return self.restart(at);
        }
        if let Some(chunk) = self.waiting.pop_front() {
            return self.start(chunk);
        }
        let Some((at, due)) = soonest else {
            return Next::Idle;
        };
        let wait = Duration::from_millis(due.saturating_sub(now));
        if !self.in_flight.is_empty() {
            return Next::Wait(wait);
        }
        // Nothing in flight for the pump to wait on: the wait is taken here.
        self.caller.ports.clock.sleep(wait);
        self.restart(at)
    }

    fn done(&mut self, chunk: usize, answer: Result<HttpResponse, TransportError>) {
        let Some(at) = self.in_flight.iter().position(|sent| sent.chunk == chunk) else {
            return;
        };
        let sent = self.in_flight.swap_remove(at);
        if self.failed.is_some() {
            // What an answer after the failure cost still counts.
            if let Ok(completion) =
                answer.map(|response| self.caller.provider.completion(&response))
            {
                self.usage
                    .add(completion.map_or_else(|error| error.usage, |c| c.usage));
            }
            return;
        }
        let taken = match self
            .caller
            .answered(&sent.request, answer, sent.attempt, &mut self.usage)
        {
            Ok(Answered::Completed(completion)) => {
                let run = &mut self.runs[chunk];
                run.dialogue.take(completion, &run.judge, self.usage)
            }
            Ok(Answered::RetryAfter(wait)) => {
                let due = (self.caller.ports.clock.now_unix_millis())
                    .saturating_add(u64::try_from(wait.as_millis()).unwrap_or(u64::MAX));
                let again = Attempt {
                    attempt: sent.attempt + 1,
                    ..sent
                };
                self.retrying.push((again, due));
                return;
            }
            Err(error) => Err(error),
        };
        match taken {
            Ok(Some(settled)) => self.runs[chunk].settled = Some(settled),
            Ok(None) => self.waiting.push_back(chunk),
            Err(error) if error.kind == ErrorKind::Truncated && self.on_cut == OnCut::Keep => {
                // The error carries the total spent, the cut answer's too.
                self.usage = error.usage;
                self.runs[chunk].cut = Some(error);
            }
            Err(error) => self.failed = Some(error),
        }
    }
}

impl<J: Judge> Conversations<'_, '_, J> {
    /// Starts `chunk`'s next request, if the budget lets it go with those in flight.
    fn start(&mut self, chunk: usize) -> Next {
        let run = &mut self.runs[chunk];
        let request = run
            .prepared
            .take()
            .unwrap_or_else(|| run.dialogue.request());
        let in_flight: Vec<&HttpRequest> =
            self.in_flight.iter().map(|sent| &sent.request).collect();
        match self.caller.start(&request, &in_flight, &mut self.usage) {
            Ok(sent) => {
                let sent = sent.into_owned();
                self.in_flight.push(Attempt {
                    chunk,
                    request,
                    attempt: 0,
                });
                Next::Start(chunk, sent)
            }
            Err(error) => {
                self.failed = Some(error);
                Next::Idle
            }
        }
    }

    /// Starts the retry at `at` of the waiting ones.
    fn restart(&mut self, at: usize) -> Next {
        let (again, _) = self.retrying.swap_remove(at);
        self.retries += 1;
        match self.caller.restart(&again.request, &mut self.usage) {
            Ok(sent) => {
                let sent = sent.into_owned();
                let chunk = again.chunk;
                self.in_flight.push(again);
                Next::Start(chunk, sent)
            }
            Err(error) => {
                self.failed = Some(error);
                Next::Idle
            }
        }
    }
}
