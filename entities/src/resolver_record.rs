//! `resolver_records`: the scalar records one resolver holds for one node
//! (`${chainId}-${resolverAddress}-${node}`). Address and text records live in their own
//! tables keyed by this id.

use sea_orm::entity::prelude::*;

/// Records of (chain, resolver, node).
#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel, serde::Serialize, serde::Deserialize)]
#[sea_orm(table_name = "resolver_records")]
pub struct Model {
    /// `${chainId}-${resolverAddress}-${node}`.
    #[sea_orm(primary_key, auto_increment = false)]
    pub id: String,
    /// Chain of the resolver.
    pub chain_id: i64,
    /// Resolver contract address.
    pub resolver: String,
    /// The node the records belong to.
    pub node: String,
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
