//! A catalog model fetched once into the machine's cache: from the hub `HF_ENDPOINT` names (the
//! public one by default), at the card's revision, through the standard proxy variables
//! (`HTTPS_PROXY`, `NO_PROXY`, ...), resumed where an interrupted download stopped (HTTP
//! `Range`), hashed while it streams, and renamed into place only when its size and SHA-256 are
//! the card's. A lock file keeps two first runs from downloading it twice.
//!
//! ```no_run
//! use structure_host::local::{CATALOG, Hub, ModelCache, Show, fetch};
//!
//! let cache = ModelCache::default_dir().expect("a home or cache directory");
//! let path = fetch(&cache, &CATALOG[0], &Hub::from_env(), false, Show::OnTerminal)?;
//! println!("{}", path.display());
//! # Ok::<(), structure_host::local::FetchError>(())
//! ```
//!
//! Nothing half-written is ever at the model's path: the bytes arrive in `<file>.part` beside
//! it, which only a dropped connection leaves behind (the next run resumes it); a wrong size
//! or hash, a 404 or a full disk removes it.

use std::fmt;
use std::fs::{File, OpenOptions};
use std::io::{IsTerminal, Read, Write};
use std::path::{Path, PathBuf};
use std::time::Duration;

use sha2::{Digest, Sha256};

use crate::local::catalog::ModelCard;

/// The public hub, when `HF_ENDPOINT` names no other.
pub const DEFAULT_HUB: &str = "https://huggingface.co";
/// How much is read and written at a time.
const CHUNK_BYTES: usize = 1 << 20;
/// The longest a connection to the hub may take to open.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(30);

/// Where models come from: a hub that serves `{endpoint}/{repo}/resolve/{revision}/{file}`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hub {
    /// Its address, without a trailing `/` (`https://huggingface.co`).
    pub endpoint: String,
}

impl Hub {
    /// The hub `HF_ENDPOINT` names, else [`DEFAULT_HUB`].
    pub fn from_env() -> Self {
        let endpoint = std::env::var("HF_ENDPOINT")
            .ok()
            .filter(|url| !url.trim().is_empty());
        Self::at(endpoint.as_deref().unwrap_or(DEFAULT_HUB))
    }

    /// The hub at `endpoint`.
    pub fn at(endpoint: &str) -> Self {
        Self {
            endpoint: endpoint.trim().trim_end_matches('/').to_owned(),
        }
    }

    /// Where `card`'s file is.
    ///
    /// ```
    /// use structure_host::local::{Hub, DEFAULT};
    ///
    /// assert_eq!(
    ///     Hub::at("https://huggingface.co/").url(DEFAULT),
    ///     "https://huggingface.co/Qwen/Qwen2.5-Coder-0.5B-Instruct-GGUF/resolve/main/qwen2.5-coder-0.5b-instruct-q4_k_m.gguf"
    /// );
    /// ```
    pub fn url(&self, card: &ModelCard) -> String {
        format!(
            "{}/{}/resolve/{}/{}",
            self.endpoint, card.repo, card.revision, card.file
        )
    }
}

/// The folder models are kept in: `<cache>/models/<name>/<file>`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModelCache {
    dir: PathBuf,
}

/// A model file in the cache, whole or partly downloaded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cached {
    /// The model's name (its folder's).
    pub name: String,
    /// The file.
    pub path: PathBuf,
    /// Its size.
    pub bytes: u64,
    /// Whether it is the whole model (else an interrupted download, `<file>.part`).
    pub whole: bool,
}

impl ModelCache {
    /// `models/` in the cache directory (`STRUCTURE_CACHE_DIR`, else `$XDG_CACHE_HOME/structure`,
    /// else `~/.cache/structure`); `None` without a home.
    pub fn default_dir() -> Option<Self> {
        crate::artifact::default_cache_dir().map(|dir| Self::at(dir.join("models")))
    }

    /// The cache at `dir`.
    pub fn at(dir: impl Into<PathBuf>) -> Self {
        Self { dir: dir.into() }
    }

    /// Where `card`'s model is once fetched.
    pub fn path(&self, card: &ModelCard) -> PathBuf {
        self.dir.join(card.name).join(card.file)
    }

    /// Whether `card`'s model is here, whole.
    pub fn has(&self, card: &ModelCard) -> bool {
        std::fs::metadata(self.path(card)).is_ok_and(|meta| meta.len() == card.size)
    }

    /// Every model file here, whole or partly downloaded, by name.
    pub fn list(&self) -> Vec<Cached> {
        let mut found = Vec::new();
        let Ok(models) = std::fs::read_dir(&self.dir) else {
            return found;
        };
        for model in models.flatten() {
            let name = model.file_name().to_string_lossy().into_owned();
            for file in std::fs::read_dir(model.path())
                .into_iter()
                .flatten()
                .flatten()
            {
                let path = file.path();
                let file_name = path
                    .file_name()
                    .map(|name| name.to_string_lossy().into_owned());
                let whole = file_name
                    .as_deref()
                    .is_some_and(|name| name.ends_with(".gguf"));
                let partial = file_name
                    .as_deref()
                    .is_some_and(|name| name.ends_with(".gguf.part"));
                if whole || partial {
                    let bytes = file.metadata().map_or(0, |meta| meta.len());
                    found.push(Cached {
                        name: name.clone(),
                        path,
                        bytes,
                        whole,
                    });
                }
            }
        }
        found.sort_by(|a, b| a.path.cmp(&b.path));
        found
    }

    /// Removes `name`'s files (whole or partly downloaded); whether there were any.
    pub fn remove(&self, name: &str) -> std::io::Result<bool> {
        let dir = self.dir.join(name);
        if name.is_empty() || name.contains(['/', '\\']) || name.starts_with('.') || !dir.is_dir() {
            return Ok(false);
        }
        std::fs::remove_dir_all(dir)?;
        Ok(true)
    }
}

/// Whether a download draws a progress bar.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Show {
    /// When stderr is a terminal (the command line).
    OnTerminal,
    /// Never (tests, services).
    Nothing,
}

/// Why a model could not be fetched. Each says how to get the model another way.
#[derive(Debug, Clone, PartialEq, Eq)]
#[allow(missing_docs, reason = "each field is named for what it holds")]
pub enum FetchError {
    /// It is not here, and the settings say not to download (`--offline`).
    Offline { name: String, path: PathBuf },
    /// The hub has no such file.
    NotFound { url: String },
    /// The hub answered with another error status.
    Status { url: String, status: u16 },
    /// The connection failed or dropped: what arrived is kept, and the next run resumes it.
    Network { url: String, message: String },
    /// The bytes are not the card's: their size or hash differs. Nothing is kept.
    Mismatch {
        name: String,
        expected: String,
        got: String,
    },
    /// The cache cannot be written (a full disk, a folder without rights). Nothing is kept.
    Disk { path: PathBuf, message: String },
    /// No cache directory: neither `STRUCTURE_CACHE_DIR` nor a home.
    NoCache,
}

impl fmt::Display for FetchError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let other_way = "or give a GGUF file you have with --model-file / STRUCTURE_MODEL_FILE";
        match self {
            FetchError::Offline { name, path } => write!(
                f,
                "the local model {name} is not on this machine ({}) and downloads are off \
                 (--offline / STRUCTURE_OFFLINE): run `structure model pull` once while online, {other_way}",
                path.display()
            ),
            FetchError::NotFound { url } => write!(
                f,
                "the model hub has no {url} (404): check HF_ENDPOINT, {other_way}"
            ),
            FetchError::Status { url, status } => write!(
                f,
                "the model hub answered {status} for {url}: try again later, {other_way}"
            ),
            FetchError::Network { url, message } => write!(
                f,
                "the download of {url} failed ({message}); the next run resumes it from what \
                 arrived (behind a proxy, set HTTPS_PROXY), {other_way}"
            ),
            FetchError::Mismatch {
                name,
                expected,
                got,
            } => write!(
                f,
                "the downloaded {name} is not the expected file (expected {expected}, got {got}); it \
                 was removed: check HF_ENDPOINT and try again, {other_way}"
            ),
            FetchError::Disk { path, message } => write!(
                f,
                "cannot write the model to {} ({message}); nothing was kept: free space or set \
                 STRUCTURE_CACHE_DIR to another folder, {other_way}",
                path.display()
            ),
            FetchError::NoCache => write!(
                f,
                "no folder to keep the local model in: set STRUCTURE_CACHE_DIR, {other_way}"
            ),
        }
    }
}

impl std::error::Error for FetchError {}

/// `card`'s model in `cache`, fetched from `hub` first unless it is there (or, `offline`, an
/// error saying how to get it).
pub fn fetch(
    cache: &ModelCache,
    card: &ModelCard,
    hub: &Hub,
    offline: bool,
    show: Show,
) -> Result<PathBuf, FetchError> {
    let path = cache.path(card);
    if cache.has(card) {
        return Ok(path);
    }
    if offline {
        return Err(FetchError::Offline {
            name: card.name.to_owned(),
            path,
        });
    }
    let dir = path.parent().map(Path::to_path_buf).unwrap_or_default();
    std::fs::create_dir_all(&dir).map_err(|error| disk(&dir, &error))?;
    let lock_path = dir.join(format!("{}.lock", card.file));
    let lock = File::create(&lock_path).map_err(|error| disk(&lock_path, &error))?;
    // Another first run may be downloading it: wait for it, then take what it fetched.
    lock.lock().map_err(|error| disk(&lock_path, &error))?;
    if cache.has(card) {
        return Ok(path);
    }
    let partial = dir.join(format!("{}.part", card.file));
    let result = download(card, hub, &partial, show)
        .and_then(|()| std::fs::rename(&partial, &path).map_err(|error| disk(&path, &error)));
    match result {
        Ok(()) => Ok(path),
        // A dropped connection keeps what arrived, for the next run to resume (when anything did).
        Err(error @ FetchError::Network { .. }) => {
            if std::fs::metadata(&partial).is_ok_and(|meta| meta.len() == 0) {
                let _ = std::fs::remove_file(&partial);
            }
            Err(error)
        }
        Err(error) => {
            let _ = std::fs::remove_file(&partial);
            Err(error)
        }
    }
}

fn disk(path: &Path, error: &std::io::Error) -> FetchError {
    FetchError::Disk {
        path: path.to_path_buf(),
        message: error.to_string(),
    }
}

/// Downloads `card`'s file into `partial`, resuming what it holds, and checks it whole.
fn download(card: &ModelCard, hub: &Hub, partial: &Path, show: Show) -> Result<(), FetchError> {
    let url = hub.url(card);
    let mut file = OpenOptions::new()
        .create(true)
        .read(true)
        .append(true)
        .open(partial)
        .map_err(|error| disk(partial, &error))?;
    let mut held = file
        .metadata()
        .map_err(|error| disk(partial, &error))?
        .len();
    if held > card.size {
        file.set_len(0).map_err(|error| disk(partial, &error))?;
        held = 0;
    }
    let mut hasher = Sha256::new();
    if held > 0 {
        hash_file(partial, &mut hasher).map_err(|error| disk(partial, &error))?;
    }
    eprintln!(
        "structure: fetching the local model {} ({} MB, once) from {url} into {}",
        card.title,
        card.size / 1_000_000,
        partial.with_extension("").display()
    );
    if held < card.size {
        let restart = stream(
            &url,
            held,
            (&mut file, partial),
            &mut hasher,
            card.size,
            show,
        )?;
        if restart {
            // The hub sent the whole file again: what was held is replaced.
            return download(card, hub, partial, show);
        }
    }
    file.sync_all().map_err(|error| disk(partial, &error))?;
    let size = file
        .metadata()
        .map_err(|error| disk(partial, &error))?
        .len();
    let digest: String = hasher
        .finalize()
        .iter()
        .map(|byte| format!("{byte:02x}"))
        .collect();
    if size != card.size || digest != card.sha256 {
        return Err(FetchError::Mismatch {
            name: card.name.to_owned(),
            expected: format!("{} bytes, sha256 {}", card.size, card.sha256),
            got: format!("{size} bytes, sha256 {digest}"),
        });
    }
    Ok(())
}

/// Streams `url` from byte `from` onto `file`, into `hasher`; `true` when the hub ignored the
/// range and the file is to be fetched again from its start (it is emptied then).
fn stream(
    url: &str,
    from: u64,
    (file, path): (&mut File, &Path),
    hasher: &mut Sha256,
    size: u64,
    show: Show,
) -> Result<bool, FetchError> {
    let network = |message: String| FetchError::Network {
        url: url.to_owned(),
        message,
    };
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .timeout_connect(Some(CONNECT_TIMEOUT))
        .build()
        .into();
    let mut request = agent.get(url);
    if from > 0 {
        request = request.header("range", format!("bytes={from}-"));
    }
    let response = request.call().map_err(|error| network(error.to_string()))?;
    match response.status().as_u16() {
        206 => {}
        200 if from > 0 => {
            file.set_len(0).map_err(|error| disk(path, &error))?;
            return Ok(true);
        }
        200 => {}
        404 => {
            return Err(FetchError::NotFound {
                url: url.to_owned(),
            });
        }
        status => {
            return Err(FetchError::Status {
                url: url.to_owned(),
                status,
            });
        }
    }
    let bar = progress(show, size, from);
    let mut reader = response.into_body().into_reader();
    let mut buffer = vec![0u8; CHUNK_BYTES];
    let mut held = from;
    // Bounded by the card's size: a hub that sends more is cut off there, and fails the check.
    while held < size {
        let read = reader
            .read(&mut buffer)
            .map_err(|error| network(error.to_string()))?;
        if read == 0 {
            break;
        }
        let take = read.min(usize::try_from(size - held).unwrap_or(read));
        let chunk = &buffer[..take];
        file.write_all(chunk).map_err(|error| disk(path, &error))?;
        hasher.update(chunk);
        held += take as u64;
        bar.set_position(held);
    }
    bar.finish_and_clear();
    if held < size {
        return Err(network(format!(
            "the connection closed after {held} of {size} bytes"
        )));
    }
    Ok(false)
}

/// A progress bar in bytes on a terminal's stderr; hidden otherwise.
fn progress(show: Show, size: u64, from: u64) -> indicatif::ProgressBar {
    if show == Show::Nothing || !std::io::stderr().is_terminal() {
        return indicatif::ProgressBar::hidden();
    }
    let bar = indicatif::ProgressBar::new(size);
    if let Ok(style) = indicatif::ProgressStyle::with_template(
        "{bar:40} {bytes}/{total_bytes} {bytes_per_sec} {eta}",
    ) {
        bar.set_style(style);
    }
    bar.set_position(from);
    bar
}

/// Feeds what `path` holds into `hasher`.
fn hash_file(path: &Path, hasher: &mut Sha256) -> std::io::Result<()> {
    let mut file = File::open(path)?;
    let mut buffer = vec![0u8; CHUNK_BYTES];
    loop {
        let read = file.read(&mut buffer)?;
        if read == 0 {
            return Ok(());
        }
        hasher.update(&buffer[..read]);
    }
}
