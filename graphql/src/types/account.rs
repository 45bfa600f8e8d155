//! `Account`: any address; never checked for existence.

use async_graphql::{Context, Error, Object};
use sea_orm::DatabaseConnection;

use crate::connection::{DomainConnection, DomainFilter, DomainsOrderInput, Paging};

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
}
