//! Resolution end to end on the devnet: every name of the scenario resolved through the REST
//! API from the index and by live calls (acceleration off), the two answers identical and
//! equal to direct `eth_call`s on the resolvers; every account's primary name both ways,
//! verified forward, including a name that is not normalized and one whose forward address
//! is someone else's.

use alloy::primitives::{Address, B256};
use ensemble::Service;
use ensemble_devkit::devnet::{
    Anvil, Driver, ScenarioName,
    contracts::{IRegistry, IResolver, IReverseRegistrar},
    deploy::Deployment,
    scenario::{ScenarioOptions, reverse_node},
    truth::Truth,
};
use serde_json::Value;

use crate::{
    reorg::wait_for_hash,
    support::{self, Backend, TestDb},
};

/// GET `path` (already encoded) with `query`; the JSON answer and its status.
pub(crate) async fn get(
    client: &reqwest::Client,
    base: &str,
    path: &[&str],
    query: &str,
) -> (u16, Value) {
    let mut url = reqwest::Url::parse(base).unwrap();
    url.path_segments_mut().unwrap().extend(path);
    url.set_query(Some(query));
    let response = client.get(url).send().await.unwrap();
    let status = response.status().as_u16();
    (status, response.json().await.unwrap())
}

const RECORDS: &str = "addresses=60,0&texts=url,avatar&contenthash=true";

/// POST a GraphQL query; its `data`.
pub(crate) async fn graphql(
    client: &reqwest::Client,
    base: &str,
    query: &str,
    variables: Value,
) -> Value {
    let response = client
        .post(format!("{base}graphql"))
        .json(&serde_json::json!({ "query": query, "variables": variables }))
        .send()
        .await
        .unwrap();
    let body: Value = response.json().await.unwrap();
    assert!(body["errors"].is_null(), "{query}: {body}");
    body["data"].clone()
}

const DOMAIN_RESOLVE: &str = r#"query($name: InterpretedName!, $accelerate: Boolean!) {
  domain(by: {name: $name}) { resolve(accelerate: $accelerate) {
    records(addresses: [60, 0], texts: ["url", "avatar"], contenthash: true) {
      records { addresses { coinType address } texts { key value } contenthash }
      answered { source } } } } }"#;

const PRIMARY_NAME: &str = r#"query($a: Address!) { account(by: {address: $a}) {
  resolve { primaryName(by: {coinType: 60}) { name rejected answered { source } } } } }"#;

/// The records of a REST answer in the shape `DOMAIN_RESOLVE` selects.
fn selected(records: &Value) -> Value {
    serde_json::json!({
        "addresses": records["addresses"],
        "texts": records["texts"],
        "contenthash": records["contenthash"],
    })
}

fn some_hex(bytes: &[u8]) -> Value {
    if bytes.is_empty() { Value::Null } else { Value::String(format!("0x{}", hex::encode(bytes))) }
}

/// What the chain says, in the API's form.
fn expected_records(truth: &Truth) -> Value {
    let eth = if truth.addr.is_zero() { Value::Null } else { some_hex(truth.addr.as_slice()) };
    let texts: Vec<Value> = truth
        .texts
        .iter()
        .map(|(key, value)| {
            let value = if value.is_empty() { Value::Null } else { Value::String(value.clone()) };
            serde_json::json!({ "key": key, "value": value })
        })
        .collect();
    serde_json::json!({
        "addresses": [
            { "coinType": 60, "address": eth },
            { "coinType": 0, "address": some_hex(&truth.btc) },
        ],
        "texts": texts,
        "contenthash": some_hex(&truth.contenthash),
    })
}

/// A service indexing the devnet of `anvil` into a fresh database of `backend`, caught up
/// with the chain (`configure` adjusts the configuration first); its database and base URL.
async fn serve(
    backend: Backend,
    chain_id: u64,
    anvil: &Anvil,
    driver: &Driver,
    d: &Deployment,
    configure: impl FnOnce(&mut ensemble::Config),
) -> (TestDb, Service, String) {
    let db = TestDb::new(backend).await;
    let mut config = support::config(&db.url, d.chain_config(chain_id, &anvil.url));
    configure(&mut config);
    let service = Service::start(&config).await.unwrap();
    wait_for_hash(&service.db, chain_id, driver).await;
    let base = format!("http://{}/", service.http_addr);
    (db, service, base)
}

/// The chain's ETH address of `name`, through its resolver (zero when it has none).
async fn forward_address(driver: &Driver, d: &Deployment, name: &str) -> Address {
    let node = alloy::ens::namehash(name);
    let resolver = driver.read(d.registry, IRegistry::resolverCall { node }).await.unwrap();
    if resolver.is_zero() {
        return Address::ZERO;
    }
    driver.read(resolver, IResolver::addr_0Call { node }).await.unwrap_or_default()
}

async fn resolves_every_name_both_ways(backend: Backend, chain_id: u64) {
    let (anvil, mut driver, scenario) = support::devnet(chain_id, ScenarioOptions::default()).await;
    let d = scenario.deployment;
    // Two more primary names that must not be primary: one not normalized, one whose
    // forward address is another account's.
    let (unnormalized, impostor) = (driver.accounts[7], driver.accounts[8]);
    let mut taken = None;
    for label in scenario.names.iter().filter_map(|n| n.eth_label_text()) {
        let name = format!("{label}.eth");
        let owner = forward_address(&driver, &d, &name).await;
        if !owner.is_zero() && owner != impostor {
            taken = Some(name);
            break;
        }
    }
    let taken = taken.expect("a name with someone else's address");
    for (account, name) in [(unnormalized, "Name010.eth".to_owned()), (impostor, taken.clone())] {
        driver
            .call_tx(account, d.reverse_registrar, IReverseRegistrar::setNameCall { name }, "set")
            .await
            .unwrap();
    }
    driver.mine().await.unwrap();

    // The shipped devnet configuration names the same static resolvers.
    let shipped = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("config/devnet.toml");
    let shipped = ensemble::Config::load(Some(&shipped), []).unwrap();
    assert_eq!(shipped.chains[0].static_resolvers, vec![d.resolver, d.legacy_resolver]);

    let (_db, service, base) = serve(backend, chain_id, &anvil, &driver, &d, |_| {}).await;
    let client = crate::support::http_client();

    let mut from_index = 0;
    for name in &scenario.names {
        let typed = name.plaintext();
        let path = ["api", "resolve", "records", typed.as_str()];
        let (status, index) = get(&client, &base, &path, RECORDS).await;
        assert_eq!(status, 200, "{typed}: {index}");
        let (status, live) =
            get(&client, &base, &path, &format!("{RECORDS}&accelerate=false")).await;
        assert_eq!(status, 200, "{typed}: {live}");
        assert_eq!(live["answered"]["source"], "live", "{typed}");
        assert_eq!(index["records"], live["records"], "{typed}: index and live differ");
        assert_eq!(index["resolver"], live["resolver"], "{typed}: resolvers differ");
        assert_eq!(index["answered"]["block"], live["answered"]["block"], "{typed}");
        if index["answered"]["source"] == "index" {
            from_index += 1;
        }
        let truth = Truth::read(&driver, &d, name).await.unwrap();
        let mut records = index["records"].clone();
        let errors = records.as_object_mut().unwrap().remove("errors");
        assert_eq!(errors, Some(Value::Array(vec![])), "{typed}");
        for key in ["name", "pubkey", "abi"] {
            records.as_object_mut().unwrap().remove(key);
        }
        records.as_object_mut().unwrap().remove("interfaces");
        assert_eq!(records, expected_records(&truth), "{typed}: the chain says otherwise");
        // GraphQL gives the same answers (on the names the index holds a domain for).
        if name.labels.len() <= 3 {
            for (accelerate, rest) in [(true, &index), (false, &live)] {
                let vars =
                    serde_json::json!({ "name": name.interpreted(), "accelerate": accelerate });
                let data = graphql(&client, &base, DOMAIN_RESOLVE, vars).await;
                let answer = &data["domain"]["resolve"]["records"];
                assert_eq!(answer["records"], selected(&rest["records"]), "{typed} over GraphQL");
                assert_eq!(
                    answer["answered"]["source"].as_str().map(str::to_lowercase),
                    rest["answered"]["source"].as_str().map(str::to_owned)
                );
            }
        }
        let resolver = &index["resolver"];
        if truth.resolver.is_zero() {
            assert!(resolver.is_null(), "{typed} has no resolver: {resolver}");
        } else {
            assert_eq!(resolver["address"], format!("{:#x}", truth.resolver), "{typed}");
        }
    }
    // Names on the public resolvers are answered by the index.
    assert!(from_index * 2 > scenario.names.len(), "{from_index} of {}", scenario.names.len());

    let mut verified = 0;
    let accounts: std::collections::BTreeSet<Address> =
        driver.accounts.iter().chain(&scenario.primary_accounts).copied().collect();
    for account in accounts {
        let hex_account = format!("{account:#x}");
        let path = ["api", "resolve", "primary-name", hex_account.as_str(), "1"];
        let (status, index) = get(&client, &base, &path, "trace=true").await;
        assert_eq!(status, 200, "{account}: {index}");
        let (_, live) = get(&client, &base, &path, "accelerate=false").await;
        assert_eq!(index["name"], live["name"], "{account}: index and live differ");
        assert_eq!(index["rejected"], live["rejected"], "{account}");
        // The chain: the reverse record, then the forward address.
        let node: B256 = reverse_node(account);
        let resolver = driver.read(d.registry, IRegistry::resolverCall { node }).await.unwrap();
        let set = if resolver.is_zero() {
            String::new()
        } else {
            driver.read(resolver, IResolver::nameCall { node }).await.unwrap_or_default()
        };
        let normalized = ens_normalize::ens_normalize(&set).ok().as_deref() == Some(set.as_str());
        let expected =
            if !set.is_empty() && normalized && forward_address(&driver, &d, &set).await == account
            {
                Value::String(set.clone())
            } else {
                Value::Null
            };
        assert_eq!(index["name"], expected, "{account} set {set:?}");
        if expected.is_string() {
            verified += 1;
            assert_eq!(index["answered"]["source"], "index", "{account}");
        }
        let data =
            graphql(&client, &base, PRIMARY_NAME, serde_json::json!({ "a": hex_account })).await;
        let over_graphql = &data["account"]["resolve"]["primaryName"];
        assert_eq!(over_graphql["name"], index["name"], "{account} over GraphQL");
        assert_eq!(over_graphql["rejected"], index["rejected"], "{account} over GraphQL");
        if account == unnormalized {
            assert!(index["rejected"].as_str().unwrap().contains("normalized"), "{index}");
        }
        if account == impostor {
            assert_eq!(set, taken);
            assert!(index["rejected"].as_str().unwrap().contains("not the account"), "{index}");
        }
    }
    assert_eq!(verified, scenario.primary_accounts.len());

    // Every resolution is counted by kind and source, and the exposition stays valid.
    let exposition =
        client.get(format!("{base}metrics")).send().await.unwrap().text().await.unwrap();
    for series in [
        r#"ensemble_resolutions_total{kind="forward",source="index"}"#,
        r#"ensemble_resolutions_total{kind="forward",source="live"}"#,
        r#"ensemble_resolutions_total{kind="reverse",source="index"}"#,
        r#"ensemble_resolution_seconds{kind="forward",source="index",quantile="0.5"}"#,
    ] {
        assert!(exposition.contains(series), "{series} missing");
    }
    crate::metrics::promtool_accepts(&exposition);
    service.stop().await;
}

crate::support::on_both_engines!(resolves_every_name_both_ways, 31_630);

/// Bad input gets a stable code and a 4xx, and the server stays up.
async fn refuses_bad_input_with_a_code(backend: Backend, chain_id: u64) {
    let (anvil, driver, scenario) =
        support::devnet(chain_id, ScenarioOptions { eth_names: 12, per_block: 12 }).await;
    let d = scenario.deployment;
    let (_db, service, base) = serve(backend, chain_id, &anvil, &driver, &d, |_| {}).await;
    let client = crate::support::http_client();
    let deep = "a.".repeat(100) + "eth";
    let long = "a".repeat(40_000) + ".eth";
    let zero = format!("{:#x}", Address::ZERO);
    let many_texts = (0..100).map(|i| format!("k{i}")).collect::<Vec<_>>().join(",");
    let cases: Vec<(Vec<&str>, String, &str)> = vec![
        (vec!["records", "Name001.eth"], String::new(), "INVALID_NAME"),
        (vec!["records", "a..eth"], String::new(), "INVALID_NAME"),
        (vec!["records", deep.as_str()], String::new(), "INVALID_NAME"),
        (vec!["records", "name001.eth"], format!("texts={many_texts}"), "TOO_MANY_RECORDS"),
        (vec!["records", "name001.eth"], "addresses=sixty".into(), "INVALID_ARGUMENT"),
        (vec!["records", "name001.eth"], "interfaces=0x12".into(), "INVALID_ARGUMENT"),
        (vec!["primary-name", "0x12", "1"], String::new(), "INVALID_ARGUMENT"),
        (vec!["primary-name", zero.as_str(), "x"], String::new(), "INVALID_ARGUMENT"),
    ];
    for (tail, query, code) in cases {
        let mut path = vec!["api", "resolve"];
        path.extend(tail.iter().copied());
        let (status, body) = get(&client, &base, &path, &query).await;
        assert_eq!(status, 400, "{tail:?}: {body}");
        assert_eq!(body["error"]["code"], code, "{tail:?}");
    }
    // Too long for the request line: refused before it reaches resolution.
    let mut url = reqwest::Url::parse(&base).unwrap();
    url.path_segments_mut().unwrap().extend(["api", "resolve", "records", long.as_str()]);
    let status = client.get(url).send().await.map(|r| r.status().as_u16());
    assert!(status.as_ref().is_ok_and(|s| (400..500).contains(s)) || status.is_err(), "{status:?}");
    // Still serving.
    let (status, body) =
        get(&client, &base, &["api", "resolve", "records", "name001.eth"], RECORDS).await;
    assert_eq!(status, 200, "{body}");
    service.stop().await;
}

crate::support::on_both_engines!(refuses_bad_input_with_a_code, 31_632);

trait EthLabel {
    fn eth_label_text(&self) -> Option<String>;
}

impl EthLabel for ScenarioName {
    /// The label of a plain `nameNNN.eth` second-level name.
    fn eth_label_text(&self) -> Option<String> {
        match self.labels.as_slice() {
            [(label, true), (eth, true)] if eth == "eth" && label.starts_with("name") => {
                Some(label.clone())
            }
            _ => None,
        }
    }
}

/// An answer the index gave is served again only while the chain stays at its block: a record
/// changed in a later block is answered anew, and the answer names the later block.
async fn a_record_changed_on_chain_is_answered_anew(backend: Backend, chain_id: u64) {
    let (anvil, mut driver, scenario) =
        support::devnet(chain_id, ScenarioOptions { eth_names: 12, per_block: 12 }).await;
    let d = scenario.deployment;
    let (_db, service, base) = serve(backend, chain_id, &anvil, &driver, &d, |_| {}).await;
    let client = crate::support::http_client();
    let name = scenario.names.iter().find_map(|n| n.eth_label_text()).unwrap() + ".eth";
    let path = ["api", "resolve", "records", name.as_str()];
    let node = alloy::ens::namehash(&name);
    let resolver = driver.read(d.registry, IRegistry::resolverCall { node }).await.unwrap();
    assert!(d.resolver == resolver || d.legacy_resolver == resolver, "{name}: {resolver}");
    let owner = driver.read(d.registry, IRegistry::ownerCall { node }).await.unwrap();

    let (_, first) = get(&client, &base, &path, "texts=url").await;
    let (_, again) = get(&client, &base, &path, "texts=url").await;
    assert_eq!(first["answered"]["source"], "index", "{first}");
    assert_eq!(first, again, "the same block, the same answer");

    let set = IResolver::setTextCall { node, key: "url".into(), value: "https://changed".into() };
    driver.call_tx(owner, resolver, set, "text").await.unwrap();
    driver.mine().await.unwrap();
    wait_for_hash(&service.db, chain_id, &driver).await;
    // Past the time a read checkpoint is taken as current.
    tokio::time::sleep(ensemble::resolution::chains::POINT_TTL * 2).await;
    let (_, after) = get(&client, &base, &path, "texts=url").await;
    assert_eq!(after["answered"]["source"], "index", "{after}");
    assert_eq!(after["records"]["texts"][0]["value"], "https://changed", "{after}");
    let (before, now) =
        (&first["answered"]["block"]["number"], &after["answered"]["block"]["number"]);
    assert!(now.as_u64() > before.as_u64(), "{before} then {now}");
    let (_, live) = get(&client, &base, &path, "texts=url&accelerate=false").await;
    assert_eq!(live["records"], after["records"]);
    service.stop().await;
}

crate::support::on_both_engines!(a_record_changed_on_chain_is_answered_anew, 31_634);

/// An index that falls behind the head by more than `resolution.max_index_lag_blocks` does not
/// answer: resolution goes live at the head, and says why.
async fn a_lagging_index_resolves_live(backend: Backend, chain_id: u64) {
    use ensemble::chain::control::{Command, Control};
    let (anvil, mut driver, scenario) =
        support::devnet(chain_id, ScenarioOptions { eth_names: 12, per_block: 12 }).await;
    let d = scenario.deployment;
    let lag = |config: &mut ensemble::Config| config.resolution.max_index_lag_blocks = 2;
    let (_db, service, base) = serve(backend, chain_id, &anvil, &driver, &d, lag).await;
    let client = crate::support::http_client();
    let path = ["api", "resolve", "records", "name010.eth"];
    let (_, fresh) = get(&client, &base, &path, RECORDS).await;
    assert_eq!(fresh["answered"]["source"], "index", "{fresh}");

    // The chain stops being indexed and moves on by more than the allowed lag.
    service.chains()[&chain_id].send(Control(Command::Pause)).await.unwrap();
    let owner = driver.accounts[1];
    support::activity(&mut driver, &d, owner, "name010", 4, "after-pause").await;
    let head = alloy::providers::Provider::get_block_number(driver.provider()).await.unwrap();
    // The paused chain still reads the head now and then and reports it.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    let stale = loop {
        let (status, answer) = get(&client, &base, &path, RECORDS).await;
        assert_eq!(status, 200, "{answer}");
        if answer["answered"]["source"] == "live" {
            break answer;
        }
        assert!(std::time::Instant::now() < deadline, "still answered from the index: {answer}");
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    };
    assert!(
        stale["answered"]["liveBecause"].as_str().unwrap().contains("behind the head"),
        "{stale}"
    );
    assert_eq!(stale["answered"]["block"]["number"], head, "live at the head");
    let node = alloy::ens::namehash("name010.eth");
    let resolver = driver.read(d.registry, IRegistry::resolverCall { node }).await.unwrap();
    let truth =
        driver.read(resolver, IResolver::textCall { node, key: "url".into() }).await.unwrap();
    assert_eq!(truth, "https://after-pause/0", "the activity after the pause set it");
    let value = &stale["records"]["texts"][0]["value"];
    assert_eq!(value.as_str().unwrap_or_default(), truth, "the head's value");
    service.stop().await;
}

crate::support::on_both_engines!(a_lagging_index_resolves_live, 31_636);
