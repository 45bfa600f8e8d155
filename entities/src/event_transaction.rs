//! `event_transactions`: hash and recipient of every transaction that emitted a recorded
//! event, once per transaction rather than once per event (its sender stays on each event,
//! where account listings index it). Append-only; a reorg deletes from the fork up.

use sea_orm::entity::prelude::*;

/// A transaction with recorded events.
#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel, serde::Serialize, serde::Deserialize)]
#[sea_orm(table_name = "event_transactions")]
pub struct Model {
    /// Chain id.
    #[sea_orm(primary_key, auto_increment = false)]
    pub chain_id: i64,
    /// Block number.
    #[sea_orm(primary_key, auto_increment = false)]
    pub block_number: i64,
    /// Index of the transaction in the block.
    #[sea_orm(primary_key, auto_increment = false)]
    pub tx_index: i32,
    /// Transaction hash, 32 bytes.
    pub hash: Vec<u8>,
    /// Recipient, 20 bytes; none for a contract creation.
    pub to_address: Option<Vec<u8>>,
}

/// No relations.
#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
