//! The event history in compact form. `events` held every hash, address and log payload as
//! hex text and repeated the block hash and transaction facts on every event: about 700 bytes
//! a row before its indexes, most of the database. The new `events` stores raw bytes, the
//! selector as a small code (the frozen list below, the same as `entities::event_selector`),
//! and moves the block hash to `event_blocks` and the transaction hash and recipient to
//! `event_transactions`, one row per block and per transaction.
//!
//! Existing rows are converted in place (hex decoded by the engine: `unhex` on SQLite,
//! `decode(.., 'hex')` on PostgreSQL), so an upgraded database keeps its history. The listing
//! indexes are partial where a reader always filters: domain events have a node, resolver
//! events have none. If the old indexes were deferred (a first backfill in progress), the new
//! ones are built now rather than deferred again.

use sea_orm_migration::{prelude::*, sea_orm::DatabaseBackend};

/// Converts `events` to the compact form and adds `event_blocks` and `event_transactions`.
#[derive(DeriveMigrationName)]
pub(crate) struct Migration;

#[derive(Clone, Copy, DeriveIden)]
enum Events {
    Table,
    ChainId,
    BlockNumber,
    LogIndex,
    Seq,
    Timestamp,
    TxIndex,
    TxFrom,
    Address,
    Selector,
    Topics,
    Data,
    Node,
}

#[derive(Clone, Copy, DeriveIden)]
enum EventBlocks {
    Table,
    ChainId,
    BlockNumber,
    Hash,
}

#[derive(Clone, Copy, DeriveIden)]
enum EventTransactions {
    Table,
    ChainId,
    BlockNumber,
    TxIndex,
    Hash,
    ToAddress,
}

/// Selector codes as of this migration (frozen: later codes are appended in the entities
/// crate and never change these).
const SELECTORS: [&str; 28] = [
    "0xce0457fe73731f824cc272376169235128c118b49d344817417c6d108d155e82",
    "0xd4735d920b0f87494915f556dd9b54c8f309026070caea5c737245152564d266",
    "0x335721b01866dc23fbee8b6b2c7b1e14d6f05c28cd35a2c934239f94095602a0",
    "0x1d4f9bbfc9cab89d66e1a1562f2233ccbf1308cb4f63de2ead5787adddb8fa68",
    "0xb3d987963d01b2f68493b4bdb130988f157ea43070d4ad840fee0466ed9370d9",
    "0x9b87a00e30f1ac65d898f070f8a3488fe60517182d0a2098e1b4b93a54aa9bd6",
    "0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef",
    "0xca6abbe9d7f11422cb6ca7629fbf6fe9efb1c621f71ce8f02b9f2a230097404f",
    "0x3da24c024582931cfaf8267d8ed24d13a82a8068d5bd337d30ec45cea4e506ae",
    "0x69e37f151eb98a09618ddaa80c8cfaf1ce5996867c489f45b555b412271ebf27",
    "0xc2240194853531f1ae318dcef227de79c6ad0fd9d1b0e4fe08568415be2e08a5",
    "0xfa956c3bce4cb4b01166868ecaf0620566bc7e33fc70b0b9c6aef61e37e50b94",
    "0x0667086d08417333ce63f40d5bc2ef6fd330e25aaaf317b7c489541f8fe600fa",
    "0x93bc1a84707231b1d9552157299797c64a1a8c5bc79f05153716630c9c4936fc",
    "0x8ce7013e8abebc55c3890a68f5a27c67c3f7efa64e584de5fb22363c606fd340",
    "0xee2ba1195c65bcf218a83d874335c6bf9d9067b4c672f3c3bf16cf40de7586c4",
    "0x39873f00c80f4f94b7bd1594aebcf650f003545b74824d57ddf4939e3ff3a34b",
    "0xf675815a0817338f93a7da433f6bd5f5542f1029b11b455191ac96c7f6a9b132",
    "0xc3d58168c5ae7397731d063d5bbf3d657854427343f4c083240f7aacaa2d0f62",
    "0x4a39dc06d4c0dbc64b70af90fd698a233a518aa5d07e595d983b8c0526c8f7fb",
    "0x52d7d861f09ab3d26239d492e8968629f95e9e318cf0b73bfddc441522a15fd2",
    "0x65412581168e88a1e60c6459d7f44ae83ad0832e670826c05a4e2476b57af752",
    "0xb7d29e911041e8d9b843369e890bcb72c9388692ba48b65ac54e7214c4c348f7",
    "0xe379c1624ed7e714cc0937528a32359d69d5281337765313dba4e081b72d7578",
    "0x1d6f5e03d3f63eb58751986629a5439baee5079ff04f345becb66e23eb154e46",
    "0x448bc014f1536726cf8d54ff3d6481ed3cbc683c2591ca204274009afa09b1a1",
    "0xc6621ccb8f3f5a04bb6502154b2caf6adf5983fe76dfef1cfc9c42e3579db444",
    "0xd8c9334b1a9c2f9da342a0a2b32629c1a229b6445dad78947f674b44444a7550",
];

/// The listing indexes: `(name, leading columns, partial-index condition)`. Each ends with
/// the global event order, so a page is an index range scan, never a sort.
const INDEXES: [(&str, &str, &str); 3] = [
    (
        "events_node",
        "chain_id, node, timestamp, block_number, log_index, seq",
        " WHERE node IS NOT NULL",
    ),
    (
        "events_address",
        "chain_id, address, timestamp, block_number, log_index, seq",
        " WHERE node IS NULL",
    ),
    ("events_from", "tx_from, timestamp, chain_id, block_number, log_index, seq", ""),
];

/// On SQLite the three tables are `WITHOUT ROWID`: clustered on their primary key, they are
/// one B-tree each instead of a rowid table plus a key index (rows arrive in key order, and
/// a row is a few hundred bytes at most). PostgreSQL has no such option.
fn clustered(backend: DatabaseBackend, table: &mut TableCreateStatement) -> TableCreateStatement {
    if backend == DatabaseBackend::Sqlite {
        table.extra("WITHOUT ROWID");
    }
    table.to_owned()
}

/// SQL that decodes a `0x` hex text expression into bytes on `backend`.
fn unhex(backend: DatabaseBackend, expr: &str) -> String {
    match backend {
        DatabaseBackend::Postgres => format!("decode(substr({expr}, 3), 'hex')"),
        _ => format!("unhex(substr({expr}, 3))"),
    }
}

// The trait is declared with an elided `SchemaManager` lifetime; see the first migration.
#[allow(elided_lifetimes_in_paths)]
#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        let db = manager.get_connection();
        let backend = manager.get_database_backend();
        db.execute_unprepared("ALTER TABLE events RENAME TO events_text").await?;
        for (name, _, _) in INDEXES {
            db.execute_unprepared(&format!("DROP INDEX IF EXISTS {name}")).await?;
        }
        if backend == DatabaseBackend::Postgres {
            // PostgreSQL names the primary key after the table and keeps that name on rename.
            db.execute_unprepared("ALTER INDEX events_pkey RENAME TO events_text_pkey").await?;
        }
        manager
            .create_table(clustered(
                backend,
                Table::create()
                    .table(Events::Table)
                    .col(ColumnDef::new(Events::ChainId).big_integer().not_null())
                    .col(ColumnDef::new(Events::BlockNumber).big_integer().not_null())
                    .col(ColumnDef::new(Events::LogIndex).integer().not_null())
                    .col(ColumnDef::new(Events::Seq).integer().not_null())
                    .col(ColumnDef::new(Events::Timestamp).big_integer().not_null())
                    .col(ColumnDef::new(Events::TxIndex).integer().not_null())
                    .col(ColumnDef::new(Events::TxFrom).blob().not_null())
                    .col(ColumnDef::new(Events::Address).blob().not_null())
                    .col(ColumnDef::new(Events::Selector).small_integer().not_null())
                    .col(ColumnDef::new(Events::Topics).blob().not_null())
                    .col(ColumnDef::new(Events::Data).blob().not_null())
                    .col(ColumnDef::new(Events::Node).blob())
                    .primary_key(
                        Index::create()
                            .col(Events::ChainId)
                            .col(Events::BlockNumber)
                            .col(Events::LogIndex)
                            .col(Events::Seq),
                    ),
            ))
            .await?;
        manager
            .create_table(clustered(
                backend,
                Table::create()
                    .table(EventBlocks::Table)
                    .col(ColumnDef::new(EventBlocks::ChainId).big_integer().not_null())
                    .col(ColumnDef::new(EventBlocks::BlockNumber).big_integer().not_null())
                    .col(ColumnDef::new(EventBlocks::Hash).blob().not_null())
                    .primary_key(
                        Index::create().col(EventBlocks::ChainId).col(EventBlocks::BlockNumber),
                    ),
            ))
            .await?;
        manager
            .create_table(clustered(
                backend,
                Table::create()
                    .table(EventTransactions::Table)
                    .col(ColumnDef::new(EventTransactions::ChainId).big_integer().not_null())
                    .col(ColumnDef::new(EventTransactions::BlockNumber).big_integer().not_null())
                    .col(ColumnDef::new(EventTransactions::TxIndex).integer().not_null())
                    .col(ColumnDef::new(EventTransactions::Hash).blob().not_null())
                    .col(ColumnDef::new(EventTransactions::ToAddress).blob())
                    .primary_key(
                        Index::create()
                            .col(EventTransactions::ChainId)
                            .col(EventTransactions::BlockNumber)
                            .col(EventTransactions::TxIndex),
                    ),
            ))
            .await?;

        let selector = format!(
            "CASE selector {} END",
            SELECTORS
                .iter()
                .enumerate()
                .map(|(code, hex)| format!("WHEN '{hex}' THEN {code}"))
                .collect::<Vec<_>>()
                .join(" ")
        );
        // Topics were comma-separated `0x` words: strip both and decode the rest as one run.
        let topics = match backend {
            DatabaseBackend::Postgres => {
                "decode(replace(replace(topics, ',', ''), '0x', ''), 'hex')".to_owned()
            }
            _ => "unhex(replace(replace(topics, ',', ''), '0x', ''))".to_owned(),
        };
        db.execute_unprepared(&format!(
            "INSERT INTO events (chain_id, block_number, log_index, seq, timestamp, tx_index, \
             tx_from, address, selector, topics, data, node) \
             SELECT chain_id, block_number, log_index, seq, timestamp, tx_index, {}, {}, {selector}, \
             {topics}, {}, {} FROM events_text",
            unhex(backend, "tx_from"),
            unhex(backend, "address"),
            unhex(backend, "data"),
            unhex(backend, "node"),
        ))
        .await?;
        db.execute_unprepared(&format!(
            "INSERT INTO event_blocks (chain_id, block_number, hash) \
             SELECT chain_id, block_number, {} FROM events_text GROUP BY chain_id, block_number",
            unhex(backend, "MIN(block_hash)"),
        ))
        .await?;
        db.execute_unprepared(&format!(
            "INSERT INTO event_transactions (chain_id, block_number, tx_index, hash, to_address) \
             SELECT chain_id, block_number, tx_index, {}, {} FROM events_text \
             GROUP BY chain_id, block_number, tx_index",
            unhex(backend, "MIN(tx_hash)"),
            unhex(backend, "MIN(tx_to)"),
        ))
        .await?;
        db.execute_unprepared("DROP TABLE events_text").await?;

        // A deferred old index is replaced by its new form, built now.
        db.execute_unprepared(
            "DELETE FROM deferred_indexes \
             WHERE name IN ('events_node', 'events_address', 'events_from')",
        )
        .await?;
        for (name, columns, condition) in INDEXES {
            db.execute_unprepared(&format!("CREATE INDEX {name} ON events ({columns}){condition}"))
                .await?;
        }
        Ok(())
    }

    async fn down(&self, _manager: &SchemaManager) -> Result<(), DbErr> {
        Err(DbErr::Migration(
            "the compact event history is not converted back to hex text; restore a backup \
             taken before this migration instead"
                .to_owned(),
        ))
    }
}
