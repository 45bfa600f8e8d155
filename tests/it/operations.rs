//! What an operator meets around the edges: a port in use and a database that is down are
//! reported at once and plainly; `dump` changes nothing (not even the schema); a graceful stop
//! leaves SQLite's write-ahead log empty; a stopped service writes nothing more; every
//! documented series of a chain exists from the start, the fetcher's mailbox included.

use std::{
    process::{Command, Stdio},
    time::{Duration, Instant},
};

use ensemble::Service;
use ensemble_devkit::devnet::scenario::ScenarioOptions;

use crate::support::{self, Backend, TestDb};

fn ensemble(args: &[&str], env: &[(&str, &str)]) -> (bool, String, Duration) {
    let started = Instant::now();
    let out = Command::new(env!("CARGO_BIN_EXE_ensemble"))
        .args(args)
        .envs(env.iter().copied())
        .env("RUST_BACKTRACE", "0")
        .stdin(Stdio::null())
        .output()
        .expect("ensemble runs");
    let text =
        format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    (out.status.success(), text, started.elapsed())
}

#[test]
fn a_port_in_use_and_a_database_that_is_down_are_reported_plainly() {
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let listen = taken.local_addr().unwrap().to_string();
    let dir = tempfile::tempdir().unwrap();
    let db = format!("sqlite://{}?mode=rwc", dir.path().join("p.sqlite").display());
    for _ in 0..5 {
        let (ok, text, _) =
            ensemble(&["run"], &[("DATABASE_URL", &db), ("ENSEMBLE_HTTP_LISTEN", &listen)]);
        assert!(!ok, "{text}");
        assert!(text.contains(&format!("cannot listen on {listen}")), "{text}");
        assert!(!text.contains("panicked"), "{text}");
    }
    assert!(!dir.path().join("p.sqlite").exists(), "nothing starts before the port is bound");

    let closed = support::free_port();
    let url = format!("postgres://postgres:hunter2secret@127.0.0.1:{closed}/x");
    let listen = format!("127.0.0.1:{}", support::free_port());
    let (ok, text, took) =
        ensemble(&["run"], &[("DATABASE_URL", &url), ("ENSEMBLE_HTTP_LISTEN", &listen)]);
    assert!(!ok, "{text}");
    assert!(text.contains(&format!("cannot reach the database at 127.0.0.1:{closed}")), "{text}");
    assert!(!text.contains("hunter2secret"), "{text}");
    assert!(took < Duration::from_secs(15), "took {took:?}");
}

/// Tables in the SQLite database at `url`.
async fn tables(url: &str) -> i64 {
    use sea_orm::{ConnectionTrait, Statement};
    let db = ensemble::store::database::connect_without_migrating(url).await.unwrap();
    let row = db
        .query_one_raw(Statement::from_string(
            db.get_database_backend(),
            "SELECT count(*) AS n FROM sqlite_master WHERE type = 'table'",
        ))
        .await
        .unwrap()
        .unwrap();
    row.try_get::<i64>("", "n").unwrap()
}

#[actix_rt::test]
async fn dump_and_label_import_never_migrate() {
    let dir = tempfile::tempdir().unwrap();
    let db = format!("sqlite://{}?mode=rwc", dir.path().join("empty.sqlite").display());
    assert_eq!(tables(&db).await, 0);
    let (ok, text, _) = ensemble(&["dump"], &[("DATABASE_URL", &db)]);
    assert!(!ok, "{text}");
    assert!(text.contains("run `ensemble migrate`"), "{text}");
    let labels = dir.path().join("labels.txt");
    std::fs::write(&labels, "alice\n").unwrap();
    let (ok, text, _) =
        ensemble(&["labels", "import", labels.to_str().unwrap()], &[("DATABASE_URL", &db)]);
    assert!(!ok, "{text}");
    assert!(text.contains("run `ensemble migrate`"), "{text}");
    assert_eq!(tables(&db).await, 0, "dump or labels import created tables");
}

#[actix_rt::test]
async fn a_graceful_stop_empties_the_write_ahead_log() {
    let chain_id = 31_580;
    let (anvil, _driver, scenario) =
        support::devnet(chain_id, ScenarioOptions { eth_names: 12, per_block: 12 }).await;
    let chain = scenario.deployment.chain_config(chain_id, &anvil.url);
    let db = TestDb::new(Backend::Sqlite).await;
    let dir = tempfile::tempdir().unwrap();
    let config = support::write_config(dir.path(), &db.url, &chain, 200_000);
    let mut child = support::spawn_ensemble(&config, &[]);
    let conn = ensemble::store::database::connect_without_migrating(&db.url).await.unwrap();
    support::wait_for_block(&conn, chain_id, scenario.last_block).await;
    drop(conn);
    let path = db.url.trim_start_matches("sqlite://").trim_end_matches("?mode=rwc").to_owned();
    let wal = format!("{path}-wal");
    assert!(
        std::fs::metadata(&wal).map(|m| m.len()).unwrap_or(0) > 0,
        "the log holds the backfill"
    );
    let term = Command::new("kill").args(["-TERM", &child.id().to_string()]).status().unwrap();
    assert!(term.success());
    assert!(child.wait().unwrap().success());
    let left = std::fs::metadata(&wal).map(|m| m.len()).unwrap_or(0);
    assert_eq!(left, 0, "{wal} keeps {left} bytes after a graceful stop");
}

#[actix_rt::test]
async fn every_series_of_a_chain_exists_from_the_start() {
    let chain_id = 31_581;
    let (anvil, _driver, scenario) =
        support::devnet(chain_id, ScenarioOptions { eth_names: 6, per_block: 6 }).await;
    let db = TestDb::new(Backend::Sqlite).await;
    let chain = scenario.deployment.chain_config(chain_id, &anvil.url);
    let service = Service::start(&support::config(&db.url, chain)).await.unwrap();
    support::wait_for_block(&service.db, chain_id, scenario.last_block).await;
    let metrics = reqwest::get(format!("http://{}/metrics", service.http_addr))
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    let c = format!("chain=\"{chain_id}\"");
    for series in [
        format!("ensemble_reorgs_total{{{c}}} 0"),
        format!("ensemble_actor_restarts_total{{{c},actor=\"pipeline\"}} 0"),
        format!("ensemble_text_values_unknown_total{{{c}}} 0"),
        format!("ensemble_logs_undecodable_total{{{c},contract=\"registry\"}} 0"),
        format!("ensemble_logs_undecodable_total{{{c},contract=\"resolver\"}} 0"),
        format!("ensemble_rpc_retries_total{{{c},event=\"eth_getLogs\"}} 0"),
        format!("ensemble_rpc_errors_total{{{c},event=\"eth_call\"}} 0"),
        format!("ensemble_mailbox_depth{{{c},actor=\"fetcher\"}} 0"),
        format!("ensemble_mailbox_capacity{{{c},actor=\"fetcher\"}} 1"),
        "ensemble_query_indexes_deferred".to_owned(),
    ] {
        assert!(metrics.contains(&series), "{series} missing from:\n{metrics}");
    }
    service.stop().await;
}

/// Once `Service::stop` or `Service::shutdown` has returned, the service's chains write
/// nothing more: the next indexer started on the same database is its only writer. The chain
/// grows after the stop; the checkpoint must not.
async fn a_stopped_service_writes_nothing_more(backend: Backend, chain_id: u64) {
    use ensemble::store::writer::read_checkpoint;
    let (anvil, mut driver, scenario) =
        support::devnet(chain_id, ScenarioOptions { eth_names: 12, per_block: 12 }).await;
    let mut chain = scenario.deployment.chain_config(chain_id, &anvil.url);
    chain.poll_interval_ms = 20;
    let db = TestDb::new(backend).await;
    let config = support::config(&db.url, chain);
    let owner = driver.accounts[1];
    for (round, graceful) in [false, true].into_iter().enumerate() {
        let service = Service::start(&config).await.unwrap();
        crate::reorg::wait_for_hash(&service.db, chain_id, &driver).await;
        let reader = service.db.clone();
        let stopped_at = read_checkpoint(&reader, chain_id.into()).await.unwrap();
        if graceful {
            service.shutdown(Duration::from_secs(10)).await;
        } else {
            service.stop().await;
        }
        let d = &scenario.deployment;
        support::activity(&mut driver, d, owner, "name010", 3, &format!("after-stop{round}")).await;
        // Many poll intervals of a chain that moved on.
        tokio::time::sleep(Duration::from_millis(1_500)).await;
        let now = read_checkpoint(&reader, chain_id.into()).await.unwrap();
        assert_eq!(
            now, stopped_at,
            "the checkpoint moved after the service stopped (graceful: {graceful})"
        );
    }
}

crate::support::on_both_engines!(a_stopped_service_writes_nothing_more, 31_620);
