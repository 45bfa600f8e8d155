//! `renewals`: append-only renewals of a registration (`${registrationId}-${index}`). The
//! registration and the index are the key's two parts ([`RenewalKey`]), not columns of their
//! own.

use sea_orm::entity::prelude::*;

pub use crate::{registration_key::RegistrationKey, renewal_key::RenewalKey};

/// A renewal.
#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel, serde::Serialize, serde::Deserialize)]
#[sea_orm(table_name = "renewals")]
pub struct Model {
    /// `${registrationId}-${index}`, as (registration, index) bytes.
    #[sea_orm(primary_key, auto_increment = false)]
    pub id: RenewalKey,
    /// Seconds added (new expiry − previous expiry).
    pub duration: i64,
    /// Expiry after the renewal.
    pub expiry: i64,
    /// Cost in wei (decimal), from the controller.
    pub base_cost: Option<String>,
    /// Premium in wei (decimal), from the controller.
    pub premium: Option<String>,
    /// Referrer (bytes32 hex), from the controller.
    pub referrer: Option<String>,
    /// Block of the renewal.
    pub block_number: i64,
    /// Timestamp of that block.
    pub timestamp: i64,
}

/// No relations.
#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}

impl Model {
    /// The renewed registration.
    pub fn registration_id(&self) -> RegistrationKey {
        self.id.registration_id()
    }

    /// 0-based index within the registration.
    pub fn index(&self) -> i32 {
        i32::try_from(self.id.index()).unwrap_or(i32::MAX)
    }
}
