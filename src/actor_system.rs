//! [`run`]: the process's actix system, from start to a teardown that cannot panic.
//!
//! When the main future returns, futures still pending in actors are dropped with the system:
//! a chain-status write waiting for SQLite's write lock, for instance. Such a future may hold
//! a pooled database connection, and sqlx returns a dropped connection to its pool by spawning
//! a task, which needs a Tokio context. The system's own runtime is no longer entered while it
//! is dropped, so sqlx panicked; tokio caught the panic, but the process printed it and its
//! backtrace after its work was done (seen at the end of a bench run). The system is dropped
//! inside a small runtime of its own instead: the spawned returns land there and are dropped
//! with it, closing the connections.

use std::future::Future;

/// Runs `future` on a new actix system and tears the system down afterwards.
pub fn run<F: Future>(future: F) -> std::io::Result<F::Output> {
    let system = actix_rt::System::new();
    let output = system.block_on(future);
    let teardown = tokio::runtime::Builder::new_current_thread().build()?;
    let _context = teardown.enter();
    drop(system);
    Ok(output)
}
