//! `contracts`: the contracts that emitted recorded events, numbered per chain.
//!
//! Why: every event row carried the 20-byte address of the contract that emitted it, and the
//! index of resolver events led with it, while a chain's events come from a few contracts (the
//! registries, registrars, controllers and wrapper) and its resolvers: a few thousand at
//! mainnet scale. An event names its contract by `(chain_id, code)`, one or two bytes on
//! SQLite and four on PostgreSQL. Codes are handed out by the indexer in the order it first
//! records a contract's event and never change; rows are never deleted (a rolled-back event
//! leaves an unused code, which is harmless).

use sea_orm::entity::prelude::*;

/// One contract with recorded events.
#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel, serde::Serialize, serde::Deserialize)]
#[sea_orm(table_name = "contracts")]
pub struct Model {
    /// Chain id.
    #[sea_orm(primary_key, auto_increment = false)]
    pub chain_id: i64,
    /// The contract's number on its chain, from 1.
    #[sea_orm(primary_key, auto_increment = false)]
    pub code: i32,
    /// Its address, 20 bytes (unique per chain).
    pub address: Vec<u8>,
}

/// No relations.
#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
