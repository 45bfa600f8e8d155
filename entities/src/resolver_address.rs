//! `resolver_addresses`: address records per coin type (ENSIP-9/11) of one resolver record.

use sea_orm::entity::prelude::*;

pub use crate::resolver_record_key::ResolverRecordKey;

/// One address record.
#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel, serde::Serialize, serde::Deserialize)]
#[sea_orm(table_name = "resolver_addresses")]
pub struct Model {
    /// Id of the owning `resolver_records` row.
    #[sea_orm(primary_key, auto_increment = false)]
    pub record_id: ResolverRecordKey,
    /// SLIP-44 / ENSIP-11 coin type (60 = ETH).
    #[sea_orm(primary_key, auto_increment = false)]
    pub coin_type: i64,
    /// Address bytes, hex (lowercase; for coin type 60 an EVM address).
    pub address: String,
}

/// No relations.
#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
