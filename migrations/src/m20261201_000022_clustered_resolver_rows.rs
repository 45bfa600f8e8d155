//! On SQLite, makes `resolver_addresses` and `resolver_texts` `WITHOUT ROWID` tables,
//! clustered on their primary keys. PostgreSQL has no rowid and is left as it is.
//!
//! Why: as rowid tables each held its key twice, in the table and in the primary key's index
//! (`sqlite_autoindex_resolver_addresses_1`, `…_texts_1`), 12.5 bytes per event of the 5M
//! corpus between them, and an upsert touched a page of both trees. Their one secondary index,
//! `resolver_addresses_address (address, record_id, coin_type)`, already ends in the primary
//! key, so it does not grow when its entries point at the key instead of a rowid.
//!
//! Conversion: each table's rows are copied into a new table (a table cannot lose its rowid in
//! place), which takes the old name. `resolver_addresses_address` is recreated when it
//! existed; when a first backfill had set it aside (migration 9), it stays recorded and is
//! built with the other query indexes.

use sea_orm_migration::{prelude::*, sea_orm::DatabaseBackend};

/// Rebuilds the two tables without rowids.
#[derive(DeriveMigrationName)]
pub(crate) struct Migration;

/// Each table: its name, its columns and its new definition.
const TABLES: [(&str, &str, &str); 2] = [
    (
        "resolver_addresses",
        "record_id, coin_type, address",
        "(record_id text NOT NULL, coin_type integer NOT NULL, address text NOT NULL, \
         PRIMARY KEY (record_id, coin_type)) WITHOUT ROWID",
    ),
    (
        "resolver_texts",
        "record_id, key_hash, key, value",
        "(record_id text NOT NULL, key_hash text NOT NULL, key text NOT NULL, value text NULL, \
         PRIMARY KEY (record_id, key_hash)) WITHOUT ROWID",
    ),
];

const ADDRESS_INDEX: &str = "CREATE INDEX resolver_addresses_address ON resolver_addresses \
                             (address, record_id, coin_type)";

// The trait is declared with an elided `SchemaManager` lifetime; see the first migration.
#[allow(elided_lifetimes_in_paths)]
#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        if manager.get_database_backend() == DatabaseBackend::Postgres {
            return Ok(());
        }
        let indexed = manager.has_index("resolver_addresses", "resolver_addresses_address").await?;
        let mut batch = Vec::new();
        for (table, columns, definition) in TABLES {
            batch.push(format!("CREATE TABLE {table}_clustered {definition}"));
            batch.push(format!(
                "INSERT INTO {table}_clustered ({columns}) SELECT {columns} FROM {table}"
            ));
            batch.push(format!("DROP TABLE {table}"));
            batch.push(format!("ALTER TABLE {table}_clustered RENAME TO {table}"));
        }
        if indexed {
            batch.push(ADDRESS_INDEX.to_owned());
        }
        crate::one_batch::run(manager, &batch).await
    }

    async fn down(&self, _manager: &SchemaManager) -> Result<(), DbErr> {
        Err(crate::one_batch::irreversible("the resolver tables are not given their rowids back"))
    }
}
