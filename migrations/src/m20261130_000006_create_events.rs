//! The event history (`events`) and the indexes its three readers walk in order: a domain's
//! events, a resolver's events and an account's events. Every index ends with the event's
//! coordinates, so a page is an index range scan, never a sort.

use sea_orm_migration::prelude::*;

/// Creates `events` and its indexes.
#[derive(DeriveMigrationName)]
pub(crate) struct Migration;

#[derive(Clone, Copy, PartialEq, DeriveIden)]
enum Events {
    Table,
    ChainId,
    BlockNumber,
    LogIndex,
    Seq,
    Timestamp,
    BlockHash,
    TxHash,
    TxIndex,
    TxFrom,
    TxTo,
    Address,
    Selector,
    Topics,
    Data,
    Node,
}

// The trait is declared with an elided `SchemaManager` lifetime; see the first migration.
#[allow(elided_lifetimes_in_paths)]
#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .create_table(
                Table::create()
                    .table(Events::Table)
                    .col(ColumnDef::new(Events::ChainId).big_integer().not_null())
                    .col(ColumnDef::new(Events::BlockNumber).big_integer().not_null())
                    .col(ColumnDef::new(Events::LogIndex).integer().not_null())
                    .col(ColumnDef::new(Events::Seq).integer().not_null())
                    .col(ColumnDef::new(Events::Timestamp).big_integer().not_null())
                    .col(ColumnDef::new(Events::BlockHash).string().not_null())
                    .col(ColumnDef::new(Events::TxHash).string().not_null())
                    .col(ColumnDef::new(Events::TxIndex).integer().not_null())
                    .col(ColumnDef::new(Events::TxFrom).string().not_null())
                    .col(ColumnDef::new(Events::TxTo).string())
                    .col(ColumnDef::new(Events::Address).string().not_null())
                    .col(ColumnDef::new(Events::Selector).string().not_null())
                    .col(ColumnDef::new(Events::Topics).text().not_null())
                    .col(ColumnDef::new(Events::Data).text().not_null())
                    .col(ColumnDef::new(Events::Node).string())
                    .primary_key(
                        Index::create()
                            .col(Events::ChainId)
                            .col(Events::BlockNumber)
                            .col(Events::LogIndex)
                            .col(Events::Seq),
                    )
                    .to_owned(),
            )
            .await?;
        // Events list in one global order, (timestamp, chain, block, log, seq); with the
        // chain (or sender) fixed by the lookup, each index holds that order.
        let order = [
            Events::Timestamp,
            Events::ChainId,
            Events::BlockNumber,
            Events::LogIndex,
            Events::Seq,
        ];
        let indexes: [(&str, &[Events]); 3] = [
            ("events_node", &[Events::ChainId, Events::Node]),
            ("events_address", &[Events::ChainId, Events::Address]),
            ("events_from", &[Events::TxFrom]),
        ];
        for (name, lead) in indexes {
            let mut index = Index::create();
            index.name(name).table(Events::Table);
            for col in lead.iter().chain(order.iter().filter(|c| !lead.contains(c))) {
                index.col(*col);
            }
            manager.create_index(index.to_owned()).await?;
        }
        Ok(())
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager.drop_table(Table::drop().table(Events::Table).to_owned()).await
    }
}
