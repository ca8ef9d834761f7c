//! `schemas`: the registry from the command line.

use std::process::ExitCode;

use serde_json::{Value, json};
use structure_host::{Registration, SchemaInfo, Scope, Structure};

use crate::cli::arguments::{SchemasAction, read_text};
use crate::cli::output::{
    EXIT_ERROR, EXIT_OK, EXIT_USAGE, fail, finish, print_json, print_line, report,
};

pub(crate) async fn schemas(client: &Structure, scope: &Scope, action: SchemasAction) -> ExitCode {
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

pub(crate) fn own_level(scope: &Scope) -> String {
    match &scope.project {
        Some(project) => format!("project {project} of tenant {}", scope.tenant),
        None => format!("tenant {}", scope.tenant),
    }
}
