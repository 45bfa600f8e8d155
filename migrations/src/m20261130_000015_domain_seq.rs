//! Gives every domain a creation number, `seq`, and breaks ties in the domain listings by it
//! instead of by the 56-byte id.
//!
//! Why: eleven listing indexes (globally, by parent and by owner, each in four orders) and
//! the children index ended in the id, so each domain carried it twelve more times, about
//! 670 bytes a domain; `seq` is 8 bytes.
//!
//! On SQLite, `seq` was first made the table's `INTEGER PRIMARY KEY` (the rowid that every
//! index entry ends in anyway, so the listings would not have stored it at all). That saved
//! 10 more bytes per event, but domain flushes at 5M events took 85–95 s instead of 75 s
//! (BENCHMARKS.md, ninth session). So `seq` is an ordinary column on both engines, with a
//! unique index, and the table keeps its shape.
//!
//! Numbering: `chain_id << 32` plus the domain's rank in its chain by creation (block, then
//! id), from 1. The indexer continues each chain's count from its highest `seq`.
//!
//! On both engines, a listing index set aside for a first backfill (migration 9) is recorded
//! again in its new form instead of built. The journal's prior images of domains get their
//! row's `seq`, so a reorg after the upgrade restores rows whole.

use sea_orm_migration::{
    prelude::*,
    sea_orm::{DatabaseBackend, Statement},
};

use crate::m20261130_000011_domain_keys::key;

/// Adds `domains.seq` and rebuilds the listing indexes on it.
#[derive(DeriveMigrationName)]
pub(crate) struct Migration;

/// The listing indexes: `(old name, new name, sort columns)`. The new index is the sort
/// columns then `seq`.
const LISTINGS: [(&str, &str, &str); 11] = [
    ("domains_name_id", "domains_name_seq", "name"),
    ("domains_depth_id", "domains_depth_seq", "depth"),
    ("domains_start_id", "domains_start_seq", "registration_start"),
    ("domains_expiry_id", "domains_expiry_seq", "registration_expiry"),
    ("domains_parent_depth_id", "domains_parent_depth_seq", "parent_id, depth"),
    ("domains_parent_start_id", "domains_parent_start_seq", "parent_id, registration_start"),
    ("domains_parent_expiry_id", "domains_parent_expiry_seq", "parent_id, registration_expiry"),
    ("domains_owner_name_id", "domains_owner_name_seq", "owner, name"),
    ("domains_owner_depth_id", "domains_owner_depth_seq", "owner, depth"),
    ("domains_owner_start_id", "domains_owner_start_seq", "owner, registration_start"),
    ("domains_owner_expiry_id", "domains_owner_expiry_seq", "owner, registration_expiry"),
];

/// The children index, which the heal cascade reads: never deferred.
const CHILDREN: (&str, &str, &str) =
    ("domains_parent_name_id", "domains_parent_name_seq", "parent_id, name");

/// `seq` of every row: its chain's base plus its rank there by creation.
const NUMBERING: &str =
    "(chain_id << 32) + row_number() OVER (PARTITION BY chain_id ORDER BY created_block, id)";

/// The `CREATE INDEX` of a listing.
fn definition(name: &str, columns: &str) -> String {
    format!("CREATE INDEX {name} ON domains ({columns}, seq)")
}

/// `sql` with one bound value, in the placeholder style of `backend`.
pub(crate) fn bound(backend: DatabaseBackend, sql: &str, value: &str) -> Statement {
    let sql = match backend {
        DatabaseBackend::Postgres => sql.replacen('?', "$1", 1),
        _ => sql.to_owned(),
    };
    Statement::from_sql_and_values(backend, sql, [value.into()])
}

/// Forgets `name` in `deferred_indexes`; whether it was recorded there.
pub(crate) async fn forget_deferred(
    db: &SchemaManagerConnection<'_>,
    name: &str,
) -> Result<bool, DbErr> {
    let backend = db.get_database_backend();
    let sql = "DELETE FROM deferred_indexes WHERE name = ?";
    Ok(db.execute_raw(bound(backend, sql, name)).await?.rows_affected() > 0)
}

/// Records `definition` of `name` in `deferred_indexes`.
pub(crate) async fn record_deferred(
    db: &SchemaManagerConnection<'_>,
    name: &str,
    definition: &str,
) -> Result<(), DbErr> {
    let backend = db.get_database_backend();
    let sql = match backend {
        DatabaseBackend::Postgres => {
            "INSERT INTO deferred_indexes (name, definition) VALUES ($1, $2)"
        }
        _ => "INSERT INTO deferred_indexes (name, definition) VALUES (?, ?)",
    };
    db.execute_raw(Statement::from_sql_and_values(backend, sql, [name.into(), definition.into()]))
        .await?;
    Ok(())
}

// The trait is declared with an elided `SchemaManager` lifetime; see the first migration.
#[allow(elided_lifetimes_in_paths)]
#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        let db = manager.get_connection();
        let backend = manager.get_database_backend();
        // SQLite adds a NOT NULL column only with a default; every row gets its number next.
        db.execute_unprepared(match backend {
            DatabaseBackend::Postgres => "ALTER TABLE domains ADD COLUMN seq bigint",
            _ => "ALTER TABLE domains ADD COLUMN seq bigint NOT NULL DEFAULT 0",
        })
        .await?;
        db.execute_unprepared(&format!(
            "UPDATE domains SET seq = numbered.seq FROM \
             (SELECT id, {NUMBERING} AS seq FROM domains) AS numbered \
             WHERE domains.id = numbered.id"
        ))
        .await?;
        if backend == DatabaseBackend::Postgres {
            db.execute_unprepared("ALTER TABLE domains ALTER COLUMN seq SET NOT NULL").await?;
        }
        db.execute_unprepared("CREATE UNIQUE INDEX domains_seq ON domains (seq)").await?;
        for (old, _, _) in LISTINGS.iter().chain([&CHILDREN]) {
            db.execute_unprepared(&format!("DROP INDEX IF EXISTS {old}")).await?;
        }
        let (_, children, columns) = CHILDREN;
        db.execute_unprepared(&definition(children, columns)).await?;
        for (old, new, columns) in LISTINGS {
            let sql = definition(new, columns);
            if forget_deferred(db, old).await? {
                record_deferred(db, new, &sql).await?;
            } else {
                db.execute_unprepared(&sql).await?;
            }
        }
        // Journaled prior images of domains are rows as they were: they exist now too (a
        // domain is only ever deleted by a rollback, which drops its journal with it). An
        // image whose row were missing keeps no `seq` and fails its rollback loudly.
        let row = key(backend, "row_key");
        let sql = match backend {
            DatabaseBackend::Postgres => format!(
                "UPDATE journal_entries SET prior = jsonb_set(prior::jsonb, '{{seq}}', \
                 to_jsonb((SELECT seq FROM domains WHERE id = {row})))::text \
                 WHERE table_name = 'domains' AND prior IS NOT NULL \
                 AND EXISTS (SELECT 1 FROM domains WHERE id = {row})"
            ),
            _ => format!(
                "UPDATE journal_entries SET prior = json_set(prior, '$.seq', \
                 (SELECT seq FROM domains WHERE id = {row})) \
                 WHERE table_name = 'domains' AND prior IS NOT NULL \
                 AND EXISTS (SELECT 1 FROM domains WHERE id = {row})"
            ),
        };
        db.execute_unprepared(&sql).await?;
        Ok(())
    }

    /// One transaction on every engine: a crash leaves the listings either all on the id or
    /// all on `seq`.
    fn use_transaction(&self) -> Option<bool> {
        Some(true)
    }

    async fn down(&self, _manager: &SchemaManager) -> Result<(), DbErr> {
        Err(DbErr::Migration(
            "domain listings are not rebuilt on the id again; restore a backup taken before \
             this migration instead"
                .to_owned(),
        ))
    }
}
