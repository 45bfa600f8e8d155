//! `events`: the history of every ENS event the indexer applied, one row per decoded event
//! (a log that decodes into several events, an ERC-1155 `TransferBatch`, gets one row per
//! event, numbered by `seq`). Rows are append-only and keyed by their chain coordinates, so a
//! replay after a crash rewrites the same rows and a reorg deletes everything from the fork up.
//!
//! The history is the largest table by far (one row per event), so it is stored compactly:
//! hashes and addresses are raw bytes, log payloads are packed ABI words
//! ([`crate::packed_words`]) in which the words the event's domain holds (its node, label
//! hash, parent's node) are one-byte references to it, the selector is a small code
//! ([`crate::event_selector`]), and what a whole block or transaction shares (block hash,
//! transaction hash, sender and recipient) lives once in [`crate::event_block`] and
//! [`crate::event_transaction`] (account listings walk the sender's index there).
//!
//! Who an event is about: registry, registrar and NameWrapper events name their domain by its
//! creation number (`domain_seq`, see [`crate::domain`]): 8 bytes instead of the 32-byte node,
//! in the row and in the index of a domain's events, and already unique across chains.
//! Resolver events leave it empty and are found by the resolver's contract code. An event
//! names the contract that emitted it by that code ([`crate::contract`]), not its address.

use sea_orm::entity::prelude::*;

use crate::packed_words::PackedWords;

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
    /// Block timestamp, seconds (kept per event: listings order and filter by it).
    pub timestamp: i64,
    /// Index of the transaction in the block.
    pub tx_index: i32,
    /// Contract that emitted the log: its [`crate::contract`] code on this chain.
    pub contract: i32,
    /// topic0 as its [`crate::event_selector`] code.
    pub selector: i16,
    /// The other topics, 32 bytes each, concatenated and packed (with references to the
    /// domain of `domain_seq`).
    pub topics: PackedWords,
    /// Log data, packed.
    pub data: PackedWords,
    /// `seq` of the domain a registry, registrar or NameWrapper event is about, or
    /// [`NO_DOMAIN`] when no domain row stands for its node (the root); none for resolver
    /// events.
    pub domain_seq: Option<i64>,
}

/// `domain_seq` of a domain event whose node has no domain row (events on the root node). No
/// domain has it: every chain's numbers start above it.
pub const NO_DOMAIN: i64 = 0;

/// No relations.
#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
