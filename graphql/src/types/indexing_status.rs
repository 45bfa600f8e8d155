//! `IndexingStatus`: a chain's indexer status, as its supervisor last wrote it.

use async_graphql::SimpleObject;
use entities::chain_status;

use crate::scalars::{BigInt, ChainId};

/// What one chain's indexer is doing.
#[derive(Debug, SimpleObject)]
pub struct IndexingStatus {
    /// Chain id.
    pub chain_id: ChainId,
    /// Configured name.
    pub name: String,
    /// `starting`, `backfill`, `following`, `paused`, `restarting`, `failed`, `stopped`,
    /// `finished`.
    pub phase: String,
    /// Head the indexer targets .
    pub head_block: BigInt,
    /// Last committed block: what queries see.
    pub indexed_block: BigInt,
    /// Last applied block: ahead of `indexedBlock` while a backfill holds its rows between
    /// flushes; the progress of a backfill.
    pub applied_block: BigInt,
    /// Events applied per second recently.
    pub events_per_second: f64,
    /// Seconds to the head at the current pace.
    pub eta_seconds: Option<i64>,
    /// Pipeline restarts.
    pub restarts: i64,
    /// Last fatal error.
    pub error: Option<String>,
    /// When the status was written (seconds since the epoch, decimal string).
    pub updated_at: BigInt,
}

impl From<chain_status::Model> for IndexingStatus {
    fn from(r: chain_status::Model) -> Self {
        Self {
            chain_id: ChainId(r.chain_id),
            name: r.name,
            phase: r.phase,
            head_block: BigInt(r.head_block.to_string()),
            indexed_block: BigInt(r.indexed_block.to_string()),
            applied_block: BigInt(r.applied_block.to_string()),
            events_per_second: r.events_per_second,
            eta_seconds: r.eta_seconds,
            restarts: r.restarts,
            error: r.error,
            updated_at: BigInt(r.updated_at.to_string()),
        }
    }
}
