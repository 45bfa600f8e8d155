//! `reverse_registrars`: which contract sets primary names for which ENSIP-11 coin type, from
//! configuration. The names themselves are that contract's `name` records of the reverse
//! nodes (`resolver_records`), so a primary name is one primary-key lookup.

use sea_orm::entity::prelude::*;

pub use crate::raw_hex::RawAddress;

/// ENSIP-19's default coin type (`0x80000000`): the root chain's default reverse registrar,
/// the fallback for every EVM chain without a name of its own.
pub const DEFAULT_COIN_TYPE: i64 = 0x8000_0000;

/// SLIP-44 coin type of ETH: its primary names are ENSIP-3 `addr.reverse` records on the
/// namespace's root chain; its row names that chain and its registry.
pub const ETH_COIN_TYPE: i64 = 60;

/// One reverse registrar.
#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "reverse_registrars")]
pub struct Model {
    /// ENSIP-11 coin type it serves (`0x80000000 | chainId`, [`DEFAULT_COIN_TYPE`], or
    /// [`ETH_COIN_TYPE`] for the root chain's `addr.reverse`).
    #[sea_orm(primary_key, auto_increment = false)]
    pub coin_type: i64,
    /// Chain it lives on.
    pub chain_id: i64,
    /// Its address.
    pub address: RawAddress,
}

/// No relations.
#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
