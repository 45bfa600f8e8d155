//! `NameReference`: an address record that points at an account, and whether that name is the
//! account's primary name. Both lookups go through DataLoaders, so a page of references costs
//! a fixed number of queries, not a few per row.

use async_graphql::{Context, Error, Object, dataloader::DataLoader};
use entities::{domain, resolver_address, resolver_record};

use super::{DomainInterface, Resolver};
use crate::{
    loaders::{DomainByNodeLoader, PrimaryNameLoader, loader_error},
    scalars::CoinType,
};

/// A record that resolves a name to the account.
#[derive(Clone, Debug)]
pub struct NameReference {
    /// The address record.
    pub address: resolver_address::Model,
    /// The resolver record it belongs to.
    pub record: resolver_record::Model,
    /// The account (lowercase hex).
    pub account: String,
}

impl NameReference {
    /// The domain whose assigned resolver holds this record.
    async fn domain_model(&self, ctx: &Context<'_>) -> Result<Option<domain::Model>, Error> {
        let loader = ctx.data::<DataLoader<DomainByNodeLoader>>()?;
        let key = (self.record.chain_id(), self.record.node());
        Ok(loader
            .load_one(key)
            .await
            .map_err(loader_error)?
            .unwrap_or_default()
            .into_iter()
            .find(|d| d.records_key().as_ref() == Some(&self.record.id)))
    }
}

#[Object]
impl NameReference {
    /// The domain whose resolver holds the record; null when no indexed domain uses that
    /// resolver for the node (any resolver can hold records for any node).
    async fn domain(&self, ctx: &Context<'_>) -> Result<Option<DomainInterface>, Error> {
        Ok(self.domain_model(ctx).await?.map(DomainInterface::from))
    }

    /// Coin type of the record.
    async fn coin_type(&self) -> CoinType {
        CoinType(self.address.coin_type)
    }

    /// The resolver holding the record.
    async fn resolver(&self) -> Resolver {
        Resolver { chain_id: self.record.chain_id(), address: self.record.resolver() }
    }

    /// Whether the name is also the account's primary name: the `name` record of
    /// `<account>.addr.reverse` on its resolver (ENSIP-3; coin type 60).
    #[graphql(name = "match")]
    async fn is_match(&self, ctx: &Context<'_>) -> Result<bool, Error> {
        let Some(domain) = self.domain_model(ctx).await? else { return Ok(false) };
        let loader = ctx.data::<DataLoader<PrimaryNameLoader>>()?;
        let primary = loader
            .load_one((self.record.chain_id(), self.account.clone()))
            .await
            .map_err(loader_error)?;
        Ok(primary.is_some_and(|name| name == domain.name))
    }
}
