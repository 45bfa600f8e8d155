//! `labels`: what is known about a labelhash. A label arrives as plaintext (controller events,
//! NameWrapper names, imports) or stays unknown; `interpreted` is the label itself when it is
//! ENSIP-15 normalized and `[labelhash]` otherwise. The hash is stored as its 32 raw bytes
//! ([`RawHash`]), and shown as `0x` hex everywhere else.

use sea_orm::entity::prelude::*;

pub use crate::raw_hex::RawHash;

/// A label.
#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel, serde::Serialize, serde::Deserialize)]
#[sea_orm(table_name = "labels")]
pub struct Model {
    /// keccak256 of the label.
    #[sea_orm(primary_key, auto_increment = false)]
    pub label_hash: RawHash,
    /// The plaintext label, when known.
    pub label: Option<String>,
    /// Rendering used in names: the label if normalized, else `[hash]`.
    pub interpreted: String,
}

/// No relations.
#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
