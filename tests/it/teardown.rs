//! The process's actix system tears down without panicking when actors still hold database
//! work in flight (a chain-status write waiting for SQLite's write lock, at the end of a run).

use std::{
    sync::atomic::{AtomicBool, Ordering},
    time::Duration,
};

use ensemble::store::database::connect;

use crate::support::{Backend, TestDb};

/// A task still holding a pooled connection when the main future returns is dropped with the
/// system. Without a Tokio context sqlx panicked returning the connection (tokio caught the
/// panic, but the process printed it as it exited); `actor_system::run` drops the system
/// inside one. Run on a plain thread: no test runtime is around. The panic hook is the
/// process's: nextest runs each test in a process of its own.
#[test]
fn a_connection_held_at_exit_is_returned_without_a_panic() {
    static PANICKED: AtomicBool = AtomicBool::new(false);
    std::panic::set_hook(Box::new(|info| {
        PANICKED.store(true, Ordering::SeqCst);
        eprintln!("{info}");
    }));
    let test_db = std::thread::spawn(|| {
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("rt");
        rt.block_on(TestDb::new(Backend::Sqlite))
    })
    .join()
    .expect("test database");
    let url = test_db.url.clone();
    let outcome = std::thread::spawn(move || {
        ensemble::actor_system::run(async move {
            let db = connect(&url).await.expect("connect");
            let (held, holding) = tokio::sync::oneshot::channel();
            actix_rt::spawn(async move {
                let connection = db.get_sqlite_connection_pool().acquire().await;
                let _ = held.send(());
                // Still holding the connection when the system goes.
                tokio::time::sleep(Duration::from_secs(3600)).await;
                drop(connection);
            });
            holding.await.expect("the task holds a connection");
        })
    })
    .join();
    let _ = std::panic::take_hook();
    assert!(outcome.expect("joined").is_ok(), "the teardown runtime starts");
    assert!(!PANICKED.load(Ordering::SeqCst), "tearing the system down panicked");
}
