//! ENSIP-19 reverse registrar handler: `NameForAddrChanged(addr, name)` sets `addr`'s primary
//! name for the coin type the registrar serves.
//!
//! The registrar is the resolver of the reverse names it writes (`<addr>.<coinType
//! hex>.reverse`, or `<addr>.default.reverse` for the default registrar on the root chain), so
//! the name is stored as that resolver's `name` record for the reverse node: the same row a
//! legacy reverse resolver's `NameChanged` fills, journaled and rolled back the same way.

use alloy::{
    ens::namehash,
    primitives::{Address, B256},
};

use super::{HandlerError, IndexContext, event::EventMeta, resolver};
use crate::ChainId;
use crate::store::EntityStore;

/// ENSIP-11's bit that marks an EVM chain's coin type.
pub const EVM_COIN_TYPE_BIT: u64 = 0x8000_0000;

/// The ENSIP-11 coin type of EVM chain `chain_id`; mainnet keeps SLIP-44's 60.
pub fn evm_coin_type(chain_id: ChainId) -> u64 {
    if chain_id.get() == 1 { 60 } else { EVM_COIN_TYPE_BIT | chain_id.get() }
}

/// The reverse node of `addr` under `<reverse_label>.reverse`.
pub fn reverse_node(reverse_label: &str, addr: Address) -> B256 {
    namehash(&format!("{}.{reverse_label}.reverse", hex::encode(addr)))
}

/// `NameForAddrChanged(addr, name)`.
pub async fn name_for_addr_changed(
    ctx: &IndexContext,
    store: &mut EntityStore,
    meta: &EventMeta,
    addr: Address,
    name: &str,
) -> Result<(), HandlerError> {
    let node = reverse_node(&ctx.reverse_label, addr);
    resolver::name_changed(ctx, store, meta, node, name).await
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloy::primitives::address;

    #[test]
    fn coin_types_and_reverse_nodes_follow_ensip_19() {
        assert_eq!(evm_coin_type(crate::ChainId(1)), 60);
        assert_eq!(format!("{:x}", evm_coin_type(crate::ChainId(8453))), "80002105");
        assert_eq!(format!("{:x}", evm_coin_type(crate::ChainId(59144))), "8000e708");
        let addr = address!("0x00000000000000000000000000000000000000aa");
        assert_eq!(
            reverse_node("80002105", addr),
            namehash("00000000000000000000000000000000000000aa.80002105.reverse")
        );
    }
}
