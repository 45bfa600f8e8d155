//! Domain ids as 56-byte keys (`entities::domain_key::DomainKey`): chain id (4 bytes,
//! big-endian), registry address (20), node (32). The text id `${chainId}-${registry}-${node}`
//! was 110 characters, and each domain carried it about thirty times: primary key, parent
//! reference, registrations' domain reference, and the tie-breaker of every listing index.
//!
//! Existing rows are converted in place, in one statement per column, by the engine's own hex
//! decoding. On PostgreSQL the columns become `bytea` and their indexes are rebuilt with them.
//! SQLite cannot change a column's declared type without copying the table, and need not:
//! a declared type is only an affinity there, and TEXT affinity stores a blob as it is. So
//! the columns keep their `text` declaration and hold blobs; every index over them is
//! rewritten by the update itself.

use sea_orm_migration::{prelude::*, sea_orm::DatabaseBackend};

/// Converts `domains.id`, `domains.parent_id` and `registrations.domain_id` to keys.
#[derive(DeriveMigrationName)]
pub(crate) struct Migration;

/// The columns holding domain ids: `(table, column)`.
const COLUMNS: [(&str, &str); 3] =
    [("domains", "id"), ("domains", "parent_id"), ("registrations", "domain_id")];

/// SQL turning the text id in `column` into its key on `backend`: the chain id as 8 hex
/// digits, then the registry's and the node's hex digits, decoded as one run.
pub(crate) fn key(backend: DatabaseBackend, column: &str) -> String {
    match backend {
        DatabaseBackend::Postgres => format!(
            "decode(lpad(to_hex(split_part({column}, '-', 1)::bigint), 8, '0') \
             || substr(split_part({column}, '-', 2), 3) \
             || substr(split_part({column}, '-', 3), 3), 'hex')"
        ),
        // `instr` finds the first dash: the registry's hex digits start 3 characters after
        // it, behind `0x`, and the node's 46 after it, behind `-0x`. SQLite's `||` makes
        // text, so the hex is joined first and decoded once.
        _ => format!(
            "unhex(printf('%08x', CAST(substr({column}, 1, instr({column}, '-') - 1) AS INTEGER)) \
             || substr({column}, instr({column}, '-') + 3, 40) \
             || substr({column}, instr({column}, '-') + 46, 64))"
        ),
    }
}

// The trait is declared with an elided `SchemaManager` lifetime; see the first migration.
#[allow(elided_lifetimes_in_paths)]
#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        let db = manager.get_connection();
        let backend = manager.get_database_backend();
        for (table, column) in COLUMNS {
            let sql = match backend {
                DatabaseBackend::Postgres => format!(
                    "ALTER TABLE {table} ALTER COLUMN {column} TYPE bytea USING {}",
                    key(backend, column)
                ),
                _ => format!(
                    "UPDATE {table} SET {column} = {} WHERE {column} IS NOT NULL",
                    key(backend, column)
                ),
            };
            db.execute_unprepared(&sql).await?;
        }
        Ok(())
    }

    async fn down(&self, _manager: &SchemaManager) -> Result<(), DbErr> {
        Err(DbErr::Migration(
            "domain keys are not converted back to text ids; restore a backup taken before \
             this migration instead"
                .to_owned(),
        ))
    }
}
