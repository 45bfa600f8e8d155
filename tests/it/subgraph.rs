//! The subgraph API read by the real client: `@ensdomains/ensjs` (pinned, from npm) pointed at
//! `/subgraph` on the devnet runs every one of its subgraph functions, and its answers are
//! checked against the chain (`eth_call`) and against the Omnigraph's answers for the same
//! names, on both engines.

use std::collections::{BTreeMap, BTreeSet};

use alloy::primitives::{Address, B256};
use ensemble_devkit::devnet::{
    ScenarioName,
    contracts::IRegistry,
    ensjs::{self, call},
    scenario::ScenarioOptions,
    truth::Truth,
};
use serde_json::{Value, json};

use crate::{
    reorg::wait_for_hash,
    resolution::graphql,
    support::{self, Backend, TestDb},
};

/// The .eth grace period the devnet's base registrar applies.
const GRACE_PERIOD: u64 = 90 * 24 * 3600;

/// What the chain says about one scenario name.
struct Known {
    name: String,
    parent: Option<String>,
    truth: Truth,
    node: B256,
}

impl Known {
    /// Deleted, as ensjs counts it: no owner, no resolver, no registrant.
    fn deleted(&self) -> bool {
        self.truth.registry_owner.is_zero()
            && self.truth.resolver.is_zero()
            && self.truth.registrant.is_none_or(|r| r.is_zero())
    }

    /// Expired, as ensjs counts it: the domain's expiry (registration plus grace) has passed.
    fn expired(&self, now: u64) -> bool {
        self.truth.expiry.is_some_and(|e| e.saturating_to::<u64>() + GRACE_PERIOD <= now)
    }
}

fn checksummed(address: Address) -> Value {
    if address.is_zero() { Value::Null } else { Value::String(address.to_checksum(None)) }
}

fn parent_of(name: &ScenarioName) -> Option<String> {
    let interpreted = name.interpreted();
    interpreted.split_once('.').map(|(_, parent)| parent.to_owned())
}

fn ok(result: &Value, what: &str) -> Value {
    assert!(result["error"].is_null(), "{what}: {result}");
    result["ok"].clone()
}

/// The sort key ensjs's listing shows for `order`.
fn key(item: &Value, order: &str) -> Value {
    match order {
        "createdAt" | "expiryDate" => item[order]["value"].clone(),
        other => item[other].clone(),
    }
}

fn compare_keys(a: &Value, b: &Value) -> std::cmp::Ordering {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => {
            x.as_f64().unwrap_or_default().total_cmp(&y.as_f64().unwrap_or_default())
        }
        (Value::String(x), Value::String(y)) => x.as_bytes().cmp(y.as_bytes()),
        _ => std::cmp::Ordering::Equal,
    }
}

/// Whether `items` are in `order`: nulls after every value ascending and before them
/// descending, ties by id in the same direction.
fn assert_ordered(items: &[Value], order: &str, desc: bool, what: &str) {
    for pair in items.windows(2) {
        let (a, b) = (key(&pair[0], order), key(&pair[1], order));
        let ascending = match (a.is_null(), b.is_null()) {
            (true, true) => std::cmp::Ordering::Equal,
            (true, false) => std::cmp::Ordering::Greater,
            (false, true) => std::cmp::Ordering::Less,
            (false, false) => compare_keys(&a, &b),
        };
        let by_key = if desc { ascending.reverse() } else { ascending };
        let ids = pair[0]["id"].as_str().cmp(&pair[1]["id"].as_str());
        let ids = if desc { ids.reverse() } else { ids };
        let ordering = by_key.then(ids);
        assert_eq!(ordering, std::cmp::Ordering::Less, "{what}: {} then {}", pair[0], pair[1]);
    }
}

fn names_of(items: &[Value]) -> BTreeSet<String> {
    items.iter().map(|i| i["name"].as_str().unwrap_or_default().to_owned()).collect()
}

const OMNIGRAPH_DOMAIN: &str = r#"query($name: InterpretedName!) { domain(by: {name: $name}) {
  canonical { name { interpreted } } label { hash } parent { canonical { name { interpreted } } }
  registration { ... on BaseRegistrarRegistration { start expiry registrant { address } } }
  subdomains(first: 100) { edges { node { canonical { name { interpreted } } } } }
  events(first: 100) { edges { node { blockNumber logIndex topics address } } } } }"#;

/// topic0 of the events the subgraph shows as domain and registration events.
fn subgraph_selectors() -> BTreeSet<String> {
    [
        "Transfer(bytes32,address)",
        "NewOwner(bytes32,bytes32,address)",
        "NewResolver(bytes32,address)",
        "NewTTL(bytes32,uint64)",
        "NameRegistered(uint256,address,uint256)",
        "NameRenewed(uint256,uint256)",
        "Transfer(address,address,uint256)",
    ]
    .iter()
    .map(|s| format!("{:#x}", alloy::primitives::keccak256(s.as_bytes())))
    .collect()
}

async fn ensjs_reads_the_subgraph_api(backend: Backend, chain_id: u64) {
    let (anvil, driver, scenario) = support::devnet(chain_id, ScenarioOptions::default()).await;
    let d = scenario.deployment;
    let db = TestDb::new(backend).await;
    let config = support::config(&db.url, d.chain_config(chain_id, &anvil.url));
    let service = ensemble::Service::start(&config).await.unwrap();
    wait_for_hash(&service.db, chain_id, &driver).await;
    let base = format!("http://{}/", service.http_addr);
    let url = format!("{base}subgraph");
    let client = crate::support::http_client();
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs();

    let mut known: Vec<Known> = Vec::new();
    for name in &scenario.names {
        let truth = Truth::read(&driver, &d, name).await.unwrap();
        known.push(Known {
            name: name.interpreted(),
            parent: parent_of(name),
            truth,
            node: name.node(),
        });
    }
    let by_name: BTreeMap<&str, &Known> = known.iter().map(|k| (k.name.as_str(), k)).collect();

    the_graph_query_language(&client, &url).await;
    walked_ors_equal_indexed_ors(&service.db, &config, &client, &url, &driver.accounts[1..6]).await;

    // Names for an address: each relation alone and all together, every order, both
    // directions, one page and page by page.
    let relations = ["owner", "registrant", "resolvedAddress", "wrappedOwner"];
    let accounts: Vec<Address> = driver.accounts[1..6].to_vec();
    let mut calls = Vec::new();
    let mut plan = Vec::new();
    for account in &accounts {
        let address = format!("{account:#x}");
        for only in relations.iter().map(Some).chain([None]) {
            let filter: serde_json::Map<String, Value> = match only {
                Some(only) => relations.iter().map(|r| (r.to_string(), json!(r == only))).collect(),
                None => Default::default(),
            };
            for order in ["name", "labelName", "createdAt", "expiryDate"] {
                for direction in ["asc", "desc"] {
                    let args = json!({ "address": address, "filter": filter, "orderBy": order,
                        "orderDirection": direction, "pageSize": 1000 });
                    calls.push(call("getNamesForAddress", args.clone(), false));
                    let mut paged = args;
                    paged["pageSize"] = json!(3);
                    calls.push(call("getNamesForAddress", paged, true));
                    plan.push((*account, only.copied(), order, direction));
                }
            }
        }
    }
    let results = ensjs::run(&url, chain_id, &calls).await.unwrap();
    let mut listed = 0;
    for (i, (account, only, order, direction)) in plan.iter().enumerate() {
        let what = format!("names for {account} ({only:?}, {order} {direction})");
        let page = ok(&results[2 * i], &what);
        let page = page.as_array().unwrap();
        let paged = ok(&results[2 * i + 1], &what);
        let relation = |k: &Known, r: &str| match r {
            "owner" => k.truth.registry_owner == *account,
            "registrant" => k.truth.registrant == Some(*account),
            "resolvedAddress" => !k.truth.resolver.is_zero() && k.truth.addr == *account,
            _ => false,
        };
        let expected: BTreeSet<String> = known
            .iter()
            .filter(|k| match only {
                Some(r) => relation(k, r),
                None => relations.iter().any(|r| relation(k, r)),
            })
            .filter(|k| !k.deleted() && !k.expired(now))
            .filter(|k| k.parent.as_deref() != Some("addr.reverse"))
            .map(|k| k.name.clone())
            .collect();
        assert_eq!(names_of(page), expected, "{what}: the chain says otherwise");
        listed += page.len();
        assert_ordered(page, order, *direction == "desc", &what);
        let pages = paged["names"].as_array().unwrap();
        let ids: Vec<&str> = pages.iter().map(|n| n["id"].as_str().unwrap()).collect();
        let distinct: BTreeSet<&str> = ids.iter().copied().collect();
        assert_eq!(ids.len(), distinct.len(), "{what}: a name came twice across pages");
        if *order == "labelName" {
            // ensjs pages by `labelName_gt`, which skips ties and unknown labels.
            assert!(names_of(pages).is_subset(&expected), "{what}: paged");
        } else {
            assert_eq!(pages, page, "{what}: page by page differs from one page");
        }
        // Every name's details against the chain.
        for item in page {
            let name = item["name"].as_str().unwrap();
            let k = by_name[name];
            assert_eq!(item["id"], format!("{:#x}", k.node), "{name}");
            assert_eq!(item["owner"], json!(k.truth.registry_owner.to_checksum(None)), "{name}");
            let registrant = k.truth.registrant.map_or(Value::Null, checksummed);
            assert_eq!(item["registrant"], registrant, "{name}");
            let resolved =
                if k.truth.resolver.is_zero() { Value::Null } else { checksummed(k.truth.addr) };
            assert_eq!(item["resolvedAddress"], resolved, "{name}");
            let expiry =
                k.truth.expiry.map_or(Value::Null, |e| json!(e.saturating_to::<u64>() * 1000));
            assert_eq!(item["expiryDate"]["value"].clone(), expiry, "{name}");
            assert_eq!(
                item["relation"]["owner"],
                json!(k.truth.registry_owner == *account),
                "{name}"
            );
        }
    }
    assert!(listed > 0, "the accounts own names");

    // The Omnigraph's view of every name listed, and of every parent's subnames.
    let mut omnigraph: BTreeMap<String, Value> = BTreeMap::new();
    for k in &known {
        let data = graphql(&client, &base, OMNIGRAPH_DOMAIN, json!({ "name": k.name })).await;
        omnigraph.insert(k.name.clone(), data["domain"].clone());
    }

    // Subnames of `eth` and of every name with subnames, every order, page by page.
    let parents: BTreeSet<String> = known
        .iter()
        .filter_map(|k| k.parent.clone())
        .filter(|p| p == "eth" || by_name.contains_key(p.as_str()))
        .collect();
    let mut calls = Vec::new();
    let mut plan = Vec::new();
    for parent in &parents {
        for order in ["name", "createdAt", "expiryDate"] {
            for direction in ["asc", "desc"] {
                let args = json!({ "name": parent, "orderBy": order, "orderDirection": direction,
                    "pageSize": 1000 });
                calls.push(call("getSubnames", args.clone(), false));
                let mut paged = args;
                paged["pageSize"] = json!(4);
                calls.push(call("getSubnames", paged, true));
                plan.push((parent.clone(), order, direction));
            }
        }
    }
    let results = ensjs::run(&url, chain_id, &calls).await.unwrap();
    for (i, (parent, order, direction)) in plan.iter().enumerate() {
        let what = format!("subnames of {parent} ({order} {direction})");
        let page = ok(&results[2 * i], &what);
        let page = page.as_array().unwrap();
        let expected: BTreeSet<String> = known
            .iter()
            .filter(|k| k.parent.as_deref() == Some(parent.as_str()))
            .filter(|k| !k.deleted() && !k.expired(now))
            .map(|k| k.name.clone())
            .collect();
        assert_eq!(names_of(page), expected, "{what}: the chain says otherwise");
        assert_ordered(page, order, *direction == "desc", &what);
        let paged = ok(&results[2 * i + 1], &what);
        assert_eq!(paged["names"].as_array().unwrap(), page, "{what}: page by page");
        // The Omnigraph's first page of subdomains, when it holds them all.
        let complete = omnigraph
            .get(parent.as_str())
            .filter(|d| d["subdomains"]["edges"].as_array().is_some_and(|e| e.len() < 100));
        if let Some(domain) = complete {
            let subdomains: BTreeSet<String> = domain["subdomains"]["edges"]
                .as_array()
                .unwrap()
                .iter()
                .map(|e| {
                    let name = &e["node"]["canonical"]["name"]["interpreted"];
                    name.as_str().unwrap_or_default().to_owned()
                })
                .collect();
            assert!(
                names_of(page).is_subset(&subdomains),
                "{what}: the Omnigraph lists {subdomains:?}"
            );
        }
        for item in page {
            let name = item["name"].as_str().unwrap();
            let domain = &omnigraph[name];
            assert_eq!(item["labelhash"], domain["label"]["hash"], "{name}");
            assert_eq!(item["parentName"].as_str(), Some(parent.as_str()), "{name}");
            let omnigraph_parent = &domain["parent"]["canonical"]["name"]["interpreted"];
            assert_eq!(omnigraph_parent.as_str(), Some(parent.as_str()), "{name}");
            if let Some(start) = domain["registration"]["start"].as_str() {
                let start: u64 = start.parse().unwrap();
                assert_eq!(item["registrationDate"]["value"], json!(start * 1000), "{name}");
            }
        }
    }

    // History, records, registrant and decoded names of every name the index can name.
    let mut calls = Vec::new();
    for k in &known {
        calls.push(call("getNameHistory", json!({ "name": k.name }), false));
        calls.push(call("getSubgraphRecords", json!({ "name": k.name }), false));
    }
    let results = ensjs::run(&url, chain_id, &calls).await.unwrap();
    let selectors = subgraph_selectors();
    for (i, k) in known.iter().enumerate() {
        let name = &k.name;
        let history = ok(&results[2 * i], name);
        let records = ok(&results[2 * i + 1], name);
        let domain = &omnigraph[name.as_str()];
        // The same events as the Omnigraph's, of the kinds the subgraph shows.
        let shown: BTreeSet<String> = history["domainEvents"]
            .as_array()
            .unwrap()
            .iter()
            .chain(history["registrationEvents"].as_array().into_iter().flatten())
            .map(|e| e["id"].as_str().unwrap().to_owned())
            .collect();
        // The Omnigraph lists every event the history holds; the subgraph leaves out the old
        // registry's events for a name once it is in the current registry.
        let mut omni = BTreeSet::new();
        let mut in_registry = false;
        for e in domain["events"]["edges"].as_array().unwrap().iter().map(|e| &e["node"]) {
            let address = e["address"].as_str().unwrap_or_default();
            if address == format!("{:#x}", d.registry_old) && in_registry {
                continue;
            }
            in_registry |= address == format!("{:#x}", d.registry);
            if selectors.contains(e["topics"][0].as_str().unwrap_or_default()) {
                omni.insert(format!("{}-{}", e["blockNumber"].as_str().unwrap(), e["logIndex"]));
            }
        }
        assert_eq!(shown, omni, "{name}: events differ from the Omnigraph's");
        // The latest owner and resolver events say what the chain says now.
        // Listed by id, which The Graph orders as text ("10-1" before "9-1"): put them in
        // chain order first.
        let chain_order = |events: &Value| {
            let mut events = events.as_array().cloned().unwrap_or_default();
            events.sort_by_key(|e| {
                let id = e["id"].as_str().unwrap_or_default();
                let parts: Vec<u64> = id.split('-').map(|p| p.parse().unwrap_or(0)).collect();
                parts
            });
            events
        };
        let events = chain_order(&history["domainEvents"]);
        if let Some(last) =
            events.iter().rev().find(|e| e["type"] == "Transfer" || e["type"] == "NewOwner")
        {
            assert_eq!(last["owner"], format!("{:#x}", k.truth.registry_owner), "{name}");
        }
        let last_resolver = events.iter().rposition(|e| e["type"] == "NewResolver");
        let last_owner = events.iter().rposition(|e| e["type"] == "NewOwner");
        if let Some(at) = last_resolver {
            let address =
                events[at]["resolver"].as_str().unwrap().split('-').next().unwrap().to_owned();
            // A name moved from the old registry into the current one has the current
            // registry's resolver (none here), whatever the old one had.
            let moved = k.truth.resolver.is_zero() && last_owner.is_some_and(|o| o > at);
            if !moved {
                assert_eq!(address, format!("{:#x}", k.truth.resolver), "{name}");
            }
        }
        if let (Some(expiry), true) = (k.truth.expiry, history["registrationEvents"].is_array()) {
            let events = chain_order(&history["registrationEvents"]);
            let last =
                events.iter().rev().find(|e| e["expiryDate"].is_string()).expect("registered");
            assert_eq!(last["expiryDate"], expiry.to_string(), "{name}");
        }
        if history["resolverEvents"].is_array() {
            let resolver_events = chain_order(&history["resolverEvents"]);
            let last_addr = resolver_events.iter().rev().find(|e| e["type"] == "AddrChanged");
            if let Some(last) = last_addr {
                assert_eq!(last["addr"], format!("{:#x}", k.truth.addr), "{name}");
            }
        }
        // Records: every text set on chain is among the keys, and ETH among the coins.
        let texts: BTreeSet<&str> =
            records["texts"].as_array().unwrap().iter().filter_map(Value::as_str).collect();
        for (key, value) in &k.truth.texts {
            if !value.is_empty() {
                assert!(texts.contains(key.as_str()), "{name}: text {key} missing from {texts:?}");
            }
        }
        let coins: BTreeSet<&str> =
            records["coins"].as_array().unwrap().iter().filter_map(Value::as_str).collect();
        assert_eq!(coins.contains("60"), !k.truth.addr.is_zero(), "{name}: {coins:?}");
        // In the current registry (the old one's names are not migrated until they are).
        let migrated =
            driver.read(d.registry, IRegistry::recordExistsCall { node: k.node }).await.unwrap();
        if migrated || !k.deleted() {
            assert_eq!(records["isMigrated"], migrated, "{name}");
        }
    }

    // Registrants of .eth names, and decoded names.
    let eth_names: Vec<&ScenarioName> =
        scenario.names.iter().filter(|n| n.eth_label().is_some()).collect();
    let mut calls = Vec::new();
    for name in &eth_names {
        calls.push(call("getSubgraphRegistrant", json!({ "name": name.interpreted() }), false));
        let hashed = format!("[{}].eth", hex::encode(name.eth_label().unwrap()));
        calls.push(call("getDecodedName", json!({ "name": hashed }), false));
    }
    let incomplete: Vec<&Known> = known.iter().filter(|k| k.name.contains('[')).collect();
    for k in &incomplete {
        calls.push(call(
            "getDecodedName",
            json!({ "name": k.name, "allowIncomplete": true }),
            false,
        ));
        calls.push(call("getDecodedName", json!({ "name": k.name }), false));
    }
    let results = ensjs::run(&url, chain_id, &calls).await.unwrap();
    for (i, name) in eth_names.iter().enumerate() {
        let interpreted = name.interpreted();
        let k = by_name[interpreted.as_str()];
        let registrant = ok(&results[2 * i], &interpreted);
        let expected = k.truth.registrant.filter(|r| !r.is_zero()).map_or(Value::Null, checksummed);
        assert_eq!(registrant, expected, "{interpreted}: registrant");
        let decoded = ok(&results[2 * i + 1], &interpreted);
        let fully_known = !interpreted.contains('[');
        let expected = if fully_known { json!(interpreted) } else { Value::Null };
        assert_eq!(decoded, expected, "{interpreted}: decoded from its label hash");
    }
    let offset = 2 * eth_names.len();
    for (i, k) in incomplete.iter().enumerate() {
        let partial = ok(&results[offset + 2 * i], &k.name);
        assert_eq!(partial, json!(k.name), "{}: with allowIncomplete", k.name);
        let strict = ok(&results[offset + 2 * i + 1], &k.name);
        assert_eq!(strict, Value::Null, "{}: not decodable", k.name);
    }
    service.stop().await;
}

crate::support::on_both_engines!(ensjs_reads_the_subgraph_api, 31_660);

/// POST a subgraph query; the whole answer.
/// An `or` over owners and resolved addresses gives the same rows, in the same order, whether
/// its rows come from the owners' index sets (the service: the devnet's sets are small) or the
/// listing walks its order's index and tests every row (a schema told that every set is
/// large).
async fn walked_ors_equal_indexed_ors(
    db: &sea_orm::DatabaseConnection,
    config: &ensemble::config::Config,
    client: &reqwest::Client,
    url: &str,
    accounts: &[Address],
) {
    let mut scope = ensemble::service::subgraph_scope(config).unwrap();
    scope.common_set_rows = 0;
    let walked = ::graphql::subgraph::build_subgraph_schema(db.clone(), scope).unwrap();
    let query = "query($w: Domain_filter, $o: Domain_orderBy, $d: OrderDirection, $first: Int) \
        { domains(first: $first, where: $w, orderBy: $o, orderDirection: $d) { id name } }";
    let mut compared = 0;
    for account in accounts {
        let a = format!("{account:#x}");
        let filters = [
            json!({ "or": [{ "owner": a }, { "registrant": a }, { "wrappedOwner": a },
                { "resolvedAddress": a }] }),
            json!({ "and": [
                { "or": [{ "owner": a }, { "registrant": a }] },
                { "name_starts_with": "name" },
            ] }),
        ];
        for filter in &filters {
            for (order, dir, first) in
                [(None, "asc", 1000), (Some("name"), "asc", 1000), (Some("name"), "desc", 3)]
            {
                let variables = json!({ "w": filter, "o": order, "d": dir, "first": first });
                let indexed = subgraph(client, url, query, variables.clone()).await;
                assert!(indexed["errors"].is_null(), "{variables}: {indexed}");
                let request = async_graphql::Request::new(query)
                    .variables(async_graphql::Variables::from_json(variables.clone()));
                let response = walked.execute(request).await;
                assert!(response.errors.is_empty(), "{variables}: {:?}", response.errors);
                let walked_rows = response.data.into_json().unwrap();
                assert_eq!(walked_rows["domains"], indexed["data"]["domains"], "{variables}");
                compared += indexed["data"]["domains"].as_array().unwrap().len();
            }
        }
    }
    assert!(compared > 20, "only {compared} rows compared");
}

async fn subgraph(client: &reqwest::Client, url: &str, query: &str, variables: Value) -> Value {
    let response = client
        .post(url)
        .json(&json!({ "query": query, "variables": variables }))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status().as_u16(), 200, "{query}");
    response.json().await.unwrap()
}

const ALL_DOMAINS: &str = r#"query($w: Domain_filter, $o: Domain_orderBy, $d: OrderDirection,
  $first: Int, $skip: Int) { domains(first: $first, skip: $skip, where: $w, orderBy: $o,
  orderDirection: $d) { id name labelName labelhash createdAt ttl isMigrated expiryDate
  owner { id } registrant { id } parent { id name }
  bracketed: subdomains(first: 40, where: {name_starts_with: "["}) { name } } }"#;

async fn listed(client: &reqwest::Client, url: &str, variables: Value) -> Vec<Value> {
    let mut variables = variables;
    if variables.get("first").is_none() {
        variables["first"] = json!(1000);
    }
    let body = subgraph(client, url, ALL_DOMAINS, variables.clone()).await;
    assert!(body["errors"].is_null(), "{variables}: {body}");
    body["data"]["domains"].as_array().unwrap().clone()
}

fn text(v: &Value) -> Option<String> {
    v.as_str().map(str::to_owned)
}

/// Every filter operator, nested filters, `and`/`or`, orderings and pages, against the same
/// rows filtered and sorted here; then the bounds and the errors.
async fn the_graph_query_language(client: &reqwest::Client, url: &str) {
    let all = listed(client, url, json!({})).await;
    assert!(all.len() > 300 && all.len() < 1000, "{} domains", all.len());
    let ids = |rows: &[Value]| -> Vec<String> {
        rows.iter().map(|r| r["id"].as_str().unwrap().to_owned()).collect()
    };
    // Default order: by id.
    let mut sorted = ids(&all);
    sorted.sort();
    assert_eq!(ids(&all), sorted, "by id when no orderBy");
    let pivot = &all[all.len() / 2];
    let pivot_id = pivot["id"].as_str().unwrap().to_owned();
    let pivot_created: i64 = pivot["createdAt"].as_str().unwrap().parse().unwrap();
    let owner = all.iter().find_map(|r| text(&r["registrant"]["id"])).expect("a registrant");
    let eth = all.iter().find(|r| r["name"] == "eth").unwrap()["id"].clone();
    fn num(v: &Value) -> Option<i64> {
        v.as_str().and_then(|s| s.parse::<i64>().ok())
    }
    type Check = Box<dyn Fn(&Value) -> bool>;
    let cases: Vec<(Value, Check)> = vec![
        (
            json!({ "id": pivot_id }),
            Box::new({
                let p = pivot_id.clone();
                move |r| r["id"] == p.as_str()
            }),
        ),
        (
            json!({ "id_not": pivot_id }),
            Box::new({
                let p = pivot_id.clone();
                move |r| r["id"] != p.as_str()
            }),
        ),
        (
            json!({ "id_gt": pivot_id }),
            Box::new({
                let p = pivot_id.clone();
                move |r| r["id"].as_str().unwrap() > p.as_str()
            }),
        ),
        (
            json!({ "id_lte": pivot_id }),
            Box::new({
                let p = pivot_id.clone();
                move |r| r["id"].as_str().unwrap() <= p.as_str()
            }),
        ),
        (
            json!({ "id_in": [pivot_id, eth] }),
            Box::new({
                let (p, e) = (pivot_id.clone(), eth.clone());
                move |r| r["id"] == p.as_str() || r["id"] == e
            }),
        ),
        (json!({ "name": "name010.eth" }), Box::new(|r| r["name"] == "name010.eth")),
        (json!({ "name_not": "name010.eth" }), Box::new(|r| r["name"] != "name010.eth")),
        (json!({ "name_gt": "name05" }), Box::new(|r| r["name"].as_str().unwrap() > "name05")),
        (json!({ "name_lt": "name05" }), Box::new(|r| r["name"].as_str().unwrap() < "name05")),
        (
            json!({ "name_in": ["name010.eth", "eth", "nope"] }),
            Box::new(|r| ["name010.eth", "eth"].contains(&r["name"].as_str().unwrap())),
        ),
        (json!({ "name_not_in": ["name010.eth"] }), Box::new(|r| r["name"] != "name010.eth")),
        (
            json!({ "name_contains": "ame01" }),
            Box::new(|r| r["name"].as_str().unwrap().contains("ame01")),
        ),
        (
            json!({ "name_contains": "am" }),
            Box::new(|r| r["name"].as_str().unwrap().contains("am")),
        ),
        (
            json!({ "name_contains_nocase": "AME01" }),
            Box::new(|r| r["name"].as_str().unwrap().to_lowercase().contains("ame01")),
        ),
        (
            json!({ "name_not_contains": "ame0" }),
            Box::new(|r| !r["name"].as_str().unwrap().contains("ame0")),
        ),
        (
            json!({ "name_starts_with": "name01" }),
            Box::new(|r| r["name"].as_str().unwrap().starts_with("name01")),
        ),
        (
            json!({ "name_starts_with_nocase": "NAME01" }),
            Box::new(|r| r["name"].as_str().unwrap().to_lowercase().starts_with("name01")),
        ),
        (
            json!({ "name_not_starts_with": "name" }),
            Box::new(|r| !r["name"].as_str().unwrap().starts_with("name")),
        ),
        (
            json!({ "name_ends_with": "0.eth" }),
            Box::new(|r| r["name"].as_str().unwrap().ends_with("0.eth")),
        ),
        (
            json!({ "name_ends_with_nocase": "0.ETH" }),
            Box::new(|r| r["name"].as_str().unwrap().to_lowercase().ends_with("0.eth")),
        ),
        (
            json!({ "name_not_ends_with": ".eth" }),
            Box::new(|r| !r["name"].as_str().unwrap().ends_with(".eth")),
        ),
        (json!({ "labelName": null }), Box::new(|r| r["labelName"].is_null())),
        (json!({ "labelName_not": null }), Box::new(|r| !r["labelName"].is_null())),
        (
            json!({ "labelName_starts_with": "name0" }),
            Box::new(|r| r["labelName"].as_str().is_some_and(|l| l.starts_with("name0"))),
        ),
        (
            json!({ "labelName_starts_with": "et" }),
            Box::new(|r| r["labelName"].as_str().is_some_and(|l| l.starts_with("et"))),
        ),
        (
            // Names start with it, labels cannot.
            json!({ "labelName_starts_with": "name01.e" }),
            Box::new(|r| r["labelName"].as_str().is_some_and(|l| l.starts_with("name01.e"))),
        ),
        (
            json!({ "labelName_not_starts_with": "name0" }),
            Box::new(|r| !r["labelName"].as_str().is_some_and(|l| l.starts_with("name0"))),
        ),
        (
            json!({ "labelName_contains_nocase": "AME" }),
            Box::new(|r| r["labelName"].as_str().is_some_and(|l| l.to_lowercase().contains("ame"))),
        ),
        (
            json!({ "labelhash": pivot["labelhash"] }),
            Box::new({
                let h = pivot["labelhash"].clone();
                move |r| r["labelhash"] == h
            }),
        ),
        (
            json!({ "createdAt_gt": pivot_created.to_string() }),
            Box::new(move |r| num(&r["createdAt"]).unwrap() > pivot_created),
        ),
        (
            json!({ "createdAt_lte": pivot_created }),
            Box::new(move |r| num(&r["createdAt"]).unwrap() <= pivot_created),
        ),
        (
            json!({ "createdAt_in": [pivot_created.to_string()] }),
            Box::new(move |r| num(&r["createdAt"]) == Some(pivot_created)),
        ),
        (json!({ "ttl": null }), Box::new(|r| r["ttl"].is_null())),
        (json!({ "ttl_not": null }), Box::new(|r| !r["ttl"].is_null())),
        (json!({ "isMigrated": false }), Box::new(|r| r["isMigrated"] == false)),
        (json!({ "isMigrated_not": true }), Box::new(|r| r["isMigrated"] != true)),
        (json!({ "expiryDate": null }), Box::new(|r| r["expiryDate"].is_null())),
        (
            json!({ "expiryDate_gt": "0" }),
            Box::new(|r| num(&r["expiryDate"]).is_some_and(|e| e > 0)),
        ),
        (
            json!({ "owner": owner }),
            Box::new({
                let o = owner.clone();
                move |r| r["owner"]["id"] == o.as_str()
            }),
        ),
        (
            json!({ "owner_not": owner }),
            Box::new({
                let o = owner.clone();
                move |r| r["owner"]["id"] != o.as_str()
            }),
        ),
        (
            json!({ "owner_in": [owner, "0x0000000000000000000000000000000000000000"] }),
            Box::new({
                let o = owner.clone();
                move |r| {
                    r["owner"]["id"] == o.as_str()
                        || r["owner"]["id"] == "0x0000000000000000000000000000000000000000"
                }
            }),
        ),
        (
            json!({ "owner_starts_with": &owner[..5] }),
            Box::new({
                let o = owner.clone();
                move |r| r["owner"]["id"].as_str().unwrap().starts_with(&o[..5])
            }),
        ),
        (
            json!({ "owner_": { "id": owner } }),
            Box::new({
                let o = owner.clone();
                move |r| r["owner"]["id"] == o.as_str()
            }),
        ),
        (
            json!({ "registrant": owner }),
            Box::new({
                let o = owner.clone();
                move |r| r["registrant"]["id"] == o.as_str()
            }),
        ),
        (json!({ "registrant_not": null }), Box::new(|r| !r["registrant"].is_null())),
        (
            json!({ "parent": eth }),
            Box::new({
                let e = eth.clone();
                move |r| r["parent"]["id"] == e
            }),
        ),
        (json!({ "parent_": { "name": "eth" } }), Box::new(|r| r["parent"]["name"] == "eth")),
        (
            json!({ "parent_": { "name_starts_with": "name01" } }),
            Box::new(|r| r["parent"]["name"].as_str().is_some_and(|n| n.starts_with("name01"))),
        ),
        (
            json!({ "subdomains_": { "name_starts_with": "[" } }),
            Box::new(|r| !r["bracketed"].as_array().unwrap().is_empty()),
        ),
        (
            json!({ "or": [{ "name": "eth" }, { "name_starts_with": "name01" }] }),
            Box::new(|r| r["name"] == "eth" || r["name"].as_str().unwrap().starts_with("name01")),
        ),
        (
            // Every arm has an owner: the rows come from the owner indexes.
            json!({ "or": [
                { "owner": owner },
                { "and": [{ "registrant": owner }, { "name_starts_with": "name0" }] },
            ] }),
            Box::new({
                let o = owner.clone();
                move |r| {
                    r["owner"]["id"] == o.as_str()
                        || (r["registrant"]["id"] == o.as_str()
                            && r["name"].as_str().unwrap().starts_with("name0"))
                }
            }),
        ),
        (
            // The zero address stands for no owner: no index set, every row is read.
            json!({ "or": [
                { "registrant": owner },
                { "owner": "0x0000000000000000000000000000000000000000" },
            ] }),
            Box::new({
                let o = owner.clone();
                move |r| {
                    r["registrant"]["id"] == o.as_str()
                        || r["owner"]["id"] == "0x0000000000000000000000000000000000000000"
                }
            }),
        ),
        (
            json!({ "and": [{ "name_starts_with": "name0" }, { "name_ends_with": "5.eth" }] }),
            Box::new(|r| {
                r["name"].as_str().unwrap().starts_with("name0")
                    && r["name"].as_str().unwrap().ends_with("5.eth")
            }),
        ),
        (
            json!({ "and": [{ "or": [{ "labelName": null }, { "ttl_not": null }] }, { "isMigrated": true }] }),
            Box::new(|r| {
                (r["labelName"].is_null() || !r["ttl"].is_null()) && r["isMigrated"] == true
            }),
        ),
    ];
    for (filter, check) in &cases {
        let got = listed(client, url, json!({ "w": filter })).await;
        let expected: Vec<Value> = all.iter().filter(|r| check(r)).cloned().collect();
        assert_eq!(ids(&got), ids(&expected), "where {filter}");
    }
    assert!(cases.len() > 45);

    // Orderings, nulls last ascending and first descending, ties by id; then pages.
    for (order, key) in [
        ("name", "name"),
        ("createdAt", "createdAt"),
        ("labelName", "labelName"),
        ("parent__name", "parent"),
    ] {
        for desc in [false, true] {
            let direction = if desc { "desc" } else { "asc" };
            let got = listed(client, url, json!({ "o": order, "d": direction })).await;
            let value = |r: &Value| -> Option<(i64, String)> {
                let v = if key == "parent" { &r["parent"]["name"] } else { &r[key] };
                match key {
                    "createdAt" => num(v).map(|n| (n, String::new())),
                    _ => v.as_str().map(|s| (0, s.to_owned())),
                }
            };
            let mut expected = all.clone();
            expected.sort_by(|a, b| {
                let by_key = match (value(a), value(b)) {
                    (None, None) => std::cmp::Ordering::Equal,
                    (None, Some(_)) => std::cmp::Ordering::Greater,
                    (Some(_), None) => std::cmp::Ordering::Less,
                    (Some(x), Some(y)) => x.0.cmp(&y.0).then(x.1.as_bytes().cmp(y.1.as_bytes())),
                };
                let by_key = if desc { by_key.reverse() } else { by_key };
                let by_id = a["id"].as_str().cmp(&b["id"].as_str());
                by_key.then(if desc { by_id.reverse() } else { by_id })
            });
            assert_eq!(ids(&got), ids(&expected), "orderBy {order} {direction}");
            let page =
                listed(client, url, json!({ "o": order, "d": direction, "first": 7, "skip": 21 }))
                    .await;
            assert_eq!(ids(&page), ids(&expected[21..28]), "orderBy {order} {direction}, a page");
        }
    }

    // `_meta`, and lookups that find nothing.
    let body = subgraph(client, url, "{ _meta { block { number hash } hasIndexingErrors } domain(id: \"0x00\") { id } nothing: domain(id: \"not hex\") { id } }", json!({})).await;
    assert!(body["errors"].is_null(), "{body}");
    assert!(body["data"]["_meta"]["block"]["number"].as_i64().unwrap() > 0);
    assert_eq!(body["data"]["_meta"]["hasIndexingErrors"], false);
    assert!(body["data"]["domain"].is_null() && body["data"]["nothing"].is_null());

    // Bounds and bad input: a stable code, never SQL, never a 500.
    let deep =
        format!("{{ domains(first: 1) {{ {} id {} }} }}", "parent { ".repeat(20), "}".repeat(20));
    let wide = format!(
        "{{ {} }}",
        (0..100).map(|i| format!("a{i}: domains(first: 1) {{ id }}")).collect::<Vec<_>>().join(" ")
    );
    let refused = [
        ("{ domains(first: 1001) { id } }", "INVALID_ARGUMENT"),
        ("{ domains(skip: 5001) { id } }", "INVALID_ARGUMENT"),
        ("{ domains(where: {id_in: [\"zz\"]}) { id } }", "INVALID_ARGUMENT"),
        (
            "{ domains(where: {createdAt_gt: \"99999999999999999999999\"}) { id } }",
            "INVALID_ARGUMENT",
        ),
        ("{ domains(where: {nope: 1}) { id } }", "GRAPHQL_VALIDATION_FAILED"),
        ("{ domains(first: 1000) { subdomains(first: 1000) { id } } }", "TOO_MANY_ENTITIES"),
        ("{ domains(block: {number: 1}) { id } }", "TIME_TRAVEL_UNSUPPORTED"),
        ("{ domains(block: {number_gte: 999999999}) { id } }", "BLOCK_NOT_INDEXED"),
        (deep.as_str(), "TOO_DEEP"),
        (wide.as_str(), "TOO_MANY_ALIASES"),
    ];
    for (query, code) in refused {
        let body = subgraph(client, url, query, json!({})).await;
        let error = &body["errors"][0];
        assert_eq!(error["extensions"]["code"], code, "{query}: {body}");
        let message = error["message"].as_str().unwrap_or_default().to_uppercase();
        assert!(!message.contains("SELECT") && !message.contains(" FROM "), "{query}: {message}");
    }
    // GraphiQL on GET.
    let page = client.get(url).send().await.unwrap();
    assert_eq!(page.status().as_u16(), 200);
    assert!(page.text().await.unwrap().contains("graphiql"));
}
