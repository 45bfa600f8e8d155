//! Resolution of bridged names (`*.base.eth` on a second chain, like Basenames): the L1 name
//! `base.eth` has a CCIP-Read bridge resolver whose gateway answers from the L2's registry and
//! resolvers. From the index, the walk crosses the bridge and reads the L2's indexed records;
//! live, the bridge resolver is called on the L1 and the gateway reads the L2. Both answers,
//! and direct `eth_call`s on the L2 resolver, agree.

use alloy::{ens::namehash, primitives::U256, sol_types::SolValue};
use ensemble::{Service, config::BridgeConfig};
use ensemble_devkit::devnet::{
    Anvil, Deployment, Driver,
    bridged::BridgedDeployment,
    contracts::{IRegistry, IResolver},
    install, solidity,
};
use serde_json::Value;

use crate::{
    gateway::{self, Gateway, Rule, deploy, resolve},
    reorg::wait_for_hash,
    support::{self, Backend, TestDb},
};

const RECORDS: &str = "addresses=60,0&texts=url&contenthash=true";

fn hex_or_null(bytes: &[u8]) -> Value {
    if bytes.is_empty() { Value::Null } else { Value::String(format!("0x{}", hex::encode(bytes))) }
}

async fn bridged_names_resolve_both_ways(backend: Backend, l1_id: u64) {
    let l2_id = l1_id + 10;
    // The L2: a Basenames-like registry and registrar, and a public resolver.
    let l2 = Anvil::spawn(l2_id).await.unwrap();
    let mut l2_driver = Driver::new(l2.provider()).await.unwrap();
    let d2 = BridgedDeployment::deploy(&mut l2_driver, "base").await.unwrap();
    let dir = install::ensure_installed().unwrap();
    let code = install::bytecode(&dir, "resolver", "PublicResolver").unwrap();
    let l2_resolver = deploy(&mut l2_driver, code, d2.registry.abi_encode()).await;
    let holder = l2_driver.accounts[2];
    d2.register(&mut l2_driver, &["alice", "bob"], holder).await.unwrap();
    let alice = namehash("alice.base.eth");
    l2_driver
        .call_tx(
            holder,
            d2.registry,
            IRegistry::setResolverCall { node: alice, resolver: l2_resolver },
            "resolver",
        )
        .await
        .unwrap();
    l2_driver.mine().await.unwrap();
    l2_driver
        .call_tx(holder, l2_resolver, IResolver::setAddr_0Call { node: alice, a: holder }, "addr")
        .await
        .unwrap();
    let text = IResolver::setTextCall {
        node: alice,
        key: "url".into(),
        value: "https://alice.base".into(),
    };
    l2_driver.call_tx(holder, l2_resolver, text, "text").await.unwrap();
    l2_driver.mine().await.unwrap();

    // The L1: base.eth with a bridge resolver whose gateway reads the L2.
    let l1 = Anvil::spawn(l1_id).await.unwrap();
    let mut l1_driver = Driver::new(l1.provider()).await.unwrap();
    let d1 = Deployment::deploy(&mut l1_driver).await.unwrap();
    let base =
        gateway::start(Gateway { provider: l2.provider(), rule: Rule::Registry(d2.registry) });
    let offchain = solidity::bytecode("OffchainResolver.sol", "OffchainResolver").unwrap();
    let bridge =
        deploy(&mut l1_driver, offchain, (vec![format!("{base}/ok")],).abi_encode_params()).await;
    d1.register_names(&mut l1_driver, &["base"], d1.deployer).await.unwrap();
    let set = IRegistry::setResolverCall { node: namehash("base.eth"), resolver: bridge };
    l1_driver.call_tx(d1.deployer, d1.registry, set, "bridge resolver").await.unwrap();
    l1_driver.mine().await.unwrap();

    let l1_chain = d1.chain_config(l1_id, &l1.url);
    let mut l2_chain = d2.chain_config(
        l2_id,
        &l2.url,
        BridgeConfig { origin_chain: l1_id.into(), origin_registry: d1.registry, resolver: bridge },
        vec![],
    );
    l2_chain.static_resolvers = vec![l2_resolver];
    let db = TestDb::new(backend).await;
    let mut config = support::config_of(&db.url, vec![l1_chain, l2_chain]);
    // The gateway is on loopback.
    config.resolution.gateway_private_addresses = true;
    let service = Service::start(&config).await.unwrap();
    wait_for_hash(&service.db, l1_id, &l1_driver).await;
    wait_for_hash(&service.db, l2_id, &l2_driver).await;
    let api = format!("http://{}/", service.http_addr);
    let client = crate::support::http_client();

    // alice: from the L2's index, and through the bridge live; the same records, the L2's.
    let (status, index) = resolve(&client, &api, "alice.base.eth", RECORDS).await;
    assert_eq!(status, 200, "{index}");
    assert_eq!(index["answered"]["source"], "index", "{index}");
    assert_eq!(index["resolver"]["chainId"], l2_id);
    assert_eq!(index["resolver"]["address"], format!("{l2_resolver:#x}"));
    let (_, live) =
        resolve(&client, &api, "alice.base.eth", &format!("{RECORDS}&accelerate=false")).await;
    assert_eq!(live["answered"]["source"], "live");
    assert_eq!(live["resolver"]["address"], format!("{bridge:#x}"));
    assert_eq!(live["resolver"]["foundAt"], "base.eth");
    assert_eq!(index["records"], live["records"], "index and live differ");
    let addr = l2_driver.read(l2_resolver, IResolver::addr_0Call { node: alice }).await.unwrap();
    let url = IResolver::textCall { node: alice, key: "url".into() };
    let url = l2_driver.read(l2_resolver, url).await.unwrap();
    let btc = IResolver::addr_1Call { node: alice, coinType: U256::ZERO };
    let btc = l2_driver.read(l2_resolver, btc).await.unwrap();
    let hash =
        l2_driver.read(l2_resolver, IResolver::contenthashCall { node: alice }).await.unwrap();
    assert_eq!(index["records"]["addresses"][0]["address"], format!("{addr:#x}"));
    assert_eq!(index["records"]["addresses"][1]["address"], hex_or_null(&btc));
    assert_eq!(index["records"]["texts"][0]["value"], url);
    assert_eq!(index["records"]["contenthash"], hex_or_null(&hash));

    // bob has no resolver on the L2: the bridge resolver decides, so it goes live, and finds
    // nothing. base.eth itself: the bridge resolver's own records, live.
    for name in ["bob.base.eth", "base.eth"] {
        let (status, answer) = resolve(&client, &api, name, RECORDS).await;
        assert_eq!(status, 200, "{answer}");
        assert_eq!(answer["answered"]["source"], "live", "{name}: {answer}");
        let records = &answer["records"];
        assert_eq!(records["errors"], Value::Array(vec![]), "{name}: {answer}");
        assert!(records["addresses"].as_array().unwrap().iter().all(|a| a["address"].is_null()));
        assert!(records["texts"][0]["value"].is_null(), "{name}");
    }
    service.stop().await;
}

crate::support::on_both_engines!(bridged_names_resolve_both_ways, 31_650);
