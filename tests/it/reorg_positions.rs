//! Reorgs where they are hardest to find: inside the first window a freshly started indexer
//! reads, right after a restart (the fork shows only as the checkpoint's hash no longer
//! linking), and on a chain shorter than `finality_depth` (every block journaled, down to a
//! reorg of everything after the start block, and of everything after genesis). Every depth from 1 to the finality depth, on both
//! engines. After each reorg the indexed state equals a fresh index of the final chain.

use alloy::providers::Provider;
use ensemble::{Service, chain::fetcher::JOURNAL_WINDOW_BLOCKS, config::ChainConfig};
use ensemble_devkit::devnet::{Anvil, Driver, Scenario, scenario::ScenarioOptions};

use crate::{
    reorg::wait_for_hash,
    support::{self, Backend, TestDb, fresh_dump},
};

/// Finality depth of the longer chains; every reorg depth up to it is played.
const FINALITY: u64 = 6;

/// Waits for `service` to reach the chain's head, stops it, and compares its state with a
/// fresh index of the chain.
async fn assert_fresh(service: Service, chain: &ChainConfig, driver: &Driver, what: &str) {
    wait_for_hash(&service.db, chain.id.get(), driver).await;
    let actual = ensemble::dump::dump(&service.db).await.unwrap();
    service.stop().await;
    assert_same(&actual, &fresh_dump(chain, driver).await, what);
}

fn assert_same(actual: &str, expected: &str, what: &str) {
    if actual != expected {
        let diff: Vec<_> = actual
            .lines()
            .zip(expected.lines())
            .filter(|(a, e)| a != e)
            .take(5)
            .map(|(a, e)| format!("  got      {a}\n  expected {e}"))
            .collect();
        panic!(
            "{what}: state differs from a fresh index of the final chain ({} vs {} lines)\n{}",
            actual.lines().count(),
            expected.lines().count(),
            diff.join("\n")
        );
    }
}

/// Orphans `depth` blocks of activity and replaces them with `depth + 1` others; `between`
/// runs after the orphaned blocks are mined and before they are replaced.
async fn reorg(
    driver: &mut Driver,
    scenario: &Scenario,
    depth: u64,
    tag: &str,
    between: impl AsyncFnOnce(&mut Driver),
) {
    let owner = driver.accounts[1];
    let d = &scenario.deployment;
    let snapshot = driver.snapshot().await.unwrap();
    support::activity(driver, d, owner, "name010", depth, &format!("orphan-{tag}")).await;
    between(driver).await;
    driver.revert(&snapshot).await.unwrap();
    support::activity(driver, d, owner, "name010", depth + 1, &format!("canon-{tag}")).await;
}

async fn devnet(chain_id: u64, finality: u64) -> (Anvil, Driver, Scenario, ChainConfig) {
    let (anvil, driver, scenario) =
        support::devnet(chain_id, ScenarioOptions { eth_names: 12, per_block: 12 }).await;
    let mut chain = scenario.deployment.chain_config(chain_id, &anvil.url);
    chain.finality_depth = finality;
    chain.poll_interval_ms = 20;
    (anvil, driver, scenario, chain)
}

/// The orphaned blocks are on chain before the indexer starts: it reads them in its first
/// windows, then finds them gone.
async fn reorgs_inside_the_first_window(backend: Backend, chain_id: u64) {
    let (_anvil, mut driver, scenario, chain) = devnet(chain_id, FINALITY).await;
    for depth in 1..=FINALITY {
        let db = TestDb::new(backend).await;
        let mut service = None;
        reorg(&mut driver, &scenario, depth, &format!("first{depth}"), async |driver| {
            let started = Service::start(&support::config(&db.url, chain.clone())).await.unwrap();
            wait_for_hash(&started.db, chain_id, driver).await;
            service = Some(started);
        })
        .await;
        assert_fresh(service.unwrap(), &chain, &driver, &format!("first window, depth {depth}"))
            .await;
    }
}

/// The indexer stops with the orphaned blocks indexed, the chain reorganizes while it is
/// down, and it starts again from its checkpoint.
async fn reorgs_right_after_a_restart(backend: Backend, chain_id: u64) {
    let (_anvil, mut driver, scenario, chain) = devnet(chain_id, FINALITY).await;
    let db = TestDb::new(backend).await;
    let config = support::config(&db.url, chain.clone());
    for depth in 1..=FINALITY {
        reorg(&mut driver, &scenario, depth, &format!("restart{depth}"), async |driver| {
            let service = Service::start(&config).await.unwrap();
            wait_for_hash(&service.db, chain_id, driver).await;
            service.shutdown(std::time::Duration::from_secs(10)).await;
        })
        .await;
        let service = Service::start(&config).await.unwrap();
        assert_fresh(service, &chain, &driver, &format!("after a restart, depth {depth}")).await;
    }
}

/// The journal of an indexer that caught up through `head` unfinal blocks: windows that
/// follow one another without a gap up to the head, none longer than
/// [`JOURNAL_WINDOW_BLOCKS`], and fewer windows than blocks (the blocks were on chain before
/// the indexer started, so it read them several at a time).
async fn assert_windows_tile(service: &Service, chain_id: u64, head: u64) {
    let mut windows =
        ensemble::store::journal::windows(&service.db, chain_id.into()).await.unwrap();
    windows.reverse();
    let first = windows.first().expect("the unfinal blocks are journaled").window_start;
    for pair in windows.windows(2) {
        assert_eq!(pair[1].window_start, pair[0].window_end + 1, "windows tile: {windows:?}");
    }
    for window in &windows {
        let blocks = (window.window_end - window.window_start + 1) as u64;
        assert!(blocks <= JOURNAL_WINDOW_BLOCKS, "a window spans {blocks} blocks: {window:?}");
    }
    assert_eq!(windows.last().unwrap().window_end as u64, head, "journaled up to the head");
    let blocks = head - first as u64 + 1;
    assert!(
        (windows.len() as u64) < blocks,
        "{} windows for {blocks} blocks read while catching up",
        windows.len()
    );
}

/// A chain shorter than its finality depth: every block is journaled. Reorgs of growing
/// depths while following; one that replaces every block an indexer started at
/// (`start_block`) has indexed; then one that replaces everything after genesis (the ENS
/// deployment included).
async fn reorgs_on_a_chain_shorter_than_finality(backend: Backend, chain_id: u64) {
    let anvil = Anvil::spawn(chain_id).await.unwrap();
    let mut driver = Driver::new(anvil.provider()).await.unwrap();
    let genesis = driver.snapshot().await.unwrap();
    let scenario =
        Scenario::run(&mut driver, ScenarioOptions { eth_names: 12, per_block: 12 }).await.unwrap();
    let mut chain = scenario.deployment.chain_config(chain_id, &anvil.url);
    let length = driver.provider().get_block_number().await.unwrap();
    chain.finality_depth = length + 1_000;
    chain.poll_interval_ms = 20;
    let db = TestDb::new(backend).await;
    let service = Service::start(&support::config(&db.url, chain.clone())).await.unwrap();
    wait_for_hash(&service.db, chain_id, &driver).await;
    assert_windows_tile(&service, chain_id, length).await;
    for depth in [1, 2, 3, 5, 8, 13] {
        reorg(&mut driver, &scenario, depth, &format!("short{depth}"), async |driver| {
            wait_for_hash(&service.db, chain_id, driver).await;
        })
        .await;
        wait_for_hash(&service.db, chain_id, &driver).await;
        let actual = ensemble::dump::dump(&service.db).await.unwrap();
        assert_same(
            &actual,
            &fresh_dump(&chain, &driver).await,
            &format!("short chain, depth {depth}"),
        );
    }
    // A second indexer that starts at the first block the next reorg replaces.
    let mut from_start = chain.clone();
    from_start.start_block = driver.provider().get_block_number().await.unwrap() + 1;
    let start_db = TestDb::new(backend).await;
    let mut started = None;
    reorg(&mut driver, &scenario, 3, "start", async |driver| {
        let s = Service::start(&support::config(&start_db.url, from_start.clone())).await.unwrap();
        wait_for_hash(&s.db, chain_id, driver).await;
        started = Some(s);
    })
    .await;
    assert_fresh(started.unwrap(), &from_start, &driver, "reorganized from the start block").await;
    wait_for_hash(&service.db, chain_id, &driver).await;

    // Back to genesis: a chain of empty blocks, longer than the one indexed, replaces it all.
    let height = driver.provider().get_block_number().await.unwrap();
    driver.revert(&genesis).await.unwrap();
    for _ in 0..height + 2 {
        driver.mine().await.unwrap();
    }
    wait_for_hash(&service.db, chain_id, &driver).await;
    let actual = ensemble::dump::dump(&service.db).await.unwrap();
    service.stop().await;
    assert_same(&actual, &fresh_dump(&chain, &driver).await, "reorganized from genesis");
    drop(anvil);
}

crate::support::on_both_engines!(reorgs_inside_the_first_window, 31560);

crate::support::on_both_engines!(reorgs_right_after_a_restart, 31562);

crate::support::on_both_engines!(reorgs_on_a_chain_shorter_than_finality, 31564);
