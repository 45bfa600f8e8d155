//! The paging contract, on both engines: `last` with `after` and `first` with `before` page
//! within both bounds as Relay defines; a cursor pages only the listing it came from (not
//! another parent's, not another listing); a forged cursor (a key part of the wrong kind) is
//! `INVALID_CURSOR`, never an internal error.

use base64::{Engine, engine::general_purpose::URL_SAFE_NO_PAD};
use ensemble::Service;
use ensemble_devkit::devnet::scenario::ScenarioOptions;
use serde_json::{Value, json};

use crate::support::{self, Backend, TestDb};

/// The whole response to `query`: data and errors.
async fn gql(schema: &graphql::EnsSchema, query: &str) -> Value {
    serde_json::to_value(schema.execute(query).await).unwrap()
}

fn ids(page: &Value) -> Vec<String> {
    page["edges"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["node"]["id"].as_str().unwrap().to_owned())
        .collect()
}

fn cursors(page: &Value) -> Vec<String> {
    page["edges"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["cursor"].as_str().unwrap().to_owned())
        .collect()
}

fn code(answer: &Value) -> Option<&str> {
    answer["errors"][0]["extensions"]["code"].as_str()
}

/// `cursor` with its JSON edited by `edit`.
fn forge(cursor: &str, edit: impl FnOnce(&mut Value)) -> String {
    let mut value: Value =
        serde_json::from_slice(&URL_SAFE_NO_PAD.decode(cursor).unwrap()).unwrap();
    edit(&mut value);
    URL_SAFE_NO_PAD.encode(serde_json::to_vec(&value).unwrap())
}

async fn paging_contract(backend: Backend, chain_id: u64) {
    let (anvil, _driver, scenario) =
        support::devnet(chain_id, ScenarioOptions { eth_names: 12, per_block: 12 }).await;
    let db = TestDb::new(backend).await;
    let chain = scenario.deployment.chain_config(chain_id, &anvil.url);
    let service = Service::start(&support::config(&db.url, chain)).await.unwrap();
    support::wait_for_block(&service.db, chain_id, scenario.last_block).await;
    let schema = graphql::build_schema(service.db.clone());
    let subdomains = |args: &str| {
        format!(
            "{{ domain(by: {{name: \"eth\"}}) {{ subdomains({args}) {{ edges {{ cursor node {{ id }} }} pageInfo {{ hasNextPage hasPreviousPage }} }} }} }}"
        )
    };
    let all = gql(&schema, &subdomains("first: 100")).await;
    let all = &all["data"]["domain"]["subdomains"];
    let (all_ids, all_cursors) = (ids(all), cursors(all));
    assert!(all_ids.len() >= 10, "{all}");

    // `last` with `after`: the last rows of what follows the cursor.
    let after = &all_cursors[2];
    let page = gql(&schema, &subdomains(&format!("last: 3, after: \"{after}\""))).await;
    let page = &page["data"]["domain"]["subdomains"];
    assert_eq!(ids(page), all_ids[all_ids.len() - 3..].to_vec(), "{page}");
    // `first` with `after` and `before`: the rows between the two.
    let before = &all_cursors[8];
    let page =
        gql(&schema, &subdomains(&format!("first: 10, after: \"{after}\", before: \"{before}\"")))
            .await;
    let page = &page["data"]["domain"]["subdomains"];
    assert_eq!(ids(page), all_ids[3..8].to_vec(), "{page}");
    // `last` with both: the last of the rows between.
    let page =
        gql(&schema, &subdomains(&format!("last: 2, after: \"{after}\", before: \"{before}\"")))
            .await;
    assert_eq!(ids(&page["data"]["domain"]["subdomains"]), all_ids[6..8].to_vec(), "{page}");

    // A cursor of one parent's subdomains on another parent's, or on another listing.
    let other = gql(&schema, &format!("{{ domain(by: {{name: \"name010.eth\"}}) {{ subdomains(after: \"{after}\") {{ edges {{ node {{ id }} }} }} }} }}")).await;
    assert_eq!(code(&other), Some("INVALID_CURSOR"), "{other}");
    let owner = format!("{:#x}", scenario.deployment.deployer);
    let other = gql(&schema, &format!("{{ account(by: {{address: \"{owner}\"}}) {{ domains(after: \"{after}\") {{ edges {{ node {{ id }} }} }} }} }}")).await;
    assert_eq!(code(&other), Some("INVALID_CURSOR"), "{other}");

    // The same for a keyset listing: one domain's events, then another's.
    let events = |name: &str, args: &str| {
        format!(
            "{{ domain(by: {{name: \"{name}\"}}) {{ events({args}) {{ edges {{ cursor node {{ id }} }} }} }} }}"
        )
    };
    let own = gql(&schema, &events("name010.eth", "first: 2")).await;
    let event_cursor = cursors(&own["data"]["domain"]["events"])[0].clone();
    let next = gql(&schema, &events("name010.eth", &format!("after: \"{event_cursor}\""))).await;
    assert!(next["errors"].is_null(), "{next}");
    let other = gql(&schema, &events("name011.eth", &format!("after: \"{event_cursor}\""))).await;
    assert_eq!(code(&other), Some("INVALID_CURSOR"), "{other}");

    // Forged cursors: a key part of the wrong kind is refused before it reaches SQL.
    let text_key = forge(&event_cursor, |c| c["key"][0] = json!("not a number"));
    let forged = gql(&schema, &events("name010.eth", &format!("after: \"{text_key}\""))).await;
    assert_eq!(code(&forged), Some("INVALID_CURSOR"), "{forged}");
    let by_depth = gql(&schema, &subdomains("first: 2, order: {by: DEPTH}")).await;
    let depth_cursor = cursors(&by_depth["data"]["domain"]["subdomains"])[0].clone();
    let text_value = forge(&depth_cursor, |c| c["value"] = json!("abc"));
    let forged =
        gql(&schema, &subdomains(&format!("order: {{by: DEPTH}}, after: \"{text_value}\""))).await;
    assert_eq!(code(&forged), Some("INVALID_CURSOR"), "{forged}");
    service.stop().await;
}

crate::support::on_both_engines!(paging_contract, 31570);
