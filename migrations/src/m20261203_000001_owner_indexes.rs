//! Indexes on the three owners a domain has besides its effective one: the registry's owner,
//! the registrar token's owner and the NameWrapper token's owner. The subgraph API's
//! "names of an address" asks for all three at once (with the resolved address), and each
//! index turns its arm of that `or` into a lookup instead of a scan of every domain. The
//! last two are partial: only `.eth` second-level names have a token owner and only wrapped
//! names a wrapped owner.
//!
//! On a database whose query indexes are still set aside for a first backfill (rows in
//! `deferred_indexes`), these join them and are built with them when the backfill is done;
//! otherwise they are built here.

use sea_orm_migration::{
    prelude::*,
    sea_orm::{DatabaseBackend, Statement},
};

/// Adds the owner indexes.
#[derive(DeriveMigrationName)]
pub(crate) struct Migration;

/// Name and definition of each index, the same on both engines.
const INDEXES: &[(&str, &str)] = &[
    (
        "domains_registry_owner",
        "CREATE INDEX domains_registry_owner ON domains (registry_owner) \
         WHERE registry_owner IS NOT NULL",
    ),
    (
        "domains_token_owner",
        "CREATE INDEX domains_token_owner ON domains (token_owner) WHERE token_owner IS NOT NULL",
    ),
    (
        "domains_wrapped_owner",
        "CREATE INDEX domains_wrapped_owner ON domains (wrapped_owner) \
         WHERE wrapped_owner IS NOT NULL",
    ),
];

// The trait is declared with an elided `SchemaManager` lifetime.
#[allow(elided_lifetimes_in_paths)]
#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        let db = manager.get_connection();
        let backend = manager.get_database_backend();
        let deferring = db
            .query_one_raw(Statement::from_string(
                backend,
                "SELECT 1 AS deferring FROM deferred_indexes LIMIT 1",
            ))
            .await?
            .is_some();
        for (name, definition) in INDEXES {
            if deferring {
                let insert = match backend {
                    DatabaseBackend::Postgres => {
                        "INSERT INTO deferred_indexes (name, definition) VALUES ($1, $2) \
                         ON CONFLICT (name) DO NOTHING"
                    }
                    _ => "INSERT OR IGNORE INTO deferred_indexes (name, definition) VALUES (?, ?)",
                };
                db.execute_raw(Statement::from_sql_and_values(
                    backend,
                    insert,
                    [(*name).into(), (*definition).into()],
                ))
                .await?;
            } else {
                db.execute_unprepared(definition).await?;
            }
        }
        Ok(())
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        let db = manager.get_connection();
        for (name, _) in INDEXES {
            db.execute_unprepared(&format!("DROP INDEX IF EXISTS {name}")).await?;
            db.execute_raw(Statement::from_sql_and_values(
                manager.get_database_backend(),
                match manager.get_database_backend() {
                    DatabaseBackend::Postgres => "DELETE FROM deferred_indexes WHERE name = $1",
                    _ => "DELETE FROM deferred_indexes WHERE name = ?",
                },
                [(*name).into()],
            ))
            .await?;
        }
        Ok(())
    }

    fn use_transaction(&self) -> Option<bool> {
        Some(true)
    }
}
