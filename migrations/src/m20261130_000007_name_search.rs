//! Substring search on domain names (`contains`): a trigram index on each engine.
//!
//! PostgreSQL: `pg_trgm` and a GIN index on `domains.name`, which serves `LIKE '%text%'`.
//! SQLite: an FTS5 table with the trigram tokenizer over `domains.name` (external content, so
//! names are not stored twice), kept in step by triggers; existing rows are indexed here.

use sea_orm_migration::{prelude::*, sea_orm::DatabaseBackend};

/// Creates the trigram index of the engine in use.
#[derive(DeriveMigrationName)]
pub(crate) struct Migration;

const SQLITE_UP: &[&str] = &[
    "CREATE VIRTUAL TABLE domains_name_fts USING fts5(name, content='domains', content_rowid='rowid', tokenize='trigram')",
    "CREATE TRIGGER domains_name_fts_insert AFTER INSERT ON domains BEGIN \
       INSERT INTO domains_name_fts(rowid, name) VALUES (new.rowid, new.name); END",
    "CREATE TRIGGER domains_name_fts_delete AFTER DELETE ON domains BEGIN \
       INSERT INTO domains_name_fts(domains_name_fts, rowid, name) VALUES ('delete', old.rowid, old.name); END",
    // Upserts rewrite every column; only a changed name (a heal) touches the index.
    "CREATE TRIGGER domains_name_fts_update AFTER UPDATE OF name ON domains WHEN old.name IS NOT new.name BEGIN \
       INSERT INTO domains_name_fts(domains_name_fts, rowid, name) VALUES ('delete', old.rowid, old.name); \
       INSERT INTO domains_name_fts(rowid, name) VALUES (new.rowid, new.name); END",
    "INSERT INTO domains_name_fts(domains_name_fts) VALUES ('rebuild')",
];

const SQLITE_DOWN: &[&str] = &[
    "DROP TRIGGER IF EXISTS domains_name_fts_insert",
    "DROP TRIGGER IF EXISTS domains_name_fts_delete",
    "DROP TRIGGER IF EXISTS domains_name_fts_update",
    "DROP TABLE IF EXISTS domains_name_fts",
];

const POSTGRES_UP: &[&str] = &[
    "CREATE EXTENSION IF NOT EXISTS pg_trgm",
    "CREATE INDEX domains_name_trgm ON domains USING gin (name gin_trgm_ops)",
];

const POSTGRES_DOWN: &[&str] = &["DROP INDEX IF EXISTS domains_name_trgm"];

// The trait is declared with an elided `SchemaManager` lifetime; see the first migration.
#[allow(elided_lifetimes_in_paths)]
#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        let statements = match manager.get_database_backend() {
            DatabaseBackend::Postgres => POSTGRES_UP,
            _ => SQLITE_UP,
        };
        for sql in statements {
            manager.get_connection().execute_unprepared(sql).await?;
        }
        Ok(())
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        let statements = match manager.get_database_backend() {
            DatabaseBackend::Postgres => POSTGRES_DOWN,
            _ => SQLITE_DOWN,
        };
        for sql in statements {
            manager.get_connection().execute_unprepared(sql).await?;
        }
        Ok(())
    }
}
