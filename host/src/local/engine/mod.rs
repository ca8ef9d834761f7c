//! The embedded engine: a [`LocalModel`] run in this process, answering the component's requests
//! at [`LOCAL_ORIGIN`] as a llama.cpp server with one slot would. It is a [`Relay`]: the
//! requests reach it through the host's egress, and the component cannot tell it from a server.
//!
//! The model is fetched (once) and loaded on a thread of its own the first time it is needed;
//! that thread then answers one request at a time, keeping its context (the prompt cache)
//! between them. One engine serves every client of a process that asks for the same model.
//!
//! ```no_run
//! use structure_host::local::{LocalEngine, LocalModel};
//! use structure_host::Settings;
//!
//! # fn example() -> Result<(), Box<dyn std::error::Error>> {
//! let model = LocalModel::chosen(&Settings::new())?.expect("the default model");
//! let engine = LocalEngine::shared(model);
//! engine.ready()?; // fetches and loads it
//! # Ok(())
//! # }
//! ```

mod session;
pub mod wire;

use std::path::PathBuf;
use std::sync::mpsc::{self, Receiver, Sender};
use std::sync::{Arc, Mutex, OnceLock, Weak};
use std::time::SystemTime;

use llama_cpp_2::llama_backend::LlamaBackend;
use llama_cpp_2::model::LlamaModel;
use llama_cpp_2::model::params::LlamaModelParams;

use crate::local::choose::{LOCAL_ORIGIN, LocalModel, ModelSource};
use crate::local::fetch::{FetchError, Hub, ModelCache, Show, fetch};
use crate::relay::{Answer, Answering, Relay, Relayed};

use session::Session;

/// A request for the engine's thread, and where its answer goes.
struct Job {
    request: Relayed,
    reply: tokio::sync::oneshot::Sender<Answer>,
}

/// Why the model cannot answer: it could not be fetched, or not loaded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EngineError {
    /// The model could not be fetched.
    Fetch(FetchError),
    /// The file is there but llama.cpp cannot run it (not a GGUF, a model it does not know).
    Load {
        /// The model file.
        path: PathBuf,
        /// What llama.cpp said.
        message: String,
    },
    /// The engine's thread stopped (it panicked, or the process is ending).
    Stopped,
}

impl std::fmt::Display for EngineError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            EngineError::Fetch(error) => error.fmt(f),
            EngineError::Load { path, message } => write!(
                f,
                "the local model {} cannot be loaded ({message}): give another GGUF file with \
                 --model-file / STRUCTURE_MODEL_FILE",
                path.display()
            ),
            EngineError::Stopped => f.write_str("the local model's thread has stopped"),
        }
    }
}

impl std::error::Error for EngineError {}

/// An embedded model, loaded on first use.
pub struct LocalEngine {
    model: LocalModel,
    hub: Hub,
    cache: Option<ModelCache>,
    show: Show,
    /// The thread that holds the loaded model, once it runs.
    jobs: Mutex<Option<Sender<Job>>>,
}

impl LocalEngine {
    /// The engine for `model`, fetched from the hub `HF_ENDPOINT` names into the default cache.
    pub fn new(model: LocalModel) -> Self {
        Self::with(
            model,
            Hub::from_env(),
            ModelCache::default_dir(),
            Show::OnTerminal,
        )
    }

    /// The engine for `model`, fetched from `hub` into `cache`.
    pub fn with(model: LocalModel, hub: Hub, cache: Option<ModelCache>, show: Show) -> Self {
        Self {
            model,
            hub,
            cache,
            show,
            jobs: Mutex::new(None),
        }
    }

    /// This process's engine for `model`: one, however many clients ask for it.
    pub fn shared(model: LocalModel) -> Arc<Self> {
        static ENGINES: Mutex<Vec<(LocalModel, Weak<LocalEngine>)>> = Mutex::new(Vec::new());
        let mut engines = ENGINES
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        engines.retain(|(_, engine)| engine.strong_count() > 0);
        if let Some(engine) = (engines.iter())
            .find(|(kept, _)| *kept == model)
            .and_then(|(_, engine)| engine.upgrade())
        {
            return engine;
        }
        let engine = Arc::new(Self::new(model.clone()));
        engines.push((model, Arc::downgrade(&engine)));
        engine
    }

    /// The model this engine runs.
    pub fn model(&self) -> &LocalModel {
        &self.model
    }

    /// Fetches the model if it is not here yet (a catalog model), loads it, and starts its
    /// thread; nothing to do once it runs. Blocks for as long as that takes.
    pub fn ready(&self) -> Result<(), EngineError> {
        self.jobs().map(drop)
    }

    /// Answers one request as the engine's server would — `method` and `path`
    /// (`/v1/chat/completions`, `/props`, ...) with a JSON `body` — with its status and JSON
    /// body, loading the model first if need be; blocks until then. What the component's
    /// requests go through, for a caller that wants the model without the component (the
    /// benchmarks' plain calls).
    pub fn request(
        &self,
        method: &str,
        path: &str,
        body: &[u8],
    ) -> Result<(u16, Vec<u8>), EngineError> {
        let jobs = self.jobs()?;
        let (reply, answer) = tokio::sync::oneshot::channel();
        let request = Relayed {
            method: method.to_owned(),
            url: format!("{LOCAL_ORIGIN}{path}"),
            headers: Vec::new(),
            body: body.to_vec().into(),
        };
        jobs.send(Job { request, reply })
            .map_err(|_| EngineError::Stopped)?;
        let answer = answer.blocking_recv().map_err(|_| EngineError::Stopped)?;
        Ok((answer.status, answer.body.to_vec()))
    }

    /// The engine thread's queue, started first if need be.
    fn jobs(&self) -> Result<Sender<Job>, EngineError> {
        let mut jobs = self
            .jobs
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        if let Some(jobs) = jobs.as_ref() {
            return Ok(jobs.clone());
        }
        let path = match &self.model.source {
            ModelSource::File(path) => path.clone(),
            ModelSource::Catalog(card) => {
                let cache = self
                    .cache
                    .as_ref()
                    .ok_or(EngineError::Fetch(FetchError::NoCache))?;
                fetch(cache, card, &self.hub, self.model.offline, self.show)
                    .map_err(EngineError::Fetch)?
            }
        };
        let started = start(path, self.model.clone())?;
        *jobs = Some(started.clone());
        Ok(started)
    }
}

impl Relay for LocalEngine {
    fn takes(&self, _method: &str, url: &str) -> bool {
        url.strip_prefix(LOCAL_ORIGIN)
            .is_some_and(|rest| rest.is_empty() || rest.starts_with(['/', ':']))
    }

    fn relay(&self, request: Relayed) -> Answering {
        let jobs = self.jobs();
        Box::pin(async move {
            let jobs = match jobs {
                Ok(jobs) => jobs,
                // Not retryable: a request again fails the same way.
                Err(error) => {
                    return wire::error(400, "local_model_unavailable", &error.to_string());
                }
            };
            let (reply, answer) = tokio::sync::oneshot::channel();
            if jobs.send(Job { request, reply }).is_err() {
                return wire::error(500, "server_error", "the local model's thread has stopped");
            }
            (answer.await).unwrap_or_else(|_| {
                wire::error(500, "server_error", "the local model's thread has stopped")
            })
        })
    }

    fn clock(&self) -> Option<SystemTime> {
        None
    }
}

/// llama.cpp's backend, started once a process (it may not be started twice), its log kept
/// off stderr.
fn backend() -> Result<&'static LlamaBackend, String> {
    static BACKEND: OnceLock<Result<LlamaBackend, String>> = OnceLock::new();
    let backend = BACKEND.get_or_init(|| {
        let mut backend = LlamaBackend::init().map_err(|error| error.to_string())?;
        backend.void_logs();
        Ok(backend)
    });
    backend.as_ref().map_err(Clone::clone)
}

/// Loads the model at `path` on a thread of its own, which then answers the jobs sent to it.
fn start(path: PathBuf, model: LocalModel) -> Result<Sender<Job>, EngineError> {
    let (jobs, queue) = mpsc::channel();
    let (loaded, load) = mpsc::channel();
    let load_error = |message: String| EngineError::Load {
        path: path.clone(),
        message,
    };
    let thread_path = path.clone();
    std::thread::Builder::new()
        .name("structure-local-model".into())
        .spawn(move || serve(&thread_path, &model, &loaded, &queue))
        .map_err(|error| load_error(error.to_string()))?;
    match load.recv() {
        Ok(Ok(())) => Ok(jobs),
        Ok(Err(message)) => Err(load_error(message)),
        Err(_) => Err(load_error("the loading thread stopped".to_owned())),
    }
}

/// The engine's thread: loads the model, says so on `loaded`, then answers `queue` until every
/// sender is gone.
fn serve(
    path: &std::path::Path,
    model: &LocalModel,
    loaded: &Sender<Result<(), String>>,
    queue: &Receiver<Job>,
) {
    let session = backend().and_then(|backend| {
        let params = LlamaModelParams::default();
        let llama = LlamaModel::load_from_file(backend, path, &params)
            .map_err(|error| error.to_string())?;
        Ok((backend, llama))
    });
    let (backend, llama) = match session {
        Ok(loaded_model) => loaded_model,
        Err(message) => {
            let _ = loaded.send(Err(message));
            return;
        }
    };
    let threads = model
        .threads
        .map_or_else(physical_cores, |threads| threads as usize);
    let threads = i32::try_from(threads).unwrap_or(1).max(1);
    let mut session = match Session::new(backend, &llama, model.context_tokens, threads) {
        Ok(session) => session,
        Err(message) => {
            let _ = loaded.send(Err(message));
            return;
        }
    };
    let _ = loaded.send(Ok(()));
    for job in queue {
        let answer = wire::answer(&mut session, &model.name, &job.request);
        let _ = job.reply.send(answer);
    }
}

/// The machine's physical cores (one thread each decodes fastest: a core's second hardware
/// thread shares its vector units), else the threads it runs at once.
fn physical_cores() -> usize {
    let logical = std::thread::available_parallelism().map_or(1, usize::from);
    let Ok(cpuinfo) = std::fs::read_to_string("/proc/cpuinfo") else {
        return logical;
    };
    let mut cores = std::collections::BTreeSet::new();
    let mut package = "";
    for line in cpuinfo.lines() {
        let Some((key, value)) = line.split_once(':') else {
            continue;
        };
        match key.trim() {
            "physical id" => package = value.trim(),
            "core id" => {
                cores.insert((package.to_owned(), value.trim().to_owned()));
            }
            _ => {}
        }
    }
    if cores.is_empty() {
        logical
    } else {
        cores.len().min(logical)
    }
}
