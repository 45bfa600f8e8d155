//! Gives every domain a creation number, `seq`, and breaks ties in the domain listings by it
//! instead of by the 56-byte id.
//!
//! Why: eleven listing indexes (globally, by parent and by owner, each in four orders) and
//! the children index ended in the id, so each domain carried it twelve more times, about
//! 670 bytes a domain. `seq` is 8 bytes where it is stored at all, and on SQLite it is not
//! stored again: it becomes the table's `INTEGER PRIMARY KEY`, the rowid every index entry
//! already ends in, so SQLite's listing indexes hold only their sort columns and still
//! serve `ORDER BY …, seq`. An explicit rowid also stays put through `VACUUM` (an implicit
//! one may be renumbered, which would have broken the name search's `rowid` references).
//!
//! Numbering: `chain_id << 32` plus the domain's rank in its chain by creation (block, then
//! id), from 1; the indexer continues each chain's count from its highest `seq`.
//!
//! SQLite cannot make an existing column the rowid, so the table is copied into its new
//! shape in one transaction and its indexes, triggers and name search are built again.
//! PostgreSQL adds the column and a unique index on it. On both, a listing index set aside
//! for a first backfill (migration 9) is recorded again in its new form instead of built,
//! and the journal's prior images of domains get their row's `seq`, so a reorg after the
//! upgrade restores rows whole.

use sea_orm_migration::{
    prelude::*,
    sea_orm::{DatabaseBackend, Statement},
};

use crate::m20261130_000011_domain_keys::key;

/// Adds `domains.seq` and rebuilds the listing indexes on it.
#[derive(DeriveMigrationName)]
pub(crate) struct Migration;

/// The listing indexes: `(old name, new name, sort columns)`. The new index is the sort
/// columns then `seq` (implicit on SQLite, where `seq` is the rowid).
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

/// The domains table in its new shape on SQLite: `seq` is the rowid, the id a unique key.
/// The other columns are as migrations 1 to 14 left them.
const SQLITE_TABLE: &str = "CREATE TABLE domains_seq (\
    seq integer NOT NULL PRIMARY KEY, \
    id text NOT NULL UNIQUE, \
    chain_id integer NOT NULL, \
    label_hash text NOT NULL, \
    parent_id text NULL, \
    owner text NULL, \
    registry_owner text NULL, \
    resolver text NULL, \
    ttl integer NULL, \
    name text NOT NULL, \
    depth integer NOT NULL, \
    migrated boolean NOT NULL DEFAULT FALSE, \
    registration_count integer NOT NULL, \
    created_block integer NOT NULL, \
    created_at integer NOT NULL, \
    registration_start integer NOT NULL DEFAULT 9223372036854775807, \
    registration_expiry integer NOT NULL DEFAULT 9223372036854775807)";

/// Columns copied as they are.
const COLUMNS: &str = "id, chain_id, label_hash, parent_id, owner, registry_owner, resolver, \
    ttl, name, depth, migrated, registration_count, created_block, created_at, \
    registration_start, registration_expiry";

/// What SQLite loses with the old table and gets back unchanged: the name search triggers
/// (migration 7; the rowid they index is now `seq`) and the label index.
const SQLITE_AGAIN: [&str; 4] = [
    "CREATE INDEX domains_label_hash ON domains (label_hash)",
    "CREATE TRIGGER domains_name_fts_insert AFTER INSERT ON domains BEGIN \
       INSERT INTO domains_name_fts(rowid, name) VALUES (new.rowid, new.name); END",
    "CREATE TRIGGER domains_name_fts_delete AFTER DELETE ON domains BEGIN \
       INSERT INTO domains_name_fts(domains_name_fts, rowid, name) VALUES ('delete', old.rowid, old.name); END",
    "CREATE TRIGGER domains_name_fts_update AFTER UPDATE OF name ON domains WHEN old.name IS NOT new.name BEGIN \
       INSERT INTO domains_name_fts(domains_name_fts, rowid, name) VALUES ('delete', old.rowid, old.name); \
       INSERT INTO domains_name_fts(rowid, name) VALUES (new.rowid, new.name); END",
];

/// The node lookup of migration 14.
const DOMAINS_NODE: &str = "CREATE INDEX domains_node ON domains (substr(id, 25))";

/// The `CREATE INDEX` of a listing on `backend`.
fn definition(backend: DatabaseBackend, name: &str, columns: &str) -> String {
    match backend {
        DatabaseBackend::Postgres => format!("CREATE INDEX {name} ON domains ({columns}, seq)"),
        _ => format!("CREATE INDEX {name} ON domains ({columns})"),
    }
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

/// Copies `domains` into the shape of [`SQLITE_TABLE`] and builds what the copy lost,
/// except the indexes migration 15 defines anew.
async fn rebuild_sqlite(db: &SchemaManagerConnection<'_>) -> Result<(), DbErr> {
    db.execute_unprepared(SQLITE_TABLE).await?;
    db.execute_unprepared(&format!(
        "INSERT INTO domains_seq (seq, {COLUMNS}) SELECT {NUMBERING}, {COLUMNS} FROM domains"
    ))
    .await?;
    // Dropping the table drops its indexes and triggers; the name search's external content
    // is found by name, so it reads the new table once it is renamed.
    db.execute_unprepared("DROP TABLE domains").await?;
    db.execute_unprepared("ALTER TABLE domains_seq RENAME TO domains").await?;
    for sql in SQLITE_AGAIN {
        db.execute_unprepared(sql).await?;
    }
    // Deferred or not, the node index went with the old table.
    let node_deferred = db
        .query_one_raw(bound(
            DatabaseBackend::Sqlite,
            "SELECT name FROM deferred_indexes WHERE name = ?",
            "domains_node",
        ))
        .await?
        .is_some();
    if !node_deferred {
        db.execute_unprepared(DOMAINS_NODE).await?;
    }
    // The rowids the name search referred to are gone: index the names again.
    db.execute_unprepared("INSERT INTO domains_name_fts(domains_name_fts) VALUES ('rebuild')")
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
        match backend {
            DatabaseBackend::Postgres => {
                db.execute_unprepared("ALTER TABLE domains ADD COLUMN seq bigint").await?;
                db.execute_unprepared(&format!(
                    "UPDATE domains SET seq = numbered.seq FROM \
                     (SELECT id, {NUMBERING} AS seq FROM domains) AS numbered \
                     WHERE domains.id = numbered.id"
                ))
                .await?;
                db.execute_unprepared("ALTER TABLE domains ALTER COLUMN seq SET NOT NULL").await?;
                db.execute_unprepared("CREATE UNIQUE INDEX domains_seq ON domains (seq)").await?;
                for (old, _, _) in LISTINGS.iter().chain([&CHILDREN]) {
                    db.execute_unprepared(&format!("DROP INDEX IF EXISTS {old}")).await?;
                }
            }
            _ => rebuild_sqlite(db).await?,
        }
        let (_, children, columns) = CHILDREN;
        db.execute_unprepared(&definition(backend, children, columns)).await?;
        for (old, new, columns) in LISTINGS {
            let sql = definition(backend, new, columns);
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

    /// One transaction on every engine: on SQLite the table is copied, and a crash between
    /// dropping the old table and renaming the new one must not lose it.
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
