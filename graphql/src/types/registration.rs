//! `Registration`: a base registrar or NameWrapper registration.

use async_graphql::{Context, Error, Object};
use entities::{registration, renewal};
use sea_orm::{ColumnTrait, DatabaseConnection, EntityTrait, QueryFilter, QueryOrder};

use super::{Account, AccountId};

/// A registration.
#[derive(Clone, Debug)]
pub struct Registration(pub registration::Model);

fn now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64)
}

#[Object]
impl Registration {
    /// `${domainId}-${index}`.
    async fn id(&self) -> &str {
        &self.0.id
    }

    /// `BaseRegistrar` or `NameWrapper`.
    async fn kind(&self) -> &str {
        &self.0.kind
    }

    /// Block timestamp of the registration (decimal string).
    async fn start(&self) -> String {
        self.0.start.to_string()
    }

    /// Expiry in seconds (decimal string); null when it never expires.
    async fn expiry(&self) -> Option<String> {
        self.0.expiry.map(|e| e.to_string())
    }

    /// Past expiry plus grace period.
    async fn expired(&self) -> bool {
        self.0.expiry.is_some_and(|e| e.saturating_add(self.0.grace_period) < now())
    }

    /// Past expiry but within the grace period.
    async fn is_in_grace_period(&self) -> bool {
        let now = now();
        self.0.expiry.is_some_and(|e| e < now && now <= e.saturating_add(self.0.grace_period))
    }

    /// The registrar contract.
    async fn registrar(&self) -> AccountId {
        AccountId { chain_id: self.0.registrar_chain_id, address: self.0.registrar.clone() }
    }

    /// Who it was registered to.
    async fn registrant(&self) -> Option<Account> {
        self.0.registrant.clone().map(Account)
    }

    /// Base cost in wei (decimal string).
    async fn base_cost(&self) -> Option<&str> {
        self.0.base_cost.as_deref()
    }

    /// Premium in wei (decimal string).
    async fn premium(&self) -> Option<&str> {
        self.0.premium.as_deref()
    }

    /// Referrer.
    async fn referrer(&self) -> Option<&str> {
        self.0.referrer.as_deref()
    }

    /// NameWrapper fuses while wrapped.
    async fn fuses(&self) -> Option<i64> {
        self.0.fuses
    }

    /// A base registrar registration currently wrapped.
    async fn wrapped(&self) -> bool {
        self.0.wrapped
    }

    /// Renewals, oldest first.
    async fn renewals(&self, ctx: &Context<'_>) -> Result<Vec<Renewal>, Error> {
        let db = ctx.data::<DatabaseConnection>()?;
        Ok(renewal::Entity::find()
            .filter(renewal::Column::RegistrationId.eq(self.0.id.clone()))
            .order_by_asc(renewal::Column::Index)
            .all(db)
            .await
            .map_err(crate::error::internal)?
            .into_iter()
            .map(Renewal)
            .collect())
    }
}

/// A renewal of a registration.
#[derive(Clone, Debug)]
pub struct Renewal(pub renewal::Model);

#[Object]
impl Renewal {
    /// `${registrationId}-${index}`.
    async fn id(&self) -> &str {
        &self.0.id
    }

    /// Seconds added (decimal string).
    async fn duration(&self) -> String {
        self.0.duration.to_string()
    }

    /// Expiry after the renewal (decimal string).
    async fn expiry(&self) -> String {
        self.0.expiry.to_string()
    }

    /// Cost in wei (decimal string), from the controller.
    async fn base(&self) -> Option<&str> {
        self.0.base_cost.as_deref()
    }

    /// Premium in wei (decimal string).
    async fn premium(&self) -> Option<&str> {
        self.0.premium.as_deref()
    }

    /// Referrer.
    async fn referrer(&self) -> Option<&str> {
        self.0.referrer.as_deref()
    }

    /// Block timestamp of the renewal (decimal string).
    async fn timestamp(&self) -> String {
        self.0.timestamp.to_string()
    }
}
