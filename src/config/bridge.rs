//! Bridges: `[chains.bridge]` as configured, and [`Bridge`], a bridge of the namespace with both
//! sides resolved.

use alloy::primitives::Address;
use serde::Deserialize;

use crate::ChainId;

/// `[chains.bridge]`: where a bridged chain's names hang in the namegraph.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BridgeConfig {
    /// Chain of the origin name (1 for `base.eth` and `linea.eth`).
    pub origin_chain: ChainId,
    /// Registry of the origin chain that holds the origin name.
    pub origin_registry: Address,
    /// The L1 resolver that, set on the origin name, links the names: mainnet's
    /// `BasenamesL1Resolver` for `base.eth`.
    pub resolver: Address,
}

/// A bridge of the namespace: the bridged chain's side and the origin's, resolved from config.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Bridge {
    /// The bridged chain.
    pub target_chain: ChainId,
    /// Its registry.
    pub target_registry: Address,
    /// The bridged name, managed on the target chain and owned on the origin chain.
    pub name: String,
    /// The origin chain.
    pub origin_chain: ChainId,
    /// The origin chain's registry.
    pub origin_registry: Address,
    /// The linking resolver.
    pub resolver: Address,
}
