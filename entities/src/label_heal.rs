//! `label_heals`: the log of labels that became known, which every chain reads to re-render
//! its own domains. Appended by the writer of the chain whose event carried
//! the label, or by `ensemble labels import`; pruned once every chain's mark is past it.

use sea_orm::entity::prelude::*;

pub use crate::raw_hex::RawHash;

/// `origin_chain` of an entry that no chain wrote (an import): every chain applies it.
pub const NO_CHAIN: i64 = 0;

/// One label that became known.
#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "label_heals")]
pub struct Model {
    /// Position in the log; only grows, even across pruning.
    #[sea_orm(primary_key)]
    pub seq: i64,
    /// The label's hash (the `labels` row holds the label).
    pub label_hash: RawHash,
    /// Chain whose handler wrote it and has already re-rendered its own domains, or
    /// [`NO_CHAIN`].
    pub origin_chain: i64,
}

/// No relations.
#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
