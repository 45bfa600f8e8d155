//! `registrations`: append-only registrations per domain (`${domainId}-${index}`); the domain
//! points at its latest one. Prices come later in the same transaction from the controller and
//! are patched onto the latest registration. The domain and the index are the key's two parts
//! ([`RegistrationKey`]), not columns of their own.

use sea_orm::entity::prelude::*;

pub use crate::{domain_key::DomainKey, registration_key::RegistrationKey};

/// A registration.
#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel, serde::Serialize, serde::Deserialize)]
#[sea_orm(table_name = "registrations")]
pub struct Model {
    /// `${domainId}-${index}`, as (domain, index) bytes.
    #[sea_orm(primary_key, auto_increment = false)]
    pub id: RegistrationKey,
    /// `BaseRegistrar` or `NameWrapper`.
    pub kind: String,
    /// Chain of the registrar contract.
    pub registrar_chain_id: i64,
    /// Address of the registrar contract.
    pub registrar: String,
    /// Account the name was registered to.
    pub registrant: Option<String>,
    /// Block timestamp of the registration.
    pub start: i64,
    /// Expiry in seconds; `None` means it never expires.
    pub expiry: Option<i64>,
    /// Grace period after expiry, seconds (90 days for the .eth base registrar).
    pub grace_period: i64,
    /// Base cost in wei (decimal), from the controller.
    pub base_cost: Option<String>,
    /// Premium in wei (decimal), from the controller.
    pub premium: Option<String>,
    /// Referrer (bytes32 hex), from the controller.
    pub referrer: Option<String>,
    /// NameWrapper fuses, while wrapped.
    pub fuses: Option<i64>,
    /// A BaseRegistrar registration currently wrapped by the NameWrapper.
    pub wrapped: bool,
    /// Number of renewals so far.
    pub renewal_count: i32,
    /// Block that created it.
    pub block_number: i64,
}

/// No relations.
#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}

impl Model {
    /// The registered domain.
    pub fn domain_id(&self) -> DomainKey {
        self.id.domain_id()
    }

    /// 0-based index within the domain.
    pub fn index(&self) -> i32 {
        i32::try_from(self.id.index()).unwrap_or(i32::MAX)
    }
}
