//! Resolution through resolvers the index cannot answer for: an ENSIP-10 wildcard resolver on
//! a parent (names below it with no resolver of their own, not indexed at all) and EIP-3668
//! CCIP-Read resolvers answered by a local gateway, then the hostile cases: a resolver that
//! reverts or runs out of gas, gateways that are slow, huge, redirect in a loop, answer for
//! another request, fail with 5xx (the next URL is tried) or 4xx (it is not), and a callback
//! that asks again forever. Every one gets its stable code, in bounded time, and the server
//! keeps serving. Expected records come from `eth_call`s on the chain.

use std::time::{Duration, Instant};

use alloy::{
    primitives::{Address, B256, keccak256},
    providers::RootProvider,
    sol_types::{SolCall, SolValue},
};
use ensemble::Service;
use ensemble_devkit::devnet::{contracts::IRegistry, scenario::ScenarioOptions, solidity};
use serde_json::Value;

use crate::{
    gateway::{self, Gateway, Rule, deploy, dns, resolve},
    reorg::wait_for_hash,
    support::{self, Backend, TestDb},
};

alloy::sol! {
    interface IRecordCalls {
        function addr(bytes32 node) external view returns (address);
        function text(bytes32 node, string key) external view returns (string);
        function contenthash(bytes32 node) external view returns (bytes);
    }
}

/// The records the test asks for, as the API renders them, computed by `eth_call`s of the
/// wildcard resolver's rule for `name`.
async fn expected(provider: &RootProvider, wildcard: Address, name: &str) -> Value {
    let rule = Gateway { provider: provider.clone(), rule: Rule::Wildcard(wildcard) };
    let node = alloy::ens::namehash(name);
    let encoded = dns(name);
    let addr = rule.answer(&encoded, &IRecordCalls::addrCall { node }.abi_encode()).await;
    let addr = IRecordCalls::addrCall::abi_decode_returns(&addr).unwrap();
    let text = IRecordCalls::textCall { node, key: "url".into() }.abi_encode();
    let url = IRecordCalls::textCall::abi_decode_returns(&rule.answer(&encoded, &text).await);
    let hash = rule.answer(&encoded, &IRecordCalls::contenthashCall { node }.abi_encode()).await;
    let hash = IRecordCalls::contenthashCall::abi_decode_returns(&hash).unwrap();
    serde_json::json!({
        "addresses": [{ "coinType": 60, "address": format!("{addr:#x}") }, { "coinType": 0, "address": null }],
        "texts": [{ "key": "url", "value": url.unwrap() }],
        "contenthash": format!("0x{}", hex::encode(hash)),
        "name": null, "pubkey": null, "abi": null, "interfaces": [], "errors": [],
    })
}

const RECORDS: &str = "addresses=60,0&texts=url&contenthash=true";

async fn wildcards_and_offchain_lookups(backend: Backend, chain_id: u64) {
    let (anvil, mut driver, scenario) =
        support::devnet(chain_id, ScenarioOptions { eth_names: 12, per_block: 12 }).await;
    let d = scenario.deployment;
    let wildcard = deploy(
        &mut driver,
        solidity::bytecode("WildcardResolver.sol", "WildcardResolver").unwrap(),
        vec![],
    )
    .await;
    let gateway =
        gateway::start(Gateway { provider: anvil.provider(), rule: Rule::Wildcard(wildcard) });
    let offchain = solidity::bytecode("OffchainResolver.sol", "OffchainResolver").unwrap();
    // Each offchain resolver's gateways, by the `.test` name it serves.
    let gateways: Vec<(&str, Vec<String>)> = vec![
        ("ccip", vec![format!("{gateway}/fail"), format!("{gateway}/ok")]),
        ("ccipget", vec![format!("{gateway}/get/{{sender}}/{{data}}.json")]),
        ("slow", vec![format!("{gateway}/slow")]),
        ("huge", vec![format!("{gateway}/huge")]),
        ("loop", vec![format!("{gateway}/loop")]),
        ("wrong", vec![format!("{gateway}/wrong")]),
        ("refused", vec![format!("{gateway}/refused"), format!("{gateway}/ok")]),
    ];
    let deployer = driver.accounts[0];
    let record = |node: B256, label: &str, resolver: Address| IRegistry::setSubnodeRecordCall {
        node,
        label: keccak256(label),
        owner: deployer,
        resolver,
        ttl: 0,
    };
    // Deployed first: `deploy` reads the deployer's nonce from the chain, which does not count
    // transactions still waiting for a block.
    let mut resolvers = vec![("wild", wildcard)];
    for (label, urls) in &gateways {
        let args = (urls.clone(),).abi_encode_params();
        resolvers.push((*label, deploy(&mut driver, offchain.clone(), args).await));
    }
    driver
        .call_tx(deployer, d.registry, record(B256::ZERO, "test", Address::ZERO), "test")
        .await
        .unwrap();
    driver.mine().await.unwrap();
    let test = alloy::ens::namehash("test");
    for (label, resolver) in resolvers {
        driver.call_tx(deployer, d.registry, record(test, label, resolver), label).await.unwrap();
    }
    driver.mine().await.unwrap();
    // An indexed child of the wildcard's name with no resolver of its own.
    let wild = alloy::ens::namehash("wild.test");
    driver.call_tx(deployer, d.registry, record(wild, "sub", Address::ZERO), "sub").await.unwrap();
    driver.mine().await.unwrap();

    let db = TestDb::new(backend).await;
    let mut config = support::config(&db.url, d.chain_config(chain_id, &anvil.url));
    config.resolution.gateway_timeout_ms = 500;
    // The gateway is on loopback.
    config.resolution.gateway_private_addresses = true;
    // The gateway is on loopback.
    config.resolution.gateway_private_addresses = true;
    config.resolution.timeout_ms = 5_000;
    let service = Service::start(&config).await.unwrap();
    wait_for_hash(&service.db, chain_id, &driver).await;
    let base = format!("http://{}/", service.http_addr);
    let client = crate::support::http_client();
    let provider = anvil.provider();

    // The wildcard: on its own name, on an indexed child without a resolver, and on names the
    // index has never seen. The index declines (not a static resolver); the answer is live
    // either way and equals the resolver's rule computed on chain.
    for name in ["wild.test", "sub.wild.test", "a.b.wild.test", "name001.wild.test"] {
        let (status, index) = resolve(&client, &base, name, RECORDS).await;
        assert_eq!(status, 200, "{name}: {index}");
        let (_, live) = resolve(&client, &base, name, &format!("{RECORDS}&accelerate=false")).await;
        assert_eq!(index["records"], live["records"], "{name}");
        assert_eq!(index["answered"]["source"], "live", "{name}");
        assert!(
            index["answered"]["liveBecause"].as_str().unwrap().contains("not a static resolver"),
            "{index}"
        );
        assert_eq!(index["resolver"]["address"], format!("{wildcard:#x}"));
        assert_eq!(index["resolver"]["foundAt"], "wild.test");
        assert_eq!(index["resolver"]["extended"], true);
        assert_eq!(index["records"], expected(&provider, wildcard, name).await, "{name}");
    }
    // Over GraphQL: a name below the wildcard has no domain, and resolves.
    let query = r#"{ domain(by: {name: "a.b.wild.test"}) { id }
      resolveName(name: "a.b.wild.test") { records(addresses: [60], texts: ["url"], contenthash: true) {
        records { texts { key value } } resolver { address foundAt extended } answered { source } } } }"#;
    let data = crate::resolution::graphql(&client, &base, query, serde_json::json!({})).await;
    assert!(data["domain"].is_null(), "{data}");
    let resolved = &data["resolveName"]["records"];
    let want = expected(&provider, wildcard, "a.b.wild.test").await;
    assert_eq!(resolved["records"]["texts"], want["texts"]);
    assert_eq!(resolved["resolver"]["foundAt"], "wild.test");
    assert_eq!(resolved["answered"]["source"], "LIVE");

    // CCIP-Read, by POST after a 5xx of the first URL, and by GET.
    for name in ["x.ccip.test", "y.z.ccipget.test"] {
        let (status, answer) =
            resolve(&client, &base, name, &format!("{RECORDS}&trace=true")).await;
        assert_eq!(status, 200, "{name}: {answer}");
        assert_eq!(answer["records"], expected(&provider, wildcard, name).await, "{name}");
        let steps: Vec<&str> =
            answer["trace"].as_array().unwrap().iter().filter_map(|s| s["step"].as_str()).collect();
        assert!(steps.contains(&"ccip.lookup") && steps.contains(&"ccip.gateway"), "{steps:?}");
    }

    // Hostile resolvers and gateways: every record fails with its code, quickly.
    let cases = [
        ("revert.wild.test", "RESOLVER_REVERTED", "refused"),
        ("loop.wild.test", "RESOLVER_REVERTED", ""),
        ("bounce.ccip.test", "CCIP_READ_REFUSED", "lookups"),
        ("x.slow.test", "GATEWAY_FAILED", "timed out"),
        ("x.huge.test", "GATEWAY_FAILED", "larger than"),
        ("x.loop.test", "GATEWAY_FAILED", "redirects"),
        ("x.wrong.test", "RESOLVER_REVERTED", "another request"),
        ("x.refused.test", "GATEWAY_FAILED", "404"),
    ];
    for (name, code, says) in cases {
        let started = Instant::now();
        let (status, answer) = resolve(&client, &base, name, RECORDS).await;
        let took = started.elapsed();
        assert_eq!(status, 200, "{name}: {answer}");
        let errors = answer["records"]["errors"].as_array().unwrap();
        assert_eq!(errors.len(), 4, "{name}: every record fails: {answer}");
        for error in errors {
            assert_eq!(error["code"], code, "{name}: {error}");
            assert!(error["message"].as_str().unwrap().contains(says), "{name}: {error}");
        }
        assert!(took < Duration::from_secs(5), "{name} took {took:?}");
    }
    // Still serving, and still exact.
    let (status, answer) = resolve(&client, &base, "x.ccip.test", RECORDS).await;
    assert_eq!(status, 200);
    assert_eq!(answer["records"], expected(&provider, wildcard, "x.ccip.test").await);
    service.stop().await;
}

crate::support::on_both_engines!(wildcards_and_offchain_lookups, 31_640);
