//! Names the contract that emitted each event by a per-chain code: `events.address` (20
//! bytes) becomes `events.contract`, a number from the new `contracts` table, and the index
//! of resolver events is rebuilt on it.
//!
//! Why: a chain's events come from a few contracts and its resolvers, a few thousand at
//! mainnet scale, yet every event row carried the 20-byte address and every resolver event's
//! index entry led with it. Existing contracts are numbered by address within their chain;
//! the indexer numbers new ones in the order it first records their events.
//!
//! As in earlier migrations, if `events_address` was set aside for a first backfill, its
//! new form is recorded rather than built.

use sea_orm_migration::{prelude::*, sea_orm::DatabaseBackend};

use crate::m20261130_000015_domain_seq::{forget_deferred, record_deferred};

/// Adds `contracts`, converts `events.address` to `events.contract`.
#[derive(DeriveMigrationName)]
pub(crate) struct Migration;

/// The index of resolver events: a resolver's events are one range of it.
const INDEX: &str = "CREATE INDEX events_address ON events \
                     (chain_id, contract, timestamp, block_number, log_index, seq) \
                     WHERE domain_seq IS NULL";

#[derive(DeriveIden)]
enum Contracts {
    Table,
    ChainId,
    Code,
    Address,
}

// The trait is declared with an elided `SchemaManager` lifetime; see the first migration.
#[allow(elided_lifetimes_in_paths)]
#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        let db = manager.get_connection();
        manager
            .create_table(
                Table::create()
                    .table(Contracts::Table)
                    .col(ColumnDef::new(Contracts::ChainId).big_integer().not_null())
                    .col(ColumnDef::new(Contracts::Code).integer().not_null())
                    .col(ColumnDef::new(Contracts::Address).blob().not_null())
                    .primary_key(Index::create().col(Contracts::ChainId).col(Contracts::Code))
                    .to_owned(),
            )
            .await?;
        db.execute_unprepared(
            "CREATE UNIQUE INDEX contracts_address ON contracts (chain_id, address)",
        )
        .await?;
        db.execute_unprepared(
            "INSERT INTO contracts (chain_id, code, address) \
             SELECT chain_id, row_number() OVER (PARTITION BY chain_id ORDER BY address), address \
             FROM (SELECT DISTINCT chain_id, address FROM events) AS emitted",
        )
        .await?;
        // SQLite adds a NOT NULL column only with a default; every row gets its code next.
        db.execute_unprepared(match db.get_database_backend() {
            DatabaseBackend::Postgres => "ALTER TABLE events ADD COLUMN contract integer",
            _ => "ALTER TABLE events ADD COLUMN contract integer NOT NULL DEFAULT 0",
        })
        .await?;
        db.execute_unprepared(
            "UPDATE events SET contract = (SELECT c.code FROM contracts c \
             WHERE c.chain_id = events.chain_id AND c.address = events.address)",
        )
        .await?;
        if db.get_database_backend() == DatabaseBackend::Postgres {
            db.execute_unprepared("ALTER TABLE events ALTER COLUMN contract SET NOT NULL").await?;
        }
        // SQLite refuses to drop an indexed column.
        db.execute_unprepared("DROP INDEX IF EXISTS events_address").await?;
        db.execute_unprepared("ALTER TABLE events DROP COLUMN address").await?;
        if forget_deferred(db, "events_address").await? {
            record_deferred(db, "events_address", INDEX).await?;
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
            "events are not given their addresses back; restore a backup taken before this \
             migration instead"
                .to_owned(),
        ))
    }
}
