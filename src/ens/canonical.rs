//! [`Links`]: which link a new domain takes, the fact that decides, once and for all, whether
//! it belongs to the namespace's one canonical namegraph (`entities::namegraph_bridge`).
//!
//! The rules follow the namegraph (reference §2.2–§2.3): the root chain's tree is canonical;
//! a bridged chain's names below its managed name (Base's `*.base.eth`) are canonical while
//! the origin name on the origin chain (mainnet `base.eth`) has the bridge's resolver, and the
//! origin chain's own names below the origin are canonical exactly while it does not; nothing
//! else of a bridged or detached chain is (Base's shadow `eth` and `base.eth` nodes, 3DNS's
//! tree). A domain's link depends only on the configuration and its parent's link, never on
//! what other chains have indexed, so the namegraph is the same whatever order the chains'
//! events arrive in; and since the bridge's state is read from the origin row at query time,
//! a bridge going up or down rewrites no domain.

use std::collections::HashMap;

use alloy::{ens::namehash, primitives::B256};
use entities::domain::LINK_ROOT;

use crate::ChainId;
use crate::config::{Bridge, NamegraphRole};

/// The link rules of one chain.
#[derive(Clone, Debug)]
pub struct Links {
    chain_id: ChainId,
    role: NamegraphRole,
    /// `namehash(managed_name)`: a bridged chain's names below it are the bridged ones.
    managed_node: B256,
    /// Origin names on this chain's registry, by node, with the chain they bridge to.
    origins: HashMap<B256, ChainId>,
}

impl Links {
    /// A root chain without bridges: every domain below the root is canonical.
    pub fn root(chain_id: ChainId) -> Self {
        Self {
            chain_id,
            role: NamegraphRole::Root,
            managed_node: B256::ZERO,
            origins: HashMap::new(),
        }
    }

    /// A tree outside the namegraph (a 3DNS token's): no domain of it is canonical.
    pub fn detached(chain_id: ChainId) -> Self {
        Self {
            chain_id,
            role: NamegraphRole::Detached,
            managed_node: B256::ZERO,
            origins: HashMap::new(),
        }
    }

    /// The rules of `chain_id` (registry `registry`) in a namespace with `bridges`.
    pub fn new(
        chain_id: ChainId,
        registry: alloy::primitives::Address,
        role: NamegraphRole,
        managed_name: &str,
        bridges: &[Bridge],
    ) -> Self {
        let origins = bridges
            .iter()
            .filter(|b| b.origin_chain == chain_id && b.origin_registry == registry)
            .map(|b| (namehash(&b.name), b.target_chain))
            .collect();
        Self { chain_id, role, managed_node: namehash(managed_name), origins }
    }

    /// The link of a new domain whose parent is `parent` (node, and the parent row's link),
    /// `None` for a top-level domain.
    pub fn of_child(&self, parent: Option<(B256, Option<i64>)>) -> Option<i64> {
        let Some((parent_node, parent_link)) = parent else {
            return (self.role == NamegraphRole::Root).then_some(LINK_ROOT);
        };
        let chain = self.chain_id.column();
        if self.role == NamegraphRole::Bridged && parent_node == self.managed_node {
            return Some(chain);
        }
        if let Some(target) = self.origins.get(&parent_node) {
            // The origin chain's own names below the origin: canonical while the bridge is
            // down (and only if the origin itself is in the namegraph at all).
            return parent_link.map(|_| -target.column());
        }
        parent_link
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloy::primitives::{Address, keccak256};

    fn base_bridge() -> Bridge {
        Bridge {
            target_chain: crate::ChainId(8453),
            target_registry: Address::repeat_byte(2),
            name: "base.eth".into(),
            origin_chain: crate::ChainId(1),
            origin_registry: Address::repeat_byte(1),
            resolver: Address::repeat_byte(3),
        }
    }

    #[test]
    fn links_follow_the_namegraph() {
        let bridges = [base_bridge()];
        let l1 = Links::new(
            crate::ChainId(1),
            Address::repeat_byte(1),
            NamegraphRole::Root,
            "eth",
            &bridges,
        );
        let base = Links::new(
            crate::ChainId(8453),
            Address::repeat_byte(2),
            NamegraphRole::Bridged,
            "base.eth",
            &bridges,
        );
        let eth = namehash("eth");
        let base_eth = namehash("base.eth");
        let alice = alloy::ens::namehash("alice.base.eth");
        // Mainnet: eth and base.eth in the root tree; names below base.eth on mainnet hang on
        // the bridge being down.
        assert_eq!(l1.of_child(None), Some(LINK_ROOT));
        assert_eq!(l1.of_child(Some((eth, Some(LINK_ROOT)))), Some(LINK_ROOT));
        assert_eq!(l1.of_child(Some((base_eth, Some(LINK_ROOT)))), Some(-8453));
        assert_eq!(l1.of_child(Some((alice, Some(-8453)))), Some(-8453));
        // Base: the shadow eth and base.eth are never canonical; below base.eth, the bridge.
        assert_eq!(base.of_child(None), None);
        assert_eq!(base.of_child(Some((eth, None))), None);
        assert_eq!(base.of_child(Some((base_eth, None))), Some(8453));
        assert_eq!(base.of_child(Some((alice, Some(8453)))), Some(8453));
        // A detached chain never is; a root chain without bridges always is.
        let detached =
            Links::new(crate::ChainId(10), Address::ZERO, NamegraphRole::Detached, "eth", &bridges);
        assert_eq!(detached.of_child(None), None);
        assert_eq!(
            Links::root(crate::ChainId(31337)).of_child(Some((keccak256("x"), Some(0)))),
            Some(0)
        );
        // Another registry on the origin chain is not the origin.
        let other = Links::new(
            crate::ChainId(1),
            Address::repeat_byte(9),
            NamegraphRole::Root,
            "eth",
            &bridges,
        );
        assert_eq!(other.of_child(Some((base_eth, Some(LINK_ROOT)))), Some(LINK_ROOT));
    }
}
