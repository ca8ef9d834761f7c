//! The command line: its commands and flags (clap), and the client its global flags make.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use clap::{Args, Parser, Subcommand, ValueEnum};
use serde_json::{Map, Value};
use structure_host::{
    KeyValueStore, MemoryStore, Scope, Settings, SqliteStore, Structure, check_no_old_store,
    default_store_path, open_store,
};

use crate::cli::output::{EXIT_ERROR, EXIT_USAGE};

#[derive(Parser)]
#[command(
    name = "structure",
    version,
    about = "Turn free text into JSON that validates against a JSON Schema, using an LLM."
)]
pub(crate) struct Cli {
    #[command(subcommand)]
    pub(crate) command: Command,
    #[command(flatten)]
    pub(crate) global: Global,
}

/// The flags every command takes: where the settings, the store and the model come from, and
/// the scope.
#[derive(Args)]
pub(crate) struct Global {
    /// The model as provider/model (overrides STRUCTURE_MODEL), e.g. openai/gpt-4.1-mini, ollama/llama3.2.
    #[arg(long, global = true)]
    pub(crate) model: Option<String>,
    /// The base URL of an OpenAI-compatible API (overrides OPENAI_BASE_URL).
    #[arg(long, global = true)]
    pub(crate) base_url: Option<String>,
    /// Any other host setting, as key=value (e.g. structure_max_output_tokens=2048). Repeatable.
    #[arg(long = "set", value_name = "KEY=VALUE", global = true)]
    pub(crate) settings: Vec<String>,
    /// The key-value store: a SQLite file path, redis://host:port/N (shared by several
    /// instances), or "memory". Default: ~/.local/share/structure/sqlite_key_value.db.
    #[arg(long, global = true, env = "STRUCTURE_STORE")]
    pub(crate) store: Option<String>,
    /// A JSON file of settings by config key (`{"structure_model": "...", "openai_api_key": "..."}`);
    /// the environment and flags override it.
    #[arg(long, global = true)]
    pub(crate) config: Option<PathBuf>,
    /// A GGUF model file to run in process (the embedded engine) instead of a catalog model
    /// (sets STRUCTURE_MODEL_FILE).
    #[arg(long, global = true, value_name = "PATH")]
    pub(crate) model_file: Option<PathBuf>,
    /// Never download the local model: a model not on this machine is an error saying how to
    /// get it (sets STRUCTURE_OFFLINE).
    #[arg(long, global = true)]
    pub(crate) offline: bool,
    /// The tenant whose registry, settings and cache apply.
    #[arg(long, global = true, default_value = "default")]
    pub(crate) tenant: String,
    /// A project of the tenant, whose schemas and settings come before the tenant's.
    #[arg(long, global = true)]
    pub(crate) project: Option<String>,
}

#[derive(Subcommand)]
pub(crate) enum Command {
    #[command(flatten)]
    Client(ClientCommand),
    /// The local models the embedded engine runs: pull (fetch one once into the cache), list, rm.
    #[cfg(feature = "embedded")]
    Model {
        #[command(subcommand)]
        action: ModelAction,
    },
    /// Write the component this command runs (pre-initialised) to FILE: what `spin build` and
    /// the npm package ship.
    Component {
        /// Where to write it.
        #[arg(long, short)]
        output: PathBuf,
    },
}

/// The commands that call the component through a client (and its store).
#[derive(Subcommand)]
pub(crate) enum ClientCommand {
    /// Structure PROMPT (or stdin) into an object that validates against the schema; prints the result JSON.
    Run(RunArguments),
    /// Structure every line of INPUT (JSON Lines: {"id", "prompt" | "file", "schema"?, "settings"?, ...},
    /// or plain text) into OUT, one result line an id; run again, it skips the ids OUT holds.
    Batch {
        /// The input file.
        input: PathBuf,
        /// The output file (JSON Lines, appended to).
        #[arg(short, long)]
        output: PathBuf,
        /// The schema of every line that gives none (as `run --schema`).
        #[arg(long)]
        schema: Option<String>,
        /// How to read --schema (as `run --schema-mode`).
        #[arg(long, value_enum)]
        schema_mode: Option<SchemaMode>,
        /// Records mode for every line that does not say.
        #[arg(long)]
        records: bool,
        /// Calls in flight at once.
        #[arg(long, default_value_t = 4)]
        jobs: usize,
        /// A per-call setting override for every line, as name=value (a line's own settings win).
        #[arg(long = "with", value_name = "NAME=VALUE")]
        overrides: Vec<String>,
        /// Send the model requests through the provider's batch API (OpenAI, Anthropic, Gemini):
        /// half the price, answers within 24 hours, in rounds; OUT.provider-batch.jsonl keeps
        /// the batches, so a rerun resumes polling them.
        #[arg(long)]
        provider_batch: bool,
        /// With --provider-batch: seconds before the first poll of a batch (each later poll
        /// waits twice as long, up to 5 minutes).
        #[arg(long, default_value_t = 5.0, value_name = "SECONDS")]
        poll_seconds: f64,
    },
    /// The schema registry: list (the default), show, register, register-skill, deregister.
    Schemas {
        #[command(subcommand)]
        action: Option<SchemasAction>,
        /// Print JSON instead of a table (when listing).
        #[arg(long)]
        json: bool,
    },
    /// The review queue (`structure_review`): results, a batch's output as reviewed.
    Review {
        #[command(subcommand)]
        action: ReviewAction,
    },
    /// Setting overrides of the tenant or project: get, set.
    Settings {
        #[command(subcommand)]
        action: SettingsAction,
    },
    /// Print the tool definition JSON, to register with an agent framework.
    ToolDefinition,
    /// Serve the HTTP API and the MCP endpoint (see docs/http-api.md), a fresh component instance per request.
    Serve {
        /// The address to listen on.
        #[arg(long, default_value = "127.0.0.1:3000")]
        listen: String,
        /// Serve GET /metrics on this address, to anyone who reaches it (keep it internal);
        /// without it, /metrics is on the API's address for admin tokens.
        #[arg(long)]
        metrics_listen: Option<String>,
        /// Seconds requests in flight may take to finish after SIGTERM or SIGINT.
        #[arg(long, default_value_t = 30)]
        drain_timeout: u64,
    },
}

/// `run`'s flags and its prompt.
#[derive(Args)]
pub(crate) struct RunArguments {
    /// A JSON Schema file, inline JSON Schema, a registry name, a description (--schema-mode text) or
    /// example objects (--schema-mode examples: a JSON file or JSON text).
    #[arg(long)]
    pub(crate) schema: String,
    /// How to read --schema when it is not a file: json, named, text or examples. Without it, a
    /// value that is not a JSON object is taken as a registry name.
    #[arg(long, value_enum)]
    pub(crate) schema_mode: Option<SchemaMode>,
    /// Content-stage iterations allowed, 1 to 10 (default: the maxLoops setting, 3).
    #[arg(long)]
    pub(crate) max_loops: Option<u8>,
    /// Records mode: the schema describes one record; prints every record the text holds
    /// (a long text is read in chunks).
    #[arg(long)]
    pub(crate) records: bool,
    /// A per-call setting override, as name=value (model, maxLoops, confidenceThreshold, ...). Repeatable.
    #[arg(long = "with", value_name = "NAME=VALUE")]
    pub(crate) overrides: Vec<String>,
    /// A document to read the text from: a PDF, a Word document (.docx), a web page (.html),
    /// an image (.png, .jpg, .webp: for a model that reads images) or UTF-8 text, told by
    /// the extension or else the bytes; `-` reads stdin. The prompt is then optional (text that comes before the document), and stdin
    /// is not read for it.
    #[arg(long, value_name = "PATH")]
    pub(crate) file: Option<PathBuf>,
    /// Print the text that was read (`text` in the result): what the sources' offsets count in.
    #[arg(long)]
    pub(crate) return_text: bool,
    /// The text to structure; read from stdin when absent (and no --file is given).
    pub(crate) prompt: Option<String>,
}

#[derive(Subcommand)]
pub(crate) enum ReviewAction {
    /// Write a batch's results as reviewed: each result that waits for review once a reviewer
    /// confirmed or corrected it (held back until then), the others as they are; run again,
    /// it writes what was reviewed since.
    Results {
        /// The batch's output file.
        input: PathBuf,
        /// The reviewed results (JSON Lines, appended to).
        #[arg(short, long)]
        output: PathBuf,
    },
}

#[derive(Subcommand)]
pub(crate) enum SchemasAction {
    /// List the schemas the scope can use by name.
    List {
        #[arg(long)]
        json: bool,
    },
    /// Print a schema with its manual, version and origin.
    Show { name: String },
    /// Register a JSON Schema file under NAME at the tenant (or the project, with --project).
    Register {
        name: String,
        /// The JSON Schema file.
        #[arg(long)]
        file: PathBuf,
        /// A Markdown manual for the model.
        #[arg(long)]
        manual: Option<PathBuf>,
        /// MAJOR.MINOR (default 1.0); a minor update must not break callers.
        #[arg(long)]
        version: Option<String>,
    },
    /// Register the output schema declared by the SKILL.md in a skill's folder.
    RegisterSkill { folder: PathBuf },
    /// Remove NAME from the tenant (or the project, with --project).
    Deregister { name: String },
}

#[cfg(feature = "embedded")]
#[derive(Subcommand)]
pub(crate) enum ModelAction {
    /// Fetch a catalog model into the cache (the default one without NAME), once.
    Pull { name: Option<String> },
    /// The catalog's models and the cache's files, downloaded or partly downloaded.
    List,
    /// Remove a model's files from the cache.
    Rm { name: String },
}

#[derive(Subcommand)]
pub(crate) enum SettingsAction {
    /// Print the settings the scope gets and its own overrides.
    Get,
    /// Replace the scope's overrides with NAME=VALUE pairs (none clears them).
    Set { pairs: Vec<String> },
}

#[derive(Clone, Copy, ValueEnum)]
pub(crate) enum SchemaMode {
    Json,
    Named,
    Text,
    Examples,
}

/// The scope `--tenant` and `--project` name.
pub(crate) fn scope(cli: &Global) -> Scope {
    Scope {
        tenant: cli.tenant.clone(),
        project: cli.project.clone(),
    }
}

pub(crate) fn client(cli: &Global) -> Result<Structure, (u8, String)> {
    let mut settings = Settings::new();
    if let Some(path) = &cli.config {
        let text = read_text(path).map_err(|message| (EXIT_USAGE, message))?;
        let Ok(Value::Object(values)) = serde_json::from_str::<Value>(&text) else {
            return Err((
                EXIT_USAGE,
                format!(
                    "{} must hold a JSON object of settings by config key",
                    path.display()
                ),
            ));
        };
        for (key, value) in values {
            let value = match value {
                Value::String(text) => text,
                other => other.to_string(),
            };
            settings = settings.set(key, value);
        }
    }
    for (key, value) in Settings::from_env().values() {
        settings = settings.set(key, value);
    }
    if let Some(model) = &cli.model {
        settings = settings.set("structure_model", model);
    }
    if let Some(base_url) = &cli.base_url {
        settings = settings.set("openai_base_url", base_url);
    }
    if let Some(file) = &cli.model_file {
        settings = settings.set(structure_host::local::MODEL_FILE, file.to_string_lossy());
    }
    if cli.offline {
        settings = settings.set(structure_host::local::OFFLINE, "1");
    }
    for pair in &cli.settings {
        let Some((key, value)) = pair.split_once('=') else {
            return Err((EXIT_USAGE, format!("--set takes key=value, not {pair:?}")));
        };
        settings = settings.set(key.trim(), value);
    }
    let store: Arc<dyn KeyValueStore> = match cli.store.as_deref() {
        Some(spec) => open_store(spec).map_err(|message| (EXIT_USAGE, message))?,
        None => {
            check_no_old_store().map_err(|message| (EXIT_ERROR, message))?;
            match default_store_path() {
                Some(path) => Arc::new(SqliteStore::new(path)),
                None => Arc::new(MemoryStore::default()),
            }
        }
    };
    Structure::builder()
        .settings(settings)
        .key_value(store)
        .build()
        .map_err(|error| {
            (
                EXIT_ERROR,
                format!("cannot load the structure component: {error:#}"),
            )
        })
}

/// `name=value` pairs as a JSON object; a value that parses as JSON (a number, `true`) is taken
/// as such, anything else as text.
pub(crate) fn pairs_to_object(pairs: &[String]) -> Result<Map<String, Value>, String> {
    let mut object = Map::new();
    for pair in pairs {
        let Some((name, value)) = pair.split_once('=') else {
            return Err(format!("settings are name=value, not {pair:?}"));
        };
        let value = serde_json::from_str(value).unwrap_or_else(|_| Value::String(value.to_owned()));
        object.insert(name.trim().to_owned(), value);
    }
    Ok(object)
}

/// The text of a file a flag names.
pub(crate) fn read_text(path: &Path) -> Result<String, String> {
    std::fs::read_to_string(path)
        .map_err(|error| format!("cannot read {}: {error}", path.display()))
}
