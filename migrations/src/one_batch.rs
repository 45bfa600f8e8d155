//! How the table-rebuilding migrations (21 onwards) run: every statement in one batch, on one
//! pooled connection, and a `down` that refuses, since what `up` converted is not converted
//! back.
//!
//! Why one batch: statements issued one by one may run on different pooled connections, and a
//! SQLite connection that did not run a `DROP TABLE` still has the table in its cached schema;
//! `ALTER TABLE labels_raw RENAME TO labels` failed for that reason ("there is already another
//! table or index with this name: labels", seen in migration 21). Migrations are frozen once
//! released, so what this sends must never change: exactly the statements, joined by `;`.

use sea_orm_migration::prelude::*;

/// Runs `statements` as one batch on one connection.
pub(crate) async fn run<S: AsRef<str>>(
    manager: &SchemaManager<'_>,
    statements: &[S],
) -> Result<(), DbErr> {
    let batch: Vec<&str> = statements.iter().map(AsRef::as_ref).collect();
    manager.get_connection().execute_unprepared(&batch.join(";\n")).await?;
    Ok(())
}

/// Runs `sqlite` or `postgres`, whichever is the connection's engine, as one batch.
pub(crate) async fn run_per_backend(
    manager: &SchemaManager<'_>,
    sqlite: &[&str],
    postgres: &[&str],
) -> Result<(), DbErr> {
    match manager.get_database_backend() {
        sea_orm_migration::sea_orm::DatabaseBackend::Postgres => run(manager, postgres).await,
        _ => run(manager, sqlite).await,
    }
}

/// The error of a `down` that cannot undo `up`: `what` says what is not converted back.
pub(crate) fn irreversible(what: &str) -> DbErr {
    DbErr::Migration(format!("{what}; restore a backup taken before this migration instead"))
}

/// Implements `MigrationTrait` for the module's `Migration` as a table rebuild: `up` runs
/// `$sqlite` or `$postgres` (whichever is the engine) through [`run_per_backend`], and `down`
/// refuses, saying what `$what` is not converted back.
macro_rules! per_backend_migration {
    ($sqlite:expr, $postgres:expr, irreversible: $what:literal) => {
        // The trait is declared with an elided `SchemaManager` lifetime; see the first
        // migration.
        #[allow(elided_lifetimes_in_paths)]
        #[async_trait::async_trait]
        impl MigrationTrait for Migration {
            async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
                crate::one_batch::run_per_backend(manager, $sqlite, $postgres).await
            }

            async fn down(&self, _manager: &SchemaManager) -> Result<(), DbErr> {
                Err(crate::one_batch::irreversible($what))
            }
        }
    };
}

pub(crate) use per_backend_migration;
