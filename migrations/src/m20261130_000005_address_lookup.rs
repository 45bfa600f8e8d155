//! Reverse lookup of address records (`Account.nameReferences`): which records point at an
//! address.

use sea_orm_migration::prelude::*;

/// Indexes `resolver_addresses` by address.
#[derive(DeriveMigrationName)]
pub(crate) struct Migration;

// The trait is declared with an elided `SchemaManager` lifetime; see the first migration.
#[allow(elided_lifetimes_in_paths)]
#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .create_index(
                Index::create()
                    .name("resolver_addresses_address")
                    .table(Alias::new("resolver_addresses"))
                    .col(Alias::new("address"))
                    .col(Alias::new("record_id"))
                    .col(Alias::new("coin_type"))
                    .to_owned(),
            )
            .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .drop_index(
                Index::drop()
                    .name("resolver_addresses_address")
                    .table(Alias::new("resolver_addresses"))
                    .to_owned(),
            )
            .await
    }
}
