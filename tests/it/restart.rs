//! Crash safety: the indexer process is killed with SIGKILL part-way through, twice, and
//! restarted; the final database equals the one an uninterrupted run produces.

use std::{
    process::{Child, Command},
    time::{Duration, Instant},
};

use ensemble::store::writer::read_checkpoint;
use ensemble_devkit::devnet::scenario::ScenarioOptions;
use sea_orm::DatabaseConnection;

use crate::support::{self, Backend, TestDb};

async fn checkpoint(db: &DatabaseConnection, chain: u64) -> u64 {
    read_checkpoint(db, chain.into()).await.ok().flatten().map_or(0, |c| c.block_number)
}

/// Kills the child with SIGKILL once the checkpoint passes `at`; returns where it stood.
async fn kill_after(child: &mut Child, db: &DatabaseConnection, chain: u64, at: u64) -> u64 {
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        let block = checkpoint(db, chain).await;
        if block >= at {
            child.kill().expect("SIGKILL");
            child.wait().expect("reaped");
            return checkpoint(db, chain).await;
        }
        assert!(Instant::now() < deadline, "indexer never reached block {at}");
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
}

/// Kills an indexer on `backend` twice; compares with an uninterrupted run on SQLite, so the
/// PostgreSQL variant also shows that both engines store exactly the same state.
async fn sigkill_and_restart_equals_uninterrupted_run(backend: Backend, chain_id: u64) {
    // One name per block: a long chain, so the kills land part-way.
    let long = support::LongRun::new(chain_id).await;
    // `long` owns the anvil process: it lives to the end of the test.
    let (chain, last, expected) = (long.chain.clone(), long.last, long.expected.clone());

    // The victim: a separate process, flushing every window, killed twice.
    let victim = TestDb::new(backend).await;
    let dir = tempfile::tempdir().unwrap();
    let config_path = support::write_config(dir.path(), &victim.url, &chain, 1);
    let db = ensemble::store::database::connect(&victim.url).await.unwrap();
    let mut stood = Vec::new();
    for at in [last / 3, 2 * last / 3] {
        let mut child = support::spawn_ensemble(&config_path, &[]);
        stood.push(kill_after(&mut child, &db, chain_id, at).await);
    }
    eprintln!("killed at blocks {stood:?} of {last}");
    assert!(stood.iter().all(|b| *b < last), "kills must land before the end: {stood:?} of {last}");
    let mut child = support::spawn_ensemble(&config_path, &[]);
    support::wait_for_block(&db, chain_id, last).await;
    child.kill().unwrap();
    child.wait().unwrap();

    let actual = ensemble::dump::dump(&db).await.unwrap();
    assert_eq!(actual.lines().count(), expected.lines().count());
    assert!(actual == expected, "dump after SIGKILL + restart differs from an uninterrupted run");
}

crate::support::on_both_engines!(sigkill_and_restart_equals_uninterrupted_run, 31_403);

/// SIGTERM during backfill: the process commits what it applied and exits cleanly within its
/// deadline; restarted, it finishes with exactly the uninterrupted run's state.
#[actix_rt::test]
async fn sigterm_during_backfill_commits_and_resumes() {
    let chain_id = 31_406;
    let long = support::LongRun::new(chain_id).await;
    // `long` owns the anvil process: it lives to the end of the test.
    let (chain, last, expected) = (long.chain.clone(), long.last, long.expected.clone());

    // Flushing only every 40 rows leaves applied-but-uncommitted work for the shutdown.
    let victim = TestDb::new(Backend::Sqlite).await;
    let dir = tempfile::tempdir().unwrap();
    let config_path = support::write_config(dir.path(), &victim.url, &chain, 40);
    let db = ensemble::store::database::connect(&victim.url).await.unwrap();
    let mut child = support::spawn_ensemble(&config_path, &[]);
    let deadline = Instant::now() + Duration::from_secs(60);
    while checkpoint(&db, chain_id).await < last / 3 {
        assert!(Instant::now() < deadline, "indexer made no progress");
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
    let term = Command::new("kill").args(["-TERM", &child.id().to_string()]).status().unwrap();
    assert!(term.success());
    let started = Instant::now();
    let status = child.wait().unwrap();
    assert!(status.success(), "graceful exit, got {status}");
    assert!(started.elapsed() < Duration::from_secs(30), "exit within the shutdown deadline");
    let log = std::fs::read_to_string(config_path.with_extension("log")).unwrap();
    assert!(log.contains("committing in-flight work") && log.contains("Stopped"), "{log}");
    let stood = checkpoint(&db, chain_id).await;
    eprintln!("stopped at block {stood} of {last}");
    assert!(stood < last, "SIGTERM should land part-way: {stood} of {last}");

    let mut child = support::spawn_ensemble(&config_path, &[]);
    support::wait_for_block(&db, chain_id, last).await;
    child.kill().unwrap();
    child.wait().unwrap();
    let actual = ensemble::dump::dump(&db).await.unwrap();
    assert!(actual == expected, "dump after SIGTERM + restart differs from an uninterrupted run");
}

crate::support::on_both_engines!(ten_sigkills_during_backfill_and_realtime_change_nothing, 31_407);

/// Ten SIGKILLs at random points: six during backfill, four while following a chain that
/// keeps producing blocks with registrations, transfers and record changes. The final state
/// equals a fresh, uninterrupted index of the final chain.
async fn ten_sigkills_during_backfill_and_realtime_change_nothing(backend: Backend, chain_id: u64) {
    use rand::{Rng, SeedableRng, rngs::StdRng};
    let (anvil, mut driver, scenario) =
        support::devnet(chain_id, ScenarioOptions { eth_names: 60, per_block: 1 }).await;
    let d = scenario.deployment;
    let mut chain = d.chain_config(chain_id, &anvil.url);
    chain.max_block_range = 1;
    chain.finality_depth = 8;
    let last = scenario.last_block;
    let mut rng = StdRng::seed_from_u64(10);

    let victim = TestDb::new(backend).await;
    let dir = tempfile::tempdir().unwrap();
    let config_path = support::write_config(dir.path(), &victim.url, &chain, 5);
    let db = ensemble::store::database::connect(&victim.url).await.unwrap();

    // Backfill: each kill waits for fresh progress past the previous one, plus a random
    // extra distance, so every process did real work before it died.
    let mut kills = Vec::new();
    for _ in 0..6 {
        let target = checkpoint(&db, chain_id).await + 1 + rng.random_range(0..12);
        let mut child = support::spawn_ensemble(&config_path, &[]);
        kills.push(kill_after(&mut child, &db, chain_id, target.min(last - 1)).await);
    }
    assert!(
        kills.windows(2).all(|w| w[0] < w[1]),
        "each backfill kill comes after new progress: {kills:?}"
    );
    assert!(*kills.last().unwrap() < last, "the backfill kills land before the end: {kills:?}");

    // Realtime: the indexer catches up and follows; blocks with registrations, transfers and
    // record changes keep coming; it is killed a random moment after indexing new blocks.
    let owner = driver.accounts[1];
    for round in 0..4u64 {
        let mut child = support::spawn_ensemble(&config_path, &[]);
        crate::reorg::wait_for_hash(&db, chain_id, &driver).await;
        support::activity(&mut driver, &d, owner, "name010", 1, &format!("rt{round}")).await;
        crate::reorg::wait_for_hash(&db, chain_id, &driver).await;
        let more = rng.random_range(1..4);
        support::activity(&mut driver, &d, owner, "name010", more, &format!("rt{round}b")).await;
        tokio::time::sleep(Duration::from_millis(rng.random_range(0..40))).await;
        child.kill().unwrap();
        child.wait().unwrap();
        kills.push(checkpoint(&db, chain_id).await);
    }
    eprintln!("killed at blocks {kills:?}");
    assert_eq!(kills.len(), 10);

    let mut child = support::spawn_ensemble(&config_path, &[]);
    crate::reorg::wait_for_hash(&db, chain_id, &driver).await;
    child.kill().unwrap();
    child.wait().unwrap();
    let head = alloy::providers::Provider::get_block_number(driver.provider()).await.unwrap();
    assert!(head > last, "the chain grew during the realtime phase");
    let expected = support::reference_dump(&chain, head).await;
    let actual = ensemble::dump::dump(&db).await.unwrap();
    assert!(actual == expected, "ten SIGKILLs changed the indexed state");
}
