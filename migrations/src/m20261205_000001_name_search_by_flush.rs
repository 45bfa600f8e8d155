//! SQLite's name search (`domains_name_fts`) is kept in step by the statements that write
//! names, a flush at a time, instead of by triggers on `domains`, one row at a time. The
//! search's contents do not change, only who writes them. PostgreSQL's trigram index is an
//! ordinary index and has nothing to change.

use sea_orm_migration::{prelude::*, sea_orm::DatabaseBackend};

/// Drops the name-search triggers on SQLite.
#[derive(DeriveMigrationName)]
pub(crate) struct Migration;

/// The triggers as the baseline created them, for `down`.
const TRIGGERS: &[(&str, &str)] = &[
    (
        "domains_name_fts_insert",
        "CREATE TRIGGER domains_name_fts_insert AFTER INSERT ON domains BEGIN \
         INSERT INTO domains_name_fts(rowid, name) VALUES (new.rowid, new.name); END",
    ),
    (
        "domains_name_fts_delete",
        "CREATE TRIGGER domains_name_fts_delete AFTER DELETE ON domains BEGIN \
         INSERT INTO domains_name_fts(domains_name_fts, rowid, name) \
         VALUES ('delete', old.rowid, old.name); END",
    ),
    (
        "domains_name_fts_update",
        "CREATE TRIGGER domains_name_fts_update AFTER UPDATE OF name ON domains \
         WHEN old.name IS NOT new.name BEGIN \
         INSERT INTO domains_name_fts(domains_name_fts, rowid, name) \
         VALUES ('delete', old.rowid, old.name); \
         INSERT INTO domains_name_fts(rowid, name) VALUES (new.rowid, new.name); END",
    ),
];

// The trait is declared with an elided `SchemaManager` lifetime.
#[allow(elided_lifetimes_in_paths)]
#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        if manager.get_database_backend() == DatabaseBackend::Sqlite {
            let db = manager.get_connection();
            for (name, _) in TRIGGERS {
                db.execute_unprepared(&format!("DROP TRIGGER IF EXISTS {name}")).await?;
            }
        }
        Ok(())
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        if manager.get_database_backend() == DatabaseBackend::Sqlite {
            let db = manager.get_connection();
            for (_, definition) in TRIGGERS {
                db.execute_unprepared(definition).await?;
            }
        }
        Ok(())
    }

    fn use_transaction(&self) -> Option<bool> {
        Some(true)
    }
}
