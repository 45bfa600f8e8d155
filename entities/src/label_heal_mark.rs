//! `label_heal_marks`: how far each chain has applied the [`crate::label_heal`] log. Written
//! in the transaction that stores the names the applied entries changed, so a crash never
//! leaves a heal marked as applied without its names, nor the other way round.

use sea_orm::entity::prelude::*;

/// One row per chain that has read the log.
#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "label_heal_marks")]
pub struct Model {
    /// Chain id.
    #[sea_orm(primary_key, auto_increment = false)]
    pub chain_id: i64,
    /// Largest `label_heals.seq` this chain has applied.
    pub applied: i64,
}

/// No relations.
#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
