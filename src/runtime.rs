//! What every binary of the project does around the service: tracing (through the redacting
//! writer), glibc's arena limit, and serving until SIGINT or SIGTERM with a graceful shutdown.

use std::time::Duration;

use crate::{Config, Mode, Service};

/// Installs the tracing subscriber: `RUST_LOG` (default `info,sqlx=warn`), text or JSON lines,
/// written through [`crate::redaction::RedactingWriter`] so no endpoint secret reaches a log.
pub fn init_tracing(json: bool) {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info,sqlx=warn"));
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(crate::redaction::RedactingWriter);
    if json {
        builder.json().init();
    } else {
        builder.init();
    }
}

/// Resolves on SIGINT (Ctrl-C) or, on unix, SIGTERM.
pub async fn shutdown_signal() {
    let ctrl_c = tokio::signal::ctrl_c();
    #[cfg(unix)]
    {
        let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
            .expect("installing a SIGTERM handler succeeds on unix");
        tokio::select! {
            _ = ctrl_c => {}
            _ = term.recv() => {}
        }
    }
    #[cfg(not(unix))]
    let _ = ctrl_c.await;
}

/// Starts the service in `mode` and runs it until a shutdown signal, then stops it
/// gracefully (committing in-flight work within the configured timeout).
pub async fn serve(config: Config, mode: Mode) -> Result<(), crate::Error> {
    let service = Service::start_mode(&config, mode).await?;
    let bars = crate::progress::spawn(&service);
    shutdown_signal().await;
    let timeout = Duration::from_secs(config.http.shutdown_timeout_secs);
    tracing::info!(target: "ensemble", ?timeout, "Shutting down: committing in-flight work");
    if let Some(bars) = bars {
        bars.abort();
    }
    service.shutdown(timeout).await;
    tracing::info!(target: "ensemble", "Stopped");
    Ok(())
}

/// Arenas glibc's `malloc` may create, unless `MALLOC_ARENA_MAX` says otherwise. Rust's own
/// allocations go to mimalloc (each binary's global allocator), but SQLite's (its page caches and statements)
/// go through glibc, which gives each thread that allocates its own arena and keeps freed
/// memory in it. At 5M events SQLite had 80 MB in use while glibc held 162–190 MB for it
/// (read with `gdb` from a running bench), and two arenas peaked at 604 MB of RSS instead of
/// 642–668, at the same speed (BENCHMARKS.md). Routing SQLite through
/// mimalloc instead did no better (631–635 MB).
pub const GLIBC_ARENAS: i32 = 2;

/// Applies [`GLIBC_ARENAS`] before any thread starts, so that no thread has an arena of its
/// own yet; an explicit `MALLOC_ARENA_MAX` in the environment is left to glibc.
pub fn limit_glibc_arenas() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    if std::env::var_os("MALLOC_ARENA_MAX").is_none() {
        // SAFETY: `mallopt` only sets a tunable of glibc's allocator; callers call this once,
        // first thing in `main`, while theirs is the only thread.
        unsafe {
            libc::mallopt(libc::M_ARENA_MAX, GLIBC_ARENAS);
        }
    }
}
