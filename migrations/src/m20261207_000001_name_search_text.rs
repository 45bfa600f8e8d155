//! The name search indexes each name's search text instead of the name: the name with the 64
//! hex digits of each `[labelhash]` label left out (`[`, the digits and `]` become `]`). Those
//! digits were two thirds of the text a backfill indexed, and the most costly part of the name
//! search to write (SQLite) and to build (PostgreSQL). A `contains` text that a labelhash could
//! hold (hex digits only, or a bracket) is tested against the names themselves instead.
//!
//! SQLite: the FTS5 table reads its content from the view `domains_search_text` instead of
//! `domains` (so that FTS5's own checks and `rebuild` see the texts it indexed), and is filled
//! again from it. PostgreSQL: the trigram index is built over the search text's expression;
//! where it exists it is built again, where it is deferred its recorded definition changes.

use sea_orm_migration::{
    prelude::*,
    sea_orm::{DatabaseBackend, Statement},
};

/// Indexes the names' search texts.
#[derive(DeriveMigrationName)]
pub(crate) struct Migration;

/// The search texts of `domains` as `rid, name`, in rowid order (FTS5 indexes rows given in
/// order in fewer, larger segments). SQLite has no regular expressions: each step of the
/// recursion replaces the first labelhash left.
const SQLITE_VIEW: &str = "CREATE VIEW domains_search_text(rid, name) AS \
    WITH RECURSIVE search_text(rid, text) AS (\
    SELECT rowid, name FROM domains \
    UNION ALL \
    SELECT rid, substr(text, 1, instr(text, '[') - 1) || ']' || substr(text, instr(text, '[') + 66) \
    FROM search_text WHERE instr(text, '[') > 0) \
    SELECT rid, text FROM search_text WHERE instr(text, '[') = 0 ORDER BY rid";

const SQLITE_SEARCH: &str = "CREATE VIRTUAL TABLE domains_name_fts USING fts5(name, \
    content='domains_search_text', content_rowid='rid', tokenize='trigram', detail='none', \
    columnsize=0)";

/// The name search as the baseline created it, for `down`.
const SQLITE_SEARCH_BEFORE: &str = "CREATE VIRTUAL TABLE domains_name_fts USING fts5(name, \
    content='domains', content_rowid='rowid', tokenize='trigram', detail='none', columnsize=0)";

/// The search text's expression replaces whatever a pair of brackets holds: only labelhashes
/// hold brackets, and spelling out their 64 hex digits made it ten times as slow to compute.
const POSTGRES_INDEX: &str = r"CREATE INDEX domains_name_trgm ON domains USING gin (regexp_replace(name, '\[[^]]*\]', ']', 'g') gin_trgm_ops)";

/// The trigram index as the baseline created it, for `down`.
const POSTGRES_INDEX_BEFORE: &str =
    "CREATE INDEX domains_name_trgm ON domains USING gin (name gin_trgm_ops)";

// The trait is declared with an elided `SchemaManager` lifetime.
#[allow(elided_lifetimes_in_paths)]
#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        let db = manager.get_connection();
        match manager.get_database_backend() {
            DatabaseBackend::Postgres => {
                // The finer sample `domains.name` has, for the expression the search reads, and
                // the expression's statistics now: PostgreSQL keeps them only from an ANALYZE
                // run after its index exists, and without them the planner guesses how many
                // names hold a text.
                if replace_trigram_index(db, POSTGRES_INDEX).await? {
                    db.execute_unprepared(
                        "ALTER INDEX domains_name_trgm ALTER COLUMN 1 SET STATISTICS 1000",
                    )
                    .await?;
                    db.execute_unprepared("ANALYZE domains").await?;
                }
            }
            _ => {
                db.execute_unprepared("DROP TABLE domains_name_fts").await?;
                db.execute_unprepared(SQLITE_VIEW).await?;
                db.execute_unprepared(SQLITE_SEARCH).await?;
                db.execute_unprepared(
                    "INSERT INTO domains_name_fts(domains_name_fts) VALUES ('rebuild')",
                )
                .await?;
            }
        }
        Ok(())
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        let db = manager.get_connection();
        match manager.get_database_backend() {
            DatabaseBackend::Postgres => {
                replace_trigram_index(db, POSTGRES_INDEX_BEFORE).await?;
            }
            _ => {
                db.execute_unprepared("DROP TABLE domains_name_fts").await?;
                db.execute_unprepared("DROP VIEW domains_search_text").await?;
                db.execute_unprepared(SQLITE_SEARCH_BEFORE).await?;
                db.execute_unprepared(
                    "INSERT INTO domains_name_fts(domains_name_fts) VALUES ('rebuild')",
                )
                .await?;
            }
        }
        Ok(())
    }

    fn use_transaction(&self) -> Option<bool> {
        Some(true)
    }
}

/// Whether PostgreSQL's trigram index exists (it does not while deferred).
async fn trigram_index_exists(db: &SchemaManagerConnection<'_>) -> Result<bool, DbErr> {
    Ok(db
        .query_one_raw(Statement::from_string(
            DatabaseBackend::Postgres,
            "SELECT 1 AS present FROM pg_indexes WHERE indexname = 'domains_name_trgm'",
        ))
        .await?
        .is_some())
}

/// Builds PostgreSQL's trigram index as `definition` says where it exists, and records
/// `definition` where the index is deferred. Returns whether it exists.
async fn replace_trigram_index(
    db: &SchemaManagerConnection<'_>,
    definition: &str,
) -> Result<bool, DbErr> {
    let exists = trigram_index_exists(db).await?;
    if exists {
        db.execute_unprepared("DROP INDEX domains_name_trgm").await?;
        db.execute_unprepared(definition).await?;
    }
    db.execute_raw(Statement::from_sql_and_values(
        DatabaseBackend::Postgres,
        "UPDATE deferred_indexes SET definition = $1 WHERE name = 'domains_name_trgm'",
        [definition.into()],
    ))
    .await?;
    Ok(exists)
}
