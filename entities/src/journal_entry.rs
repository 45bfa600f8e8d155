//! `journal_entries`: the image a row had before a journaled window changed it, so a reorg can
//! put it back. `prior` is the row as JSON, or `None` when the window created the row.

use sea_orm::entity::prelude::*;

/// One prior row image.
#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "journal_entries")]
pub struct Model {
    /// Chain id.
    #[sea_orm(primary_key, auto_increment = false)]
    pub chain_id: i64,
    /// The window that changed the row.
    #[sea_orm(primary_key, auto_increment = false)]
    pub window_start: i64,
    /// Which table (`domains`, `labels`, ..., or `record_entries` for all address and text
    /// records of one resolver record).
    #[sea_orm(primary_key, auto_increment = false)]
    pub table_name: String,
    /// Primary key of the row (the record id for `record_entries`).
    #[sea_orm(primary_key, auto_increment = false)]
    pub row_key: String,
    /// The row before the window, as JSON; `None` if it did not exist.
    pub prior: Option<String>,
}

/// No relations.
#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
