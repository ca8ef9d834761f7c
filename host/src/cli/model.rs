//! `model`: the embedded engine's models in the machine's cache: fetched once (`pull`), listed,
//! removed. Nothing here runs the component.

use std::process::ExitCode;

use structure_host::local::{self, CATALOG, Hub, ModelCache, Show, fetch};

use crate::cli::arguments::ModelAction;
use crate::cli::output::{EXIT_ERROR, EXIT_OK, EXIT_USAGE, fail, print_line};

pub(crate) fn model(action: ModelAction, offline: bool) -> ExitCode {
    let Some(cache) = ModelCache::default_dir() else {
        return fail(EXIT_ERROR, &local::FetchError::NoCache.to_string());
    };
    match action {
        ModelAction::Pull { name } => {
            let card = match name.as_deref() {
                None => local::DEFAULT,
                Some(name) => match local::card(name) {
                    Some(card) => card,
                    None => {
                        let names: Vec<&str> = CATALOG.iter().map(|card| card.name).collect();
                        return fail(
                            EXIT_USAGE,
                            &format!(
                                "no local model {name:?}; the catalog has {}",
                                names.join(", ")
                            ),
                        );
                    }
                },
            };
            match fetch(&cache, card, &Hub::from_env(), offline, Show::OnTerminal) {
                Ok(path) => {
                    print_line(&path.display().to_string());
                    ExitCode::from(EXIT_OK)
                }
                Err(error) => fail(EXIT_ERROR, &error.to_string()),
            }
        }
        ModelAction::List => {
            let cached = cache.list();
            for card in &CATALOG {
                let whole = cache.has(card);
                let state = if whole {
                    "downloaded"
                } else {
                    "not downloaded"
                };
                print_line(&format!(
                    "{:<32} {:>5} MB  {state:<15} {} ({})",
                    card.name,
                    card.size / 1_000_000,
                    card.title,
                    card.license
                ));
            }
            for file in cached
                .iter()
                .filter(|file| local::card(&file.name).is_none() || !file.whole)
            {
                let state = if file.whole {
                    "in the cache"
                } else {
                    "partly downloaded"
                };
                print_line(&format!(
                    "{:<32} {:>5} MB  {state:<15} {}",
                    file.name,
                    file.bytes / 1_000_000,
                    file.path.display()
                ));
            }
            ExitCode::from(EXIT_OK)
        }
        ModelAction::Rm { name } => match cache.remove(&name) {
            Ok(true) => ExitCode::from(EXIT_OK),
            Ok(false) => fail(EXIT_USAGE, &format!("no model {name:?} in the cache")),
            Err(error) => fail(EXIT_ERROR, &format!("cannot remove {name}: {error}")),
        },
    }
}
