//! Reorgs on a real chain: while the indexer follows the head, blocks with registrations,
//! transfers and record changes are orphaned (anvil snapshot, blocks, revert, other blocks).
//! After each reorg the indexed state equals a fresh index of the final chain.

use std::time::{Duration, Instant};

use ensemble::{Service, store::writer::read_checkpoint};
use ensemble_devkit::devnet::{
    Deployment, Driver, contracts::IController, scenario::ScenarioOptions,
};
use sea_orm::DatabaseConnection;

use crate::support::{self, Backend, TestDb};

const FINALITY: u64 = 10;

pub(crate) async fn wait_for_hash(db: &DatabaseConnection, chain: u64, driver: &Driver) {
    use alloy::providers::Provider;
    let head = driver.provider().get_block_number().await.unwrap();
    let hash =
        driver.provider().get_block_by_number(head.into()).await.unwrap().unwrap().header.hash;
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let cp = read_checkpoint(db, chain.into()).await.unwrap();
        if cp
            .as_ref()
            .is_some_and(|c| c.block_number == head && c.block_hash == format!("{hash:#x}"))
        {
            return;
        }
        assert!(Instant::now() < deadline, "indexer at {cp:?}, chain head {head} {hash:#x}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

fn secret(name: &str) -> alloy::primitives::B256 {
    alloy::primitives::keccak256(format!("secret-{name}"))
}

async fn commit(
    driver: &mut Driver,
    d: &Deployment,
    name: &str,
    owner: alloy::primitives::Address,
) {
    let commitment = driver
        .read(
            d.controller,
            IController::makeCommitmentWithConfigCall {
                name: name.into(),
                owner,
                secret: secret(name),
                resolver: d.resolver,
                addr: owner,
            },
        )
        .await
        .unwrap();
    driver
        .call_tx(owner, d.controller, IController::commitCall { commitment }, "commit")
        .await
        .unwrap();
}

/// Queues a controller registration of `name.eth`; mined with the branch's first block.
async fn register(
    driver: &mut Driver,
    d: &Deployment,
    name: &str,
    owner: alloy::primitives::Address,
) {
    let call = IController::registerWithConfigCall {
        name: name.into(),
        owner,
        duration: alloy::primitives::U256::from(ensemble_devkit::devnet::scenario::YEAR),
        secret: secret(name),
        resolver: d.resolver,
        addr: owner,
    };
    let value = alloy::primitives::U256::from(10u128.pow(18));
    driver
        .send(
            owner,
            Some(d.controller),
            alloy::sol_types::SolCall::abi_encode(&call),
            value,
            "register",
        )
        .await
        .unwrap();
}

async fn reorgs_at_depths_equal_a_fresh_index(backend: Backend, chain_id: u64) {
    let (anvil, mut driver, scenario) =
        support::devnet(chain_id, ScenarioOptions { eth_names: 12, per_block: 12 }).await;
    let d = scenario.deployment;
    let mut chain = d.chain_config(chain_id, &anvil.url);
    chain.finality_depth = FINALITY;
    chain.poll_interval_ms = 20;
    let db = TestDb::new(backend).await;
    let service = Service::start(&support::config(&db.url, chain.clone())).await.unwrap();
    wait_for_hash(&service.db, chain_id, &driver).await;

    // name010.eth belongs to accounts[1 + 10 % 5] and has the scenario's resolver.
    let owner = driver.accounts[1];
    let mut reorgs = 0;
    for depth in [1, 2, 5, FINALITY - 1] {
        // Commitments in the common chain; each branch then registers its own .eth name.
        let orphan_name = format!("orphan{depth}name");
        let canon_name = format!("canon{depth}name");
        commit(&mut driver, &d, &orphan_name, owner).await;
        commit(&mut driver, &d, &canon_name, owner).await;
        driver.mine().await.unwrap();
        driver
            .increase_time(ensemble_devkit::devnet::deploy::MIN_COMMITMENT_AGE + 1)
            .await
            .unwrap();
        driver.mine().await.unwrap();
        wait_for_hash(&service.db, chain_id, &driver).await;

        let snapshot = driver.snapshot().await.unwrap();
        register(&mut driver, &d, &orphan_name, owner).await;
        support::activity(&mut driver, &d, owner, "name010", depth, &format!("orphan{depth}"))
            .await;
        wait_for_hash(&service.db, chain_id, &driver).await;
        driver.revert(&snapshot).await.unwrap();
        register(&mut driver, &d, &canon_name, owner).await;
        support::activity(&mut driver, &d, owner, "name010", depth + 1, &format!("canon{depth}"))
            .await;
        wait_for_hash(&service.db, chain_id, &driver).await;
        reorgs += 1;
        let metrics = ensemble::metrics::install().render();
        assert!(
            metrics.contains(&format!("ensemble_reorgs_total{{chain=\"{chain_id}\"}} {reorgs}")),
            "depth {depth}: {metrics}"
        );
    }
    let actual = ensemble::dump::dump(&service.db).await.unwrap();
    assert!(
        support::name_search_matches(&service.db).await,
        "the name search forgot the orphaned names"
    );
    // The journal holds only the unfinalized tail of the chain.
    let head = alloy::providers::Provider::get_block_number(driver.provider()).await.unwrap();
    let windows = ensemble::store::journal::windows(&service.db, chain_id.into()).await.unwrap();
    assert!(!windows.is_empty(), "blocks near the head are journaled");
    assert!(
        windows.iter().all(|w| w.window_end as u64 + FINALITY + 1 >= head),
        "final windows are pruned: {windows:?} at head {head}"
    );
    service.stop().await;

    let fresh = TestDb::new(Backend::Sqlite).await;
    let service = Service::start(&support::config(&fresh.url, chain)).await.unwrap();
    wait_for_hash(&service.db, chain_id, &driver).await;
    let expected = ensemble::dump::dump(&service.db).await.unwrap();
    service.stop().await;
    eprintln!(
        "canon texts: {}, orphan texts: {}",
        actual.matches("https://canon").count(),
        actual.matches("https://orphan").count()
    );
    assert!(actual.contains("https://canon"), "the canonical branch's records are indexed");
    assert!(
        actual.contains("canon1name") && !actual.contains("orphan1name"),
        "registrations follow the canonical branch"
    );
    assert!(!actual.contains("https://orphan"), "no record of an orphaned block survives");
    assert_eq!(actual.lines().count(), expected.lines().count(), "row counts differ after reorgs");
    assert!(actual == expected, "state after reorgs differs from a fresh index of the final chain");
}

crate::support::on_both_engines!(reorgs_at_depths_equal_a_fresh_index, 31_420);
