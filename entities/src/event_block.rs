//! `event_blocks`: the hash of every block that holds a recorded event, once per block rather
//! than once per event. Append-only like `events`; a reorg deletes from the fork up.

use sea_orm::entity::prelude::*;

/// A block with recorded events.
#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel, serde::Serialize, serde::Deserialize)]
#[sea_orm(table_name = "event_blocks")]
pub struct Model {
    /// Chain id.
    #[sea_orm(primary_key, auto_increment = false)]
    pub chain_id: i64,
    /// Block number.
    #[sea_orm(primary_key, auto_increment = false)]
    pub block_number: i64,
    /// Block hash, 32 bytes.
    pub hash: Vec<u8>,
}

/// No relations.
#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
