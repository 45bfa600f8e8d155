//! The event history on a real chain: every stored event agrees with the receipt of the
//! transaction that emitted it; `Domain.events`, `Resolver.events` and `Account.events` list
//! exactly the rows they should, page forwards and backwards alike, and their filters narrow
//! them; a subscription streams events as the indexer applies them.

use std::time::Duration;

use alloy::{
    primitives::{B256, keccak256},
    providers::Provider,
};
use ensemble::Service;
use ensemble_devkit::devnet::scenario::ScenarioOptions;
use entities::{event, event_block, event_selector, event_transaction};
use futures::StreamExt;
use sea_orm::{ColumnTrait, EntityTrait, QueryFilter, QueryOrder};
use serde_json::{Value, json};

use crate::{
    connection_walk::{gql, walk},
    support::{self, Backend, TestDb},
};

fn error_code(response: &async_graphql::Response) -> Option<String> {
    response
        .errors
        .first()
        .and_then(|e| e.extensions.as_ref())
        .and_then(|x| x.get("code"))
        .map(|c| c.to_string().trim_matches('"').to_owned())
}

fn event_id(e: &event::Model) -> String {
    let base = format!("{}-{}-{}", e.chain_id, e.block_number, e.log_index);
    if e.seq == 0 { base } else { format!("{base}-{}", e.seq) }
}

/// Rows in the API's order: (timestamp, chain, block, log, seq).
fn ordered(mut rows: Vec<event::Model>) -> Vec<String> {
    rows.sort_by_key(|e| (e.timestamp, e.chain_id, e.block_number, e.log_index, e.seq));
    rows.iter().map(event_id).collect()
}

async fn history(backend: Backend, chain_id: u64) {
    let (anvil, mut driver, scenario) =
        support::devnet(chain_id, ScenarioOptions { eth_names: 12, per_block: 4 }).await;
    let d = scenario.deployment;
    let db = TestDb::new(backend).await;
    let service = Service::start(&support::config(&db.url, d.chain_config(chain_id, &anvil.url)))
        .await
        .unwrap();
    support::wait_for_block(&service.db, chain_id, scenario.last_block).await;
    let schema = graphql::build_schema(service.db.clone());
    let rows = event::Entity::find().all(&service.db).await.unwrap();
    assert!(rows.len() > 100, "the scenario emits hundreds of events, got {}", rows.len());

    // Every row is the log at its coordinates, names the transaction's sender, and has its
    // block's hash and its transaction's hash and recipient beside it.
    let provider = driver.provider().clone();
    let blocks: std::collections::HashMap<(i64, i64), Vec<u8>> = event_block::Entity::find()
        .all(&service.db)
        .await
        .unwrap()
        .into_iter()
        .map(|b| ((b.chain_id, b.block_number), b.hash))
        .collect();
    let transactions: std::collections::HashMap<(i64, i64, i32), event_transaction::Model> =
        event_transaction::Entity::find()
            .all(&service.db)
            .await
            .unwrap()
            .into_iter()
            .map(|t| ((t.chain_id, t.block_number, t.tx_index), t))
            .collect();
    let contracts: std::collections::HashMap<(i64, i32), Vec<u8>> =
        entities::contract::Entity::find()
            .all(&service.db)
            .await
            .unwrap()
            .into_iter()
            .map(|c| ((c.chain_id, c.code), c.address))
            .collect();
    // Words a row stores as references to its domain are read from the domain rows.
    let domains: std::collections::HashMap<i64, entities::domain::Model> =
        entities::domain::Entity::find()
            .all(&service.db)
            .await
            .unwrap()
            .into_iter()
            .map(|d| (d.seq, d))
            .collect();
    let subject = |row: &event::Model| {
        let domain = domains.get(&row.domain_seq?)?;
        let parent = domain.parent_seq.and_then(|p| domains.get(&p)).map(|p| p.node());
        Some(domain.subject_words(parent))
    };
    let (mut referring, mut to_parents) = (0, 0);
    let mut logs = std::collections::HashMap::new();
    let mut receipts = std::collections::HashMap::new();
    for row in &rows {
        let tx = &transactions[&(row.chain_id, row.block_number, row.tx_index)];
        let hash = B256::from_slice(&tx.hash);
        if let std::collections::hash_map::Entry::Vacant(slot) = receipts.entry(hash) {
            slot.insert(provider.get_transaction_receipt(hash).await.unwrap().unwrap());
        }
        let receipt = &receipts[&hash];
        assert_eq!(receipt.from.to_vec(), tx.tx_from, "sender of {}", event_id(row));
        assert_eq!(tx.timestamp, row.timestamp, "block time of {}'s transaction", event_id(row));
        assert_eq!(receipt.to.map(|a| a.to_vec()), tx.to_address, "recipient of {}", event_id(row));
        assert_eq!(receipt.transaction_index, Some(row.tx_index as u64));
        assert_eq!(
            receipt.block_hash.map(|h| h.to_vec()).as_ref(),
            blocks.get(&(row.chain_id, row.block_number))
        );
        let log = receipt
            .inner
            .logs()
            .iter()
            .find(|l| l.log_index == Some(row.log_index as u64))
            .unwrap_or_else(|| panic!("no log {} in {hash}", row.log_index));
        assert_eq!(log.address().to_vec(), contracts[&(row.chain_id, row.contract)]);
        assert_eq!(receipt.block_number, Some(row.block_number as u64));
        let topics = log.topics();
        assert_eq!(Some(&topics[0].0), event_selector::selector(row.selector));
        let words = subject(row);
        assert_eq!(
            topics[1..].iter().flat_map(|t| t.0).collect::<Vec<u8>>(),
            row.topics.unpack_with(words.as_ref()).unwrap(),
            "topics of {}",
            event_id(row)
        );
        assert_eq!(log.data().data.to_vec(), row.data.unpack_with(words.as_ref()).unwrap());
        let (topics_refer, topics_to_parent) = row.topics.needs_subject();
        referring += usize::from(topics_refer || row.data.needs_subject().0);
        to_parents += usize::from(topics_to_parent);
        logs.insert(event_id(row), (topics.to_vec(), log.data().data.to_vec()));
    }
    // Most domain events repeat their domain's node or label hash, and subnames' `NewOwner`
    // their parent's node: those words are stored as references, and read back exactly.
    assert!(referring > rows.len() / 3, "{referring} of {} rows refer to their domain", rows.len());
    assert!(to_parents > 0, "no NewOwner refers to its parent's node");
    // The API renders them back as the chain's hex: a row from the middle, and one that
    // refers to its domain's parent.
    let to_parent = rows.iter().find(|r| r.topics.needs_subject().1).unwrap();
    for sample in [&rows[rows.len() / 2], to_parent] {
        let tx = &transactions[&(sample.chain_id, sample.block_number, sample.tx_index)];
        let id = event_id(sample);
        let node_query = format!(
            "{{ account(by: {{address: \"{}\"}}) {{ events(where: {{timestamp: {{gte: \"{ts}\", lte: \"{ts}\"}}}}, first: 1000) {{ edges {{ node {{ id blockHash transactionHash to from topics data }} }} }} }} }}",
            alloy::hex::encode_prefixed(&tx.tx_from),
            ts = sample.timestamp
        );
        let data = gql(&schema, &node_query).await;
        let node = data["account"]["events"]["edges"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| &e["node"])
            .find(|n| n["id"] == json!(id))
            .unwrap_or_else(|| panic!("{id} listed"));
        assert_eq!(
            node["blockHash"],
            json!(alloy::hex::encode_prefixed(&blocks[&(sample.chain_id, sample.block_number)]))
        );
        assert_eq!(node["transactionHash"], json!(alloy::hex::encode_prefixed(&tx.hash)));
        assert_eq!(node["to"], json!(tx.to_address.as_ref().map(alloy::hex::encode_prefixed)));
        assert_eq!(node["from"], json!(alloy::hex::encode_prefixed(&tx.tx_from)));
        let (topics, data) = &logs[&id];
        let topics: Vec<String> = topics.iter().map(alloy::hex::encode_prefixed).collect();
        assert_eq!(node["topics"], json!(topics), "topics of {id}");
        assert_eq!(node["data"], json!(alloy::hex::encode_prefixed(data)), "data of {id}");
    }

    // Every domain event names a domain that exists (0 only for the root node).
    let seqs: std::collections::HashSet<i64> = entities::domain::Entity::find()
        .all(&service.db)
        .await
        .unwrap()
        .iter()
        .map(|d| d.seq)
        .collect();
    for row in rows.iter().filter(|e| e.domain_seq.is_some_and(|s| s != event::NO_DOMAIN)) {
        assert!(seqs.contains(&row.domain_seq.unwrap()), "domain of {}", event_id(row));
    }

    // Domain.events: the rows about the domain (by its number), in order, both directions.
    let name = "name005.eth";
    let domain = entities::domain::Entity::find()
        .filter(entities::domain::Column::Name.eq(name))
        .one(&service.db)
        .await
        .unwrap()
        .expect(name);
    assert_eq!(domain.id.node(), alloy::ens::namehash(name).as_slice());
    let subject = Some(domain.seq);
    let want = ordered(rows.iter().filter(|e| e.domain_seq == subject).cloned().collect());
    assert!(want.len() >= 4, "{name} has registration events: {want:?}");
    let got = walk(
        &schema,
        &format!("{{ domain(by: {{name: \"{name}\"}}) {{ events ARGS }} }}"),
        &["domain", "events"],
    )
    .await;
    assert_eq!(got, want, "events of {name}");

    // A selector filter keeps only that event; a time range keeps only its rows.
    let registered = format!("{:#x}", keccak256("NameRegistered(uint256,address,uint256)"));
    let data = gql(&schema, &format!(
        "{{ domain(by: {{name: \"{name}\"}}) {{ events(where: {{selector: {{eq: \"{registered}\"}}}}) {{ totalCount edges {{ node {{ topics address timestamp }} }} }} \
           registration {{ event {{ id topics }} }} }} }}"
    )).await;
    let events = &data["domain"]["events"];
    assert_eq!(events["totalCount"], json!(1), "one NameRegistered for {name}: {data}");
    assert_eq!(events["edges"][0]["node"]["topics"][0], json!(registered));
    assert_eq!(events["edges"][0]["node"]["address"], json!(format!("{:#x}", d.base_registrar)));
    assert_eq!(data["domain"]["registration"]["event"]["topics"][0], json!(registered));
    let registered_at = events["edges"][0]["node"]["timestamp"].as_str().unwrap().to_owned();
    let later = gql(&schema, &format!(
        "{{ domain(by: {{name: \"{name}\"}}) {{ events(where: {{timestamp: {{gt: \"{registered_at}\"}}}}) {{ edges {{ node {{ timestamp }} }} }} }} }}"
    )).await;
    let later = later["domain"]["events"]["edges"].as_array().unwrap();
    let expected_later = rows
        .iter()
        .filter(|e| e.domain_seq == subject && e.timestamp > registered_at.parse::<i64>().unwrap())
        .count();
    assert_eq!(later.len(), expected_later, "events after registration");

    // Resolver.events: the resolver's record events only.
    let resolver = format!("{:#x}", d.resolver);
    let want = ordered(
        rows.iter()
            .filter(|e| {
                contracts[&(e.chain_id, e.contract)] == d.resolver.to_vec()
                    && e.domain_seq.is_none()
            })
            .cloned()
            .collect(),
    );
    assert!(want.len() > 10, "the public resolver emitted record events");
    let got = walk(
        &schema,
        &format!("{{ resolver(by: {{contract: {{chainId: {chain_id}, address: \"{resolver}\"}}}}) {{ events ARGS }} }}"),
        &["resolver", "events"],
    )
    .await;
    assert_eq!(got, want, "events of the public resolver");

    // Account.events: everything the account sent; `from` narrows to it as well.
    let account = format!("{:#x}", driver.accounts[1]);
    let want = ordered(
        rows.iter()
            .filter(|e| {
                let tx = &transactions[&(e.chain_id, e.block_number, e.tx_index)];
                tx.tx_from == driver.accounts[1].to_vec()
            })
            .cloned()
            .collect(),
    );
    assert!(!want.is_empty());
    let got = walk(
        &schema,
        &format!("{{ account(by: {{address: \"{account}\"}}) {{ events ARGS }} }}"),
        &["account", "events"],
    )
    .await;
    assert_eq!(got, want, "events sent by account 1");
    let other = format!("{:#x}", driver.accounts[2]);
    let none = gql(&schema, &format!(
        "{{ account(by: {{address: \"{account}\"}}) {{ events(where: {{from: {{eq: \"{other}\"}}}}) {{ totalCount }} }} }}"
    )).await;
    assert_eq!(none["account"]["events"]["totalCount"], json!(0));

    // Bad filters and cursors are refused with a code.
    for (query, code) in [
        (
            format!(
                "{{ account(by: {{address: \"{account}\"}}) {{ events(where: {{timestamp: {{}}}}) {{ totalCount }} }} }}"
            ),
            "INVALID_ARGUMENT",
        ),
        (
            format!(
                "{{ account(by: {{address: \"{account}\"}}) {{ events(where: {{selector: {{eq: \"0x12\"}}}}) {{ totalCount }} }} }}"
            ),
            "INVALID_ARGUMENT",
        ),
        (
            format!(
                "{{ account(by: {{address: \"{account}\"}}) {{ events(after: \"eyJvZiI6InJlbmV3YWxzIiwia2V5IjpbMV19\") {{ totalCount }} }} }}"
            ),
            "INVALID_CURSOR",
        ),
    ] {
        let response = schema.execute(query.as_str()).await;
        assert_eq!(error_code(&response).as_deref(), Some(code), "{query}: {:?}", response.errors);
    }

    // A subscription to one domain sees its next event as soon as it is indexed.
    let owner = driver.accounts[1];
    let mut stream = schema.execute_stream(
        "subscription { domainEvents(where: {name: \"name010.eth\"}) { event { id transactionHash } domain { canonical { name { interpreted } } } } }",
    );
    // A stream subscribes when first polled; a subscription sees what is indexed after it.
    assert!(
        tokio::time::timeout(Duration::from_secs(1), stream.next()).await.is_err(),
        "nothing happened yet"
    );
    let mut seen = None;
    for round in 0..10 {
        support::activity(&mut driver, &d, owner, "name010", 2, &format!("sub{round}")).await;
        if let Ok(Some(response)) =
            tokio::time::timeout(Duration::from_secs(5), stream.next()).await
        {
            assert!(response.errors.is_empty(), "{:?}", response.errors);
            seen = Some(response.data.into_json().unwrap());
            break;
        }
    }
    let seen = seen.expect("a subscription event within ten rounds of activity");
    let streamed = &seen["domainEvents"];
    assert_eq!(streamed["domain"]["canonical"]["name"]["interpreted"], json!("name010.eth"));
    let id = streamed["event"]["id"].as_str().unwrap();
    let stored = event::Entity::find()
        .filter(event::Column::ChainId.eq(chain_id as i64))
        .order_by_desc(event::Column::BlockNumber)
        .all(&service.db)
        .await
        .unwrap();
    assert!(stored.iter().any(|e| event_id(e) == id), "streamed event {id} is stored");
    drop(stream);
    drop(anvil);
    service.stop().await;
}

crate::support::on_both_engines!(history, 31_470);

/// The next `graphql-transport-ws` message within `wait`, skipping websocket control frames
/// and protocol pings.
async fn next_protocol_message<S>(ws: &mut S, wait: Duration) -> Option<Value>
where
    S: futures::Stream<
            Item = Result<
                tokio_tungstenite::tungstenite::Message,
                tokio_tungstenite::tungstenite::Error,
            >,
        > + Unpin,
{
    use tokio_tungstenite::tungstenite::Message;
    let deadline = tokio::time::Instant::now() + wait;
    loop {
        let frame = tokio::time::timeout_at(deadline, ws.next()).await.ok()??.ok()?;
        let Message::Text(text) = frame else { continue };
        let value: Value = serde_json::from_str(text.as_str()).expect("protocol messages are JSON");
        if !matches!(value["type"].as_str(), Some("ping" | "pong" | "ka")) {
            return Some(value);
        }
    }
}

/// The same subscription over the real transport: a websocket to `/graphql` speaking
/// `graphql-transport-ws`, against a running service.
#[actix_rt::test]
async fn subscription_streams_over_websocket() {
    use futures::SinkExt;
    use tokio_tungstenite::tungstenite::{Message, client::IntoClientRequest};

    let chain_id = 31_472;
    let (anvil, mut driver, scenario) =
        support::devnet(chain_id, ScenarioOptions { eth_names: 12, per_block: 12 }).await;
    let d = scenario.deployment;
    let db = TestDb::new(Backend::Sqlite).await;
    let service = Service::start(&support::config(&db.url, d.chain_config(chain_id, &anvil.url)))
        .await
        .unwrap();
    support::wait_for_block(&service.db, chain_id, scenario.last_block).await;

    let mut request = format!("ws://{}/graphql", service.http_addr).into_client_request().unwrap();
    request.headers_mut().insert("Sec-WebSocket-Protocol", "graphql-transport-ws".parse().unwrap());
    let (mut ws, _) = tokio_tungstenite::connect_async(request).await.expect("websocket upgrade");
    let send = |v: Value| Message::Text(v.to_string().into());
    ws.send(send(json!({ "type": "connection_init" }))).await.unwrap();
    let ack = next_protocol_message(&mut ws, Duration::from_secs(10)).await.expect("an ack");
    assert_eq!(ack["type"], json!("connection_ack"), "{ack}");
    ws.send(send(json!({ "id": "1", "type": "subscribe", "payload": {
        "query": "subscription { domainEvents(where: {name: \"name010.eth\"}) { event { id } domain { canonical { name { interpreted } } } } }"
    }})))
    .await
    .unwrap();

    // Two blocks per round: the registrar token of name010.eth moves to account 8, then 9, so
    // every round has an event about the subscribed domain.
    let owner = driver.accounts[1];
    let mut seen = None;
    for round in 0..10 {
        support::activity(&mut driver, &d, owner, "name010", 2, &format!("ws{round}")).await;
        if let Some(message) = next_protocol_message(&mut ws, Duration::from_secs(5)).await {
            seen = Some(message);
            break;
        }
    }
    let seen = seen.expect("a subscription message within ten rounds of activity");
    assert_eq!(seen["type"], json!("next"), "{seen}");
    assert_eq!(
        seen["payload"]["data"]["domainEvents"]["domain"]["canonical"]["name"]["interpreted"],
        json!("name010.eth"),
        "{seen}"
    );
    ws.close(None).await.unwrap();
    drop(anvil);
    service.stop().await;
}
