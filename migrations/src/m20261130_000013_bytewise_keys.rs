//! PostgreSQL compares the text keys bytewise (`COLLATE "C"`): hashes, addresses and the ids
//! built from them. They are lowercase hex, so any collation orders them alike, but only
//! "C" compares with `memcmp`; under the database's default (`C.UTF-8` here, often
//! `en_US.UTF-8`) every B-tree comparison of every upsert goes through the locale's
//! collation, and sorts cannot use abbreviated keys. `domains.name` is already "C"
//! (migration 4).
//!
//! SQLite compares text bytewise already (BINARY); there this migration does nothing.

use sea_orm_migration::{prelude::*, sea_orm::DatabaseBackend};

/// Sets `COLLATE "C"` on the text key columns, on PostgreSQL.
#[derive(DeriveMigrationName)]
pub(crate) struct Migration;

/// `(table, column)`: primary keys and indexed or joined hex columns.
const COLUMNS: [(&str, &str); 19] = [
    ("domains", "label_hash"),
    ("domains", "node"),
    ("domains", "owner"),
    ("domains", "registry"),
    ("domains", "registry_owner"),
    ("domains", "resolver"),
    ("labels", "label_hash"),
    ("registrations", "id"),
    ("registrations", "registrar"),
    ("registrations", "registrant"),
    ("renewals", "id"),
    ("renewals", "registration_id"),
    ("resolver_records", "id"),
    ("resolver_records", "node"),
    ("resolver_records", "resolver"),
    ("resolver_addresses", "record_id"),
    ("resolver_addresses", "address"),
    ("resolver_texts", "record_id"),
    ("resolver_texts", "key_hash"),
];

/// Gives every column of [`COLUMNS`] `collation` on PostgreSQL; nothing on SQLite.
async fn collate(manager: &SchemaManager<'_>, collation: &str) -> Result<(), DbErr> {
    if manager.get_database_backend() != DatabaseBackend::Postgres {
        return Ok(());
    }
    let db = manager.get_connection();
    for (table, column) in COLUMNS {
        db.execute_unprepared(&format!(
            r#"ALTER TABLE {table} ALTER COLUMN {column} TYPE text COLLATE "{collation}""#
        ))
        .await?;
    }
    Ok(())
}

// The trait is declared with an elided `SchemaManager` lifetime; see the first migration.
#[allow(elided_lifetimes_in_paths)]
#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        collate(manager, "C").await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        collate(manager, "default").await
    }
}
