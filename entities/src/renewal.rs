//! `renewals`: append-only renewals of a registration (`${registrationId}-${index}`).

use sea_orm::entity::prelude::*;

/// A renewal.
#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel, serde::Serialize, serde::Deserialize)]
#[sea_orm(table_name = "renewals")]
pub struct Model {
    /// `${registrationId}-${index}`.
    #[sea_orm(primary_key, auto_increment = false)]
    pub id: String,
    /// The renewed registration.
    pub registration_id: String,
    /// 0-based index within the registration.
    pub index: i32,
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
