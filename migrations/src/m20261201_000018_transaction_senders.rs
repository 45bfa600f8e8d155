//! Moves each event's transaction sender to its transaction: `events.tx_from` becomes
//! `event_transactions.tx_from`, with the block time beside it, and the account listing's
//! index moves with them.
//!
//! Why: a transaction emits about three recorded events (3.2 on a mainnet-shaped corpus), and
//! every one of them carried the 20-byte sender and an entry in `events_from`, an index led
//! by it: about 60 bytes per event on SQLite, more on PostgreSQL. Kept once per transaction,
//! the sender and its index take a third of that. An account's events are its transactions'
//! events: the listing walks `event_transactions_from (tx_from, timestamp, chain_id,
//! block_number, tx_index)` and joins each transaction's events by their coordinates. Within
//! a block, logs are numbered in transaction order, so ordering by transaction and then by
//! log gives the same global event order as before.
//!
//! As in migrations 10, 14 and 16, if `events_from` was set aside for a first backfill, the
//! new index is recorded in its place rather than built.

use sea_orm_migration::{prelude::*, sea_orm::DatabaseBackend};

use crate::m20261130_000015_domain_seq::{forget_deferred, record_deferred};

/// Adds `event_transactions.tx_from` and `timestamp`, fills them, and drops `events.tx_from`.
#[derive(DeriveMigrationName)]
pub(crate) struct Migration;

/// The account listing's index.
const INDEX: &str = "CREATE INDEX event_transactions_from ON event_transactions \
                     (tx_from, timestamp, chain_id, block_number, tx_index)";

/// The first event row of the transaction being updated: every transaction row was written
/// with its events, and they share its sender and block time.
fn first_event(column: &str) -> String {
    format!(
        "(SELECT e.{column} FROM events e WHERE e.chain_id = event_transactions.chain_id \
         AND e.block_number = event_transactions.block_number \
         AND e.tx_index = event_transactions.tx_index LIMIT 1)"
    )
}

// The trait is declared with an elided `SchemaManager` lifetime; see the first migration.
#[allow(elided_lifetimes_in_paths)]
#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        let db = manager.get_connection();
        // SQLite adds a NOT NULL column only with a default; the indexer always writes both.
        let (bytes, empty) = match db.get_database_backend() {
            DatabaseBackend::Postgres => ("bytea", "'\\x'::bytea"),
            _ => ("blob", "x''"),
        };
        db.execute_unprepared(&format!(
            "ALTER TABLE event_transactions ADD COLUMN tx_from {bytes} NOT NULL DEFAULT {empty}"
        ))
        .await?;
        db.execute_unprepared(
            "ALTER TABLE event_transactions ADD COLUMN timestamp bigint NOT NULL DEFAULT 0",
        )
        .await?;
        db.execute_unprepared(&format!(
            "UPDATE event_transactions SET tx_from = coalesce({}, tx_from), \
             timestamp = coalesce({}, timestamp)",
            first_event("tx_from"),
            first_event("timestamp"),
        ))
        .await?;
        // SQLite refuses to drop an indexed column.
        db.execute_unprepared("DROP INDEX IF EXISTS events_from").await?;
        db.execute_unprepared("ALTER TABLE events DROP COLUMN tx_from").await?;
        if forget_deferred(db, "events_from").await? {
            record_deferred(db, "event_transactions_from", INDEX).await?;
        } else {
            db.execute_unprepared(INDEX).await?;
        }
        Ok(())
    }

    /// One transaction on every engine: SQLite rewrites `events` to drop the column.
    fn use_transaction(&self) -> Option<bool> {
        Some(true)
    }

    async fn down(&self, _manager: &SchemaManager) -> Result<(), DbErr> {
        Err(DbErr::Migration(
            "senders are not copied back onto events; restore a backup taken before this \
             migration instead"
                .to_owned(),
        ))
    }
}
