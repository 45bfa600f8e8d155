//! [`history_rows`]: the `events` row that records an applied event, with the block and
//! transaction rows it refers to, and which domain it is about. Registry, registrar and
//! NameWrapper events are about a domain (the node they change; the store names it by its
//! creation number when it records the event); resolver events are about the resolver that
//! emitted them.

use alloy::primitives::B256;
use entities::{event, event_block, event_selector, event_transaction, packed_words::PackedWords};

use super::{DecodedEvent, EnsEvent, HandlerError, IndexContext, name::child_node};
use crate::store::HistoryRows;

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
        | EnsEvent::ExpiryExtended { node, .. }
        | EnsEvent::ThreeDnsRegistered { node, .. }
        | EnsEvent::ThreeDnsExtended { node, .. } => Some(*node),
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
        | EnsEvent::VersionChanged { .. }
        | EnsEvent::NameForAddrChanged { .. } => None,
    }
}

/// The node of the parent of the domain `event` is about, when the event carries it
/// (`NewOwner`): the store writes that topic as a reference to the parent when the domain row
/// names its parent.
pub fn subject_parent(event: &EnsEvent) -> Option<B256> {
    match event {
        EnsEvent::NewOwner { parent, .. } => Some(*parent),
        _ => None,
    }
}

/// The history rows of `decoded`, the `seq`-th event decoded from its log. The log's topics
/// and data are packed when the store records the event, which knows its domain's words.
pub fn history_rows(
    ctx: &IndexContext,
    decoded: &DecodedEvent,
    seq: i32,
) -> Result<HistoryRows, HandlerError> {
    let meta = &decoded.meta;
    let topics = meta.log.topics();
    let topic0 = topics.first().copied().unwrap_or_default();
    let selector = event_selector::code(topic0.as_slice())
        .ok_or_else(|| HandlerError::UnrecordedSelector { selector: format!("{topic0:#x}") })?;
    let chain_id = meta.chain_id.column();
    let block_number = meta.block_number as i64;
    let tx_index = meta.tx_index as i32;
    Ok(HistoryRows {
        event: event::Model {
            chain_id,
            block_number,
            log_index: meta.log_index as i32,
            seq,
            timestamp: meta.timestamp as i64,
            tx_index,
            contract: 0,
            selector,
            topics: PackedWords::default(),
            data: PackedWords::default(),
            domain_seq: None,
        },
        log: meta.log.clone(),
        subject: subject_node(ctx, &decoded.event)
            .map(|node| ctx.for_event(&decoded.event).domain_id(node)),
        subject_parent: subject_parent(&decoded.event).map(|parent| parent.0),
        address: meta.address.0.0,
        block: event_block::Model { chain_id, block_number, hash: meta.block_hash.to_vec() },
        transaction: event_transaction::Model {
            chain_id,
            block_number,
            tx_index,
            hash: meta.tx_hash.to_vec(),
            to_address: meta.tx_to.map(|a| a.to_vec()),
            tx_from: meta.tx_from.to_vec(),
            timestamp: meta.timestamp as i64,
        },
    })
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use alloy::primitives::{Address, Bytes, LogData, U256};

    use super::*;
    use crate::ens::EventMeta;

    fn decoded(event: EnsEvent, topic0: B256) -> DecodedEvent {
        let topics = vec![topic0, B256::repeat_byte(2), B256::repeat_byte(3)];
        DecodedEvent {
            meta: EventMeta {
                chain_id: crate::ChainId(5),
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
        let ctx = IndexContext::new(crate::ChainId(5), Address::ZERO);
        let label = B256::repeat_byte(0x11);
        let event =
            EnsEvent::NameRenewed { token_id: U256::from_be_bytes(label.0), expires: U256::ZERO };
        let node = child_node(alloy::ens::namehash("eth"), label);
        assert_eq!(subject_node(&ctx, &event), Some(node));
    }

    #[test]
    fn resolver_events_have_no_domain_and_rows_keep_the_log() {
        use alloy::sol_types::SolEvent;
        let ctx = IndexContext::new(crate::ChainId(5), Address::ZERO);
        let topic0 = super::super::abi::Resolver::NameChanged::SIGNATURE_HASH;
        let rows = history_rows(
            &ctx,
            &decoded(EnsEvent::NameChanged { node: B256::ZERO, name: "x".into() }, topic0),
            1,
        )
        .expect("NameChanged has a code");
        let row = &rows.event;
        assert_eq!((row.domain_seq, &rows.subject), (None, &None));
        assert_eq!(row.seq, 1);
        assert_eq!(event_selector::selector(row.selector), Some(&topic0.0));
        assert_eq!(rows.log.topics()[1..], [B256::repeat_byte(2), B256::repeat_byte(3)]);
        assert_eq!(rows.log.data.to_vec(), vec![0xde, 0xad]);
        assert_eq!(rows.subject_parent, None);
        assert_eq!(rows.transaction.tx_from, vec![0xbb; 20]);
        assert_eq!(rows.transaction.timestamp, 1_700_000_000);
        assert_eq!((row.block_number, row.log_index, row.tx_index), (7, 4, 3));
        assert_eq!(rows.block.hash, vec![9; 32]);
        assert_eq!(
            (rows.transaction.hash.clone(), rows.transaction.to_address.clone()),
            (vec![8; 32], None)
        );
    }

    #[test]
    fn an_event_without_a_code_stops_the_batch() {
        let ctx = IndexContext::new(crate::ChainId(5), Address::ZERO);
        let err = history_rows(
            &ctx,
            &decoded(EnsEvent::NameChanged { node: B256::ZERO, name: "x".into() }, B256::ZERO),
            0,
        )
        .expect_err("no code for a zero selector");
        assert!(err.is_fatal(), "{err}");
    }
}
