//! `deferred_indexes`: a query index set aside during a fresh database's first backfill, with
//! the statement that recreates it exactly.

use sea_orm::entity::prelude::*;

/// One deferred index.
#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "deferred_indexes")]
pub struct Model {
    /// Index name.
    #[sea_orm(primary_key, auto_increment = false)]
    pub name: String,
    /// Its `CREATE INDEX` statement, as the database reported it.
    pub definition: String,
}

/// No relations.
#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
