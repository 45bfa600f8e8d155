//! `events`: the history of every ENS event the indexer applied, one row per decoded event
//! (a log that decodes into several events, an ERC-1155 `TransferBatch`, gets one row per
//! event, numbered by `seq`). Rows are append-only and keyed by their chain coordinates, so a
//! replay after a crash rewrites the same rows and a reorg deletes everything from the fork up.
//!
//! Who an event is about: registry, registrar and NameWrapper events name the domain's `node`;
//! resolver events leave `node` empty and are found by the resolver's `address`.

use sea_orm::entity::prelude::*;

/// One applied event.
#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel, serde::Serialize, serde::Deserialize)]
#[sea_orm(table_name = "events")]
pub struct Model {
    /// Chain id.
    #[sea_orm(primary_key, auto_increment = false)]
    pub chain_id: i64,
    /// Block number.
    #[sea_orm(primary_key, auto_increment = false)]
    pub block_number: i64,
    /// Index of the log in the block.
    #[sea_orm(primary_key, auto_increment = false)]
    pub log_index: i32,
    /// Position among the events decoded from the same log (0 for all but batch transfers).
    #[sea_orm(primary_key, auto_increment = false)]
    pub seq: i32,
    /// Block timestamp, seconds.
    pub timestamp: i64,
    /// Block hash.
    pub block_hash: String,
    /// Transaction hash.
    pub tx_hash: String,
    /// Index of the transaction in the block.
    pub tx_index: i32,
    /// Sender of the transaction.
    pub tx_from: String,
    /// Recipient of the transaction; none for a contract creation.
    pub tx_to: Option<String>,
    /// Contract that emitted the log.
    pub address: String,
    /// topic0, the event selector.
    pub selector: String,
    /// The other topics, comma-separated hex (empty when there are none).
    pub topics: String,
    /// Log data, hex.
    pub data: String,
    /// The domain's node for registry, registrar and NameWrapper events; none for resolver
    /// events.
    pub node: Option<String>,
}

/// No relations.
#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
