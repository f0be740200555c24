//! `gpuplan serve`: the HTTP API on a socket, logs as structured lines on standard error.

use crate::args::ServeArgs;
use gpuplan::{Catalog, Error, ExitStatus};
use std::io::IsTerminal;

/// Models named by their Hub id in a request's `model`, read as `--model` reads them: from the
/// Hugging Face cache, else the Hub (`HF_ENDPOINT`, `HF_TOKEN`; never with `HF_HUB_OFFLINE=1`).
fn hub_files() -> gpuplan_server::HubFiles {
    use crate::hub::{Asker, HubId, files};
    gpuplan_server::HubFiles(std::sync::Arc::new(|model: &str| {
        HubId::parse(model).map(|id| files(&id, Asker::API))
    }))
}

pub fn run(catalog: Catalog, args: &ServeArgs) -> Result<ExitStatus, Error> {
    let origins = gpuplan_server::cors_origins(&args.cors_origin).map_err(|(origin, why)| {
        Error::invalid(
            format!("--cors-origin {origin}: {why}"),
            Some("give a scheme and host as the browser sends them, e.g. https://tools.example.com, or *".to_string()),
        )
    })?;
    // A second subscriber (in tests that run several servers) is not an error.
    let _ = tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info")),
        )
        .with_writer(std::io::stderr)
        .with_ansi(std::io::stderr().is_terminal())
        .try_init();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| Error::invalid(format!("cannot start the server's runtime: {e}"), None))?;
    let served = runtime.block_on(async {
        let listener = tokio::net::TcpListener::bind(args.addr).await.map_err(|e| {
            Error::invalid(
                format!("--addr {}: {e}", args.addr),
                Some("choose a free port, e.g. --addr 127.0.0.1:8081".to_string()),
            )
        })?;
        let bound = listener.local_addr().map_or(args.addr, |a| a);
        tracing::info!(address = %bound, "listening on http://{bound}");
        gpuplan_server::serve(
            listener,
            gpuplan_server::AppState::new(catalog)
                .with_cors_origins(origins)
                .with_hub(hub_files()),
        )
        .await
        .map_err(|e| Error::invalid(format!("the server stopped: {e}"), None))
    });
    // A computation cut off at its time limit may still be running on a blocking thread: the
    // process exits without waiting for it.
    runtime.shutdown_timeout(std::time::Duration::from_secs(1));
    served?;
    Ok(ExitStatus::Success)
}
