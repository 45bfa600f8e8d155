//! `Registry`: an ENSv1 registry contract and the top-level domains it holds.

use async_graphql::{Context, Error, Object};
use sea_orm::DatabaseConnection;

use super::AccountId;
use crate::connection::{DomainConnection, DomainFilter, DomainsOrderInput, Paging};

/// An ENSv1 registry on one chain.
#[derive(Clone, Debug)]
pub struct Registry {
    /// Chain id.
    pub chain_id: i64,
    /// Address (lowercase hex).
    pub address: String,
}

#[Object]
impl Registry {
    /// `${chainId}-${address}`.
    async fn id(&self) -> String {
        format!("{}-{}", self.chain_id, self.address)
    }

    /// The contract.
    async fn contract(&self) -> AccountId {
        AccountId { chain_id: self.chain_id, address: self.address.clone() }
    }

    /// Top-level domains held directly by this registry.
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
        let filter =
            DomainFilter::TopLevel { chain_id: self.chain_id, registry: self.address.clone() };
        DomainConnection::load(db, filter, order, Paging { first, after, last, before }).await
    }
}
