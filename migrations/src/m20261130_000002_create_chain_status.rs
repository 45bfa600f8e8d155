//! The `chain_status` table: per-chain indexer status readable by any API process.

use sea_orm_migration::prelude::*;

/// Creates `chain_status`.
#[derive(DeriveMigrationName)]
pub(crate) struct Migration;

#[derive(DeriveIden)]
enum ChainStatus {
    Table,
    ChainId,
    Name,
    Phase,
    HeadBlock,
    IndexedBlock,
    EventsPerSecond,
    EtaSeconds,
    Restarts,
    Error,
    UpdatedAt,
}

// The trait is declared with an elided `SchemaManager` lifetime; see the first migration.
#[allow(elided_lifetimes_in_paths)]
#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .create_table(
                Table::create()
                    .table(ChainStatus::Table)
                    .col(
                        ColumnDef::new(ChainStatus::ChainId).big_integer().not_null().primary_key(),
                    )
                    .col(ColumnDef::new(ChainStatus::Name).text().not_null())
                    .col(ColumnDef::new(ChainStatus::Phase).text().not_null())
                    .col(ColumnDef::new(ChainStatus::HeadBlock).big_integer().not_null())
                    .col(ColumnDef::new(ChainStatus::IndexedBlock).big_integer().not_null())
                    .col(ColumnDef::new(ChainStatus::EventsPerSecond).double().not_null())
                    .col(ColumnDef::new(ChainStatus::EtaSeconds).big_integer().null())
                    .col(ColumnDef::new(ChainStatus::Restarts).big_integer().not_null())
                    .col(ColumnDef::new(ChainStatus::Error).text().null())
                    .col(ColumnDef::new(ChainStatus::UpdatedAt).big_integer().not_null())
                    .to_owned(),
            )
            .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager.drop_table(Table::drop().table(ChainStatus::Table).if_exists().to_owned()).await
    }
}
