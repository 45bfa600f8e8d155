//! `Account`: any address; never checked for existence.

use async_graphql::{Context, Error, Object};
use entities::{resolver_address, resolver_record};
use sea_orm::{ColumnTrait, DatabaseConnection, EntityTrait, QueryFilter, QueryOrder, QuerySelect};

use super::NameReference;
use crate::{
    connection::{DomainConnection, DomainFilter, DomainsOrderInput, Paging},
    error::{code, coded, internal},
};

/// An account (lowercase hex address).
#[derive(Clone, Debug)]
pub struct Account(pub String);

#[Object]
impl Account {
    /// The address.
    async fn id(&self) -> &str {
        &self.0
    }

    /// The address.
    async fn address(&self) -> &str {
        &self.0
    }

    /// Domains this account effectively owns (by name unless `order` says otherwise).
    #[allow(clippy::too_many_arguments)]
    #[graphql(complexity = "crate::connection::page_complexity(first, last, child_complexity)")]
    async fn domains(
        &self,
        ctx: &Context<'_>,
        order: Option<DomainsOrderInput>,
        first: Option<i32>,
        after: Option<String>,
        last: Option<i32>,
        before: Option<String>,
    ) -> Result<DomainConnection, Error> {
        let db = ctx.data::<DatabaseConnection>()?;
        let paging = Paging { first, after, last, before };
        DomainConnection::load(db, DomainFilter::Owner(self.0.clone()), order, paging).await
    }

    /// Address records that point at this account (names resolving to it), at most
    /// `first` (default 100, max 1000), optionally of one coin type.
    async fn name_references(
        &self,
        ctx: &Context<'_>,
        coin_type: Option<i64>,
        first: Option<i32>,
    ) -> Result<Vec<NameReference>, Error> {
        let db = ctx.data::<DatabaseConnection>()?;
        let limit = match first {
            None => 100,
            Some(n) if (0..=1000).contains(&n) => n as u64,
            Some(_) => return Err(coded(code::INVALID_ARGUMENT, "first must be 0 to 1000")),
        };
        let mut query = resolver_address::Entity::find()
            .filter(resolver_address::Column::Address.eq(self.0.clone()));
        if let Some(coin) = coin_type {
            query = query.filter(resolver_address::Column::CoinType.eq(coin));
        }
        let addresses = query
            .order_by_asc(resolver_address::Column::RecordId)
            .order_by_asc(resolver_address::Column::CoinType)
            .limit(limit)
            .all(db)
            .await
            .map_err(internal)?;
        let mut out = Vec::with_capacity(addresses.len());
        for address in addresses {
            if let Some(record) = resolver_record::Entity::find_by_id(address.record_id.clone())
                .one(db)
                .await
                .map_err(internal)?
            {
                out.push(NameReference { address, record, account: self.0.clone() });
            }
        }
        Ok(out)
    }
}
