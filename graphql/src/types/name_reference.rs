//! `NameReference`: an address record that points at an account, and whether that name is the
//! account's primary name.

use async_graphql::{Context, Error, Object};
use entities::{domain, resolver_address, resolver_record};
use sea_orm::{ColumnTrait, DatabaseConnection, EntityTrait, QueryFilter};

use super::{DomainInterface, Resolver};
use crate::{error::internal, scalars::CoinType};

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
    async fn domain_model(&self, db: &DatabaseConnection) -> Result<Option<domain::Model>, Error> {
        domain::Entity::find()
            .filter(domain::Column::Node.eq(self.record.node.clone()))
            .filter(domain::Column::ChainId.eq(self.record.chain_id))
            .filter(domain::Column::Resolver.eq(self.record.resolver.clone()))
            .one(db)
            .await
            .map_err(internal)
    }
}

#[Object]
impl NameReference {
    /// The domain whose resolver holds the record; null when no indexed domain uses that
    /// resolver for the node (any resolver can hold records for any node).
    async fn domain(&self, ctx: &Context<'_>) -> Result<Option<DomainInterface>, Error> {
        let db = ctx.data::<DatabaseConnection>()?;
        Ok(self.domain_model(db).await?.map(DomainInterface::from))
    }

    /// Coin type of the record.
    async fn coin_type(&self) -> CoinType {
        CoinType(self.address.coin_type)
    }

    /// The resolver holding the record.
    async fn resolver(&self) -> Resolver {
        Resolver { chain_id: self.record.chain_id, address: self.record.resolver.clone() }
    }

    /// Whether the name is also the account's primary name: the `name` record of
    /// `<account>.addr.reverse` on its resolver (ENSIP-3; coin type 60).
    #[graphql(name = "match")]
    async fn is_match(&self, ctx: &Context<'_>) -> Result<bool, Error> {
        let db = ctx.data::<DatabaseConnection>()?;
        let Some(domain) = self.domain_model(db).await? else { return Ok(false) };
        let reverse_name = format!("{}.addr.reverse", self.account.trim_start_matches("0x"));
        let Some(reverse) = domain::Entity::find()
            .filter(domain::Column::Name.eq(reverse_name))
            .filter(domain::Column::ChainId.eq(self.record.chain_id))
            .one(db)
            .await
            .map_err(internal)?
        else {
            return Ok(false);
        };
        let Some(resolver) = reverse.resolver else { return Ok(false) };
        let id = format!("{}-{}-{}", reverse.chain_id, resolver, reverse.node);
        let primary = resolver_record::Entity::find_by_id(id).one(db).await.map_err(internal)?;
        Ok(primary.and_then(|r| r.name).is_some_and(|name| name == domain.name))
    }
}
