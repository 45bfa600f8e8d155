//! `resolver_texts`: text records of one resolver record. Keys are arbitrary strings chosen by
//! whoever sets them, so the primary key uses the key's keccak256, never the key itself: an
//! oversized key must not break a btree index row limit.

use sea_orm::entity::prelude::*;

pub use crate::{raw_hex::RawHash, resolver_record_key::ResolverRecordKey};

/// One text record.
#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel, serde::Serialize, serde::Deserialize)]
#[sea_orm(table_name = "resolver_texts")]
pub struct Model {
    /// Id of the owning `resolver_records` row.
    #[sea_orm(primary_key, auto_increment = false)]
    pub record_id: ResolverRecordKey,
    /// keccak256 of `key` (raw bytes; shown as hex).
    #[sea_orm(primary_key, auto_increment = false)]
    pub key_hash: RawHash,
    /// The text key.
    pub key: String,
    /// The value; `None` when the event carried no value and the chain could not be asked.
    pub value: Option<String>,
}

/// No relations.
#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
