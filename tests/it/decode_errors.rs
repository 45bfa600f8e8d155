//! Garbage on a real chain: a log that does not decode and an event for a node nobody created
//! are counted in metrics and logged with chain, block and log index, and indexing goes on.

use std::sync::{Arc, Mutex};

use alloy::{
    primitives::{Address, B256, U256, keccak256},
    sol_types::{SolEvent, SolValue},
};
use ensemble::{
    Service,
    ens::{abi::Registry, role::ContractRole},
};
use ensemble_devkit::devnet::{
    Anvil, Deployment, Driver,
    contracts::{IRegistry, IResolver},
};

use sea_orm::EntityTrait;

use crate::support::{self, Backend, TestDb, emitter_code};

#[derive(Clone, Default)]
struct Captured(Arc<Mutex<Vec<u8>>>);

impl Captured {
    /// Captures warnings logged on this thread (where the test's actix system runs the
    /// actors) until the guard is dropped.
    fn install() -> (Self, tracing::subscriber::DefaultGuard) {
        let captured = Self::default();
        let sink = captured.clone();
        let subscriber = tracing_subscriber::fmt()
            .with_ansi(false)
            .with_max_level(tracing::Level::WARN)
            .with_writer(move || sink.clone())
            .finish();
        (captured, tracing::subscriber::set_default(subscriber))
    }

    fn text(&self) -> String {
        String::from_utf8(self.0.lock().unwrap().clone()).unwrap()
    }
}

impl std::io::Write for Captured {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[actix_rt::test]
async fn malformed_logs_and_unknown_nodes_are_counted_logged_and_skipped() {
    let (captured, _guard) = Captured::install();

    let chain_id = 31_401;
    let anvil = Anvil::spawn(chain_id).await.unwrap();
    let mut driver = Driver::new(anvil.provider()).await.unwrap();
    let d = Deployment::deploy(&mut driver).await.unwrap();
    let deployer = d.deployer;
    let nonce = alloy::providers::Provider::get_transaction_count(driver.provider(), deployer)
        .await
        .unwrap();
    driver.send(deployer, None, emitter_code(), U256::ZERO, "deploy emitter").await.unwrap();
    driver.mine().await.unwrap();
    let emitter = deployer.create(nonce);

    // NewOwner needs three topics: two do not decode. Transfer of a node nobody created
    // decodes but names an unknown node.
    let malformed = [
        Registry::NewOwner::SIGNATURE_HASH.as_slice(),
        B256::repeat_byte(1).as_slice(),
        &[0xde, 0xad],
    ]
    .concat();
    let unknown = [
        Registry::Transfer::SIGNATURE_HASH.as_slice(),
        keccak256("nobody").as_slice(),
        &Address::repeat_byte(7).abi_encode(),
    ]
    .concat();
    driver.send(deployer, Some(emitter), malformed, U256::ZERO, "malformed").await.unwrap();
    driver.send(deployer, Some(emitter), unknown, U256::ZERO, "unknown node").await.unwrap();
    let garbage_block = driver.mine().await.unwrap();
    driver
        .call_tx(
            deployer,
            d.registry,
            IRegistry::setSubnodeOwnerCall {
                node: B256::ZERO,
                label: keccak256("after"),
                owner: deployer,
            },
            "after",
        )
        .await
        .unwrap();
    let last = driver.mine().await.unwrap();

    let mut chain = d.chain_config(chain_id, &anvil.url);
    chain.contracts.retain(|c| c.role != ContractRole::RegistryOld);
    chain.contracts.push(ensemble::config::ContractConfig::new(ContractRole::RegistryOld, emitter));
    let db = TestDb::new(Backend::Sqlite).await;
    let service = Service::start(&support::config(&db.url, chain)).await.unwrap();
    support::wait_for_block(&service.db, chain_id, last).await;

    let schema = graphql::build_schema(service.db.clone());
    // "after" is not a label the indexer can know: it is found under its encoded labelhash.
    let name = ensemble::ens::name::encoded_label_hash(keccak256("after"));
    let res = schema
        .execute(format!("{{ domain(by: {{name: \"{name}\"}}) {{ owner {{ address }} }} }}"))
        .await;
    assert_eq!(
        res.data.into_json().unwrap()["domain"]["owner"]["address"],
        serde_json::json!(format!("{deployer:#x}")),
        "indexing continued past the garbage"
    );

    let metrics = ensemble::metrics::install().render();
    assert!(
        metrics.contains(&format!(
            "ensemble_logs_undecodable_total{{chain=\"{chain_id}\",contract=\"registry_old\"}} 1"
        )),
        "{metrics}"
    );
    assert!(
        metrics.contains(&format!(
            "ensemble_events_skipped_total{{chain=\"{chain_id}\",event=\"Transfer\"}} 1"
        )),
        "{metrics}"
    );

    let logs = captured.text();
    let undecodable = logs
        .lines()
        .find(|l| l.contains("Undecodable log"))
        .unwrap_or_else(|| panic!("no log line:\n{logs}"));
    let skipped = logs
        .lines()
        .find(|l| l.contains("Skipped event"))
        .unwrap_or_else(|| panic!("no log line:\n{logs}"));
    for line in [undecodable, skipped] {
        assert!(line.contains(&format!("chain={chain_id}")), "{line}");
        assert!(line.contains(&format!("block={garbage_block}")), "{line}");
        assert!(line.contains("log_index="), "{line}");
    }
    service.stop().await;
}

/// A value-less legacy `TextChanged` on a node without history: the value cannot be read at
/// the event's block, so it stays unknown (null), counted and logged; indexing continues.
#[actix_rt::test]
async fn legacy_text_without_history_is_unknown_counted_and_logged() {
    let (captured, _guard) = Captured::install();

    let chain_id = 31_405;
    let anvil = Anvil::spawn_with_history(chain_id, 1).await.unwrap();
    let mut driver = Driver::new(anvil.provider()).await.unwrap();
    let d = Deployment::deploy(&mut driver).await.unwrap();
    let owner = d.deployer;
    let label = keccak256("notes");
    let node = ensemble::ens::name::child_node(B256::ZERO, label);
    driver
        .call_tx(
            owner,
            d.registry,
            IRegistry::setSubnodeRecordCall {
                node: B256::ZERO,
                label,
                owner,
                resolver: d.resolver,
                ttl: 0,
            },
            "tld",
        )
        .await
        .unwrap();
    driver.mine().await.unwrap();
    // Both public resolvers on npm emit the legacy, value-less TextChanged.
    driver
        .call_tx(
            owner,
            d.resolver,
            IResolver::setTextCall { node, key: "url".into(), value: "https://x".into() },
            "text",
        )
        .await
        .unwrap();
    let text_block = driver.mine().await.unwrap();
    let mut last = 0;
    for _ in 0..3 {
        last = driver.mine().await.unwrap();
    }

    let db = TestDb::new(Backend::Sqlite).await;
    let service = Service::start(&support::config(&db.url, d.chain_config(chain_id, &anvil.url)))
        .await
        .unwrap();
    support::wait_for_block(&service.db, chain_id, last).await;

    let record_id: entities::resolver_record_key::ResolverRecordKey =
        format!("{chain_id}-{:#x}-{node:#x}", d.resolver).parse().unwrap();
    let key_hash = entities::raw_hex::RawHash::new(keccak256("url").0);
    let text = entities::resolver_text::Entity::find_by_id((record_id, key_hash))
        .one(&service.db)
        .await
        .unwrap()
        .expect("the text record exists");
    assert_eq!((text.key.as_str(), text.value), ("url", None));
    let metrics = ensemble::metrics::install().render();
    assert!(
        metrics.contains(&format!("ensemble_text_values_unknown_total{{chain=\"{chain_id}\"}} 1")),
        "{metrics}"
    );
    let logs = captured.text();
    let line = logs
        .lines()
        .find(|l| l.contains("Legacy text value unavailable"))
        .unwrap_or_else(|| panic!("{logs}"));
    assert!(line.contains(&format!("block={text_block}")) && line.contains("log_index="), "{line}");
    service.stop().await;
}
