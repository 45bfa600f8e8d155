//! The schema as a whole: every table, index and trigger, created in one step on a fresh
//! database from `baseline/sqlite.sql` or `baseline/postgres.sql`. The two files describe the
//! same tables; they differ where the engines do (column types, the name search, the name
//! indexes' key on PostgreSQL).

use sea_orm_migration::{prelude::*, sea_orm::DatabaseBackend};

/// Creates the schema.
#[derive(DeriveMigrationName)]
pub(crate) struct Migration;

const SQLITE: &str = include_str!("baseline/sqlite.sql");
const POSTGRES: &str = include_str!("baseline/postgres.sql");

/// Every table, dropped in reverse by `down` (indexes and triggers go with their tables).
const TABLES: &[&str] = &[
    "domains_name_fts",
    "deferred_indexes",
    "rpc_cache",
    "journal_entries",
    "journal_windows",
    "chain_status",
    "checkpoints",
    "reverse_registrars",
    "namegraph_bridges",
    "contracts",
    "event_transactions",
    "event_blocks",
    "events",
    "resolver_texts",
    "resolver_addresses",
    "resolver_records",
    "renewals",
    "registrations",
    "label_heal_marks",
    "label_heals",
    "labels",
    "domains",
];

// The trait is declared with an elided `SchemaManager` lifetime.
#[allow(elided_lifetimes_in_paths)]
#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        let sql = match manager.get_database_backend() {
            DatabaseBackend::Postgres => POSTGRES,
            _ => SQLITE,
        };
        // One batch on one connection: statements sent one by one could each take another
        // pooled connection, and a SQLite connection caches the schema it last saw.
        manager.get_connection().execute_unprepared(sql).await?;
        Ok(())
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        let db = manager.get_connection();
        for table in TABLES {
            db.execute_unprepared(&format!("DROP TABLE IF EXISTS {table}")).await?;
        }
        Ok(())
    }

    /// One transaction: a failure leaves no half-made schema.
    fn use_transaction(&self) -> Option<bool> {
        Some(true)
    }
}
