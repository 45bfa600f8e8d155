//! [`history_row`]: the `events` row that records an applied event, and which domain it is
//! about. Registry, registrar and NameWrapper events are about a domain (the node they
//! change); resolver events are about the resolver that emitted them.

use alloy::primitives::B256;
use entities::event;

use super::{
    DecodedEvent, EnsEvent, IndexContext,
    name::{child_node, hex_address, hex_b256},
};

/// The node of the domain `event` is about; none for resolver events.
pub fn subject_node(ctx: &IndexContext, event: &EnsEvent) -> Option<B256> {
    match event {
        EnsEvent::NewOwner { parent, label, .. } => Some(child_node(*parent, *label)),
        EnsEvent::RegistryTransfer { node, .. }
        | EnsEvent::NewResolver { node, .. }
        | EnsEvent::NewTtl { node, .. }
        | EnsEvent::NameWrapped { node, .. }
        | EnsEvent::NameUnwrapped { node, .. }
        | EnsEvent::FusesSet { node, .. }
        | EnsEvent::ExpiryExtended { node, .. } => Some(*node),
        EnsEvent::NameRegistered { token_id, .. }
        | EnsEvent::NameRenewed { token_id, .. }
        | EnsEvent::TokenTransfer { token_id, .. } => Some(ctx.token_node(*token_id)),
        EnsEvent::ControllerRegistered { label, .. }
        | EnsEvent::ControllerRenewed { label, .. } => Some(child_node(ctx.registrar_node, *label)),
        EnsEvent::WrapperTransfer { id, .. } => Some(B256::from(*id)),
        EnsEvent::AddrChanged { .. }
        | EnsEvent::AddressChanged { .. }
        | EnsEvent::TextChanged { .. }
        | EnsEvent::ContenthashChanged { .. }
        | EnsEvent::NameChanged { .. }
        | EnsEvent::PubkeyChanged { .. }
        | EnsEvent::VersionChanged { .. } => None,
    }
}

/// The history row of `decoded`, the `seq`-th event decoded from its log.
pub fn history_row(ctx: &IndexContext, decoded: &DecodedEvent, seq: i32) -> event::Model {
    let meta = &decoded.meta;
    let topics = meta.log.topics();
    let rest: Vec<String> = topics.iter().skip(1).map(|t| hex_b256(*t)).collect();
    event::Model {
        chain_id: meta.chain_id as i64,
        block_number: meta.block_number as i64,
        log_index: meta.log_index as i32,
        seq,
        timestamp: meta.timestamp as i64,
        block_hash: hex_b256(meta.block_hash),
        tx_hash: hex_b256(meta.tx_hash),
        tx_index: meta.tx_index as i32,
        tx_from: hex_address(meta.tx_from),
        tx_to: meta.tx_to.map(hex_address),
        address: hex_address(meta.address),
        selector: topics.first().map(|t| hex_b256(*t)).unwrap_or_default(),
        topics: rest.join(","),
        data: format!("0x{}", hex::encode(&meta.log.data)),
        node: subject_node(ctx, &decoded.event).map(hex_b256),
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use alloy::primitives::{Address, Bytes, LogData, U256};

    use super::*;
    use crate::ens::EventMeta;

    fn decoded(event: EnsEvent) -> DecodedEvent {
        let topics = vec![B256::repeat_byte(1), B256::repeat_byte(2)];
        DecodedEvent {
            meta: EventMeta {
                chain_id: 5,
                block_number: 7,
                block_hash: B256::repeat_byte(9),
                timestamp: 1_700_000_000,
                tx_hash: B256::repeat_byte(8),
                tx_index: 3,
                log_index: 4,
                address: Address::repeat_byte(0xaa),
                tx_from: Address::repeat_byte(0xbb),
                tx_to: None,
                log: Arc::new(LogData::new_unchecked(topics, Bytes::from(vec![0xde, 0xad]))),
            },
            event,
        }
    }

    #[test]
    fn registrar_events_are_about_the_token_name() {
        let ctx = IndexContext::new(5, Address::ZERO);
        let label = B256::repeat_byte(0x11);
        let event =
            EnsEvent::NameRenewed { token_id: U256::from_be_bytes(label.0), expires: U256::ZERO };
        let node = child_node(alloy::ens::namehash("eth"), label);
        assert_eq!(subject_node(&ctx, &event), Some(node));
    }

    #[test]
    fn resolver_events_have_no_domain_and_rows_keep_the_log() {
        let ctx = IndexContext::new(5, Address::ZERO);
        let row = history_row(
            &ctx,
            &decoded(EnsEvent::NameChanged { node: B256::ZERO, name: "x".into() }),
            1,
        );
        assert_eq!(row.node, None);
        assert_eq!(row.seq, 1);
        assert_eq!(row.selector, hex_b256(B256::repeat_byte(1)));
        assert_eq!(row.topics, hex_b256(B256::repeat_byte(2)));
        assert_eq!(row.data, "0xdead");
        assert_eq!(row.tx_from, hex_address(Address::repeat_byte(0xbb)));
        assert_eq!((row.block_number, row.log_index, row.tx_index), (7, 4, 3));
    }
}
