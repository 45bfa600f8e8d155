//! Domain listings in every order and direction, paged forwards (`first: 2`) and backwards
//! (`last: 2`), compared with a sort done here over the same rows; cursors from another
//! ordering are rejected; a prefix search defaults to depth order.

use ensemble::Service;
use ensemble_devkit::devnet::scenario::ScenarioOptions;
use entities::domain::{self, RawAddress};
use sea_orm::{ColumnTrait, EntityTrait, QueryFilter};
use serde_json::{Value, json};

use crate::{
    connection_walk::ids,
    support::{self, Backend, TestDb},
};

const ORDERS: [&str; 4] = ["NAME", "DEPTH", "REGISTRATION_TIMESTAMP", "REGISTRATION_EXPIRY"];

/// A listing: the GraphQL path to its connection, how to call it, and the rows it covers.
struct Listing {
    label: &'static str,
    /// `{ ... }` around the connection call; `CONN(args)` is replaced by the call.
    query: String,
    path: Vec<&'static str>,
    /// Arguments spliced in front of the paging arguments (a `where` filter).
    filter: &'static str,
    rows: Vec<domain::Model>,
}

fn expected(rows: &[domain::Model], by: &str, desc: bool) -> Vec<String> {
    let mut rows = rows.to_vec();
    rows.sort_by(|a, b| {
        let key = match by {
            "NAME" => a.name.as_bytes().cmp(b.name.as_bytes()),
            "DEPTH" => a.depth.cmp(&b.depth),
            "REGISTRATION_TIMESTAMP" => a.registration_start.cmp(&b.registration_start),
            _ => a.registration_expiry.cmp(&b.registration_expiry),
        };
        key.then_with(|| a.seq.cmp(&b.seq))
    });
    if desc {
        rows.reverse();
    }
    rows.into_iter().map(|r| r.id.to_string()).collect()
}

async fn page(schema: &graphql::EnsSchema, listing: &Listing, args: &str) -> Value {
    let args = args.replacen('(', &format!("({}", listing.filter), 1);
    let query = listing.query.replace("CONN", &format!("{args} {{ edges {{ cursor node {{ id }} }} pageInfo {{ hasNextPage hasPreviousPage startCursor endCursor }} }}"));
    let response = schema.execute(query.as_str()).await;
    assert!(response.errors.is_empty(), "{query}: {:?}", response.errors);
    let mut value = response.data.into_json().unwrap();
    for key in &listing.path {
        value = value[*key].clone();
    }
    value
}

async fn walk(schema: &graphql::EnsSchema, listing: &Listing, by: &str, dir: &str) {
    let order = format!("order: {{by: {by}, dir: {dir}}}");
    let want = expected(&listing.rows, by, dir == "DESC");
    // Forwards.
    let (mut got, mut after) = (Vec::new(), None::<String>);
    loop {
        let cursor = after.as_ref().map(|c| format!(", after: \"{c}\"")).unwrap_or_default();
        let p = page(schema, listing, &format!("({order}, first: 2{cursor})")).await;
        got.extend(ids(&p));
        assert_eq!(p["pageInfo"]["hasPreviousPage"], json!(after.is_some()));
        if p["pageInfo"]["hasNextPage"] != json!(true) {
            break;
        }
        after = p["pageInfo"]["endCursor"].as_str().map(str::to_owned);
    }
    assert_eq!(got, want, "{} {by} {dir} forwards", listing.label);
    // Backwards from the end.
    let (mut got, mut before) = (Vec::new(), None::<String>);
    loop {
        let cursor = before.as_ref().map(|c| format!(", before: \"{c}\"")).unwrap_or_default();
        let p = page(schema, listing, &format!("({order}, last: 2{cursor})")).await;
        let mut chunk = ids(&p);
        chunk.extend(got);
        got = chunk;
        assert_eq!(p["pageInfo"]["hasNextPage"], json!(before.is_some()));
        if p["pageInfo"]["hasPreviousPage"] != json!(true) {
            break;
        }
        before = p["pageInfo"]["startCursor"].as_str().map(str::to_owned);
    }
    assert_eq!(got, want, "{} {by} {dir} backwards", listing.label);
}

async fn every_order_and_direction(backend: Backend, chain_id: u64) {
    let (anvil, driver, scenario) =
        support::devnet(chain_id, ScenarioOptions { eth_names: 24, per_block: 4 }).await;
    let db = TestDb::new(backend).await;
    let service = Service::start(&support::config(
        &db.url,
        scenario.deployment.chain_config(chain_id, &anvil.url),
    ))
    .await
    .unwrap();
    support::wait_for_block(&service.db, chain_id, scenario.last_block).await;
    let schema = graphql::build_schema(service.db.clone());
    let all = domain::Entity::find().all(&service.db).await.unwrap();

    let eth = all.iter().find(|d| d.name == "eth").unwrap().seq;
    let owner = format!("{:#x}", driver.accounts[1]);
    let listings = [
        Listing {
            label: "domains starts_with name0",
            // The connection arguments open with "(": splice the filter into them.
            query: "{ domains CONN }".into(),
            path: vec!["domains"],
            filter: "where: {name: {starts_with: \"name0\"}}, ",
            rows: all.iter().filter(|d| d.name.starts_with("name0")).cloned().collect(),
        },
        Listing {
            label: "domains contains me01 (trigram index)",
            query: "{ domains CONN }".into(),
            path: vec!["domains"],
            filter: "where: {name: {contains: \"me01\"}}, ",
            rows: all.iter().filter(|d| d.name.contains("me01")).cloned().collect(),
        },
        Listing {
            label: "eth subdomains",
            query: "{ domain(by: {name: \"eth\"}) { subdomains CONN } }".into(),
            path: vec!["domain", "subdomains"],
            filter: "",
            rows: all.iter().filter(|d| d.parent_seq == Some(eth)).cloned().collect(),
        },
        Listing {
            label: "account domains",
            query: format!("{{ account(by: {{address: \"{owner}\"}}) {{ domains CONN }} }}"),
            path: vec!["account", "domains"],
            filter: "",
            rows: domain::Entity::find()
                .filter(domain::Column::Owner.eq(RawAddress::new(driver.accounts[1].0.0)))
                .all(&service.db)
                .await
                .unwrap(),
        },
    ];
    // Prefix and `contains` searches plan by how common the text is; zero thresholds force
    // the other plan (walk the order's index, test each name) so both are compared with the
    // sort here.
    let forced_scan = graphql::build_schema_with(
        service.db.clone(),
        graphql::connection::Tuning {
            common_prefix_rows: 0,
            common_text_rows: 0,
            common_text_estimate: 0,
        },
    );
    for listing in &listings {
        assert!(listing.rows.len() > 4, "{} has only {} rows", listing.label, listing.rows.len());
        for by in ORDERS {
            for dir in ["ASC", "DESC"] {
                walk(&schema, listing, by, dir).await;
                walk(&forced_scan, listing, by, dir).await;
            }
        }
    }

    // `contains` is an exact substring on both engines, `_` and `%` are not wildcards, and the
    // text is lowercased first (names are normalized, so lower case).
    for text in ["me01", "me_1", "m%01", "ME01", "e01.et"] {
        let query =
            format!("{{ domains(where: {{name: {{contains: \"{text}\"}}}}) {{ totalCount }} }}");
        let response = schema.execute(query.as_str()).await;
        assert!(response.errors.is_empty(), "{query}: {:?}", response.errors);
        let want = all.iter().filter(|d| d.name.contains(&text.to_lowercase())).count();
        assert_eq!(
            response.data.into_json().unwrap()["domains"]["totalCount"],
            json!(want),
            "{text}"
        );
    }

    // A cursor from NAME ASC is refused by DEPTH ASC.
    let p = page(&schema, &listings[2], "(order: {by: NAME, dir: ASC}, first: 1)").await;
    let cursor = p["pageInfo"]["endCursor"].as_str().unwrap().to_owned();
    let wrong = schema
        .execute(format!("{{ domain(by: {{name: \"eth\"}}) {{ subdomains(order: {{by: DEPTH}}, after: \"{cursor}\") {{ totalCount }} }} }}").as_str())
        .await;
    assert_eq!(
        wrong
            .errors
            .first()
            .and_then(|e| e.extensions.as_ref())
            .and_then(|x| x.get("code"))
            .map(|c| c.to_string()),
        Some("\"INVALID_CURSOR\"".into())
    );

    // starts_with without an order: by depth, then id.
    let default = schema
        .execute("{ domains(where: {name: {starts_with: \"name0\"}}) { edges { node { id } } } }")
        .await;
    let got: Vec<String> = default.data.into_json().unwrap()["domains"]["edges"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["node"]["id"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(got, expected(&listings[0].rows, "DEPTH", false));
    service.stop().await;
}

crate::support::on_both_engines!(every_order_and_direction, 31_450);
