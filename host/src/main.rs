//! The `structure` command: structure text, manage the schema registry and settings.
//!
//! Exit status: 0 ok, 3 need-more-input, 4 stale, 2 usage error, 1 any other error.

use std::io::{IsTerminal, Read};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

mod cli;

use clap::{Parser, Subcommand, ValueEnum};
use serde_json::{Map, Value, json};
use structure_host::{
    CallError, Document, KeyValueStore, MemoryStore, Registration, Request, SchemaInfo,
    SchemaInput, Scope, ServeOptions, Settings, SqliteStore, Status, Structure, check_no_old_store,
    default_store_path, open_store,
};

#[derive(Parser)]
#[command(
    name = "structure",
    version,
    about = "Turn free text into JSON that validates against a JSON Schema, using an LLM."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
    /// The model as provider/model (overrides STRUCTURE_MODEL), e.g. openai/gpt-4.1-mini, ollama/llama3.2.
    #[arg(long, global = true)]
    model: Option<String>,
    /// The base URL of an OpenAI-compatible API (overrides OPENAI_BASE_URL).
    #[arg(long, global = true)]
    base_url: Option<String>,
    /// Any other host setting, as key=value (e.g. structure_max_output_tokens=2048). Repeatable.
    #[arg(long = "set", value_name = "KEY=VALUE", global = true)]
    settings: Vec<String>,
    /// The key-value store: a SQLite file path, redis://host:port/N (shared by several
    /// instances), or "memory". Default: ~/.local/share/structure/sqlite_key_value.db.
    #[arg(long, global = true, env = "STRUCTURE_STORE")]
    store: Option<String>,
    /// A JSON file of settings by config key (`{"structure_model": "...", "openai_api_key": "..."}`);
    /// the environment and flags override it.
    #[arg(long, global = true)]
    config: Option<PathBuf>,
    /// The tenant whose registry, settings and cache apply.
    #[arg(long, global = true, default_value = "default")]
    tenant: String,
    /// A project of the tenant, whose schemas and settings come before the tenant's.
    #[arg(long, global = true)]
    project: Option<String>,
}

#[derive(Subcommand)]
enum Command {
    /// Structure PROMPT (or stdin) into an object that validates against the schema; prints the result JSON.
    Run {
        /// A JSON Schema file, inline JSON Schema, a registry name, a description (--schema-mode text) or
        /// example objects (--schema-mode examples: a JSON file or JSON text).
        #[arg(long)]
        schema: String,
        /// How to read --schema when it is not a file: json, named, text or examples. Without it, a
        /// value that is not a JSON object is taken as a registry name.
        #[arg(long, value_enum)]
        schema_mode: Option<SchemaMode>,
        /// Content-stage iterations allowed, 1 to 10 (default: the maxLoops setting, 3).
        #[arg(long)]
        max_loops: Option<u8>,
        /// Records mode: the schema describes one record; prints every record the text holds
        /// (a long text is read in chunks).
        #[arg(long)]
        records: bool,
        /// A per-call setting override, as name=value (model, maxLoops, confidenceThreshold, ...). Repeatable.
        #[arg(long = "with", value_name = "NAME=VALUE")]
        overrides: Vec<String>,
        /// A document to read the text from: a PDF (by its %PDF- header) or UTF-8 text; `-` reads
        /// stdin. The prompt is then optional (text that comes before the document), and stdin
        /// is not read for it.
        #[arg(long, value_name = "PATH")]
        file: Option<PathBuf>,
        /// Print the text that was read (`text` in the result): what the sources' offsets count in.
        #[arg(long)]
        return_text: bool,
        /// The text to structure; read from stdin when absent (and no --file is given).
        prompt: Option<String>,
    },
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
    },
    /// The schema registry: list (the default), show, register, register-skill, deregister.
    Schemas {
        #[command(subcommand)]
        action: Option<SchemasAction>,
        /// Print JSON instead of a table (when listing).
        #[arg(long)]
        json: bool,
    },
    /// Setting overrides of the tenant or project: get, set.
    Settings {
        #[command(subcommand)]
        action: SettingsAction,
    },
    /// Print the tool definition JSON, to register with an agent framework.
    ToolDefinition,
    /// Serve the HTTP API and the MCP endpoint (see README), a fresh component instance per request.
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
    /// Write the component this command runs (pre-initialised) to FILE: what `spin build` and
    /// the npm package ship.
    Component {
        /// Where to write it.
        #[arg(long, short)]
        output: PathBuf,
    },
}

#[derive(Subcommand)]
enum SchemasAction {
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

#[derive(Subcommand)]
enum SettingsAction {
    /// Print the settings the scope gets and its own overrides.
    Get,
    /// Replace the scope's overrides with NAME=VALUE pairs (none clears them).
    Set { pairs: Vec<String> },
}

#[derive(Clone, Copy, ValueEnum)]
enum SchemaMode {
    Json,
    Named,
    Text,
    Examples,
}

const EXIT_OK: u8 = 0;
const EXIT_ERROR: u8 = 1;
const EXIT_USAGE: u8 = 2;
const EXIT_NEED_MORE_INPUT: u8 = 3;
const EXIT_STALE: u8 = 4;

fn main() -> ExitCode {
    let cli = Cli::parse();
    if let Command::Component { output } = &cli.command {
        return write_component(output);
    }
    // A batch's calls run on every core; one call needs one thread.
    let mut builder = match cli.command {
        Command::Batch { .. } => tokio::runtime::Builder::new_multi_thread(),
        _ => tokio::runtime::Builder::new_current_thread(),
    };
    let runtime = match builder.enable_all().build() {
        Ok(runtime) => runtime,
        Err(error) => return fail(EXIT_ERROR, &format!("cannot start: {error}")),
    };
    runtime.block_on(run(cli))
}

async fn run(cli: Cli) -> ExitCode {
    let client = match client(&cli) {
        Ok(client) => client,
        Err((code, message)) => return fail(code, &message),
    };
    let scope = Scope {
        tenant: cli.tenant.clone(),
        project: cli.project.clone(),
    };
    match cli.command {
        Command::Run {
            schema,
            schema_mode,
            max_loops,
            records,
            overrides,
            file,
            return_text,
            prompt,
        } => {
            let text = Text { prompt, file };
            match request(&schema, schema_mode, max_loops, &overrides, text) {
                Ok(request) => {
                    let request = Request {
                        records,
                        return_text,
                        ..request
                    };
                    structure(&client, &scope, &request).await
                }
                Err(message) => fail(EXIT_USAGE, &message),
            }
        }
        Command::Batch {
            input,
            output,
            schema,
            schema_mode,
            records,
            jobs,
            overrides,
        } => {
            let defaults = match batch_defaults(schema.as_deref(), schema_mode, records, &overrides)
            {
                Ok(defaults) => defaults,
                Err(message) => return fail(EXIT_USAGE, &message),
            };
            let batch = structure_host::batch::Batch {
                input,
                output,
                defaults,
                jobs,
            };
            cli::batch::run(client, scope, batch).await
        }
        Command::Schemas { action, json } => {
            schemas(
                &client,
                &scope,
                action.unwrap_or(SchemasAction::List { json }),
            )
            .await
        }
        Command::Settings { action } => match action {
            SettingsAction::Get => finish(
                client
                    .get_settings(&scope)
                    .await
                    .map(|settings| print_json(&settings)),
            ),
            SettingsAction::Set { pairs } => match pairs_to_object(&pairs) {
                Ok(overrides) => {
                    finish(client.set_settings(&scope, &Value::Object(overrides)).await)
                }
                Err(message) => fail(EXIT_USAGE, &message),
            },
        },
        Command::ToolDefinition => finish(
            client
                .tool_definition()
                .await
                .map(|definition| print_json(&definition)),
        ),
        Command::Serve {
            listen,
            metrics_listen,
            drain_timeout,
        } => serve(&client, listen, metrics_listen, drain_timeout).await,
        Command::Component { output } => write_component(&output),
    }
}

/// `component`: the pre-initialised component (see `write_ready_component`).
fn write_component(output: &Path) -> ExitCode {
    match structure_host::write_ready_component(output) {
        Ok(Some(size)) => {
            eprintln!("wrote {} ({size} bytes)", output.display());
            ExitCode::from(EXIT_OK)
        }
        Ok(None) => {
            eprintln!("{} is up to date", output.display());
            ExitCode::from(EXIT_OK)
        }
        Err(error) => fail(
            EXIT_ERROR,
            &format!("cannot write {}: {error:#}", output.display()),
        ),
    }
}

/// `run`: prints the outcome; the exit status is its status.
async fn structure(client: &Structure, scope: &Scope, request: &Request) -> ExitCode {
    match client.structure(scope, request).await {
        Ok(outcome) => {
            print_json(&outcome.to_json());
            ExitCode::from(match outcome.status {
                Status::Ok => EXIT_OK,
                Status::NeedMoreInput => EXIT_NEED_MORE_INPUT,
                Status::Stale => EXIT_STALE,
            })
        }
        Err(error) => report(error),
    }
}

/// `serve`: the HTTP API on `listen` until SIGTERM or SIGINT, then a drain.
async fn serve(
    client: &Structure,
    listen: String,
    metrics_listen: Option<String>,
    drain_timeout: u64,
) -> ExitCode {
    let bind = |address: String| async move {
        tokio::net::TcpListener::bind(&address)
            .await
            .map_err(|error| format!("cannot listen on {address}: {error}"))
    };
    let listener = match bind(listen.clone()).await {
        Ok(listener) => listener,
        Err(message) => return fail(EXIT_ERROR, &message),
    };
    let mut options = match ServeOptions::default().traces_from_env() {
        Ok(options) => options,
        Err(message) => return fail(EXIT_USAGE, &message),
    };
    options = options
        .drain_timeout(std::time::Duration::from_secs(drain_timeout))
        .shutdown(shutdown_signal());
    let mut metrics_address = String::from("/metrics for admin tokens");
    if let Some(address) = metrics_listen {
        match bind(address).await {
            Ok(metrics) => {
                metrics_address = format!(
                    "metrics on http://{}/metrics",
                    metrics
                        .local_addr()
                        .map(|a| a.to_string())
                        .unwrap_or_default()
                );
                options = options.metrics_listener(metrics);
            }
            Err(message) => return fail(EXIT_ERROR, &message),
        }
    }
    let address = listener
        .local_addr()
        .map(|address| address.to_string())
        .unwrap_or(listen);
    eprintln!(
        "structure: serving http://{address} (POST /v1/structure, POST /mcp, GET /healthz; {metrics_address})"
    );
    match client.serve(listener, options).await {
        Ok(()) => {
            eprintln!("structure: stopped");
            ExitCode::from(EXIT_OK)
        }
        Err(error) => fail(EXIT_ERROR, &format!("{error:#}")),
    }
}

/// SIGTERM (Kubernetes stopping a pod) or SIGINT (Ctrl-C).
async fn shutdown_signal() {
    let mut terminate =
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(terminate) => terminate,
            Err(_) => {
                let _ = tokio::signal::ctrl_c().await;
                return;
            }
        };
    tokio::select! {
        _ = terminate.recv() => {}
        _ = tokio::signal::ctrl_c() => {}
    }
    eprintln!("structure: shutting down: no new connections, finishing the requests in flight");
}

async fn schemas(client: &Structure, scope: &Scope, action: SchemasAction) -> ExitCode {
    match action {
        SchemasAction::List { json } => match client.list_schemas(scope).await {
            Ok(schemas) if json => {
                print_json(&Value::Array(
                    schemas.iter().map(SchemaInfo::to_json).collect(),
                ));
                ExitCode::from(EXIT_OK)
            }
            Ok(schemas) => {
                for info in schemas {
                    let manual = if info.has_manual { " (manual)" } else { "" };
                    print_line(&format!(
                        "{:<20} {:<5} {:<18} {}{manual}",
                        info.name,
                        info.version,
                        info.origin,
                        info.description.unwrap_or_default()
                    ));
                }
                ExitCode::from(EXIT_OK)
            }
            Err(error) => report(error),
        },
        SchemasAction::Show { name } => {
            finish(client.get_schema(scope, &name).await.map(|found| {
                let mut shown = found.info.to_json();
                shown["schema"] =
                    serde_json::from_str(&found.schema).unwrap_or(Value::String(found.schema));
                shown["manual"] = json!(found.manual);
                print_json(&shown);
            }))
        }
        SchemasAction::Register {
            name,
            file,
            manual,
            version,
        } => {
            let schema = match read_text(&file) {
                Ok(schema) => schema,
                Err(message) => return fail(EXIT_USAGE, &message),
            };
            let manual = match manual.as_deref().map(read_text).transpose() {
                Ok(manual) => manual,
                Err(message) => return fail(EXIT_USAGE, &message),
            };
            let registration = Registration {
                name,
                schema,
                manual,
                version,
            };
            finish(
                client
                    .register_schema(scope, &registration)
                    .await
                    .map(|info| print_json(&info.to_json())),
            )
        }
        SchemasAction::RegisterSkill { folder } => finish(
            client
                .register_skill(scope, &folder)
                .await
                .map(|info| print_json(&info.to_json())),
        ),
        SchemasAction::Deregister { name } => match client.deregister_schema(scope, &name).await {
            Ok(true) => ExitCode::from(EXIT_OK),
            Ok(false) => fail(
                EXIT_ERROR,
                &format!("{name} is not registered at {}", own_level(scope)),
            ),
            Err(error) => report(error),
        },
    }
}

fn own_level(scope: &Scope) -> String {
    match &scope.project {
        Some(project) => format!("project {project} of tenant {}", scope.tenant),
        None => format!("tenant {}", scope.tenant),
    }
}

fn read_text(path: &Path) -> Result<String, String> {
    std::fs::read_to_string(path)
        .map_err(|error| format!("cannot read {}: {error}", path.display()))
}

/// `name=value` pairs as a JSON object; a value that parses as JSON (a number, `true`) is taken
/// as such, anything else as text.
fn pairs_to_object(pairs: &[String]) -> Result<Map<String, Value>, String> {
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

fn client(cli: &Cli) -> Result<Structure, (u8, String)> {
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

/// The request of `run`: a `--schema` naming an existing file is read as JSON (an inline
/// schema, or examples with `--schema-mode examples`); otherwise `--schema-mode` decides, and
/// without it JSON text is an inline schema and anything else a registry name.
fn request(
    schema: &str,
    mode: Option<SchemaMode>,
    max_loops: Option<u8>,
    overrides: &[String],
    text: Text,
) -> Result<Request, String> {
    let settings = if overrides.is_empty() {
        None
    } else {
        Some(Value::Object(pairs_to_object(overrides)?).to_string())
    };
    let (prompt, document) = match text.file {
        Some(path) => (text.prompt.unwrap_or_default(), Some(read_document(&path)?)),
        None => (read_prompt(text.prompt)?, None),
    };
    Ok(Request {
        prompt,
        schema: schema_input(schema, mode)?,
        max_loops,
        settings,
        records: false,
        document,
        return_text: false,
    })
}

/// What every line of a batch gets unless it says otherwise: the schema as tool arguments write
/// it, records mode, the setting overrides.
fn batch_defaults(
    schema: Option<&str>,
    mode: Option<SchemaMode>,
    records: bool,
    overrides: &[String],
) -> Result<structure_host::batch::Defaults, String> {
    let schema = match schema {
        None => None,
        Some(schema) => Some(match schema_input(schema, mode)? {
            SchemaInput::Inline(text) => (json_text(&text)?, "json"),
            SchemaInput::Examples(text) => (json_text(&text)?, "examples"),
            SchemaInput::Named(name) => (Value::String(name), "named"),
            SchemaInput::Described(text) => (Value::String(text), "text"),
        }),
    };
    Ok(structure_host::batch::Defaults {
        schema,
        records,
        settings: pairs_to_object(overrides)?,
    })
}

fn json_text(text: &str) -> Result<Value, String> {
    serde_json::from_str(text).map_err(|error| format!("--schema is not valid JSON: {error}"))
}

/// Where `run` reads its text: the prompt argument, and a document.
struct Text {
    prompt: Option<String>,
    file: Option<PathBuf>,
}

/// The document at `path` (`-`: stdin): a PDF by its `%PDF-` header, else UTF-8 text (the
/// component checks it).
fn read_document(path: &std::path::Path) -> Result<Document, String> {
    let data = if path.as_os_str() == "-" {
        let mut bytes = Vec::new();
        std::io::stdin()
            .read_to_end(&mut bytes)
            .map_err(|error| format!("cannot read the document from stdin: {error}"))?;
        bytes
    } else {
        std::fs::read(path).map_err(|error| format!("cannot read {}: {error}", path.display()))?
    };
    Ok(Document::of(data))
}

/// The prompt argument, else stdin (unless it is a terminal).
fn read_prompt(prompt: Option<String>) -> Result<String, String> {
    if let Some(prompt) = prompt {
        return Ok(prompt);
    }
    if std::io::stdin().is_terminal() {
        return Err("give the text to structure as an argument or on stdin".to_owned());
    }
    let mut text = String::new();
    std::io::stdin()
        .read_to_string(&mut text)
        .map_err(|error| format!("cannot read the prompt from stdin: {error}"))?;
    Ok(text)
}

/// `--schema` as the component's schema input.
fn schema_input(schema: &str, mode: Option<SchemaMode>) -> Result<SchemaInput, String> {
    let path = PathBuf::from(schema);
    // Inline JSON may hold a `/` (a URL, a pattern) and is never a path.
    let inline_json = schema.trim_start().starts_with(['{', '[']);
    let looks_like_a_path =
        !inline_json && (schema.ends_with(".json") || schema.contains(std::path::MAIN_SEPARATOR));
    let reads_a_file = matches!(
        mode,
        None | Some(SchemaMode::Json) | Some(SchemaMode::Examples)
    );
    if looks_like_a_path && reads_a_file && !path.is_file() {
        return Err(format!("no such schema file: {}", path.display()));
    }
    if path.is_file() && reads_a_file {
        let text = read_text(&path)?;
        serde_json::from_str::<Value>(&text)
            .map_err(|error| format!("{} is not valid JSON: {error}", path.display()))?;
        return Ok(match mode {
            Some(SchemaMode::Examples) => SchemaInput::Examples(text),
            _ => SchemaInput::Inline(text),
        });
    }
    let text = schema.to_owned();
    Ok(match mode {
        Some(SchemaMode::Json) => SchemaInput::Inline(text),
        Some(SchemaMode::Named) => SchemaInput::Named(text.trim().to_owned()),
        Some(SchemaMode::Text) => SchemaInput::Described(text),
        Some(SchemaMode::Examples) => SchemaInput::Examples(text),
        None => match serde_json::from_str::<Value>(schema) {
            Ok(Value::Object(_)) => SchemaInput::Inline(text),
            _ => SchemaInput::Named(text.trim().to_owned()),
        },
    })
}

fn finish(result: Result<(), CallError>) -> ExitCode {
    match result {
        Ok(()) => ExitCode::from(EXIT_OK),
        Err(error) => report(error),
    }
}

fn report(error: CallError) -> ExitCode {
    match error {
        CallError::Structure(error) => {
            print_json(&error.to_json());
            let code = match error.kind {
                structure_host::ErrorKind::InvalidRequest(_) => EXIT_USAGE,
                _ => EXIT_ERROR,
            };
            fail(code, &error.message)
        }
        CallError::Host(error) => fail(EXIT_ERROR, &format!("{error:#}")),
    }
}

fn print_json(value: &Value) {
    print_line(&serde_json::to_string_pretty(value).unwrap_or_else(|_| value.to_string()));
}

/// Writes a line to stdout. A reader that went away (`structure run … | head`) is not an
/// error of this command: the rest of the output is dropped and the exit status stays that
/// of the call.
fn print_line(line: &str) {
    use std::io::Write as _;
    let mut stdout = std::io::stdout().lock();
    match writeln!(stdout, "{line}").and_then(|()| stdout.flush()) {
        Err(error) if error.kind() != std::io::ErrorKind::BrokenPipe => {
            eprintln!("structure: writing the output failed: {error}");
        }
        _ => {}
    }
}

fn fail(code: u8, message: &str) -> ExitCode {
    eprintln!("structure: {message}");
    ExitCode::from(code)
}
