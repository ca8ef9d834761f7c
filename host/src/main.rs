//! The `structure` command: structure text from the command line.
//!
//! Exit status: 0 ok, 3 need-more-input, 4 stale, 2 usage error, 1 any other error.

use std::io::{IsTerminal, Read};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use clap::{Parser, Subcommand, ValueEnum};
use serde_json::{Value, json};
use structure_host::{
    CallError, KeyValueStore, MemoryStore, RedbStore, Settings, Structure, error_json,
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
    /// Any other setting, as key=value (e.g. structure_max_output_tokens=2048). Repeatable.
    #[arg(long = "set", value_name = "KEY=VALUE", global = true)]
    settings: Vec<String>,
    /// The key-value store: a redb file path, or "memory". Default: ~/.local/share/structure/store.redb.
    #[arg(long, global = true)]
    store: Option<String>,
}

#[derive(Subcommand)]
enum Command {
    /// Structure PROMPT (or stdin) into an object that validates against the schema; prints the result JSON.
    Run {
        /// A JSON Schema file, inline JSON Schema, a registry name, or (with --schema-mode text) a description.
        #[arg(long)]
        schema: String,
        /// How to read --schema when it is not a file: json, named or text. Without it, a value
        /// that is not a JSON object is taken as a registry name.
        #[arg(long, value_enum)]
        schema_mode: Option<SchemaMode>,
        /// Content-stage iterations allowed, 1 to 10 (default 3).
        #[arg(long)]
        max_loops: Option<u8>,
        /// The text to structure; read from stdin when absent.
        prompt: Option<String>,
    },
    /// List the schemas available by name.
    Schemas {
        /// Print JSON instead of a table.
        #[arg(long)]
        json: bool,
    },
    /// Print the tool definition JSON, to register with an agent framework.
    ToolDefinition,
}

#[derive(Clone, Copy, ValueEnum)]
enum SchemaMode {
    Json,
    Named,
    Text,
}

const EXIT_OK: u8 = 0;
const EXIT_ERROR: u8 = 1;
const EXIT_USAGE: u8 = 2;
const EXIT_NEED_MORE_INPUT: u8 = 3;
const EXIT_STALE: u8 = 4;

fn main() -> ExitCode {
    let cli = Cli::parse();
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
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
    match cli.command {
        Command::Run {
            schema,
            schema_mode,
            max_loops,
            prompt,
        } => {
            let arguments = match tool_arguments(&schema, schema_mode, max_loops, prompt) {
                Ok(arguments) => arguments,
                Err(message) => return fail(EXIT_USAGE, &message),
            };
            match client.call_tool(&arguments).await {
                Ok(outcome) => {
                    print_json(&outcome);
                    match outcome.get("status").and_then(Value::as_str) {
                        Some("ok") => ExitCode::from(EXIT_OK),
                        Some("need-more-input") => ExitCode::from(EXIT_NEED_MORE_INPUT),
                        _ => ExitCode::from(EXIT_STALE),
                    }
                }
                Err(error) => report(error),
            }
        }
        Command::Schemas { json } => match client.list_schemas().await {
            Ok(schemas) if json => {
                let list: Vec<Value> = schemas
                    .iter()
                    .map(|info| {
                        json!({
                            "name": info.name, "title": info.title, "description": info.description,
                            "version": info.version, "origin": info.origin, "hasManual": info.has_manual,
                        })
                    })
                    .collect();
                print_json(&Value::Array(list));
                ExitCode::from(EXIT_OK)
            }
            Ok(schemas) => {
                for info in schemas {
                    let manual = if info.has_manual { " (manual)" } else { "" };
                    println!(
                        "{:<20} {:<4} {:<8} {}{manual}",
                        info.name,
                        info.version,
                        info.origin,
                        info.description.unwrap_or_default()
                    );
                }
                ExitCode::from(EXIT_OK)
            }
            Err(error) => report(error),
        },
        Command::ToolDefinition => match client.tool_definition().await {
            Ok(definition) => {
                print_json(&definition);
                ExitCode::from(EXIT_OK)
            }
            Err(error) => report(error),
        },
    }
}

fn client(cli: &Cli) -> Result<Structure, (u8, String)> {
    let mut settings = Settings::from_env();
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
        Some("memory") => Arc::new(MemoryStore::default()),
        Some(path) => Arc::new(RedbStore::new(path)),
        None => match RedbStore::default_path() {
            Some(path) => Arc::new(RedbStore::new(path)),
            None => Arc::new(MemoryStore::default()),
        },
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

/// The tool-call arguments for `run`: a `--schema` naming an existing file is read as an inline
/// schema; otherwise `--schema-mode` decides, and without it JSON text is an inline schema and
/// anything else a registry name.
fn tool_arguments(
    schema: &str,
    mode: Option<SchemaMode>,
    max_loops: Option<u8>,
    prompt: Option<String>,
) -> Result<Value, String> {
    let prompt = match prompt {
        Some(prompt) => prompt,
        None if std::io::stdin().is_terminal() => {
            return Err("give the text to structure as an argument or on stdin".to_owned());
        }
        None => {
            let mut text = String::new();
            std::io::stdin()
                .read_to_string(&mut text)
                .map_err(|error| format!("cannot read the prompt from stdin: {error}"))?;
            text
        }
    };
    let path = PathBuf::from(schema);
    let looks_like_a_path = schema.ends_with(".json") || schema.contains(std::path::MAIN_SEPARATOR);
    if looks_like_a_path && mode.is_none() && !path.is_file() {
        return Err(format!("no such schema file: {}", path.display()));
    }
    let (schema, mode) = if path.is_file() {
        let text = std::fs::read_to_string(&path)
            .map_err(|error| format!("cannot read {}: {error}", path.display()))?;
        let value: Value = serde_json::from_str(&text)
            .map_err(|error| format!("{} is not valid JSON: {error}", path.display()))?;
        (value, "json")
    } else {
        match mode {
            Some(SchemaMode::Json) => (Value::String(schema.to_owned()), "json"),
            Some(SchemaMode::Named) => (Value::String(schema.to_owned()), "named"),
            Some(SchemaMode::Text) => (Value::String(schema.to_owned()), "text"),
            None => match serde_json::from_str::<Value>(schema) {
                Ok(value @ Value::Object(_)) => (value, "json"),
                _ => (Value::String(schema.to_owned()), "named"),
            },
        }
    };
    let mut arguments = json!({ "prompt": prompt, "schema": schema, "schemaMode": mode });
    if let Some(max_loops) = max_loops {
        arguments["maxLoops"] = json!(max_loops);
    }
    Ok(arguments)
}

fn report(error: CallError) -> ExitCode {
    match error {
        CallError::Structure(error) => {
            print_json(&error_json(&error));
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
    println!(
        "{}",
        serde_json::to_string_pretty(value).unwrap_or_else(|_| value.to_string())
    );
}

fn fail(code: u8, message: &str) -> ExitCode {
    eprintln!("structure: {message}");
    ExitCode::from(code)
}
