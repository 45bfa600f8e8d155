//! `journal_windows`: block windows above finality whose changes are journaled, with the
//! hashes needed to find a fork point and to restore the checkpoint before the window.

use sea_orm::entity::prelude::*;

/// One journaled window of one chain.
#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "journal_windows")]
pub struct Model {
    /// Chain id.
    #[sea_orm(primary_key, auto_increment = false)]
    pub chain_id: i64,
    /// First block of the window.
    #[sea_orm(primary_key, auto_increment = false)]
    pub window_start: i64,
    /// Last block of the window.
    pub window_end: i64,
    /// Hash of the last block.
    pub end_hash: String,
    /// Parent hash of the first block: the checkpoint hash to restore when the window is
    /// rolled back.
    pub start_parent_hash: String,
}

/// No relations.
#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
