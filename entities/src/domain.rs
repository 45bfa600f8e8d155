//! `domains`: one row per ENSv1 node per chain and registry.
//!
//! The id is the Omnigraph ENSv1 id `${chainId}-${registryAddress}-${node}`, stored as a
//! [`DomainKey`] (56 raw bytes); events of the old mainnet registry are stored under the new
//! registry's id, as the Omnigraph does. The canonical
//! name is materialized (interpreted labels joined by `.`) and re-rendered when a label heals;
//! `label_hash` and `parent_id` are indexed so that re-rendering touches only affected rows.

use sea_orm::entity::prelude::*;

pub use crate::domain_key::DomainKey;

/// A domain.
#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel, serde::Serialize, serde::Deserialize)]
#[sea_orm(table_name = "domains")]
pub struct Model {
    /// `${chainId}-${registryAddress}-${node}`.
    #[sea_orm(primary_key, auto_increment = false)]
    pub id: DomainKey,
    /// Chain the registry lives on.
    pub chain_id: i64,
    /// Address of the (new) registry contract.
    pub registry: String,
    /// namehash of the name.
    pub node: String,
    /// labelhash of the leaf label.
    pub label_hash: String,
    /// Id of the parent domain; `None` for top-level domains.
    pub parent_id: Option<DomainKey>,
    /// Materialized effective owner: registry owner, overwritten by the registrar token owner
    /// and the NameWrapper token owner. `None` when owned by the zero address.
    pub owner: Option<String>,
    /// Owner of the node in the registry itself.
    pub registry_owner: Option<String>,
    /// Resolver assigned in the registry.
    pub resolver: Option<String>,
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
}

/// No declared relations: joins are explicit in the queries that need them.
#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}

impl Model {
    /// Id of the latest registration, `${domainId}-${registration_count - 1}`, if any.
    /// Registrations are opened only by appending, so the latest is always the last index; it
    /// is derived rather than stored (a 115-character column on every domain row).
    pub fn registration_id(&self) -> Option<String> {
        (self.registration_count > 0)
            .then(|| format!("{}-{}", self.id, self.registration_count - 1))
    }
}
