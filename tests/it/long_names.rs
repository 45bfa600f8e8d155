//! Names with 10,000-byte labels, end to end on both engines: registered through the real
//! controller, a subname under one whose label no event spells out, healed by a label file;
//! every such name is found by its plaintext, owned as the chain says, and listed in byte
//! order with cursors, after the query indexes are built over them.

use alloy::primitives::Address;
use ensemble::{
    Service,
    ens::name::labelhash,
    label_import::{self, Format},
    store::query_indexes,
};
use ensemble_devkit::devnet::{
    contracts::IRegistry,
    scenario::{LONG_LABEL_BYTES, ScenarioName, ScenarioOptions, long_label},
    truth::Truth,
};
use serde_json::{Value, json};

use crate::support::{self, Backend, TestDb};

async fn gql(schema: &graphql::EnsSchema, query: &str, variables: Value) -> Value {
    let request = async_graphql::Request::new(query)
        .variables(async_graphql::Variables::from_json(variables));
    let response = schema.execute(request).await;
    assert!(response.errors.is_empty(), "{query}: {:?}", response.errors);
    response.data.into_json().unwrap()
}

/// The first characters of a long name, for messages.
fn short(name: &str) -> String {
    let head: String = name.chars().take(40).collect();
    format!("{head}… ({} bytes)", name.len())
}

/// The owner, registry owner and registrant GraphQL reports for `typed` (a name in
/// plaintext), which the index must render as `interpreted`.
async fn owners(
    schema: &graphql::EnsSchema,
    typed: &str,
    interpreted: &str,
) -> Option<(String, String, Value)> {
    let data = gql(
        schema,
        r#"query($name: InterpretedName!) { domain(by: {name: $name}) {
            canonical { name { interpreted } } owner { address }
            ... on ENSv1Domain { rootRegistryOwner { address } }
            registration { registrant { address } } } }"#,
        json!({ "name": typed }),
    )
    .await;
    let domain = &data["domain"];
    if domain.is_null() {
        return None;
    }
    let rendered = domain["canonical"]["name"]["interpreted"].as_str().unwrap();
    assert!(rendered == interpreted, "{} rendered as {}", short(interpreted), short(rendered));
    Some((
        domain["owner"]["address"].as_str().unwrap().to_owned(),
        domain["rootRegistryOwner"]["address"].as_str().unwrap().to_owned(),
        domain["registration"]["registrant"]["address"].clone(),
    ))
}

fn hex(a: Address) -> String {
    format!("{a:#x}")
}

/// Every name under `prefix` in name order, both directions, one row a page.
async fn listed(schema: &graphql::EnsSchema, prefix: &str, dir: &str) -> Vec<String> {
    let (mut names, mut after) = (Vec::new(), None::<String>);
    loop {
        let data = gql(
            schema,
            r#"query($p: String!, $dir: OrderDirection!, $after: String) {
                domains(where: {name: {starts_with: $p}}, order: {by: NAME, dir: $dir},
                        first: 1, after: $after) {
                  edges { node { canonical { name { interpreted } } } }
                  pageInfo { hasNextPage endCursor } } }"#,
            json!({ "p": prefix, "dir": dir, "after": after }),
        )
        .await;
        let page = &data["domains"];
        for edge in page["edges"].as_array().unwrap() {
            names.push(edge["node"]["canonical"]["name"]["interpreted"].as_str().unwrap().into());
        }
        if page["pageInfo"]["hasNextPage"] != json!(true) {
            return names;
        }
        after = page["pageInfo"]["endCursor"].as_str().map(str::to_owned);
    }
}

async fn long_labels_end_to_end(backend: Backend, chain_id: u64) {
    let options = ScenarioOptions { eth_names: 6, per_block: 200 };
    let (anvil, mut driver, scenario) = support::devnet(chain_id, options).await;
    let d = scenario.deployment;
    // A subname of the first long name whose long label no event spells out.
    let parent = scenario
        .names
        .iter()
        .find(|n| n.labels.len() == 2 && n.labels[0].0.len() == LONG_LABEL_BYTES)
        .expect("the scenario's long name")
        .clone();
    let hidden = long_label("hidden", LONG_LABEL_BYTES);
    let owner = driver.accounts[7];
    let parent_owner = driver.read(d.registry, IRegistry::ownerCall { node: parent.node() }).await;
    driver
        .call_tx(
            parent_owner.unwrap(),
            d.registry,
            IRegistry::setSubnodeOwnerCall {
                node: parent.node(),
                label: labelhash(&hidden),
                owner,
            },
            "hidden subname",
        )
        .await
        .unwrap();
    let last = driver.mine().await.unwrap();

    let db = TestDb::new(backend).await;
    let service = Service::start(&support::config(&db.url, d.chain_config(chain_id, &anvil.url)))
        .await
        .expect("service starts");
    support::wait_for_block(&service.db, chain_id, last).await;
    // The listing indexes are built over the long names once the chain has caught up.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while !query_indexes::pending(&service.db).await.unwrap().is_empty() {
        assert!(std::time::Instant::now() < deadline, "query indexes never built");
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    let schema = graphql::build_schema(service.db.clone());

    // Every long name of the scenario, found by its plaintext, owned as the chain says.
    let long: Vec<&ScenarioName> = scenario
        .names
        .iter()
        .filter(|n| n.labels.iter().any(|(l, _)| l.len() >= LONG_LABEL_BYTES - 1))
        .collect();
    assert!(long.len() >= 6, "two long names and their subnames: {}", long.len());
    for name in &long {
        let truth = Truth::read(&driver, &d, name).await.unwrap();
        let interpreted = name.interpreted();
        let (owner, registry_owner, registrant) = owners(&schema, &name.plaintext(), &interpreted)
            .await
            .unwrap_or_else(|| panic!("{} not found by plaintext", short(&interpreted)));
        assert_eq!(owner, hex(truth.owner), "owner of {}", short(&interpreted));
        assert_eq!(registry_owner, hex(truth.registry_owner), "{}", short(&interpreted));
        let expected = truth.registrant.map_or(Value::Null, |a| json!(hex(a)));
        assert_eq!(registrant, expected, "registrant of {}", short(&interpreted));
    }

    // In byte order, both ways, a page at a time: the two long `.eth` names share their first
    // 9,999 bytes, far past any index key.
    let prefix: String = parent.labels[0].0.chars().take(300).collect();
    let mut want: Vec<String> = scenario
        .names
        .iter()
        .map(ScenarioName::interpreted)
        .filter(|n| n.starts_with(&prefix))
        .collect();
    want.sort();
    assert_eq!(want.len(), 2);
    assert!(listed(&schema, &prefix, "ASC").await == want, "ascending");
    want.reverse();
    assert!(listed(&schema, &prefix, "DESC").await == want, "descending");

    // The hidden label is `[hash]` until a label file names it; then its name renders, is
    // found by its plaintext, and its owner is the chain's.
    let hidden_name = format!("{hidden}.{}", parent.interpreted());
    let unhealed = gql(
        &schema,
        r#"query($name: InterpretedName!) { domain(by: {name: $name}) { canonical { name { interpreted } } } }"#,
        json!({ "name": hidden_name }),
    )
    .await;
    assert!(
        unhealed["domain"]["canonical"]["name"]["interpreted"].as_str().unwrap().starts_with('['),
        "unhealed"
    );
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("labels.txt");
    std::fs::write(&file, format!("{hidden}\n")).unwrap();
    let report =
        label_import::import(&service.db, &file, Format::Text, |_, _| {}, |_| {}).await.unwrap();
    assert_eq!((report.learned, report.healed), (1, 1));
    driver.mine().await.unwrap();
    support::wait_for_block(&service.db, chain_id, last + 1).await;
    let (got, registry_owner, _) =
        owners(&schema, &hidden_name, &hidden_name).await.expect("healed name found");
    let on_chain = driver
        .read(d.registry, IRegistry::ownerCall { node: alloy::ens::namehash(&hidden_name) })
        .await
        .unwrap();
    assert_eq!((got, registry_owner), (hex(on_chain), hex(on_chain)));
    assert_eq!(on_chain, owner);
    service.stop().await;
}

crate::support::on_both_engines!(long_labels_end_to_end, 31_610);
