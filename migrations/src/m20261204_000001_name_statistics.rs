//! PostgreSQL keeps a finer sample of `domains.name` (a statistics target of 1,000 instead of
//! 100). A `contains` search decides between walking the name index and sorting the trigram
//! index's matches by the planner's estimate of how many names hold the text, and with 100
//! histogram entries that estimate moves in steps of 1% of all names: every text met once in
//! the sample is "10,000 names" at 1M, whether it is in 900 or in 20,000. With 1,000 the step
//! is 0.1%. `ANALYZE` then reads a sample of 300,000 rows instead of 30,000 (4 s at 1M names).
//! SQLite counts matches in its trigram index instead and has nothing to change.

use sea_orm_migration::{prelude::*, sea_orm::DatabaseBackend};

/// Raises the statistics target of `domains.name` on PostgreSQL.
#[derive(DeriveMigrationName)]
pub(crate) struct Migration;

// The trait is declared with an elided `SchemaManager` lifetime.
#[allow(elided_lifetimes_in_paths)]
#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        if manager.get_database_backend() == DatabaseBackend::Postgres {
            let db = manager.get_connection();
            db.execute_unprepared("ALTER TABLE domains ALTER COLUMN name SET STATISTICS 1000")
                .await?;
        }
        Ok(())
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        if manager.get_database_backend() == DatabaseBackend::Postgres {
            let db = manager.get_connection();
            db.execute_unprepared("ALTER TABLE domains ALTER COLUMN name SET STATISTICS -1")
                .await?;
        }
        Ok(())
    }

    fn use_transaction(&self) -> Option<bool> {
        Some(true)
    }
}
