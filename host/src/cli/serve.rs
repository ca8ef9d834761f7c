//! `serve`: the HTTP API until SIGTERM or SIGINT, then a drain.

use std::process::ExitCode;

use structure_host::{ServeOptions, Structure};

use crate::cli::output::{EXIT_ERROR, EXIT_OK, EXIT_USAGE, fail};

/// `serve`: the HTTP API on `listen` until SIGTERM or SIGINT, then a drain. The embedded model,
/// when it is the one, is fetched and loaded before the service listens: its first caller does
/// not wait for it.
pub(crate) async fn serve(
    client: &Structure,
    listen: String,
    metrics_listen: Option<String>,
    drain_timeout: u64,
) -> ExitCode {
    if let Err(error) = client.local_model_ready().await {
        return crate::cli::output::report(error);
    }
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
        "structure: serving http://{address} (POST /v1/structure, POST /mcp, GET /healthz, the console at /console; {metrics_address})"
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
pub(crate) async fn shutdown_signal() {
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
