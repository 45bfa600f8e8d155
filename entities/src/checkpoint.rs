//! `checkpoints`: how far each chain is indexed. Written in the same transaction as the rows
//! that block range produced, so a restart resumes exactly after the last committed block.

use sea_orm::entity::prelude::*;

/// One row per chain.
#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "checkpoints")]
pub struct Model {
    /// EIP-155 chain id.
    #[sea_orm(primary_key, auto_increment = false)]
    pub chain_id: i64,
    /// Highest block whose events are fully applied and committed.
    pub block_number: i64,
    /// Hash of that block, to detect a fork below the checkpoint on restart.
    pub block_hash: String,
    /// Wall-clock time of the commit, seconds since the epoch.
    pub updated_at: i64,
}

/// No relations.
#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
