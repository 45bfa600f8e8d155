//! End to end: the real contracts on anvil, a scenario of 300+ names, the real pipeline, and
//! then every name's owner, resolver, records and expiry read through GraphQL compared with
//! what the chain answers.

use alloy::primitives::Address;
use ensemble::Service;
use ensemble_devkit::devnet::{
    scenario::{ScenarioOptions, reverse_node},
    truth::{Truth, name_record},
};
use serde_json::{Value, json};

use crate::support::{self, Backend, TestDb};

async fn gql(schema: &graphql::EnsSchema, query: &str, variables: Value) -> Value {
    let request = async_graphql::Request::new(query)
        .variables(async_graphql::Variables::from_json(variables));
    let response = schema.execute(request).await;
    assert!(response.errors.is_empty(), "{query}: {:?}", response.errors);
    response.data.into_json().expect("json")
}

const DOMAIN: &str = r#"query($name: InterpretedName!) {
  domain(by: {name: $name}) {
    canonical { name { interpreted } }
    owner { address }
    ... on ENSv1Domain { rootRegistryOwner { address } }
    registration { expiry registrant { address } }
    resolver { assigned { contract { address }
      records_(by: {name: $name}) { contenthash addresses { coinType address } texts { key value } } } }
  }
}"#;

fn hex(a: Address) -> String {
    format!("{a:#x}")
}

async fn indexes_scenario_and_matches_chain(backend: Backend) {
    let (anvil, driver, scenario) = support::devnet(31337, ScenarioOptions::default()).await;
    assert!(scenario.names.len() >= 300, "scenario has {} names", scenario.names.len());
    let db = TestDb::new(backend).await;
    let d = scenario.deployment;
    let config = support::config(&db.url, d.chain_config(anvil.chain_id, &anvil.url));
    let service = Service::start(&config).await.expect("service starts");
    support::wait_for_block(&service.db, anvil.chain_id, scenario.last_block).await;
    let schema = graphql::build_schema(service.db.clone());

    let mut checked_records = 0;
    let mut unknown_labels_typed = 0;
    for name in &scenario.names {
        let interpreted = name.interpreted();
        let truth = Truth::read(&driver, &d, name).await.expect("truth");
        let data = gql(&schema, DOMAIN, json!({ "name": interpreted })).await;
        let domain = &data["domain"];
        assert!(!domain.is_null(), "{interpreted} not indexed");
        // Typed in plaintext, the name is found whether or not the index knows its labels.
        let typed = name.plaintext();
        if typed != interpreted {
            let data = gql(&schema, DOMAIN, json!({ "name": typed })).await;
            assert_eq!(data["domain"], *domain, "{typed} (indexed as {interpreted})");
            unknown_labels_typed += 1;
        }
        assert_eq!(domain["canonical"]["name"]["interpreted"], json!(interpreted));
        let owner = domain["owner"]["address"].as_str().map(str::to_owned);
        let expected_owner = (!truth.owner.is_zero()).then(|| hex(truth.owner));
        assert_eq!(owner, expected_owner, "owner of {interpreted}");
        let registry_owner = domain["rootRegistryOwner"]["address"].as_str().map(str::to_owned);
        let expected = (!truth.registry_owner.is_zero()).then(|| hex(truth.registry_owner));
        assert_eq!(registry_owner, expected, "registry owner of {interpreted}");
        if let Some(registrant) = truth.registrant {
            assert_eq!(
                domain["registration"]["registrant"]["address"],
                json!(hex(registrant)),
                "registrant of {interpreted} (the registrar token's holder)"
            );
        }
        let expiry = domain["registration"]["expiry"].as_str().map(str::to_owned);
        assert_eq!(expiry, truth.expiry.map(|e| e.to_string()), "expiry of {interpreted}");
        let assigned = &domain["resolver"]["assigned"];
        if truth.resolver.is_zero() {
            assert!(assigned.is_null(), "{interpreted} has no resolver on chain");
            continue;
        }
        assert_eq!(
            assigned["contract"]["address"],
            json!(hex(truth.resolver)),
            "resolver of {interpreted}"
        );
        let records = &assigned["records_"];
        let address = |coin: i64| {
            records["addresses"]
                .as_array()
                .into_iter()
                .flatten()
                .find(|a| a["coinType"] == json!(coin))
                .map(|a| a["address"].as_str().unwrap_or_default().to_owned())
        };
        let addr = address(60).filter(|a| a != &hex(Address::ZERO));
        assert_eq!(addr, (!truth.addr.is_zero()).then(|| hex(truth.addr)), "addr of {interpreted}");
        let btc = address(0).filter(|a| a != "0x");
        assert_eq!(
            btc,
            (!truth.btc.is_empty()).then(|| format!("{}", truth.btc)),
            "btc of {interpreted}"
        );
        for (key, value) in &truth.texts {
            let indexed = records["texts"]
                .as_array()
                .into_iter()
                .flatten()
                .find(|t| t["key"] == json!(key))
                .and_then(|t| t["value"].as_str())
                .unwrap_or_default();
            assert_eq!(indexed, value, "text {key} of {interpreted}");
        }
        let contenthash = records["contenthash"].as_str().unwrap_or_default();
        let expected = if truth.contenthash.is_empty() {
            String::new()
        } else {
            format!("{}", truth.contenthash)
        };
        assert_eq!(contenthash, expected, "contenthash of {interpreted}");
        checked_records += 1;
    }
    assert!(checked_records > 250, "only {checked_records} names had records to check");
    assert!(unknown_labels_typed > 50, "only {unknown_labels_typed} names had unknown labels");

    // Path, effective resolver (own, inherited, none), registrations and renewals.
    let name =
        &scenario.names.iter().find(|n| n.labels.len() == 4).expect("a depth-4 name").interpreted();
    let data = gql(&schema, r#"query($n: InterpretedName!) { domain(by: {name: $n}) { canonical { path { canonical { name { interpreted } } } } } }"#, json!({ "n": name })).await;
    let path: Vec<&str> = data["domain"]["canonical"]["path"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["canonical"]["name"]["interpreted"].as_str().unwrap())
        .collect();
    let suffixes: Vec<String> =
        (0..4).rev().map(|i| name.split('.').skip(i).collect::<Vec<_>>().join(".")).collect();
    assert_eq!(path, suffixes, "path of {name}");
    let data = gql(
        &schema,
        r#"{ a: domain(by: {name: "name010.eth"}) { resolver { assigned { id } effective { id } } }
        b: domain(by: {name: "eth"}) { resolver { assigned { id } effective { id } } } }"#,
        json!({}),
    )
    .await;
    assert_eq!(data["a"]["resolver"]["effective"], data["a"]["resolver"]["assigned"]);
    assert!(
        data["b"]["resolver"]["effective"].is_null(),
        "eth has no resolver and no ancestor: {data}"
    );
    let renewed = gql(
        &schema,
        r#"{ domain(by: {name: "name105.eth"}) { registrations { totalCount edges { node {
        __typename ... on BaseRegistrarRegistration { baseCost tokenId }
        renewals { edges { node { duration base } } } } } } } }"#,
        json!({}),
    )
    .await;
    let regs = &renewed["domain"]["registrations"];
    assert_eq!(regs["totalCount"], json!(1), "{renewed}");
    let reg = &regs["edges"][0]["node"];
    assert_eq!(reg["__typename"], json!("BaseRegistrarRegistration"), "{renewed}");
    let label = ensemble::ens::name::labelhash("name105");
    assert_eq!(
        reg["tokenId"],
        json!(alloy::primitives::U256::from_be_bytes(label.0).to_string()),
        "{renewed}"
    );
    let renewal = &reg["renewals"]["edges"][0]["node"];
    assert_eq!(
        renewal["duration"],
        json!(ensemble_devkit::devnet::scenario::YEAR.to_string()),
        "{renewed}"
    );
    assert!(
        renewal["base"].as_str().is_some_and(|b| b != "0"),
        "renewal price from the controller: {renewed}"
    );

    // The root registry holds the top-level domains; every domain names its registry.
    let data = gql(&schema, r#"{ root { id domains(first: 100) { totalCount edges { node { canonical { name { interpreted } } } } } }
        eth: domain(by: {name: "eth"}) { id registry { id } subregistry { id parents { edges { node { id } } } } }
        domain(by: {name: "name010.eth"}) { registry { id domains(first: 1000) { edges { node { label { interpreted } } } } } } }"#, json!({})).await;
    assert_eq!(data["root"]["id"], json!(format!("31337-{}", hex(d.registry))));
    assert_eq!(data["eth"]["registry"]["id"], data["root"]["id"], "a TLD sits in the root");
    assert_eq!(data["eth"]["subregistry"]["parents"]["edges"][0]["node"]["id"], data["eth"]["id"]);
    // A deeper domain sits in its parent's virtual registry, which lists its siblings.
    assert_eq!(data["domain"]["registry"]["id"], data["eth"]["subregistry"]["id"]);
    assert_eq!(
        data["eth"]["subregistry"]["id"],
        json!(format!("31337-{}-{:#x}", hex(d.registry), alloy::ens::namehash("eth")))
    );
    let siblings = data["domain"]["registry"]["domains"]["edges"].as_array().unwrap();
    assert!(siblings.iter().any(|e| e["node"]["label"]["interpreted"] == json!("name010")));
    assert!(siblings.len() >= 100, "the .eth names: {}", siblings.len());
    let mut tlds: Vec<&str> = data["root"]["domains"]["edges"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["node"]["canonical"]["name"]["interpreted"].as_str().unwrap())
        .collect();
    tlds.sort_unstable();
    let legacy = ensemble::ens::name::encoded_label_hash(ensemble::ens::name::labelhash("legacy"));
    let mut want = vec!["eth", "reverse", legacy.as_str()];
    want.sort_unstable();
    assert_eq!(tlds, want, "top-level domains of the root registry");

    // Names whose ETH address is account 1, and which of them is its primary name.
    let account = hex(driver.accounts[1]);
    let refs = gql(&schema, r#"query($a: Address!) { account(by: {address: $a}) { nameReferences(where: {coinType: 60}, first: 1000) { edges { node { coinType match domain { canonical { name { interpreted } } } } } } } }"#, json!({ "a": account })).await;
    let versions = gql(
        &schema,
        r#"query($a: Address!) { account(by: {address: $a}) {
        all: domains { totalCount } v1: domains(where: {version: ENSv1}) { totalCount }
        v2: domains(where: {version: ENSv2}) { totalCount } } }"#,
        json!({ "a": account }),
    )
    .await;
    let versions = &versions["account"];
    assert_eq!(versions["v1"]["totalCount"], versions["all"]["totalCount"], "{versions}");
    assert_eq!(versions["v2"]["totalCount"], json!(0), "no ENSv2 domains are indexed");
    let refs: Vec<Value> = refs["account"]["nameReferences"]["edges"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["node"].clone())
        .collect();
    let named: Vec<&Value> = refs.iter().filter(|r| !r["domain"].is_null()).collect();
    assert!(named.len() >= 20, "account 1 is the address of its names: {refs:?}");
    let matches: Vec<&str> = named
        .iter()
        .filter(|r| r["match"] == json!(true))
        .map(|r| r["domain"]["canonical"]["name"]["interpreted"].as_str().unwrap())
        .collect();
    assert_eq!(matches, vec!["name005.eth"], "the primary name of account 1");

    for account in &scenario.primary_accounts {
        let node = reverse_node(*account);
        let (resolver, name) = name_record(&driver, &d, node).await.expect("reverse record");
        assert!(!name.is_empty());
        let data = gql(
            &schema,
            r#"query($r: Address!, $node: Node!) { resolver(by: {contract: {chainId: 31337, address: $r}}) { records_(by: {node: $node}) { name } } }"#,
            json!({ "r": hex(resolver), "node": format!("{node:#x}") }),
        )
        .await;
        assert_eq!(data["resolver"]["records_"]["name"], json!(name), "primary name of {account}");
        // Coin type 60 is the root chain's `addr.reverse`, here chain 31337.
        let primary = gql(
            &schema,
            r#"query($a: Address!) { account(by: {address: $a}) { reverseRecords {
                primaryName(by: {coinType: 60}) { name { interpreted } }
                primaryNames(where: {coinTypes: [60]}) { name { interpreted } } } } }"#,
            json!({ "a": hex(*account) }),
        )
        .await;
        let resolve = &primary["account"]["reverseRecords"];
        assert_eq!(resolve["primaryName"]["name"]["interpreted"], json!(name), "{primary}");
        assert_eq!(resolve["primaryNames"][0]["name"]["interpreted"], json!(name), "{primary}");
    }
    service.stop().await;
}

crate::support::on_both_engines!(indexes_scenario_and_matches_chain);
