//! Names each domain's parent by the parent's creation number: `domains.parent_id` (the
//! 56-byte id) becomes `domains.parent_seq` (8 bytes), and the four indexes led by the
//! parent (the children index and the three by-parent listings) are rebuilt on it.
//!
//! Why: the parent's id was stored in every domain row and led four index entries per
//! domain, about 250 bytes a domain. The parent's `seq` is as unique (migration 15), found
//! through the `domains_seq` index, and already names domains in the event history.
//!
//! The journal's prior images of domains name the parent the same way afterwards, so a
//! reorg after the upgrade restores whole rows. As in earlier migrations, a listing set
//! aside for a first backfill is recorded again in its new form rather than built.

use sea_orm_migration::{prelude::*, sea_orm::DatabaseBackend};

use crate::{
    m20261130_000011_domain_keys::key,
    m20261130_000015_domain_seq::{forget_deferred, record_deferred},
};

/// Moves `domains.parent_id` to `domains.parent_seq`.
#[derive(DeriveMigrationName)]
pub(crate) struct Migration;

/// The indexes led by the parent: `(name, the columns after the parent)`; each ends in `seq`.
const INDEXES: [(&str, &str); 4] = [
    ("domains_parent_name_seq", "name"),
    ("domains_parent_depth_seq", "depth"),
    ("domains_parent_start_seq", "registration_start"),
    ("domains_parent_expiry_seq", "registration_expiry"),
];

/// The children index, which the heal cascade reads: never deferred.
const CHILDREN: &str = "domains_parent_name_seq";

/// The `CREATE INDEX` of one of [`INDEXES`].
fn definition(name: &str, columns: &str) -> String {
    format!("CREATE INDEX {name} ON domains (parent_seq, {columns}, seq)")
}

// The trait is declared with an elided `SchemaManager` lifetime; see the first migration.
#[allow(elided_lifetimes_in_paths)]
#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        let db = manager.get_connection();
        let backend = manager.get_database_backend();
        db.execute_unprepared("ALTER TABLE domains ADD COLUMN parent_seq bigint").await?;
        db.execute_unprepared(
            "UPDATE domains SET parent_seq = \
             (SELECT parent.seq FROM domains parent WHERE parent.id = domains.parent_id) \
             WHERE parent_id IS NOT NULL",
        )
        .await?;
        // SQLite refuses to drop an indexed column.
        for (name, _) in INDEXES {
            db.execute_unprepared(&format!("DROP INDEX IF EXISTS {name}")).await?;
        }
        db.execute_unprepared("ALTER TABLE domains DROP COLUMN parent_id").await?;
        for (name, columns) in INDEXES {
            let sql = definition(name, columns);
            if name != CHILDREN && forget_deferred(db, name).await? {
                record_deferred(db, name, &sql).await?;
            } else {
                db.execute_unprepared(&sql).await?;
            }
        }
        // Journaled prior images of domains: the parent by its number. A parent exists as
        // long as its child does (only a rollback deletes domains), so the lookup finds it.
        let sql = match backend {
            DatabaseBackend::Postgres => {
                let parent = key(backend, "(prior::jsonb ->> 'parent_id')");
                format!(
                    "UPDATE journal_entries SET prior = (jsonb_set(prior::jsonb, '{{parent_seq}}', \
                     coalesce(to_jsonb((SELECT seq FROM domains WHERE id = {parent})), \
                     'null'::jsonb)) - 'parent_id')::text \
                     WHERE table_name = 'domains' AND prior IS NOT NULL"
                )
            }
            _ => {
                let parent = key(backend, "json_extract(prior, '$.parent_id')");
                format!(
                    "UPDATE journal_entries SET prior = json_remove(json_set(prior, \
                     '$.parent_seq', (SELECT seq FROM domains WHERE id = {parent})), \
                     '$.parent_id') \
                     WHERE table_name = 'domains' AND prior IS NOT NULL"
                )
            }
        };
        db.execute_unprepared(&sql).await?;
        Ok(())
    }

    /// One transaction on every engine: SQLite rewrites `domains` to drop the column.
    fn use_transaction(&self) -> Option<bool> {
        Some(true)
    }

    async fn down(&self, _manager: &SchemaManager) -> Result<(), DbErr> {
        Err(DbErr::Migration(
            "domains are not given their parents' ids back; restore a backup taken before \
             this migration instead"
                .to_owned(),
        ))
    }
}
