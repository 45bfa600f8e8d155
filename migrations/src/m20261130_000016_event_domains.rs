//! Names the domain of a domain event by its creation number (`events.domain_seq`, migration
//! 15) instead of its 32-byte node.
//!
//! Why: the node took 33 bytes in most event rows and again in the index of a domain's
//! events, where it led a key of about 55 bytes; the number takes 6 to 8. A domain's number
//! already tells its chain, so the listing index leads with it alone. Resolver events keep
//! `domain_seq` empty, as they kept `node` empty, and their partial index says so.
//!
//! Existing rows get the number of the domain with their chain and node, or 0 where no
//! domain row stands for the node (events on the root). The lookup goes through the node
//! index of migration 14; while a first backfill has it set aside, a temporary one is built
//! for the conversion and dropped after it. As in migrations 10 and 14, a listing index that
//! was deferred is recorded again in its new form rather than built.

use sea_orm_migration::{prelude::*, sea_orm::DatabaseBackend};

use crate::m20261130_000015_domain_seq::{bound, forget_deferred, record_deferred};

/// Converts `events.node` to `events.domain_seq`.
#[derive(DeriveMigrationName)]
pub(crate) struct Migration;

/// The listing indexes: `(old name, new name, definition)`. Each ends with the global event
/// order, so a page is an index range scan, never a sort.
const INDEXES: [(&str, &str, &str); 2] = [
    (
        "events_node",
        "events_domain",
        "CREATE INDEX events_domain ON events \
         (domain_seq, timestamp, chain_id, block_number, log_index, seq) \
         WHERE domain_seq IS NOT NULL",
    ),
    (
        "events_address",
        "events_address",
        "CREATE INDEX events_address ON events \
         (chain_id, address, timestamp, block_number, log_index, seq) \
         WHERE domain_seq IS NULL",
    ),
];

/// A node lookup for the conversion, when `domains_node` is set aside.
const CONVERSION_INDEX: &str = "events_conversion_domains_node";

/// Whether an index called `name` exists.
async fn index_exists(db: &SchemaManagerConnection<'_>, name: &str) -> Result<bool, DbErr> {
    let backend = db.get_database_backend();
    let sql = match backend {
        DatabaseBackend::Postgres => "SELECT 1 AS found FROM pg_indexes WHERE indexname = ?",
        _ => "SELECT 1 AS found FROM sqlite_master WHERE type = 'index' AND name = ?",
    };
    Ok(db.query_one_raw(bound(backend, sql, name)).await?.is_some())
}

// The trait is declared with an elided `SchemaManager` lifetime; see the first migration.
#[allow(elided_lifetimes_in_paths)]
#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        let db = manager.get_connection();
        let temporary = !index_exists(db, "domains_node").await?;
        if temporary {
            db.execute_unprepared(&format!(
                "CREATE INDEX {CONVERSION_INDEX} ON domains (substr(id, 25))"
            ))
            .await?;
        }
        db.execute_unprepared("ALTER TABLE events ADD COLUMN domain_seq bigint").await?;
        db.execute_unprepared(
            "UPDATE events SET domain_seq = coalesce((SELECT min(domains.seq) FROM domains \
             WHERE substr(domains.id, 25) = events.node AND domains.chain_id = events.chain_id), 0) \
             WHERE node IS NOT NULL",
        )
        .await?;
        if temporary {
            db.execute_unprepared(&format!("DROP INDEX {CONVERSION_INDEX}")).await?;
        }
        // The old indexes name `node` (SQLite refuses to drop an indexed column).
        for (old, _, _) in INDEXES {
            db.execute_unprepared(&format!("DROP INDEX IF EXISTS {old}")).await?;
        }
        db.execute_unprepared("ALTER TABLE events DROP COLUMN node").await?;
        for (old, new, definition) in INDEXES {
            if forget_deferred(db, old).await? {
                record_deferred(db, new, definition).await?;
            } else {
                db.execute_unprepared(definition).await?;
            }
        }
        Ok(())
    }

    /// One transaction on every engine: SQLite rewrites the table to drop the column.
    fn use_transaction(&self) -> Option<bool> {
        Some(true)
    }

    async fn down(&self, _manager: &SchemaManager) -> Result<(), DbErr> {
        Err(DbErr::Migration(
            "events are not given their nodes back; restore a backup taken before this \
             migration instead"
                .to_owned(),
        ))
    }
}
