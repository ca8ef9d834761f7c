//! The `structure` command: structure text, manage the schema registry and settings.
//!
//! Exit status: 0 ok, 3 need-more-input, 4 stale, 2 usage error, 1 any other error.

use std::path::Path;
use std::process::ExitCode;

mod cli;

use clap::Parser;
use serde_json::Value;
use structure_host::{Request, Scope, Structure};

use cli::arguments::{Cli, Command, SchemasAction, SettingsAction, client, pairs_to_object, scope};
use cli::output::{EXIT_ERROR, EXIT_OK, EXIT_USAGE, fail, finish, print_json};
use cli::run::{Text, batch_defaults, request, structure};
use cli::schemas::schemas;
use cli::serve::serve;

fn main() -> ExitCode {
    let cli = Cli::parse();
    if let Command::Component { output } = &cli.command {
        return write_component(output);
    }
    #[cfg(feature = "embedded")]
    if let Command::Model { action } = cli.command {
        return cli::model::model(action, cli.offline);
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
    #[cfg_attr(not(feature = "embedded"), expect(unused_variables))]
    let offline = cli.offline;
    let client = match client(&cli) {
        Ok(client) => client,
        Err((code, message)) => return fail(code, &message),
    };
    let scope = scope(&cli);
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
            let request =
                request(&schema, schema_mode, max_loops, &overrides, text).map(|request| Request {
                    records,
                    return_text,
                    ..request
                });
            match request {
                Ok(request) => structure(&client, &scope, &request).await,
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
            provider_batch,
            poll_seconds,
        } => {
            let batch = batch_defaults(schema.as_deref(), schema_mode, records, &overrides)
                .and_then(|defaults| {
                    let provider_batch = cli::batch::provider_batch(provider_batch, poll_seconds)?;
                    Ok(structure_host::batch::Batch {
                        input,
                        output,
                        defaults,
                        jobs,
                        provider_batch,
                    })
                });
            match batch {
                Ok(batch) => cli::batch::run(client, scope, batch).await,
                Err(message) => fail(EXIT_USAGE, &message),
            }
        }
        Command::Schemas { action, json } => {
            schemas(
                &client,
                &scope,
                action.unwrap_or(SchemasAction::List { json }),
            )
            .await
        }
        Command::Review { action } => cli::review::review(&client, &scope, action),
        Command::Settings { action } => settings(&client, &scope, action).await,
        Command::ToolDefinition => tool_definition(&client).await,
        Command::Serve {
            listen,
            metrics_listen,
            drain_timeout,
        } => serve(&client, listen, metrics_listen, drain_timeout).await,
        Command::Component { output } => write_component(&output),
        #[cfg(feature = "embedded")]
        Command::Model { action } => cli::model::model(action, offline),
    }
}

/// `tool-definition`: the tool definition JSON, to register with an agent framework.
async fn tool_definition(client: &Structure) -> ExitCode {
    finish(
        client
            .tool_definition()
            .await
            .map(|definition| print_json(&definition)),
    )
}

/// `settings`: the settings of a scope, read or set.
async fn settings(client: &Structure, scope: &Scope, action: SettingsAction) -> ExitCode {
    match action {
        SettingsAction::Get => finish(
            client
                .get_settings(scope)
                .await
                .map(|settings| print_json(&settings)),
        ),
        SettingsAction::Set { pairs } => match pairs_to_object(&pairs) {
            Ok(overrides) => finish(client.set_settings(scope, &Value::Object(overrides)).await),
            Err(message) => fail(EXIT_USAGE, &message),
        },
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
