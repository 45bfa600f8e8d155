//! PostgreSQL's name indexes hold a bounded key of the name instead of the name.
//!
//! A B-tree entry must fit in a third of a page (about 2.7 KB), and ENS bounds neither labels
//! nor names: with `name` in `domains_name_seq`, `domains_owner_name_seq` and
//! `domains_parent_name_seq`, inserting one long name failed the whole flush. Each index now
//! holds `substr(name, 1, 256)` (at most 1 KiB of UTF-8) where it held `name`; queries narrow
//! by that key and compare whole names after it, which orders exactly as `name` does because
//! the key is a prefix. SQLite keeps its indexes on `name`: its entries have no size limit.
//!
//! A listing index set aside for a first backfill is recorded again in its new form rather
//! than built, as in earlier migrations.

use sea_orm_migration::{prelude::*, sea_orm::DatabaseBackend};

use crate::m20261130_000015_domain_seq::{forget_deferred, record_deferred};

/// Re-keys the name indexes on PostgreSQL.
#[derive(DeriveMigrationName)]
pub(crate) struct Migration;

/// The name indexes: `(name, the columns before the name)`.
const INDEXES: [(&str, &str); 3] = [
    ("domains_name_seq", ""),
    ("domains_owner_name_seq", "owner, "),
    ("domains_parent_name_seq", "parent_seq, "),
];

/// The name's key, exactly as the API's queries write it (the planner matches expressions).
const KEY: &str = "substr(name, 1, 256)";

/// The children index, which the heal cascade reads: never deferred.
const CHILDREN: &str = "domains_parent_name_seq";

fn definition(name: &str, leading: &str, key: &str) -> String {
    format!("CREATE INDEX {name} ON domains ({leading}{key}, seq)")
}

// The trait is declared with an elided `SchemaManager` lifetime; see the first migration.
#[allow(elided_lifetimes_in_paths)]
#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        rekey(manager, KEY).await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        rekey(manager, "name").await
    }
}

/// Rebuilds (or records, if deferred) each name index over `key`, on PostgreSQL.
async fn rekey(manager: &SchemaManager<'_>, key: &str) -> Result<(), DbErr> {
    if manager.get_database_backend() != DatabaseBackend::Postgres {
        return Ok(());
    }
    let db = manager.get_connection();
    for (name, leading) in INDEXES {
        let sql = definition(name, leading, key);
        if name != CHILDREN && forget_deferred(db, name).await? {
            record_deferred(db, name, &sql).await?;
        } else {
            db.execute_unprepared(&format!("DROP INDEX IF EXISTS {name}")).await?;
            db.execute_unprepared(&sql).await?;
        }
    }
    Ok(())
}
