//! `Registration`: a base registrar or NameWrapper registration.

use async_graphql::Object;
use entities::registration;

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
}
