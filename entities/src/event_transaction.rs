//! `event_transactions`: hash, sender and recipient of every transaction that emitted a
//! recorded event, once per transaction rather than once per event. Account listings index
//! the sender here, with the block time, and reach the events through the transaction's
//! coordinates: a transaction emits about three recorded events, so the sender and its
//! index take a third of the room they took on every event. Append-only; a reorg deletes
//! from the fork up.

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
    /// Sender, 20 bytes.
    pub tx_from: Vec<u8>,
    /// Block timestamp, seconds: account listings order by it, as every event listing does.
    pub timestamp: i64,
}

/// No relations.
#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
