//! `chain_status`: what each chain's indexer is doing, written every second by its supervisor.
//! The API reads it (`/status`, `/ready`, GraphQL `indexingStatus`), so a serve-only process
//! reports the indexers' progress without talking to them.

use sea_orm::entity::prelude::*;

/// One row per chain.
#[derive(Clone, Debug, PartialEq, DeriveEntityModel)]
#[sea_orm(table_name = "chain_status")]
pub struct Model {
    /// Chain id.
    #[sea_orm(primary_key, auto_increment = false)]
    pub chain_id: i64,
    /// Configured name.
    pub name: String,
    /// `starting`, `backfill`, `following`, `paused`, `restarting`, `failed`, `stopped` or
    /// `finished`.
    pub phase: String,
    /// Head the indexer targets (after confirmations).
    pub head_block: i64,
    /// Last committed block.
    pub indexed_block: i64,
    /// Last applied block (ahead of `indexed_block` while a backfill holds rows between
    /// flushes).
    pub applied_block: i64,
    /// Events applied per second over the last interval.
    pub events_per_second: f64,
    /// Seconds until the head is reached at the current pace; `None` when unknown or there.
    pub eta_seconds: Option<i64>,
    /// Pipeline restarts since the indexer started.
    pub restarts: i64,
    /// Last error, if the chain failed.
    pub error: Option<String>,
    /// When this row was written, seconds since the epoch.
    pub updated_at: i64,
}

/// No relations.
#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
