//! `resolver_records`: the scalar records one resolver holds for one node
//! (`${chainId}-${resolverAddress}-${node}`). Address and text records live in their own
//! tables keyed by this id. The chain, resolver and node are the key's three parts
//! ([`ResolverRecordKey`]), not columns of their own.

use sea_orm::entity::prelude::*;

pub use crate::resolver_record_key::ResolverRecordKey;

/// Records of (chain, resolver, node).
#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel, serde::Serialize, serde::Deserialize)]
#[sea_orm(table_name = "resolver_records")]
pub struct Model {
    /// `${chainId}-${resolverAddress}-${node}`, as (chain, resolver, node) bytes.
    #[sea_orm(primary_key, auto_increment = false)]
    pub id: ResolverRecordKey,
    /// `name` record (reverse names live here).
    pub name: Option<String>,
    /// Raw contenthash bytes, hex.
    pub contenthash: Option<String>,
    /// Public key x, hex.
    pub pubkey_x: Option<String>,
    /// Public key y, hex.
    pub pubkey_y: Option<String>,
    /// Record version (`VersionChanged` clears the node's records).
    pub version: i64,
}

/// No relations.
#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}

impl Model {
    /// Chain of the resolver.
    pub fn chain_id(&self) -> i64 {
        i64::try_from(self.id.chain_id()).unwrap_or(i64::MAX)
    }

    /// Resolver contract address, lowercase `0x` hex.
    pub fn resolver(&self) -> String {
        format!("0x{}", hex::encode(self.id.resolver()))
    }

    /// The node the records belong to, lowercase `0x` hex.
    pub fn node(&self) -> String {
        self.id.node_hex()
    }
}
