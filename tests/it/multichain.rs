//! Two chains, one namegraph, on two anvils: an L1 with the devnet ENS deployment and an L2
//! with a Basenames-like registry and base registrar under `base.eth`
//! (`devnet::bridged`), plus ENSIP-19 reverse-registrar logs on the L2.
//!
//! - `*.base.eth` names of the L2 are canonical while the L1's `base.eth` has the bridge's
//!   resolver, not before and not after it is removed; meanwhile the L1's own names below
//!   `base.eth` are canonical exactly when they are not.
//! - Indexing L1 then L2, L2 then L1, or both at once gives the same database.
//! - Primary names per coin type come from the L2 reverse registrar, with the default
//!   registrar's as fallback.

use std::time::{Duration, Instant};

use alloy::{
    ens::namehash,
    primitives::{Address, U256, keccak256},
    sol_types::SolEvent,
};
use ensemble::{
    Config, Service,
    config::{BridgeConfig, ContractConfig},
    ens::{
        abi::ReverseRegistrar,
        name::{encoded_label_hash, labelhash},
        reverse_registrar::evm_coin_type,
        role::ContractRole,
    },
};
use ensemble_devkit::devnet::{
    Anvil, Deployment, Driver, bridged::BridgedDeployment, contracts::IRegistry,
};
use entities::{label_heal, label_heal_mark};
use sea_orm::{DatabaseConnection, EntityTrait, QueryOrder};
use serde_json::Value;

use crate::support::{self, Backend, TestDb, emitter_code};

/// The L1 resolver that links `base.eth` to the L2 (any address: the registry takes it).
const BRIDGE_RESOLVER: Address = Address::repeat_byte(0xb1);

/// Both chains, deployed and populated; the bridge is not set yet.
struct TwoChains {
    _l1: Anvil,
    _l2: Anvil,
    l1_driver: Driver,
    d1: Deployment,
    l1_id: u64,
    l2_id: u64,
    l1_last: u64,
    l2_last: u64,
    chains: Vec<ensemble::config::ChainConfig>,
    /// Owner of the L2 names and of their primary name.
    holder: Address,
    /// An account with only a default (L1) primary name.
    default_only: Address,
}

/// `NameForAddrChanged(addr, name)` as emitter calldata.
fn name_for_addr(addr: Address, name: &str) -> Vec<u8> {
    let log =
        ReverseRegistrar::NameForAddrChanged { addr, name: name.to_owned() }.encode_log_data();
    [log.topics()[0].as_slice(), log.topics()[1].as_slice(), &log.data].concat()
}

async fn deploy_emitter(driver: &mut Driver, from: Address) -> Address {
    let nonce =
        alloy::providers::Provider::get_transaction_count(driver.provider(), from).await.unwrap();
    driver.send(from, None, emitter_code(), U256::ZERO, "deploy emitter").await.unwrap();
    driver.mine().await.unwrap();
    from.create(nonce)
}

impl TwoChains {
    async fn new(l1_id: u64, l2_id: u64) -> Self {
        let l1 = Anvil::spawn(l1_id).await.unwrap();
        let mut l1_driver = Driver::new(l1.provider()).await.unwrap();
        let d1 = Deployment::deploy(&mut l1_driver).await.unwrap();
        let deployer = d1.deployer;
        // base.eth and alice.eth through the controller, whose events name the labels, and a
        // name of the L1's own below base.eth.
        d1.register_names(&mut l1_driver, &["base", "alice"], deployer).await.unwrap();
        l1_driver
            .call_tx(
                deployer,
                d1.registry,
                IRegistry::setSubnodeOwnerCall {
                    node: namehash("base.eth"),
                    label: keccak256("l1only"),
                    owner: deployer,
                },
                "l1only.base.eth",
            )
            .await
            .unwrap();
        l1_driver.mine().await.unwrap();
        // The default reverse registrar on the L1 (ENSIP-19 logs from an emitter).
        let l1_reverse = deploy_emitter(&mut l1_driver, deployer).await;
        let default_only = l1_driver.accounts[3];
        let holder = l1_driver.accounts[2];
        for (who, name) in [(default_only, "alice.eth"), (holder, "alice.eth")] {
            l1_driver
                .send(deployer, Some(l1_reverse), name_for_addr(who, name), U256::ZERO, "default")
                .await
                .unwrap();
        }
        let l1_last = l1_driver.mine().await.unwrap();

        let l2 = Anvil::spawn(l2_id).await.unwrap();
        let mut l2_driver = Driver::new(l2.provider()).await.unwrap();
        let d2 = BridgedDeployment::deploy(&mut l2_driver, "base").await.unwrap();
        d2.register(&mut l2_driver, &["alice", "bob"], holder).await.unwrap();
        let l2_reverse = deploy_emitter(&mut l2_driver, d2.deployer).await;
        l2_driver
            .send(
                d2.deployer,
                Some(l2_reverse),
                name_for_addr(holder, "alice.base.eth"),
                U256::ZERO,
                "L2 primary name",
            )
            .await
            .unwrap();
        let l2_last = l2_driver.mine().await.unwrap();

        let mut l1_chain = d1.chain_config(l1_id, &l1.url);
        l1_chain.contracts.push(ContractConfig::new(ContractRole::ReverseRegistrar, l1_reverse));
        let l2_chain = d2.chain_config(
            l2_id,
            &l2.url,
            BridgeConfig {
                origin_chain: l1_id.into(),
                origin_registry: d1.registry,
                resolver: BRIDGE_RESOLVER,
            },
            vec![ContractConfig::new(ContractRole::ReverseRegistrar, l2_reverse)],
        );
        Self {
            _l1: l1,
            _l2: l2,
            l1_driver,
            d1,
            l1_id,
            l2_id,
            l1_last,
            l2_last,
            chains: vec![l1_chain, l2_chain],
            holder,
            default_only,
        }
    }

    /// Sets the L1 `base.eth` resolver and mines; returns the block.
    async fn set_base_resolver(&mut self, resolver: Address) -> u64 {
        let call = IRegistry::setResolverCall { node: namehash("base.eth"), resolver };
        self.l1_driver
            .call_tx(self.d1.deployer, self.d1.registry, call, "base.eth resolver")
            .await
            .unwrap();
        self.l1_last = self.l1_driver.mine().await.unwrap();
        self.l1_last
    }

    fn config(&self, url: &str, only: Option<u64>) -> Config {
        let mut config = support::config_of(url, self.chains.clone());
        if let Some(id) = only {
            config.retain_chains(&[id.into()]).unwrap();
        }
        config
    }
}

/// Waits until every chain has applied every heal-log entry (the log is pruned as they do).
async fn wait_for_heals(db: &DatabaseConnection, chains: &[u64]) {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let newest = label_heal::Entity::find()
            .order_by_desc(label_heal::Column::Seq)
            .one(db)
            .await
            .unwrap()
            .map(|h| h.seq);
        let marks = label_heal_mark::Entity::find().all(db).await.unwrap();
        let applied = |chain: u64| {
            marks.iter().any(|m| m.chain_id == chain as i64 && Some(m.applied) >= newest)
        };
        if newest.is_none() || chains.iter().all(|c| applied(*c)) {
            return;
        }
        assert!(Instant::now() < deadline, "heals not applied: newest {newest:?}, marks {marks:?}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Runs `chain` (or every chain) until each is at its last block and every heal is applied.
async fn index(net: &TwoChains, url: &str, only: Option<u64>) {
    let service = Service::start(&net.config(url, only)).await.unwrap();
    let ids: Vec<u64> = only.map_or(vec![net.l1_id, net.l2_id], |id| vec![id]);
    for id in &ids {
        let last = if *id == net.l1_id { net.l1_last } else { net.l2_last };
        support::wait_for_block(&service.db, *id, last).await;
    }
    wait_for_heals(&service.db, &ids).await;
    service.shutdown(Duration::from_secs(30)).await;
}

async fn query(db: &DatabaseConnection, text: &str) -> Value {
    let response = graphql::build_schema(db.clone()).execute(text).await;
    assert!(response.errors.is_empty(), "{text}: {:?}", response.errors);
    response.data.into_json().unwrap()
}

/// The canonical name of the domain called `name`, with its chain and parent's name; null
/// when no canonical domain has it.
async fn canonical(db: &DatabaseConnection, name: &str) -> Value {
    let text = format!(
        r#"{{ domain(by: {{name: "{name}"}}) {{ id canonical {{ name {{ interpreted }} }} parent {{ canonical {{ name {{ interpreted }} }} }} }} }}"#
    );
    query(db, &text).await["domain"].clone()
}

async fn subdomains(db: &DatabaseConnection, name: &str) -> Vec<String> {
    let text = format!(
        r#"{{ domain(by: {{name: "{name}"}}) {{ subregistry {{ id }} subdomains {{ edges {{ node {{ canonical {{ name {{ interpreted }} }} }} }} }} }} }}"#
    );
    let data = query(db, &text).await;
    data["domain"]["subdomains"]["edges"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["node"]["canonical"]["name"]["interpreted"].as_str().unwrap_or("-").to_owned())
        .collect()
}

async fn starting_with(db: &DatabaseConnection, prefix: &str) -> Vec<String> {
    let text = format!(
        r#"{{ domains(where: {{name: {{starts_with: "{prefix}"}}}}, order: {{by: NAME, dir: ASC}}) {{ edges {{ node {{ canonical {{ name {{ interpreted }} }} }} }} }} }}"#
    );
    query(db, &text).await["domains"]["edges"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["node"]["canonical"]["name"]["interpreted"].as_str().unwrap().to_owned())
        .collect()
}

async fn primary_name(db: &DatabaseConnection, account: Address, coin_type: u64) -> Value {
    let text = format!(
        r#"{{ account(by: {{address: "{account:#x}"}}) {{ reverseRecords {{ primaryName(by: {{coinType: {coin_type}}}) {{ coinType name {{ interpreted }} }} }} }} }}"#
    );
    query(db, &text).await["account"]["reverseRecords"]["primaryName"]["name"]["interpreted"]
        .clone()
}

#[actix_rt::test]
async fn l2_names_are_canonical_exactly_while_the_bridge_is_up() {
    let mut net = TwoChains::new(31_491, 31_492).await;
    let db = TestDb::new(Backend::Postgres).await;
    let service = Service::start(&net.config(&db.url, None)).await.unwrap();
    let conn = service.db.clone();
    support::wait_for_block(&conn, net.l1_id, net.l1_last).await;
    support::wait_for_block(&conn, net.l2_id, net.l2_last).await;
    wait_for_heals(&conn, &[net.l1_id, net.l2_id]).await;
    let l2_prefix = format!("{}-", net.l2_id);
    let l1_prefix = format!("{}-", net.l1_id);
    // Created with setSubnodeOwner: no event spells its label out.
    let l1only = format!("{}.base.eth", encoded_label_hash(labelhash("l1only")));

    // Before the link: the L2's names are indexed (healed from the L1's labels) but not
    // canonical; the L1's own name below base.eth is.
    assert_eq!(canonical(&conn, "alice.base.eth").await, Value::Null);
    assert_eq!(subdomains(&conn, "base.eth").await, [l1only.as_str()]);
    assert_eq!(starting_with(&conn, "alice").await, ["alice.eth"]);
    let l2_alice = format!(
        r#"{{ domains: account(by: {{address: "{:#x}"}}) {{ domains(where: {{canonical: false}}) {{ edges {{ node {{ id canonical {{ name {{ interpreted }} }} }} }} }} }} }}"#,
        net.holder
    );
    let not_canonical = query(&conn, &l2_alice).await;
    let edges = not_canonical["domains"]["domains"]["edges"].as_array().unwrap().clone();
    assert_eq!(edges.len(), 2, "alice and bob on the L2: {edges:?}");
    assert!(edges.iter().all(|e| e["node"]["id"].as_str().unwrap().starts_with(&l2_prefix)));
    assert!(edges.iter().all(|e| e["node"]["canonical"].is_null()));

    // The link: base.eth on the L1 gets the bridge's resolver.
    let up = net.set_base_resolver(BRIDGE_RESOLVER).await;
    support::wait_for_block(&conn, net.l1_id, up).await;
    let alice = canonical(&conn, "alice.base.eth").await;
    assert!(alice["id"].as_str().unwrap().starts_with(&l2_prefix), "{alice}");
    assert_eq!(alice["canonical"]["name"]["interpreted"], "alice.base.eth");
    assert_eq!(alice["parent"]["canonical"]["name"]["interpreted"], "base.eth");
    let parent =
        query(&conn, r#"{ domain(by: {name: "alice.base.eth"}) { parent { id } } }"#).await;
    assert!(
        parent["domain"]["parent"]["id"].as_str().unwrap().starts_with(&l1_prefix),
        "the canonical parent is the L1's base.eth: {parent}"
    );
    // bob's label is known to neither chain: its name shows the hash (and sorts first).
    let bob = format!("{}.base.eth", encoded_label_hash(labelhash("bob")));
    assert_eq!(subdomains(&conn, "base.eth").await, [bob, "alice.base.eth".to_owned()]);
    let subregistry =
        query(&conn, r#"{ domain(by: {name: "base.eth"}) { subregistry { id } } }"#).await;
    assert!(
        subregistry["domain"]["subregistry"]["id"].as_str().unwrap().starts_with(&l2_prefix),
        "{subregistry}"
    );
    assert_eq!(canonical(&conn, &l1only).await, Value::Null);
    assert_eq!(starting_with(&conn, "alice").await, ["alice.base.eth", "alice.eth"]);

    // Primary names: the L2's own for its coin type, the default registrar's otherwise.
    let l2_coin = evm_coin_type(net.l2_id.into());
    assert_eq!(primary_name(&conn, net.holder, l2_coin).await, "alice.base.eth");
    assert_eq!(primary_name(&conn, net.default_only, l2_coin).await, "alice.eth");
    assert_eq!(primary_name(&conn, net.holder, 0x8000_0000).await, "alice.eth");
    assert_eq!(primary_name(&conn, Address::repeat_byte(0x77), l2_coin).await, Value::Null);
    let many = query(
        &conn,
        &format!(
            r#"{{ account(by: {{address: "{:#x}"}}) {{ reverseRecords {{ primaryNames(where: {{coinTypes: [{l2_coin}, 2147483648]}}) {{ coinType name {{ interpreted }} }} }} }} }}"#,
            net.holder
        ),
    )
    .await;
    let names: Vec<&str> = many["account"]["reverseRecords"]["primaryNames"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["name"]["interpreted"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["alice.base.eth", "alice.eth"]);

    // The link removed: back to the L1's own names.
    let down = net.set_base_resolver(Address::ZERO).await;
    support::wait_for_block(&conn, net.l1_id, down).await;
    assert_eq!(canonical(&conn, "alice.base.eth").await, Value::Null);
    assert_eq!(subdomains(&conn, "base.eth").await, [l1only.as_str()]);
    assert_eq!(canonical(&conn, &l1only).await["canonical"]["name"]["interpreted"], *l1only);
    service.shutdown(Duration::from_secs(30)).await;
}

#[actix_rt::test]
async fn the_namegraph_does_not_depend_on_the_order_chains_are_indexed() {
    let mut net = TwoChains::new(31_493, 31_494).await;
    net.set_base_resolver(BRIDGE_RESOLVER).await;
    let (l1, l2) = (Some(net.l1_id), Some(net.l2_id));
    let mut dumps = Vec::new();
    for (what, order) in [
        ("L1 then L2", vec![l1, l2, None]),
        ("L2 then L1", vec![l2, l1, None]),
        ("both at once", vec![None]),
    ] {
        let db = TestDb::new(Backend::Sqlite).await;
        for only in order {
            index(&net, &db.url, only).await;
        }
        let conn = sea_orm::Database::connect(&db.url).await.unwrap();
        let alice = canonical(&conn, "alice.base.eth").await;
        assert_eq!(alice["canonical"]["name"]["interpreted"], "alice.base.eth", "{what}");
        dumps.push((what, ensemble::dump::dump(&conn).await.unwrap()));
    }
    let (first, reference) = &dumps[0];
    for (what, dump) in &dumps[1..] {
        assert!(
            dump == reference,
            "{what} differs from {first}:\n{}",
            first_difference(reference, dump)
        );
    }
    // Both chains' domains and events are in it.
    for chain in [net.l1_id, net.l2_id] {
        assert!(reference.contains(&format!("\"{chain}-0x")), "chain {chain} in the dump");
    }
}

/// The first line where two dumps differ.
fn first_difference(a: &str, b: &str) -> String {
    a.lines()
        .zip(b.lines())
        .find(|(x, y)| x != y)
        .map_or_else(|| "one is a prefix of the other".to_owned(), |(x, y)| format!("{x}\n{y}"))
}

#[actix_rt::test]
async fn a_chain_without_an_rpc_endpoint_is_reported_and_the_others_run() {
    let l1 = Anvil::spawn(31_495).await.unwrap();
    let mut driver = Driver::new(l1.provider()).await.unwrap();
    let d1 = Deployment::deploy(&mut driver).await.unwrap();
    let last = driver.mine().await.unwrap();
    let mut absent = d1.chain_config(31_496, "");
    absent.rpc_url = None;
    absent.name = "absent".into();
    let db = TestDb::new(Backend::Sqlite).await;
    let config = support::config_of(&db.url, vec![d1.chain_config(31_495, &l1.url), absent]);
    assert_eq!(config.chains_without_rpc().len(), 1);
    let service = Service::start(&config).await.unwrap();
    support::wait_for_block(&service.db, 31_495, last).await;
    let deadline = Instant::now() + Duration::from_secs(30);
    let status = loop {
        let data = query(&service.db, "{ indexingStatus { chainId phase error } }").await;
        let row = data["indexingStatus"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["chainId"] == 31_496)
            .cloned();
        if let Some(row) = row {
            break row;
        }
        assert!(Instant::now() < deadline, "no status for the chain without an endpoint");
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    assert_eq!(status["phase"], "failed", "{status}");
    assert!(status["error"].as_str().unwrap().contains("RPC_URL_31496"), "{status}");
    service.shutdown(Duration::from_secs(30)).await;
}
