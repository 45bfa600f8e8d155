//! Makes the domain row compact: drops `domains.registry` and `domains.node`, which the
//! 56-byte id already holds (migration 11), and stores `label_hash`, `owner`,
//! `registry_owner` and `resolver` as raw bytes instead of `0x` hex text.
//!
//! Why: at mainnet scale the domains table and its indexes outgrow any page cache, so a flush
//! of random domain updates rewrites most of their pages, and a domain row's bytes are what
//! each flush costs. The two dropped columns were 108 characters per row, the hex a further
//! 100, and the owner repeats in each of the four owner listings.
//!
//! Lookups by node now go through an index on the id's last 32 bytes, `substr(id, 25)`,
//! which both engines evaluate on bytes. A `domains_node` set aside for a first backfill
//! (migration 9) is recorded again in its new form rather than built here.
//!
//! Conversion in place: PostgreSQL changes each column's type with `decode`; SQLite keeps the
//! `text` declarations (a declared type is only an affinity there and TEXT affinity stores a
//! blob as it is, as in migration 11) and rewrites the values with `unhex`.

use sea_orm_migration::{prelude::*, sea_orm::DatabaseBackend};

/// Drops the id's duplicates and stores the hex columns of `domains` as bytes.
#[derive(DeriveMigrationName)]
pub(crate) struct Migration;

/// Hex columns of `domains` that become raw bytes.
const HEX_COLUMNS: [&str; 4] = ["label_hash", "owner", "registry_owner", "resolver"];

/// The node lookup: the last 32 of the id's 56 bytes (SQL strings count from 1).
const DOMAINS_NODE: &str = "CREATE INDEX domains_node ON domains (substr(id, 25))";

// The trait is declared with an elided `SchemaManager` lifetime; see the first migration.
#[allow(elided_lifetimes_in_paths)]
#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        let db = manager.get_connection();
        let backend = manager.get_database_backend();
        // An index on a column stops SQLite from dropping it.
        db.execute_unprepared("DROP INDEX IF EXISTS domains_node").await?;
        for column in ["registry", "node"] {
            db.execute_unprepared(&format!("ALTER TABLE domains DROP COLUMN {column}")).await?;
        }
        match backend {
            DatabaseBackend::Postgres => {
                for column in HEX_COLUMNS {
                    db.execute_unprepared(&format!(
                        "ALTER TABLE domains ALTER COLUMN {column} TYPE bytea \
                         USING decode(substr({column}, 3), 'hex')"
                    ))
                    .await?;
                }
            }
            _ => {
                let set = HEX_COLUMNS
                    .map(|column| format!("{column} = unhex(substr({column}, 3))"))
                    .join(", ");
                db.execute_unprepared(&format!("UPDATE domains SET {set}")).await?;
            }
        }
        let recorded = db
            .execute_raw(sea_orm_migration::sea_orm::Statement::from_sql_and_values(
                backend,
                match backend {
                    DatabaseBackend::Postgres => {
                        "UPDATE deferred_indexes SET definition = $1 WHERE name = 'domains_node'"
                    }
                    _ => "UPDATE deferred_indexes SET definition = ? WHERE name = 'domains_node'",
                },
                [DOMAINS_NODE.into()],
            ))
            .await?
            .rows_affected();
        if recorded == 0 {
            db.execute_unprepared(DOMAINS_NODE).await?;
        }
        Ok(())
    }

    async fn down(&self, _manager: &SchemaManager) -> Result<(), DbErr> {
        Err(DbErr::Migration(
            "the domain row's raw columns are not converted back to hex text; restore a \
             backup taken before this migration instead"
                .to_owned(),
        ))
    }
}
