//! The label heal log: `label_heals` and `label_heal_marks`.
//!
//! Labels are shared by every chain in the database, but each chain's handler renders and
//! caches only its own domains. When a label becomes known (an event of one chain, or
//! `ensemble labels import`), the writer appends it to `label_heals` in the same
//! transaction; every chain reads the log past its mark, re-renders its own domains with
//! that label, and moves its mark (`label_heal_marks`) in the transaction that writes those
//! names. A heal therefore reaches every chain exactly once whatever the order in which the
//! chains run, and survives a crash of any of them. Entries every chain has passed are
//! pruned, so the log holds only what some chain has still to read.
//!
//! `seq` must only grow, even after every row was pruned: SQLite's `AUTOINCREMENT` (a plain
//! rowid may be reused once the largest row is deleted), PostgreSQL's identity.

use sea_orm_migration::{prelude::*, sea_orm::DatabaseBackend};

/// Creates the heal log and the chains' marks in it.
#[derive(DeriveMigrationName)]
pub(crate) struct Migration;

const SQLITE: [&str; 2] = [
    "CREATE TABLE label_heals (seq integer PRIMARY KEY AUTOINCREMENT, \
     label_hash blob NOT NULL, origin_chain bigint NOT NULL)",
    "CREATE TABLE label_heal_marks (chain_id bigint PRIMARY KEY, applied bigint NOT NULL)",
];

const POSTGRES: [&str; 2] = [
    "CREATE TABLE label_heals (seq bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, \
     label_hash bytea NOT NULL, origin_chain bigint NOT NULL)",
    "CREATE TABLE label_heal_marks (chain_id bigint PRIMARY KEY, applied bigint NOT NULL)",
];

// The trait is declared with an elided `SchemaManager` lifetime; see the first migration.
#[allow(elided_lifetimes_in_paths)]
#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        let db = manager.get_connection();
        let statements = match manager.get_database_backend() {
            DatabaseBackend::Postgres => POSTGRES,
            _ => SQLITE,
        };
        for sql in statements {
            db.execute_unprepared(sql).await?;
        }
        Ok(())
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        let db = manager.get_connection();
        db.execute_unprepared("DROP TABLE label_heal_marks").await?;
        db.execute_unprepared("DROP TABLE label_heals").await?;
        Ok(())
    }
}
