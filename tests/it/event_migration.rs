//! Migration 10 converts an existing hex-text event history to the compact form: a database
//! written by the earlier schema keeps every event, and the dump (which renders events back
//! as hex) shows exactly the rows that were there, on both engines. Migration 16 then names
//! each domain event's domain by its number instead of its node (0 where no domain row
//! stands for the node), also while the node index and the domain events' index are set
//! aside for a first backfill. Migration 17 packs topics and data word by word (zero words,
//! padded addresses, a string's trailing zeros, a partial final word), and the dump, which
//! unpacks them, still shows every byte.

use migrations::{Migrator, MigratorTrait};
use sea_orm::{ConnectionTrait, Database};
use serde_json::{Value, json};

use crate::support::{Backend, TestDb};

/// Old-format rows: `(chain, block, log, seq, ts, block hash, tx hash, tx index, from, to,
/// address, selector, topics, data, node)`.
fn old_rows() -> Vec<Value> {
    let h = |b: u8| format!("0x{}", hex::encode([b; 32]));
    let a = |b: u8| format!("0x{}", hex::encode([b; 20]));
    let new_owner = "0xce0457fe73731f824cc272376169235128c118b49d344817417c6d108d155e82";
    let transfer_batch = "0x4a39dc06d4c0dbc64b70af90fd698a233a518aa5d07e595d983b8c0526c8f7fb";
    let addr_changed = "0x52d7d861f09ab3d26239d492e8968629f95e9e318cf0b73bfddc441522a15fd2";
    // A string's length word and its content, which ends in zeros; then a zero word.
    let string_word = format!("0x{:064x}{}{}{}", 3, "657468", "00".repeat(29), "00".repeat(32));
    let row = |block: i64,
               log: i32,
               seq: i32,
               tx: i32,
               to: Option<String>,
               sel: &str,
               topics: String,
               data: &str,
               node: Option<String>| {
        json!({
            "chain_id": 1, "block_number": block, "log_index": log, "seq": seq,
            "timestamp": 1_600_000_000 + block, "block_hash": h(block as u8),
            "tx_hash": h(0x40 + tx as u8 + block as u8), "tx_index": tx, "tx_from": a(0xf0),
            "tx_to": to, "address": a(0x11), "selector": sel, "topics": topics, "data": data,
            "node": node,
        })
    };
    vec![
        row(
            5,
            0,
            0,
            0,
            Some(a(0x22)),
            new_owner,
            format!("{},{}", h(1), h(2)),
            &a(3).replace("0x", "0x000000000000000000000000"),
            Some(h(7)),
        ),
        row(5, 1, 0, 0, Some(a(0x22)), addr_changed, h(7), &string_word, None),
        row(
            6,
            3,
            0,
            2,
            None,
            transfer_batch,
            format!("{},{},{}", h(4), h(5), h(6)),
            "0xdeadbeef",
            Some(h(8)),
        ),
        row(
            6,
            3,
            1,
            2,
            None,
            transfer_batch,
            format!("{},{},{}", h(4), h(5), h(6)),
            "0xdeadbeef",
            Some(h(9)),
        ),
        row(9, 0, 0, 1, Some(a(0x33)), new_owner, String::new(), "0x", Some(h(10))),
    ]
}

async fn converts(backend: Backend) {
    let db = TestDb::new(backend).await;
    let conn = Database::connect(&db.url).await.unwrap();
    Migrator::up(&conn, Some(9)).await.unwrap();
    let rows = old_rows();
    for r in &rows {
        let text = |k: &str| r[k].as_str().map_or("NULL".to_owned(), |v| format!("'{v}'"));
        conn.execute_unprepared(&format!(
            "INSERT INTO events (chain_id, block_number, log_index, seq, timestamp, block_hash, \
             tx_hash, tx_index, tx_from, tx_to, address, selector, topics, data, node) VALUES \
             ({}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {})",
            r["chain_id"],
            r["block_number"],
            r["log_index"],
            r["seq"],
            r["timestamp"],
            text("block_hash"),
            text("tx_hash"),
            r["tx_index"],
            text("tx_from"),
            text("tx_to"),
            text("address"),
            text("selector"),
            text("topics"),
            text("data"),
            text("node"),
        ))
        .await
        .unwrap();
    }
    // An old index that was deferred is replaced by the new one, built by the migration.
    conn.execute_unprepared("DROP INDEX events_from").await.unwrap();
    conn.execute_unprepared(
        "INSERT INTO deferred_indexes (name, definition) \
         VALUES ('events_from', 'CREATE INDEX events_from ON events (tx_from)')",
    )
    .await
    .unwrap();

    // The domains of nodes 7 and 8; 9 and 10 have none.
    let owner = format!("0x{}", "ab".repeat(20));
    crate::domain_key_migration::insert_domain(&conn, 1, 7, None, "seven", &owner).await;
    crate::domain_key_migration::insert_domain(&conn, 1, 8, None, "eight", &owner).await;

    // Migrations 10 to 15; then a first backfill sets two of the indexes aside.
    Migrator::up(&conn, Some(6)).await.unwrap();
    for (name, definition) in [
        ("domains_node", "CREATE INDEX domains_node ON domains (substr(id, 25))"),
        (
            "events_node",
            "CREATE INDEX events_node ON events (chain_id, node, timestamp, block_number, \
             log_index, seq) WHERE node IS NOT NULL",
        ),
    ] {
        conn.execute_unprepared(&format!("DROP INDEX {name}")).await.unwrap();
        conn.execute_unprepared(&format!(
            "INSERT INTO deferred_indexes (name, definition) VALUES ('{name}', '{definition}')"
        ))
        .await
        .unwrap();
    }

    Migrator::up(&conn, None).await.unwrap();

    let pending = ensemble::store::query_indexes::pending(&conn).await.unwrap();
    assert_eq!(pending, ["domains_node", "events_domain"], "recorded again, not built");
    let domain_of = |node: &Value| match node.as_str().map(|n| n.as_bytes()[2..4].to_vec()) {
        None => Value::Null,
        Some(b) if b == b"07" => json!((1_i64 << 32) + 1),
        Some(b) if b == b"08" => json!((1_i64 << 32) + 2),
        Some(_) => json!(0),
    };
    let rows: Vec<Value> = rows
        .into_iter()
        .map(|mut r| {
            let node = r.as_object_mut().unwrap().remove("node").unwrap();
            r["domain_seq"] = domain_of(&node);
            r
        })
        .collect();
    assert_eq!(ensemble::store::query_indexes::build(&conn).await.unwrap(), 2);

    let dump = ensemble::dump::dump(&conn).await.unwrap();
    let events: Vec<Value> = dump
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|l| l["table"] == "events")
        .map(|l| l["row"].clone())
        .collect();
    assert_eq!(events, rows, "every event survives the conversion unchanged");
    // The new indexes exist: creating one again fails.
    for name in ["event_transactions_from", "events_domain", "events_address"] {
        let again = format!("CREATE INDEX {name} ON events (chain_id)");
        assert!(conn.execute_unprepared(&again).await.is_err(), "{name} exists");
    }
    for column in ["node", "tx_from", "address"] {
        let select = format!("SELECT {column} FROM events");
        assert!(conn.execute_unprepared(&select).await.is_err(), "events.{column} is gone");
    }
    // The conversion's temporary node index is gone: its name is free again.
    conn.execute_unprepared("CREATE INDEX events_conversion_domains_node ON domains (chain_id)")
        .await
        .expect("the temporary index was dropped");
}

crate::support::on_both_engines!(converts);

/// Unpacked topics and data of the `i`-th row of [`packs_in_batches`]: a hash-like and an
/// address topic; a small number, a short string and sometimes a partial final word.
fn raw_words(i: u32) -> (Vec<u8>, Vec<u8>) {
    let mut hash = [0x5a_u8; 32];
    hash[..4].copy_from_slice(&i.to_be_bytes());
    let mut address = [0_u8; 32];
    address[12..16].copy_from_slice(&i.to_le_bytes());
    let mut number = [0_u8; 32];
    number[28..].copy_from_slice(&i.to_be_bytes());
    let mut string = [0_u8; 32];
    string[..3].copy_from_slice(b"eth");
    let mut data = [number, string].concat();
    if i.is_multiple_of(3) {
        data.extend([0xde, 0xad]);
    }
    ([hash, address].concat(), data)
}

/// Migration 17 converts a history larger than its batch: every row, once, on both engines.
async fn packs_in_batches(backend: Backend) {
    use entities::event;
    use sea_orm::{EntityTrait, QueryOrder, TransactionTrait};

    const ROWS: u32 = 4_500;
    let db = TestDb::new(backend).await;
    let conn = Database::connect(&db.url).await.unwrap();
    Migrator::up(&conn, Some(16)).await.unwrap();
    // The columns as migration 16 left them, the sender still on the event.
    let backend = conn.get_database_backend();
    let insert = match backend {
        sea_orm::DatabaseBackend::Postgres => {
            "INSERT INTO events (chain_id, block_number, log_index, seq, timestamp, tx_index, \
             tx_from, address, selector, topics, data) \
             VALUES ($1, $2, $3, 0, 1700000000, 0, $4, $4, 0, $5, $6)"
        }
        _ => {
            "INSERT INTO events (chain_id, block_number, log_index, seq, timestamp, tx_index, \
             tx_from, address, selector, topics, data) \
             VALUES (?1, ?2, ?3, 0, 1700000000, 0, ?4, ?4, 0, ?5, ?6)"
        }
    };
    let txn = conn.begin().await.unwrap();
    for i in 0..ROWS {
        let (topics, data) = raw_words(i);
        let values: [sea_orm::Value; 6] = [
            (1 + i64::from(i % 2)).into(),
            i64::from(i / 4).into(),
            ((i % 4) as i32).into(),
            vec![0xf0_u8; 20].into(),
            topics.into(),
            data.into(),
        ];
        txn.execute_raw(sea_orm::Statement::from_sql_and_values(backend, insert, values))
            .await
            .unwrap();
    }
    txn.commit().await.unwrap();

    Migrator::up(&conn, None).await.unwrap();

    let rows = event::Entity::find()
        .order_by_asc(event::Column::BlockNumber)
        .order_by_asc(event::Column::LogIndex)
        .all(&conn)
        .await
        .unwrap();
    assert_eq!(rows.len(), ROWS as usize);
    for row in rows {
        let i = (row.block_number * 4 + i64::from(row.log_index)) as u32;
        let (topics, data) = raw_words(i);
        assert_eq!(row.topics.unpack().unwrap(), topics, "row {i} topics");
        assert_eq!(row.data.unpack().unwrap(), data, "row {i} data");
        assert!(row.topics.as_bytes().len() < topics.len(), "row {i} is packed");
    }
}

crate::support::on_both_engines!(packs_in_batches);
