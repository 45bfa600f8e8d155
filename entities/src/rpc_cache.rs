//! `rpc_cache`: answers of deterministic RPC calls at a fixed block (e.g. the legacy
//! `TextChanged` value read with `eth_call text(node, key)`), so a re-index asks the node once.

use sea_orm::entity::prelude::*;

/// One cached answer.
#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "rpc_cache")]
pub struct Model {
    /// keccak256 of `chain_id`, method and parameters, hex.
    #[sea_orm(primary_key, auto_increment = false)]
    pub key: String,
    /// Chain the call was made on.
    pub chain_id: i64,
    /// The answer, as the JSON text the node returned.
    pub value: String,
}

/// No relations.
#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
