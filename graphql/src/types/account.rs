//! `Account`: any address; never checked for existence.

use async_graphql::{Context, Error, Object};
use sea_orm::DatabaseConnection;

use crate::connection::{DomainConnection, DomainFilter};

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

    /// Domains this account effectively owns, by name.
    async fn domains(
        &self,
        ctx: &Context<'_>,
        first: Option<i32>,
        after: Option<String>,
    ) -> Result<DomainConnection, Error> {
        let db = ctx.data::<DatabaseConnection>()?;
        DomainConnection::load(db, DomainFilter::Owner(self.0.clone()), first, after).await
    }
}
