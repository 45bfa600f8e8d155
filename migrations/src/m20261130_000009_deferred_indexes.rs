//! The `deferred_indexes` table: query indexes set aside during a fresh database's first
//! backfill, each with the exact statement that recreates it. An index is dropped and recorded
//! in one transaction, and rebuilt and forgotten in another, so a crash at any point leaves
//! every index either present or recorded here, never lost and never built twice.

use sea_orm_migration::prelude::*;

/// Creates `deferred_indexes`.
#[derive(DeriveMigrationName)]
pub(crate) struct Migration;

#[derive(DeriveIden)]
enum DeferredIndexes {
    Table,
    Name,
    Definition,
}

// The trait is declared with an elided `SchemaManager` lifetime; see the first migration.
#[allow(elided_lifetimes_in_paths)]
#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .create_table(
                Table::create()
                    .table(DeferredIndexes::Table)
                    .col(ColumnDef::new(DeferredIndexes::Name).text().not_null().primary_key())
                    .col(ColumnDef::new(DeferredIndexes::Definition).text().not_null())
                    .to_owned(),
            )
            .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager.drop_table(Table::drop().table(DeferredIndexes::Table).to_owned()).await
    }
}
