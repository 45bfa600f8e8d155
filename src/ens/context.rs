//! [`IndexContext`]: the facts about a chain that handlers need (chain id, which registry ids
//! are built from, the node a registrar manages).

use alloy::primitives::{Address, B256, U256};
use entities::{domain::RawAddress, domain_key::DomainKey};

use super::{
    canonical::Links,
    name::{self, domain_id},
};
use crate::ChainId;

/// Seconds of grace after a `.eth` registration expires (90 days), during which only the
/// previous owner may renew.
pub const BASE_REGISTRAR_GRACE_PERIOD: i64 = 90 * 24 * 60 * 60;

/// Per-chain handler context.
#[derive(Clone, Debug)]
pub struct IndexContext {
    /// Chain id.
    pub chain_id: ChainId,
    /// The current registry; every domain id uses it (old-registry nodes included).
    pub registry: Address,
    /// The node the base registrar and controllers manage (`namehash("eth")` on mainnet,
    /// `namehash("base.eth")` on Base).
    pub registrar_node: B256,
    /// `namehash("addr.reverse")`: labels below it heal from the owner address.
    pub addr_reverse_node: B256,
    /// Which link a new domain takes (canonicality across chains).
    pub links: Links,
    /// The middle label of the ENSIP-19 reverse names this chain's reverse registrar writes:
    /// `default` on the namespace's root chain, else the chain's EVM coin type in hex
    /// (`80002105` on Base).
    pub reverse_label: String,
    /// The chain's NameWrapper: a name whose registry owner it is, and whose wrapper token
    /// exists, is wrapped (`ens::ownership`).
    pub name_wrapper: Option<Address>,
    /// The context of the chain's 3DNS token, a registry of its own whose domains are
    /// outside the namegraph; events it emits are applied in it ([`IndexContext::for_event`]).
    pub three_dns: Option<Box<IndexContext>>,
}

impl IndexContext {
    /// Context for `chain_id` with `registry` and `.eth` as the registrar's name.
    pub fn new(chain_id: ChainId, registry: Address) -> Self {
        Self {
            chain_id,
            registry,
            registrar_node: alloy::ens::namehash("eth"),
            addr_reverse_node: alloy::ens::namehash("addr.reverse"),
            links: Links::root(chain_id),
            reverse_label: "default".to_owned(),
            name_wrapper: None,
            three_dns: None,
        }
    }

    /// Context for a configured chain in a namespace with `bridges`.
    pub fn for_chain(
        chain: &crate::config::ChainConfig,
        bridges: &[crate::config::Bridge],
    ) -> Self {
        let registry =
            chain.contract(crate::ens::role::ContractRole::Registry).unwrap_or(Address::ZERO);
        Self {
            registrar_node: alloy::ens::namehash(&chain.managed_name),
            links: Links::new(chain.id, registry, chain.namegraph, &chain.managed_name, bridges),
            reverse_label: match chain.namegraph {
                crate::config::NamegraphRole::Root => "default".to_owned(),
                _ => format!("{:x}", super::reverse_registrar::evm_coin_type(chain.id)),
            },
            name_wrapper: chain.contract(crate::ens::role::ContractRole::NameWrapper),
            three_dns: chain.contract(crate::ens::role::ContractRole::ThreeDnsToken).map(|token| {
                Box::new(Self { links: Links::detached(chain.id), ..Self::new(chain.id, token) })
            }),
            ..Self::new(chain.id, registry)
        }
    }

    /// The context `event` applies in: the 3DNS token's for its events, else this one.
    pub fn for_event(&self, event: &super::EnsEvent) -> &Self {
        use super::{EnsEvent as E, event::RegistrySource::ThreeDns};
        let three_dns = matches!(
            event,
            E::NewOwner { source: ThreeDns, .. }
                | E::RegistryTransfer { source: ThreeDns, .. }
                | E::NewResolver { source: ThreeDns, .. }
                | E::NewTtl { source: ThreeDns, .. }
                | E::ThreeDnsRegistered { .. }
                | E::ThreeDnsExtended { .. }
        );
        match &self.three_dns {
            Some(token) if three_dns => token,
            _ => self,
        }
    }

    /// Domain key of `node`.
    pub fn domain_id(&self, node: B256) -> DomainKey {
        domain_id(self.chain_id, self.registry, node)
    }

    /// Node of a registrar token (a labelhash under the registrar's node).
    pub fn token_node(&self, token_id: U256) -> B256 {
        name::child_node(self.registrar_node, B256::from(token_id))
    }
}

/// `Some(lowercase hex)` unless the address is zero.
pub fn nonzero(address: Address) -> Option<String> {
    (!address.is_zero()).then(|| name::hex_address(address))
}

/// `Some(raw address)` unless the address is zero: the domain row's form.
pub fn nonzero_raw(address: Address) -> Option<RawAddress> {
    (!address.is_zero()).then(|| RawAddress::new(address.0.0))
}

/// A contract `uint256` time or expiry as `i64` seconds, saturating.
pub fn clamp_u256(value: U256) -> i64 {
    i64::try_from(value).unwrap_or(i64::MAX)
}
