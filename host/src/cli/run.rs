//! `run`: the request its flags and stdin make (the schema read from a file, inline JSON, a
//! name or a description; the text from the prompt, stdin or a document), and its result.

use std::io::{IsTerminal, Read};
use std::path::PathBuf;
use std::process::ExitCode;

use serde_json::Value;
use structure_host::{Document, Request, SchemaInput, Scope, Status, Structure};

use crate::cli::arguments::{RunArguments, SchemaMode, pairs_to_object, read_text};
use crate::cli::output::{EXIT_NEED_MORE_INPUT, EXIT_OK, EXIT_STALE, print_json, report};

/// `run`: prints the outcome; the exit status is its status. The embedded model, when it is the
/// one, is fetched and loaded first (with its progress bar).
pub(crate) async fn structure(client: &Structure, scope: &Scope, request: &Request) -> ExitCode {
    if let Err(error) = client.local_model_ready().await {
        return report(error);
    }
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

/// The request of `run`: a `--schema` naming an existing file is read as JSON (an inline
/// schema, or examples with `--schema-mode examples`); otherwise `--schema-mode` decides, and
/// without it JSON text is an inline schema and anything else a registry name.
pub(crate) fn request(arguments: RunArguments) -> Result<Request, String> {
    let settings = if arguments.overrides.is_empty() {
        None
    } else {
        Some(Value::Object(pairs_to_object(&arguments.overrides)?).to_string())
    };
    let (prompt, document) = match arguments.file {
        Some(path) => (
            arguments.prompt.unwrap_or_default(),
            Some(read_document(&path)?),
        ),
        None => (read_prompt(arguments.prompt)?, None),
    };
    Ok(Request {
        prompt,
        schema: schema_input(&arguments.schema, arguments.schema_mode)?,
        max_loops: arguments.max_loops,
        settings,
        records: arguments.records,
        document,
        return_text: arguments.return_text,
    })
}

/// What every line of a batch gets unless it says otherwise: the schema as tool arguments write
/// it, records mode, the setting overrides.
pub(crate) fn batch_defaults(
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

pub(crate) fn json_text(text: &str) -> Result<Value, String> {
    serde_json::from_str(text).map_err(|error| format!("--schema is not valid JSON: {error}"))
}

/// The document at `path` (`-`: stdin): a PDF, a Word document or a web page by its extension or
/// its bytes, else UTF-8 text (the component reads and checks it).
pub(crate) fn read_document(path: &std::path::Path) -> Result<Document, String> {
    let data = if path.as_os_str() == "-" {
        let mut bytes = Vec::new();
        std::io::stdin()
            .read_to_end(&mut bytes)
            .map_err(|error| format!("cannot read the document from stdin: {error}"))?;
        bytes
    } else {
        std::fs::read(path).map_err(|error| format!("cannot read {}: {error}", path.display()))?
    };
    let name = path.file_name().and_then(|name| name.to_str());
    Ok(Document::of(data, name))
}

/// The prompt argument, else stdin (unless it is a terminal).
pub(crate) fn read_prompt(prompt: Option<String>) -> Result<String, String> {
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
pub(crate) fn schema_input(schema: &str, mode: Option<SchemaMode>) -> Result<SchemaInput, String> {
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
