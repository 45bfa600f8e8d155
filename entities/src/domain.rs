//! `domains`: one row per ENSv1 node per chain and registry.
//!
//! The id is the Omnigraph ENSv1 id `${chainId}-${registryAddress}-${node}`, stored as a
//! [`DomainKey`] (56 raw bytes); events of the old mainnet registry are stored under the new
//! registry's id, as the Omnigraph does. The registry address and the node are read from the
//! key rather than stored again; the label hash and the addresses are raw bytes
//! ([`crate::raw_hex`]). The canonical
//! name is materialized (interpreted labels joined by `.`) and re-rendered when a label heals;
//! `label_hash` and `parent_seq` are indexed so that re-rendering touches only affected rows.
//! A domain names its parent by the parent's creation number (`parent_seq`), 8 bytes where
//! the id takes 56, in the row and in the four indexes led by the parent.

use sea_orm::entity::prelude::*;

pub use crate::{
    domain_key::DomainKey,
    packed_words::SubjectWords,
    raw_hex::{RawAddress, RawHash},
};

/// A domain.
#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel, serde::Serialize, serde::Deserialize)]
#[sea_orm(table_name = "domains")]
pub struct Model {
    /// `${chainId}-${registryAddress}-${node}`.
    #[sea_orm(primary_key, auto_increment = false)]
    pub id: DomainKey,
    /// Creation number: unique, assigned when the domain is first indexed, in the order its
    /// chain created it, within its chain's range ([`seq_range`]). It breaks ties in every
    /// domain listing and names the domain in the event history: 8 bytes instead of the
    /// 56-byte id.
    pub seq: i64,
    /// Chain the registry lives on (also in the id; kept as a column for filters by chain).
    pub chain_id: i64,
    /// labelhash of the leaf label.
    pub label_hash: RawHash,
    /// `seq` of the parent domain; `None` for top-level domains.
    pub parent_seq: Option<i64>,
    /// The owner, a function of the three owners below (`ens::ownership`): the NameWrapper
    /// token's holder while the name is wrapped, else the registrar token's holder for a name
    /// a registrar manages, else the registry owner. `None` when that is the zero address.
    pub owner: Option<RawAddress>,
    /// Owner of the node in the registry itself.
    pub registry_owner: Option<RawAddress>,
    /// Holder of the registrar's ERC-721 token of this name (a direct child of the name a
    /// registrar manages, `x.eth`), expired or not; `None` for other names and burnt tokens.
    #[serde(default)]
    pub token_owner: Option<RawAddress>,
    /// Holder of the NameWrapper's ERC-1155 token of this name while it is wrapped.
    #[serde(default)]
    pub wrapped_owner: Option<RawAddress>,
    /// Resolver assigned in the registry.
    pub resolver: Option<RawAddress>,
    /// TTL set in the registry.
    pub ttl: Option<i64>,
    /// Interpreted canonical name (`[hash]` for unknown or unnormalized labels).
    pub name: String,
    /// Number of labels in `name`.
    pub depth: i32,
    /// Set once the node has appeared in the new registry: later old-registry events for it
    /// are ignored, as `ENSRegistryWithFallback` ignores the old registry for such nodes.
    pub migrated: bool,
    /// Number of registrations so far (the next registration's index). The latest one is
    /// [`Model::registration_id`].
    pub registration_count: i32,
    /// Start of the latest registration, for ordering; `i64::MAX` when there is none, so such
    /// domains sort last ascending and first descending.
    pub registration_start: i64,
    /// Expiry of the latest registration, for ordering; `i64::MAX` when there is none or it
    /// never expires.
    pub registration_expiry: i64,
    /// Block number that created the domain.
    pub created_block: i64,
    /// Timestamp of that block.
    pub created_at: i64,
    /// What decides whether the domain is canonical, fixed at creation: [`LINK_ROOT`] (always),
    /// `+c` (below chain `c`'s bridged name on chain `c`: while the bridge is up), `-c` (below
    /// it on the origin chain: while the bridge is down), `None` (never). See
    /// [`crate::namegraph_bridge`].
    pub link: Option<i64>,
}

/// The link of the namegraph root's tree: always canonical.
pub const LINK_ROOT: i64 = 0;

/// No declared relations: joins are explicit in the queries that need them.
#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}

/// The node part of `id` in SQL, exactly as the `domains_node` index is defined on it (both
/// engines match an expression index only on the same expression). SQL strings count from 1:
/// the node is the key's bytes 25 to 56.
pub fn node_expr() -> sea_orm::sea_query::Expr {
    sea_orm::sea_query::Expr::cust("substr(id, 25)")
}

/// Bits of a domain's `seq` below its chain id.
const SEQ_CHAIN_SHIFT: u32 = 32;

/// The `seq` values of `chain_id`'s domains: the chain id in the high bits, then the creation
/// count from 1, so chains never share a value and each numbers its own domains whatever the
/// order in which the chains are indexed. `None` for a chain id above `i32::MAX`.
pub fn seq_range(chain_id: u64) -> Option<std::ops::RangeInclusive<i64>> {
    let chain = i64::try_from(chain_id).ok().filter(|c| *c <= i64::from(i32::MAX))?;
    let base = chain << SEQ_CHAIN_SHIFT;
    // Parenthesized: for the largest chain id, `base + 2^32` alone overflows i64.
    Some(base + 1..=base + ((1 << SEQ_CHAIN_SHIFT) - 1))
}

impl Model {
    /// The registry's address as lowercase `0x` hex.
    pub fn registry_hex(&self) -> String {
        format!("0x{}", hex::encode(self.id.registry()))
    }

    /// The node as lowercase `0x` hex.
    pub fn node_hex(&self) -> String {
        self.id.node_hex()
    }

    /// Id of the latest registration, `${domainId}-${registration_count - 1}`, if any.
    /// Registrations are opened only by appending, so the latest is always the last index; it
    /// is derived rather than stored (a 115-character column on every domain row).
    pub fn registration_id(&self) -> Option<crate::registration_key::RegistrationKey> {
        let latest = u32::try_from(self.registration_count.checked_sub(1)?).ok()?;
        Some(crate::registration_key::RegistrationKey::new(&self.id, latest))
    }

    /// The words of this domain its events' logs may repeat, which the history stores as
    /// references ([`crate::packed_words`]); `parent_node` is its parent's node, when known.
    pub fn subject_words(&self, parent_node: Option<[u8; 32]>) -> SubjectWords {
        SubjectWords {
            node: self.node(),
            label_hash: self.label_hash.as_bytes().try_into().unwrap_or_default(),
            parent_node,
        }
    }

    /// The node as raw bytes.
    pub fn node(&self) -> [u8; 32] {
        self.id.node().try_into().unwrap_or_default()
    }

    /// Key of the records its assigned resolver holds for its node, if it has a resolver.
    pub fn records_key(&self) -> Option<crate::resolver_record_key::ResolverRecordKey> {
        let resolver: &[u8; RawAddress::BYTES] =
            self.resolver.as_ref()?.as_bytes().try_into().ok()?;
        let node = self.id.node().try_into().ok()?;
        Some(crate::resolver_record_key::ResolverRecordKey::new(self.id.chain_id(), resolver, node))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_chain_numbers_in_its_own_range_and_large_ids_have_none() {
        let mainnet = seq_range(1).expect("chain 1");
        assert_eq!((*mainnet.start(), *mainnet.end()), ((1 << 32) + 1, (2 << 32) - 1));
        let base = seq_range(8453).expect("Base");
        assert!(mainnet.end() < base.start(), "ranges do not overlap");
        let top = seq_range(i32::MAX as u64).expect("the largest chain id with a range");
        assert_eq!(*top.end(), i64::MAX, "the last range ends at the top of i64");
        assert_eq!(seq_range(i32::MAX as u64 + 1), None);
        assert_eq!(seq_range(u64::MAX), None);
        // The root's `NO_DOMAIN`-style 0 is below every range.
        assert!(*seq_range(0).expect("chain 0").start() > 0);
    }
}
