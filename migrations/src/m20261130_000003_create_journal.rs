//! The reorg journal: `journal_windows` and `journal_entries`.

use sea_orm_migration::prelude::*;

/// Creates the journal tables.
#[derive(DeriveMigrationName)]
pub(crate) struct Migration;

#[derive(DeriveIden)]
enum JournalWindows {
    Table,
    ChainId,
    WindowStart,
    WindowEnd,
    EndHash,
    StartParentHash,
}

#[derive(DeriveIden)]
enum JournalEntries {
    Table,
    ChainId,
    WindowStart,
    TableName,
    RowKey,
    Prior,
}

// The trait is declared with an elided `SchemaManager` lifetime; see the first migration.
#[allow(elided_lifetimes_in_paths)]
#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .create_table(
                Table::create()
                    .table(JournalWindows::Table)
                    .col(ColumnDef::new(JournalWindows::ChainId).big_integer().not_null())
                    .col(ColumnDef::new(JournalWindows::WindowStart).big_integer().not_null())
                    .col(ColumnDef::new(JournalWindows::WindowEnd).big_integer().not_null())
                    .col(ColumnDef::new(JournalWindows::EndHash).text().not_null())
                    .col(ColumnDef::new(JournalWindows::StartParentHash).text().not_null())
                    .primary_key(
                        Index::create()
                            .col(JournalWindows::ChainId)
                            .col(JournalWindows::WindowStart),
                    )
                    .to_owned(),
            )
            .await?;
        manager
            .create_table(
                Table::create()
                    .table(JournalEntries::Table)
                    .col(ColumnDef::new(JournalEntries::ChainId).big_integer().not_null())
                    .col(ColumnDef::new(JournalEntries::WindowStart).big_integer().not_null())
                    .col(ColumnDef::new(JournalEntries::TableName).text().not_null())
                    .col(ColumnDef::new(JournalEntries::RowKey).text().not_null())
                    .col(ColumnDef::new(JournalEntries::Prior).text().null())
                    .primary_key(
                        Index::create()
                            .col(JournalEntries::ChainId)
                            .col(JournalEntries::WindowStart)
                            .col(JournalEntries::TableName)
                            .col(JournalEntries::RowKey),
                    )
                    .to_owned(),
            )
            .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .drop_table(Table::drop().table(JournalEntries::Table).if_exists().to_owned())
            .await?;
        manager.drop_table(Table::drop().table(JournalWindows::Table).if_exists().to_owned()).await
    }
}
