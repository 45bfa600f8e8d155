//! On SQLite, rebuilds the trigram table of name search (`domains_name_fts`, migration 7)
//! with `detail='none'` and `columnsize=0`: it keeps which names hold each trigram, not where
//! in them, nor each name's token count.
//!
//! Why: positions were 57% of the table (34 bytes per event of the 1.5M corpus with them, 15
//! without), and every domain insert and rename wrote them. A substring search needs no
//! positions: the trigram table narrows the names by `LIKE` (FTS5 runs a `LIKE` on a trigram
//! column as an index query), and the API then tests each candidate name itself for the exact
//! substring (`graphql::connection`). The token counts serve only `bm25` ranking, which the API
//! never asks for. PostgreSQL's `pg_trgm` index is left as it is.
//!
//! The triggers that keep the table in step are recreated unchanged with it.

use sea_orm_migration::{prelude::*, sea_orm::DatabaseBackend};

/// Rebuilds the SQLite trigram table without positions.
#[derive(DeriveMigrationName)]
pub(crate) struct Migration;

const SQLITE_UP: &[&str] = &[
    "DROP TRIGGER IF EXISTS domains_name_fts_insert",
    "DROP TRIGGER IF EXISTS domains_name_fts_delete",
    "DROP TRIGGER IF EXISTS domains_name_fts_update",
    "DROP TABLE IF EXISTS domains_name_fts",
    "CREATE VIRTUAL TABLE domains_name_fts USING fts5(name, content='domains', \
     content_rowid='rowid', tokenize='trigram', detail='none', columnsize=0)",
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

// The trait is declared with an elided `SchemaManager` lifetime; see the first migration.
#[allow(elided_lifetimes_in_paths)]
#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        if manager.get_database_backend() == DatabaseBackend::Postgres {
            return Ok(());
        }
        crate::one_batch::run(manager, SQLITE_UP).await
    }

    async fn down(&self, _manager: &SchemaManager) -> Result<(), DbErr> {
        Err(crate::one_batch::irreversible("the name search's positions are not rebuilt"))
    }
}
