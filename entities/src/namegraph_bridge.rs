//! `namegraph_bridges`: the bridges of the namespace, from configuration, so that the API
//! (which may run without the indexers' configuration) can tell which domains are canonical.
//!
//! A bridge hangs a chain's names into the namegraph below a name on another chain: mainnet
//! `base.eth` leads to Base's `*.base.eth` while its resolver is the Basenames L1 resolver.
//! The bridge is *up* exactly while the origin domain's resolver equals [`Model::resolver`];
//! that is read from the origin row, never stored here, so flipping it writes one row.
//! While up, domains with link `+target_chain` are canonical and those with link
//! `-target_chain` (the origin chain's own names below the origin) are not; while down, the
//! other way round.

use sea_orm::entity::prelude::*;

pub use crate::{domain_key::DomainKey, raw_hex::RawAddress};

/// One bridge.
#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "namegraph_bridges")]
pub struct Model {
    /// The bridged chain.
    #[sea_orm(primary_key, auto_increment = false)]
    pub target_chain: i64,
    /// The origin name's domain (`1-<registry>-namehash(base.eth)`).
    pub origin_domain: DomainKey,
    /// The resolver that links: the bridge is up while the origin domain has it.
    pub resolver: RawAddress,
    /// The bridged name's own domain on the target chain: its children are the origin's
    /// subdomains while the bridge is up.
    pub target_domain: DomainKey,
}

impl Model {
    /// Whether the bridge is up, given the origin domain's current resolver.
    pub fn is_up(&self, origin_resolver: Option<&RawAddress>) -> bool {
        origin_resolver == Some(&self.resolver)
    }

    /// The link of the domains that are canonical in this state of the bridge.
    pub fn canonical_link(&self, up: bool) -> i64 {
        if up { self.target_chain } else { -self.target_chain }
    }
}

/// No relations.
#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
