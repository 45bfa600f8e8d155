//! What a namespace's configuration means as rows: its bridges (`namegraph_bridges`) and its
//! reverse registrars (`reverse_registrars`), which [`crate::store::namespace::record`] writes
//! so a serve-only process answers without the indexers' configuration.

use alloy::ens::namehash;
use entities::{domain::RawAddress, namegraph_bridge, reverse_registrar};

use super::{name::domain_id, reverse_registrar::evm_coin_type, role::ContractRole};
use crate::config::{Bridge, ChainConfig, NamegraphRole};

/// The row of `bridge`.
pub fn bridge_row(bridge: &Bridge) -> namegraph_bridge::Model {
    let node = namehash(&bridge.name);
    namegraph_bridge::Model {
        target_chain: bridge.target_chain.column(),
        origin_domain: domain_id(bridge.origin_chain, bridge.origin_registry, node),
        resolver: RawAddress::new(bridge.resolver.0.0),
        target_domain: domain_id(bridge.target_chain, bridge.target_registry, node),
    }
}

/// The reverse registrars of `chains`: the root chain's serves the default coin type, every
/// other chain's its own EVM coin type. Coin type 60 (ETH, ENSIP-3's `addr.reverse`) gets a
/// row naming the root chain and its registry, whatever the root chain's id: mainnet's in the
/// mainnet namespace, the devnet's on a devnet.
pub fn reverse_registrar_rows(chains: &[ChainConfig]) -> Vec<reverse_registrar::Model> {
    let addr_reverse =
        chains.iter().filter(|c| c.namegraph == NamegraphRole::Root).filter_map(|chain| {
            chain.contract(ContractRole::Registry).map(|registry| reverse_registrar::Model {
                coin_type: reverse_registrar::ETH_COIN_TYPE,
                chain_id: chain.id.column(),
                address: RawAddress::new(registry.0.0),
            })
        });
    let registrars = chains.iter().flat_map(|chain| {
        let coin_type = match chain.namegraph {
            NamegraphRole::Root => reverse_registrar::DEFAULT_COIN_TYPE,
            _ => evm_coin_type(chain.id) as i64,
        };
        chain.contracts.iter().filter(|c| c.role == ContractRole::ReverseRegistrar).map(move |c| {
            reverse_registrar::Model {
                coin_type,
                chain_id: chain.id.column(),
                address: RawAddress::new(c.address.0.0),
            }
        })
    });
    addr_reverse.chain(registrars).collect()
}
