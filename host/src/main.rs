//! The `structure` command: structure text, manage the schema registry and settings.
//!
//! Exit status: 0 ok, 3 need-more-input, 4 stale, 2 usage error, 1 any other error.

use std::path::Path;
use std::process::ExitCode;

mod cli;

use clap::Parser;
use serde_json::Value;
use structure_host::{Scope, Structure};

use cli::arguments::{
    Cli, ClientCommand, Command, Global, SchemasAction, SettingsAction, client, pairs_to_object,
    scope,
};
use cli::output::{EXIT_ERROR, EXIT_OK, EXIT_USAGE, fail, finish, print_json};
use cli::run::{batch_defaults, request, structure};
use cli::schemas::schemas;
use cli::serve::serve;

fn main() -> ExitCode {
    let Cli { command, global } = Cli::parse();
    // The commands that need no client, store or runtime; the others call the component.
    let command = match command {
        Command::Client(command) => command,
        Command::Component { output } => return write_component(&output),
        #[cfg(feature = "embedded")]
        Command::Model { action } => return cli::model::model(action, global.offline),
    };
    // A batch's calls run on every core; one call needs one thread.
    let mut builder = match command {
        ClientCommand::Batch { .. } => tokio::runtime::Builder::new_multi_thread(),
        _ => tokio::runtime::Builder::new_current_thread(),
    };
    let runtime = match builder.enable_all().build() {
        Ok(runtime) => runtime,
        Err(error) => return fail(EXIT_ERROR, &format!("cannot start: {error}")),
    };
    runtime.block_on(run(&global, command))
}

/// A command that calls the component, with the client and scope the `global` flags make.
async fn run(global: &Global, command: ClientCommand) -> ExitCode {
    let client = match client(global) {
        Ok(client) => client,
        Err((code, message)) => return fail(code, &message),
    };
    let scope = scope(global);
    match command {
        ClientCommand::Run(arguments) => match request(arguments) {
            Ok(request) => structure(&client, &scope, &request).await,
            Err(message) => fail(EXIT_USAGE, &message),
        },
        ClientCommand::Batch {
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
        ClientCommand::Schemas { action, json } => {
            schemas(
                &client,
                &scope,
                action.unwrap_or(SchemasAction::List { json }),
            )
            .await
        }
        ClientCommand::Review { action } => cli::review::review(&client, &scope, action),
        ClientCommand::Settings { action } => settings(&client, &scope, action).await,
        ClientCommand::ToolDefinition => tool_definition(&client).await,
        ClientCommand::Serve {
            listen,
            metrics_listen,
            drain_timeout,
        } => serve(&client, listen, metrics_listen, drain_timeout).await,
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
