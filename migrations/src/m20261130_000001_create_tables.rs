//! The first schema: namegraph, registrations, resolver records, checkpoints and the RPC cache.

use sea_orm_migration::prelude::*;

/// Creates every table and index of the first schema.
#[derive(DeriveMigrationName)]
pub(crate) struct Migration;

#[derive(DeriveIden)]
enum Domains {
    Table,
    Id,
    ChainId,
    Registry,
    Node,
    LabelHash,
    ParentId,
    Owner,
    RegistryOwner,
    Resolver,
    Ttl,
    Name,
    Depth,
    Migrated,
    RegistrationId,
    RegistrationCount,
    CreatedBlock,
    CreatedAt,
}

#[derive(DeriveIden)]
enum Labels {
    Table,
    LabelHash,
    Label,
    Interpreted,
}

#[derive(DeriveIden)]
enum Registrations {
    Table,
    Id,
    DomainId,
    Index,
    Kind,
    RegistrarChainId,
    Registrar,
    Registrant,
    Start,
    Expiry,
    GracePeriod,
    BaseCost,
    Premium,
    Referrer,
    Fuses,
    Wrapped,
    RenewalCount,
    BlockNumber,
}

#[derive(DeriveIden)]
enum Renewals {
    Table,
    Id,
    RegistrationId,
    Index,
    Duration,
    Expiry,
    BaseCost,
    Premium,
    Referrer,
    BlockNumber,
    Timestamp,
}

#[derive(DeriveIden)]
enum ResolverRecords {
    Table,
    Id,
    ChainId,
    Resolver,
    Node,
    Name,
    Contenthash,
    PubkeyX,
    PubkeyY,
    Version,
}

#[derive(DeriveIden)]
enum ResolverAddresses {
    Table,
    RecordId,
    CoinType,
    Address,
}

#[derive(DeriveIden)]
enum ResolverTexts {
    Table,
    RecordId,
    KeyHash,
    Key,
    Value,
}

#[derive(DeriveIden)]
enum Checkpoints {
    Table,
    ChainId,
    BlockNumber,
    BlockHash,
    UpdatedAt,
}

#[derive(DeriveIden)]
enum RpcCache {
    Table,
    Key,
    ChainId,
    Value,
}

fn text(col: impl IntoIden) -> ColumnDef {
    ColumnDef::new(col).text().not_null().take()
}

fn text_null(col: impl IntoIden) -> ColumnDef {
    ColumnDef::new(col).text().null().take()
}

fn big(col: impl IntoIden) -> ColumnDef {
    ColumnDef::new(col).big_integer().not_null().take()
}

fn big_null(col: impl IntoIden) -> ColumnDef {
    ColumnDef::new(col).big_integer().null().take()
}

fn int(col: impl IntoIden) -> ColumnDef {
    ColumnDef::new(col).integer().not_null().take()
}

fn flag(col: impl IntoIden) -> ColumnDef {
    ColumnDef::new(col).boolean().not_null().default(false).take()
}

fn index(table: impl IntoIden, name: &str, cols: &[&'static str]) -> IndexCreateStatement {
    let mut stmt = Index::create();
    stmt.name(name).table(table);
    for col in cols {
        stmt.col(Alias::new(*col));
    }
    stmt.take()
}

// The trait is declared with an elided `SchemaManager` lifetime; spelling it out here would
// make the impl's lifetimes late-bound and no longer match.
#[allow(elided_lifetimes_in_paths)]
#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .create_table(
                Table::create()
                    .table(Domains::Table)
                    .col(text(Domains::Id).primary_key())
                    .col(big(Domains::ChainId))
                    .col(text(Domains::Registry))
                    .col(text(Domains::Node))
                    .col(text(Domains::LabelHash))
                    .col(text_null(Domains::ParentId))
                    .col(text_null(Domains::Owner))
                    .col(text_null(Domains::RegistryOwner))
                    .col(text_null(Domains::Resolver))
                    .col(big_null(Domains::Ttl))
                    .col(text(Domains::Name))
                    .col(int(Domains::Depth))
                    .col(flag(Domains::Migrated))
                    .col(text_null(Domains::RegistrationId))
                    .col(int(Domains::RegistrationCount))
                    .col(big(Domains::CreatedBlock))
                    .col(big(Domains::CreatedAt))
                    .to_owned(),
            )
            .await?;
        // The heal cascade finds affected rows through these two, never by a scan.
        manager.create_index(index(Domains::Table, "domains_label_hash", &["label_hash"])).await?;
        manager
            .create_index(index(Domains::Table, "domains_parent", &["parent_id", "name"]))
            .await?;
        manager.create_index(index(Domains::Table, "domains_owner", &["owner", "name"])).await?;
        manager.create_index(index(Domains::Table, "domains_name", &["name"])).await?;
        manager.create_index(index(Domains::Table, "domains_node", &["node"])).await?;

        manager
            .create_table(
                Table::create()
                    .table(Labels::Table)
                    .col(text(Labels::LabelHash).primary_key())
                    .col(text_null(Labels::Label))
                    .col(text(Labels::Interpreted))
                    .to_owned(),
            )
            .await?;

        manager
            .create_table(
                Table::create()
                    .table(Registrations::Table)
                    .col(text(Registrations::Id).primary_key())
                    .col(text(Registrations::DomainId))
                    .col(int(Registrations::Index))
                    .col(text(Registrations::Kind))
                    .col(big(Registrations::RegistrarChainId))
                    .col(text(Registrations::Registrar))
                    .col(text_null(Registrations::Registrant))
                    .col(big(Registrations::Start))
                    .col(big_null(Registrations::Expiry))
                    .col(big(Registrations::GracePeriod))
                    .col(text_null(Registrations::BaseCost))
                    .col(text_null(Registrations::Premium))
                    .col(text_null(Registrations::Referrer))
                    .col(big_null(Registrations::Fuses))
                    .col(flag(Registrations::Wrapped))
                    .col(int(Registrations::RenewalCount))
                    .col(big(Registrations::BlockNumber))
                    .to_owned(),
            )
            .await?;
        manager
            .create_index(index(
                Registrations::Table,
                "registrations_domain",
                &["domain_id", "index"],
            ))
            .await?;

        manager
            .create_table(
                Table::create()
                    .table(Renewals::Table)
                    .col(text(Renewals::Id).primary_key())
                    .col(text(Renewals::RegistrationId))
                    .col(int(Renewals::Index))
                    .col(big(Renewals::Duration))
                    .col(big(Renewals::Expiry))
                    .col(text_null(Renewals::BaseCost))
                    .col(text_null(Renewals::Premium))
                    .col(text_null(Renewals::Referrer))
                    .col(big(Renewals::BlockNumber))
                    .col(big(Renewals::Timestamp))
                    .to_owned(),
            )
            .await?;
        manager
            .create_index(index(
                Renewals::Table,
                "renewals_registration",
                &["registration_id", "index"],
            ))
            .await?;

        manager
            .create_table(
                Table::create()
                    .table(ResolverRecords::Table)
                    .col(text(ResolverRecords::Id).primary_key())
                    .col(big(ResolverRecords::ChainId))
                    .col(text(ResolverRecords::Resolver))
                    .col(text(ResolverRecords::Node))
                    .col(text_null(ResolverRecords::Name))
                    .col(text_null(ResolverRecords::Contenthash))
                    .col(text_null(ResolverRecords::PubkeyX))
                    .col(text_null(ResolverRecords::PubkeyY))
                    .col(big(ResolverRecords::Version))
                    .to_owned(),
            )
            .await?;
        manager
            .create_index(index(ResolverRecords::Table, "resolver_records_node", &["node"]))
            .await?;

        manager
            .create_table(
                Table::create()
                    .table(ResolverAddresses::Table)
                    .col(text(ResolverAddresses::RecordId))
                    .col(big(ResolverAddresses::CoinType))
                    .col(text(ResolverAddresses::Address))
                    .primary_key(
                        Index::create()
                            .col(ResolverAddresses::RecordId)
                            .col(ResolverAddresses::CoinType),
                    )
                    .to_owned(),
            )
            .await?;

        manager
            .create_table(
                Table::create()
                    .table(ResolverTexts::Table)
                    .col(text(ResolverTexts::RecordId))
                    .col(text(ResolverTexts::KeyHash))
                    .col(text(ResolverTexts::Key))
                    .col(text_null(ResolverTexts::Value))
                    .primary_key(
                        Index::create().col(ResolverTexts::RecordId).col(ResolverTexts::KeyHash),
                    )
                    .to_owned(),
            )
            .await?;

        manager
            .create_table(
                Table::create()
                    .table(Checkpoints::Table)
                    .col(big(Checkpoints::ChainId).primary_key())
                    .col(big(Checkpoints::BlockNumber))
                    .col(text(Checkpoints::BlockHash))
                    .col(big(Checkpoints::UpdatedAt))
                    .to_owned(),
            )
            .await?;

        manager
            .create_table(
                Table::create()
                    .table(RpcCache::Table)
                    .col(text(RpcCache::Key).primary_key())
                    .col(big(RpcCache::ChainId))
                    .col(text(RpcCache::Value))
                    .to_owned(),
            )
            .await?;
        Ok(())
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        for table in [
            Domains::Table.into_iden(),
            Labels::Table.into_iden(),
            Registrations::Table.into_iden(),
            Renewals::Table.into_iden(),
            ResolverRecords::Table.into_iden(),
            ResolverAddresses::Table.into_iden(),
            ResolverTexts::Table.into_iden(),
            Checkpoints::Table.into_iden(),
            RpcCache::Table.into_iden(),
        ] {
            manager.drop_table(Table::drop().table(table).if_exists().to_owned()).await?;
        }
        Ok(())
    }
}
