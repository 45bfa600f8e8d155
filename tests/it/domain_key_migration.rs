//! Migration 11 converts text domain ids to 56-byte keys. A database written by the earlier
//! schema keeps its domains, parent links and registrations (the dump, which renders keys as
//! Omnigraph ids, shows the same ids), GraphQL finds them by id and walks parent and children,
//! and a reorg journal written before the migration (row images holding text ids) still
//! rolls back, on both engines. Migration 12 then drops `domains.registration_id`: the dump
//! still shows each domain's latest registration, now derived from its registration count;
//! and on PostgreSQL migration 13 leaves the text keys comparing bytewise. Migration 14 drops
//! the registry and node columns (the key holds them) and stores the label hash and owners
//! as bytes: the dump shows the same hex, and the old journal's hex images still roll back.
//! Migration 15 numbers the domains per chain by creation (`seq`), rebuilds the listing
//! indexes on it (a deferred one is recorded again in its new form), keeps the name search
//! working, and gives the old journal's images their row's number. Migration 19 names each
//! parent by its number (`parent_seq`), in the rows and in the old journal's images, and
//! children are still found through their parent. Migration 24 keys registrations by
//! (domain, index) bytes: the ids read back as the same text, a domain's registrations list in
//! index order (not text order), and an old journal image of a registration still restores.
//! Migration 25 keys renewals by (registration, index) bytes, parsed from the text ids.
//! Migration 26 keys resolver records by (chain, resolver, node) bytes, in the record rows and
//! in their address and text rows: the ids read back as the same text, GraphQL lists a
//! resolver's records and finds a node's, references resolve, old cursors are refused, the
//! unused node index is forgotten even when deferred, and old journal images still restore.
//! Migration 27 stores whether a label is normalized instead of its rendering: labels render
//! as before, and an old image (holding the rendering) restores as normalized or not.

use migrations::{Migrator, MigratorTrait};
use sea_orm::{ConnectionTrait, Database, DatabaseConnection};
use serde_json::{Value, json};

use crate::support::{Backend, TestDb};

const REGISTRY: &str = "0x00000000000c2e074ec69a0dfb2997ba6c7d2e1e";
const OLD_OWNER: &str = "0xcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcd";
const RESOLVER: &str = "0x4976fb03c32e5b8cfe2b6ccb31c09ba78ebaba41";

fn node(byte: u8) -> String {
    format!("0x{}", hex::encode([byte; 32]))
}

fn id(chain: u64, byte: u8) -> String {
    format!("{chain}-{REGISTRY}-{}", node(byte))
}

/// The text id of `RESOLVER`'s records for node `byte` repeated on `chain`.
fn record(chain: u64, byte: u8) -> String {
    format!("{chain}-{RESOLVER}-{}", node(byte))
}

/// A domain row of schema 10 (text ids; schema 9 is the same), in `REGISTRY` with node
/// `byte` repeated, under the domain of node `parent` repeated.
pub(crate) async fn insert_domain(
    db: &DatabaseConnection,
    chain: u64,
    byte: u8,
    parent: Option<u8>,
    name: &str,
    owner: &str,
) {
    let parent = parent.map_or("NULL".to_owned(), |p| format!("'{}'", id(chain, p)));
    let registration =
        if parent == "NULL" { "NULL".to_owned() } else { format!("'{}-0'", id(chain, byte)) };
    db.execute_unprepared(&format!(
        "INSERT INTO domains (id, chain_id, registry, node, label_hash, parent_id, owner, \
         registry_owner, resolver, ttl, name, depth, migrated, registration_id, \
         registration_count, registration_start, registration_expiry, created_block, created_at) \
         VALUES ('{}', {chain}, '{REGISTRY}', '{}', '{}', {parent}, '{owner}', '{owner}', NULL, \
         NULL, '{name}', {}, TRUE, {registration}, {}, 10, 20, 1, 2)",
        id(chain, byte),
        node(byte),
        node(byte ^ 0xff),
        name.split('.').count(),
        i32::from(registration != "NULL"),
    ))
    .await
    .unwrap();
}

fn rows(dump: &str, table: &str) -> Vec<Value> {
    dump.lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|l| l["table"] == table)
        .map(|l| l["row"].clone())
        .collect()
}

async fn converts(backend: Backend) {
    let db = TestDb::new(backend).await;
    let conn = Database::connect(&db.url).await.unwrap();
    Migrator::up(&conn, Some(10)).await.unwrap();
    let owner = format!("0x{}", "ab".repeat(20));
    insert_domain(&conn, 1, 1, None, "eth", &owner).await;
    insert_domain(&conn, 1, 2, Some(1), "vitalik.eth", &owner).await;
    insert_domain(&conn, 8453, 3, None, "base", &owner).await;
    let other = format!("0x{}", "cd".repeat(20));
    insert_domain(&conn, 1, 4, Some(1), "old.eth", &other).await;
    // Three registrations of one domain; as text their ids sort 0, 10, 2.
    for index in [0, 10, 2] {
        conn.execute_unprepared(&format!(
            "INSERT INTO registrations (id, domain_id, \"index\", kind, registrar_chain_id, \
             registrar, registrant, start, expiry, grace_period, base_cost, premium, referrer, \
             fuses, wrapped, renewal_count, block_number) VALUES ('{0}-{index}', '{0}', {index}, \
             'BaseRegistrar', 1, '{REGISTRY}', NULL, 10, 20, 0, NULL, NULL, NULL, NULL, FALSE, 0, 1)",
            id(1, 2)
        ))
        .await
        .unwrap();
    }

    // Renewals of registration 0 (inserted out of order), and one of a registration on a chain
    // whose id has four digits: migration 25 parses the chain id's length from the text.
    for (registration, index) in [
        (format!("{}-0", id(1, 2)), 1),
        (format!("{}-0", id(1, 2)), 0),
        (format!("{}-7", id(8453, 3)), 2),
    ] {
        conn.execute_unprepared(&format!(
            "INSERT INTO renewals (id, registration_id, \"index\", duration, expiry, base_cost, \
             premium, referrer, block_number, timestamp) VALUES ('{registration}-{index}', \
             '{registration}', {index}, 5, 25, NULL, NULL, NULL, 2, 3)"
        ))
        .await
        .unwrap();
    }

    // A journaled window above finality, written before the migration: it created
    // `vitalik.eth` and changed the owners of `eth` and `old.eth`, whose prior images hold
    // text ids (the parent's among them).
    let prior = json!({
        "id": id(1, 1), "chain_id": 1, "registry": REGISTRY, "node": node(1),
        "label_hash": node(0xfe), "parent_id": null, "owner": OLD_OWNER, "registry_owner": owner,
        "resolver": null, "ttl": null, "name": "eth", "depth": 1, "migrated": true,
        "registration_id": null, "registration_count": 0, "registration_start": 10,
        "registration_expiry": 20, "created_block": 1, "created_at": 2,
    });
    conn.execute_unprepared(
        "INSERT INTO journal_windows (chain_id, window_start, window_end, end_hash, \
         start_parent_hash) VALUES (1, 100, 110, '0xend', '0xparent')",
    )
    .await
    .unwrap();
    let mut child_prior = prior.clone();
    child_prior["id"] = json!(id(1, 4));
    child_prior["node"] = json!(node(4));
    child_prior["parent_id"] = json!(id(1, 1));
    child_prior["name"] = json!("old.eth");
    child_prior["depth"] = json!(2);
    for (key, image) in [
        (id(1, 1), Some(prior.to_string())),
        (id(1, 2), None),
        (id(1, 4), Some(child_prior.to_string())),
    ] {
        let image = image.map_or("NULL".to_owned(), |j| format!("'{j}'"));
        conn.execute_unprepared(&format!(
            "INSERT INTO journal_entries (chain_id, window_start, table_name, row_key, prior) \
             VALUES (1, 100, 'domains', '{key}', {image})"
        ))
        .await
        .unwrap();
    }
    // The window also changed registration 0's expiry; its image holds the text id and the
    // domain and index columns that migration 24 drops.
    let registration_prior = json!({
        "id": format!("{}-0", id(1, 2)), "domain_id": id(1, 2), "index": 0,
        "kind": "BaseRegistrar", "registrar_chain_id": 1, "registrar": REGISTRY,
        "registrant": null, "start": 10, "expiry": 5, "grace_period": 0, "base_cost": null,
        "premium": null, "referrer": null, "fuses": null, "wrapped": false, "renewal_count": 0,
        "block_number": 1,
    });
    conn.execute_unprepared(&format!(
        "INSERT INTO journal_entries (chain_id, window_start, table_name, row_key, prior) \
         VALUES (1, 100, 'registrations', '{}-0', '{registration_prior}')",
        id(1, 2)
    ))
    .await
    .unwrap();

    // A known and two unknown labels, keyed by hex text until migration 21, and rendered as
    // text until migration 27.
    conn.execute_unprepared(&format!(
        "INSERT INTO labels (label_hash, label, interpreted) VALUES ('{}', 'eth', 'eth'), \
         ('{}', NULL, '[{}]'), ('{}', NULL, '[{}]')",
        node(0xfe),
        node(0xfd),
        &node(0xfd)[2..],
        node(0xfc),
        &node(0xfc)[2..]
    ))
    .await
    .unwrap();
    // The window had forgotten label 0xfc (a made-up change, to see the image restore): its
    // image holds the rendering, which migration 27 drops.
    let label_prior = json!({ "label_hash": node(0xfc), "label": "old", "interpreted": "old" });
    conn.execute_unprepared(&format!(
        "INSERT INTO journal_entries (chain_id, window_start, table_name, row_key, prior) \
         VALUES (1, 100, 'labels', '{}', '{label_prior}')",
        node(0xfc)
    ))
    .await
    .unwrap();

    // Resolver rows, which migration 22 moves into tables without rowids on SQLite and
    // migration 26 keys by bytes (the chain ids have one and four digits).
    for sql in [
        format!(
            "INSERT INTO resolver_records (id, chain_id, resolver, node, name, contenthash, \
             pubkey_x, pubkey_y, version) VALUES ('{}', 1, '{RESOLVER}', '{}', 'vitalik.eth', \
             NULL, NULL, NULL, 0), ('{}', 8453, '{RESOLVER}', '{}', NULL, '0xe301', NULL, NULL, 1)",
            record(1, 2),
            node(2),
            record(8453, 3),
            node(3)
        ),
        format!(
            "INSERT INTO resolver_addresses (record_id, coin_type, address) VALUES \
             ('{}', 60, '{owner}'), ('{}', 60, '{owner}'), ('{}', 0, '0x0014aa')",
            record(1, 2),
            record(8453, 3),
            record(8453, 3)
        ),
        format!(
            "INSERT INTO resolver_texts (record_id, key_hash, key, value) VALUES \
             ('{}', '{}', 'url', 'x')",
            record(1, 2),
            node(0xbb)
        ),
    ] {
        conn.execute_unprepared(&sql).await.unwrap();
    }
    // The same window set chain 1's record name and its address and text records; the images
    // hold text ids, and the record's chain, resolver and node columns that migration 26 drops.
    let record_prior = json!({
        "id": record(1, 2), "chain_id": 1, "resolver": RESOLVER, "node": node(2),
        "name": "old.eth", "contenthash": null, "pubkey_x": null, "pubkey_y": null, "version": 0,
    });
    let entries_prior = json!({
        "addresses": [{ "record_id": record(1, 2), "coin_type": 60, "address": OLD_OWNER }],
        "texts": [{ "record_id": record(1, 2), "key_hash": node(0xbb), "key": "url", "value": "old" }],
    });
    for (table, image) in [("resolver_records", record_prior), ("record_entries", entries_prior)] {
        conn.execute_unprepared(&format!(
            "INSERT INTO journal_entries (chain_id, window_start, table_name, row_key, prior) \
             VALUES (1, 100, '{table}', '{}', '{image}')",
            record(1, 2)
        ))
        .await
        .unwrap();
    }
    // ... and had set the node index of resolver records aside, which migration 26 forgets.
    conn.execute_unprepared("DROP INDEX resolver_records_node").await.unwrap();
    conn.execute_unprepared(
        "INSERT INTO deferred_indexes (name, definition) VALUES ('resolver_records_node', \
         'CREATE INDEX resolver_records_node ON resolver_records (node)')",
    )
    .await
    .unwrap();

    // A first backfill had set the owner-by-name listing aside (migration 9).
    conn.execute_unprepared("DROP INDEX domains_owner_name_id").await.unwrap();
    conn.execute_unprepared(
        "INSERT INTO deferred_indexes (name, definition) VALUES ('domains_owner_name_id', \
         'CREATE INDEX domains_owner_name_id ON domains (owner, name, id)')",
    )
    .await
    .unwrap();

    Migrator::up(&conn, None).await.unwrap();

    // The dump renders keys as Omnigraph ids: (id, registration id, name) of every domain,
    // and (id, domain id) of the registration, are the text that was stored. A parent is
    // named by its creation number since migration 19 (`eth` is chain 1's first domain).
    let after = ensemble::dump::dump(&conn).await.unwrap();
    let mut domains: Vec<Value> =
        rows(&after, "domains").iter().map(|d| json!([d[0], d[5], d[13], d[10]])).collect();
    domains.sort_by_key(|d| d[3].as_str().unwrap_or_default().to_owned());
    assert_eq!(
        domains,
        vec![
            json!([id(8453, 3), null, null, "base"]),
            json!([id(1, 1), null, null, "eth"]),
            json!([id(1, 4), (1_i64 << 32) + 1, format!("{}-0", id(1, 4)), "old.eth"]),
            json!([id(1, 2), (1_i64 << 32) + 1, format!("{}-0", id(1, 2)), "vitalik.eth"]),
        ]
    );
    assert!(
        conn.execute_unprepared("SELECT registration_id FROM domains").await.is_err(),
        "migration 12 dropped the stored registration id"
    );
    // Migration 14: registry and node come from the key, the hex columns from bytes.
    let eth = rows(&after, "domains").into_iter().find(|d| d[10] == "eth").unwrap();
    assert_eq!(
        [&eth[2], &eth[3], &eth[4], &eth[6], &eth[7], &eth[8]],
        [
            &json!(REGISTRY),
            &json!(node(1)),
            &json!(node(0xfe)),
            &json!(owner),
            &json!(owner),
            &Value::Null
        ]
    );
    for column in ["registry", "node"] {
        assert!(
            conn.execute_unprepared(&format!("SELECT {column} FROM domains")).await.is_err(),
            "migration 14 dropped domains.{column}"
        );
    }
    let stored = conn
        .query_one_raw(sea_orm::Statement::from_string(
            conn.get_database_backend(),
            "SELECT length(owner) AS n FROM domains WHERE name = 'eth'",
        ))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(stored.try_get::<i32>("", "n").unwrap(), 20, "the owner is 20 raw bytes");
    // Migrations 22 and 26: the resolver rows survive both rebuilds, read back as the text
    // they were, and so does the address index.
    assert_eq!(
        rows(&after, "resolver_records"),
        vec![
            json!([record(1, 2), 1, RESOLVER, node(2), "vitalik.eth", null, null, null, 0]),
            json!([record(8453, 3), 8453, RESOLVER, node(3), null, "0xe301", null, null, 1]),
        ]
    );
    assert_eq!(
        rows(&after, "resolver_addresses"),
        vec![
            json!([record(1, 2), 60, owner]),
            json!([record(8453, 3), 0, "0x0014aa"]),
            json!([record(8453, 3), 60, owner]),
        ]
    );
    assert_eq!(rows(&after, "resolver_texts"), vec![json!([record(1, 2), node(0xbb), "url", "x"])]);
    for (table, column, bytes) in [
        ("resolver_records", "id", 56),
        ("resolver_addresses", "record_id", 56),
        ("resolver_texts", "record_id", 56),
        ("resolver_texts", "key_hash", 32),
    ] {
        let stored = conn
            .query_one_raw(sea_orm::Statement::from_string(
                conn.get_database_backend(),
                format!(
                    "SELECT min(length({column})) AS n, max(length({column})) AS m FROM {table}"
                ),
            ))
            .await
            .unwrap()
            .unwrap();
        let lengths: (i32, i32) =
            (stored.try_get("", "n").unwrap(), stored.try_get("", "m").unwrap());
        assert_eq!(lengths, (bytes, bytes), "{table}.{column} holds raw bytes");
    }
    for column in ["chain_id", "resolver", "node"] {
        let select = format!("SELECT resolver_records.{column} FROM resolver_records");
        assert!(
            conn.execute_unprepared(&select).await.is_err(),
            "migration 26 dropped resolver_records.{column}"
        );
    }
    if matches!(backend, Backend::Sqlite) {
        let clustered = conn
            .query_one_raw(sea_orm::Statement::from_string(
                sea_orm::DatabaseBackend::Sqlite,
                "SELECT count(*) AS n FROM sqlite_master WHERE sql LIKE '%WITHOUT ROWID' \
                 AND name IN ('labels', 'resolver_addresses', 'resolver_texts', 'registrations', \
                 'resolver_records')",
            ))
            .await
            .unwrap()
            .unwrap();
        assert_eq!(clustered.try_get::<i64>("", "n").unwrap(), 5);
        let plan = conn
            .query_one_raw(sea_orm::Statement::from_string(
                sea_orm::DatabaseBackend::Sqlite,
                "EXPLAIN QUERY PLAN SELECT record_id FROM resolver_addresses WHERE address = '0xaa'",
            ))
            .await
            .unwrap()
            .unwrap();
        let detail: String = plan.try_get("", "detail").unwrap();
        assert!(detail.contains("resolver_addresses_address"), "{detail}");
    }
    // Migrations 21 and 27: label hashes are raw bytes, and read back as the hex they were;
    // the renderings are derived, and read back as they were stored.
    assert_eq!(
        rows(&after, "labels"),
        vec![
            json!([node(0xfc), null, format!("[{}]", &node(0xfc)[2..])]),
            json!([node(0xfd), null, format!("[{}]", &node(0xfd)[2..])]),
            json!([node(0xfe), "eth", "eth"]),
        ]
    );
    assert!(
        conn.execute_unprepared("SELECT labels.interpreted FROM labels").await.is_err(),
        "migration 27 dropped labels.interpreted"
    );
    let stored = conn
        .query_one_raw(sea_orm::Statement::from_string(
            conn.get_database_backend(),
            "SELECT min(length(label_hash)) AS n FROM labels",
        ))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(stored.try_get::<i32>("", "n").unwrap(), 32, "label hashes are 32 raw bytes");
    if matches!(backend, Backend::Postgres) {
        // Migration 13: text keys compare bytewise.
        let row = conn
            .query_one_raw(sea_orm::Statement::from_string(
                sea_orm::DatabaseBackend::Postgres,
                "SELECT count(*) AS n FROM information_schema.columns WHERE collation_name = 'C' \
                 AND (table_name, column_name) IN (('registrations', 'registrar'), \
                 ('resolver_addresses', 'address'))",
            ))
            .await
            .unwrap()
            .unwrap();
        assert_eq!(row.try_get::<i64>("", "n").unwrap(), 2);
        let index = conn
            .query_one_raw(sea_orm::Statement::from_string(
                sea_orm::DatabaseBackend::Postgres,
                "SELECT count(*) AS n FROM pg_indexes WHERE indexname = 'resolver_addresses_address'",
            ))
            .await
            .unwrap()
            .unwrap();
        assert_eq!(index.try_get::<i64>("", "n").unwrap(), 1, "migration 26 rebuilt the index");
    }
    // Migration 24: (id, domain id, index) read back as they were, in index order.
    let registrations: Vec<Value> =
        rows(&after, "registrations").iter().map(|r| json!([r[0], r[1], r[2]])).collect();
    let registration = |index: i32| json!([format!("{}-{index}", id(1, 2)), id(1, 2), index]);
    assert_eq!(registrations, vec![registration(0), registration(2), registration(10)]);
    let stored = conn
        .query_one_raw(sea_orm::Statement::from_string(
            conn.get_database_backend(),
            "SELECT min(length(id)) AS n, max(length(id)) AS m FROM registrations",
        ))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(stored.try_get::<i32>("", "n").unwrap(), 60, "keys are 60 raw bytes");
    assert_eq!(stored.try_get::<i32>("", "m").unwrap(), 60);
    // Migration 25: (id, registration id, index) read back as they were, in key order.
    let renewals: Vec<Value> =
        rows(&after, "renewals").iter().map(|r| json!([r[0], r[1], r[2]])).collect();
    let renewal = |registration: String, index: i32| {
        json!([format!("{registration}-{index}"), registration, index])
    };
    assert_eq!(
        renewals,
        vec![
            renewal(format!("{}-0", id(1, 2)), 0),
            renewal(format!("{}-0", id(1, 2)), 1),
            renewal(format!("{}-7", id(8453, 3)), 2),
        ]
    );
    let stored = conn
        .query_one_raw(sea_orm::Statement::from_string(
            conn.get_database_backend(),
            "SELECT min(length(id)) AS n, max(length(id)) AS m FROM renewals",
        ))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(stored.try_get::<i32>("", "n").unwrap(), 64, "keys are 64 raw bytes");
    assert_eq!(stored.try_get::<i32>("", "m").unwrap(), 64);
    // Qualified: SQLite reads an unknown unqualified `"index"` as a string literal.
    for column in ["domain_id", "\"index\""] {
        let select = format!("SELECT registrations.{column} FROM registrations");
        assert!(
            conn.execute_unprepared(&select).await.is_err(),
            "migration 24 dropped registrations.{column}"
        );
    }

    let schema = graphql::build_schema(conn.clone());
    let query = format!(
        "{{ domain(by: {{id: \"{}\"}}) {{ id parent {{ id }} subdomains {{ edges {{ node {{ id }} }} }} }} \
           child: domain(by: {{id: \"{}\"}}) {{ registration {{ id }} registry {{ id }} \
             registrations(first: 2) {{ edges {{ node {{ id renewals {{ edges {{ node {{ id }} }} }} }} }} \
             pageInfo {{ endCursor }} }} }} \
           base: domain(by: {{id: \"{}\"}}) {{ canonical {{ name {{ interpreted }} }} }} }}",
        id(1, 1).to_uppercase().replace("0X", "0x"),
        id(1, 2),
        id(8453, 3),
    );
    let response = schema.execute(query.as_str()).await;
    assert!(response.errors.is_empty(), "{:?}", response.errors);
    let data = response.data.into_json().unwrap();
    assert_eq!(data["domain"]["id"], id(1, 1), "ids render in lowercase whatever the input");
    assert_eq!(data["domain"]["parent"], Value::Null);
    assert_eq!(
        data["domain"]["subdomains"]["edges"],
        json!([{ "node": { "id": id(1, 4) } }, { "node": { "id": id(1, 2) } }]),
        "children by name, found by the parent's number"
    );
    assert_eq!(data["child"]["registration"]["id"], format!("{}-0", id(1, 2)));
    let page = |data: &Value| -> Vec<Value> {
        data["child"]["registrations"]["edges"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e["node"]["id"].clone())
            .collect()
    };
    let registration_id = |index: i32| json!(format!("{}-{index}", id(1, 2)));
    assert_eq!(page(&data), [registration_id(0), registration_id(2)], "oldest first");
    let renewed: Vec<&Value> =
        data["child"]["registrations"]["edges"][0]["node"]["renewals"]["edges"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| &e["node"]["id"])
            .collect();
    let renewal_id = |index: i32| json!(format!("{}-0-{index}", id(1, 2)));
    assert_eq!(renewed, [&renewal_id(0), &renewal_id(1)], "a registration's renewals, in order");
    let cursor = data["child"]["registrations"]["pageInfo"]["endCursor"].as_str().unwrap();
    let next = schema
        .execute(format!(
            "{{ child: domain(by: {{id: \"{}\"}}) {{ registrations(after: \"{cursor}\") \
               {{ edges {{ node {{ id }} }} }} }} }}",
            id(1, 2)
        ))
        .await;
    assert!(next.errors.is_empty(), "{:?}", next.errors);
    assert_eq!(page(&next.data.into_json().unwrap()), [registration_id(10)], "the next page");
    // Cursors of the listings before migrations 24 and 25 (`{"of":"registrations","key":[0]}`
    // and `{"of":"renewals","key":[0]}`, which held the index) are refused, not compared with
    // a key.
    for listing in [
        "registrations(after: \"eyJvZiI6InJlZ2lzdHJhdGlvbnMiLCJrZXkiOlswXX0\") { totalCount }",
        "registration { renewals(after: \"eyJvZiI6InJlbmV3YWxzIiwia2V5IjpbMF19\") { totalCount } }",
    ] {
        let stale = schema
            .execute(format!("{{ child: domain(by: {{id: \"{}\"}}) {{ {listing} }} }}", id(1, 2)))
            .await;
        assert!(
            format!("{:?}", stale.errors).contains("INVALID_CURSOR"),
            "{listing}: {:?}",
            stale.errors
        );
    }
    assert_eq!(data["child"]["registry"]["id"], format!("1-{REGISTRY}-{}", node(1)));
    assert_eq!(data["base"]["canonical"]["name"]["interpreted"], "base");

    // Migration 26: a resolver's records are the key range of its chain and address.
    let resolved = schema
        .execute(format!(
            "{{ base: resolver(by: {{id: \"8453-{RESOLVER}\"}}) {{ records(first: 1) \
                 {{ edges {{ node {{ id node contenthash addresses {{ coinType address }} }} }} \
                 pageInfo {{ hasNextPage }} }} }} \
               mainnet: resolver(by: {{id: \"1-{RESOLVER}\"}}) {{ records {{ edges {{ node {{ id }} }} }} \
                 records_(by: {{node: \"{}\"}}) {{ id name texts {{ key value }} }} }} \
               account(by: {{address: \"{owner}\"}}) {{ nameReferences \
                 {{ edges {{ node {{ coinType resolver {{ id }} }} }} }} }} }}",
            node(2)
        ))
        .await;
    assert!(resolved.errors.is_empty(), "{:?}", resolved.errors);
    let resolved = resolved.data.into_json().unwrap();
    assert_eq!(
        resolved["base"]["records"],
        json!({
            "edges": [{ "node": {
                "id": record(8453, 3), "node": node(3), "contenthash": "0xe301",
                "addresses": [
                    { "coinType": 0, "address": "0x0014aa" },
                    { "coinType": 60, "address": owner },
                ],
            } }],
            "pageInfo": { "hasNextPage": false },
        })
    );
    assert_eq!(
        resolved["mainnet"]["records"]["edges"],
        json!([{ "node": { "id": record(1, 2) } }])
    );
    assert_eq!(
        resolved["mainnet"]["records_"],
        json!({ "id": record(1, 2), "name": "vitalik.eth", "texts": [{ "key": "url", "value": "x" }] })
    );
    let references: Vec<&Value> = resolved["account"]["nameReferences"]["edges"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| &e["node"]["resolver"]["id"])
        .collect();
    assert_eq!(references, [&json!(format!("1-{RESOLVER}")), &json!(format!("8453-{RESOLVER}"))]);
    // Cursors of those listings before migration 26 held the text id: refused.
    for listing in [
        format!(
            "resolver(by: {{id: \"1-{RESOLVER}\"}}) {{ records(after: \"eyJvZiI6InJlY29yZHMiLCJrZXkiOlsiMS0weCJdfQ\") {{ totalCount }} }}"
        ),
        format!(
            "account(by: {{address: \"{owner}\"}}) {{ nameReferences(after: \"eyJvZiI6Im5hbWVSZWZlcmVuY2VzIiwia2V5IjpbIjEtMHgiLDYwXX0\") {{ totalCount }} }}"
        ),
    ] {
        let stale = schema.execute(format!("{{ {listing} }}")).await;
        assert!(
            format!("{:?}", stale.errors).contains("INVALID_CURSOR"),
            "{listing}: {:?}",
            stale.errors
        );
    }

    let bad = schema.execute("{ domain(by: {id: \"1-0xnot-an-id\"}) { id } }").await;
    assert_eq!(bad.errors.len(), 1, "a malformed id is an error, not a silent null");
    assert!(bad.errors[0].message.contains("not a domain id"), "{:?}", bad.errors);

    // Migration 15: numbers by chain and creation (block, then id), listings on them.
    let mut seqs: Vec<Value> =
        rows(&after, "domains").iter().map(|d| json!([d[10], d[19]])).collect();
    seqs.sort_by_key(|d| d[1].as_i64());
    let base = |chain: i64| chain << 32;
    assert_eq!(
        seqs,
        vec![
            json!(["eth", base(1) + 1]),
            json!(["vitalik.eth", base(1) + 2]),
            json!(["old.eth", base(1) + 3]),
            json!(["base", base(8453) + 1])
        ]
    );
    let deferred = conn
        .query_all_raw(sea_orm::Statement::from_string(
            conn.get_database_backend(),
            "SELECT name, definition FROM deferred_indexes ORDER BY name",
        ))
        .await
        .unwrap();
    let deferred: Vec<(String, String)> = deferred
        .iter()
        .map(|r| (r.try_get("", "name").unwrap(), r.try_get("", "definition").unwrap()))
        .collect();
    // PostgreSQL indexes a bounded key of the name (migration 32).
    let owner_name = match conn.get_database_backend() {
        sea_orm::DatabaseBackend::Postgres => {
            "CREATE INDEX domains_owner_name_seq ON domains (owner, substr(name, 1, 256), seq)"
        }
        _ => "CREATE INDEX domains_owner_name_seq ON domains (owner, name, seq)",
    };
    assert_eq!(deferred, vec![("domains_owner_name_seq".to_owned(), owner_name.to_owned())]);
    let built = ensemble::store::query_indexes::build(&conn).await.unwrap();
    assert_eq!(built, 1, "the recorded definition builds");
    let search = schema
        .execute(
            "{ domains(where: {name: {contains: \"italik\"}}) { edges { node { id } } } \
               owned: account(by: {address: \"0xabababababababababababababababababababab\"}) \
               { domains(order: {by: DEPTH, dir: DESC}) { edges { node { id } } } } }",
        )
        .await;
    assert!(search.errors.is_empty(), "{:?}", search.errors);
    let search = search.data.into_json().unwrap();
    assert_eq!(search["domains"]["edges"], json!([{ "node": { "id": id(1, 2) } }]));
    let owned: Vec<&Value> = search["owned"]["domains"]["edges"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| &e["node"]["id"])
        .collect();
    // Depth descending, ties by number descending: chain 8453's `base` before `eth`.
    assert_eq!(owned, [&json!(id(1, 2)), &json!(id(8453, 3)), &json!(id(1, 1))]);

    // The old journal still undoes its window: `vitalik.eth` goes, `eth` gets its old owner.
    ensemble::store::journal::rollback(&conn, 1, 100).await.unwrap();
    let rolled = rows(&ensemble::dump::dump(&conn).await.unwrap(), "domains");
    assert_eq!(rolled.len(), 3, "{rolled:?}");
    let eth = rolled.iter().find(|d| d[10] == "eth").unwrap();
    assert_eq!(eth[6], OLD_OWNER);
    assert_eq!(eth[0], id(1, 1));
    assert_eq!(eth[19], json!((1_i64 << 32) + 1), "the restored image keeps its number");
    let child = rolled.iter().find(|d| d[10] == "old.eth").unwrap();
    assert_eq!(child[6], OLD_OWNER);
    assert_eq!(child[5], eth[19], "the restored image names its parent by number");
    let restored = rows(&ensemble::dump::dump(&conn).await.unwrap(), "registrations");
    let first = restored.iter().find(|r| r[2] == 0).unwrap();
    assert_eq!((&first[0], &first[8]), (&registration_id(0), &json!(5)), "the old image restored");
    // The old label image restores with its rendering's meaning: normalized.
    let labels = rows(&ensemble::dump::dump(&conn).await.unwrap(), "labels");
    assert_eq!(labels[0], json!([node(0xfc), "old", "old"]));
    // The old resolver images restore under the key: the record's name and its address and
    // text records as they were before the window.
    let dumped = ensemble::dump::dump(&conn).await.unwrap();
    let records = rows(&dumped, "resolver_records");
    assert_eq!(
        records[0],
        json!([record(1, 2), 1, RESOLVER, node(2), "old.eth", null, null, null, 0])
    );
    assert_eq!(records.len(), 2);
    let addresses = rows(&dumped, "resolver_addresses");
    assert_eq!(addresses[0], json!([record(1, 2), 60, OLD_OWNER]));
    assert_eq!(addresses.len(), 3, "the other records are untouched");
    assert_eq!(
        rows(&dumped, "resolver_texts"),
        vec![json!([record(1, 2), node(0xbb), "url", "old"])]
    );
}

crate::support::on_both_engines!(converts);
