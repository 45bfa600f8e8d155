//! `chain_status.applied_block`: the last block a chain's handler applied, which runs ahead of
//! the committed `indexed_block` while a backfill holds its rows between flushes. Status shows
//! a backfill's progress with it. Existing rows start at 0 and are rewritten within a second
//! by their indexer.

use sea_orm_migration::prelude::*;

/// Adds the column.
#[derive(DeriveMigrationName)]
pub(crate) struct Migration;

// The trait is declared with an elided `SchemaManager` lifetime; see the first migration.
#[allow(elided_lifetimes_in_paths)]
#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .get_connection()
            .execute_unprepared(
                "ALTER TABLE chain_status ADD COLUMN applied_block bigint NOT NULL DEFAULT 0",
            )
            .await?;
        Ok(())
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .get_connection()
            .execute_unprepared("ALTER TABLE chain_status DROP COLUMN applied_block")
            .await?;
        Ok(())
    }
}
