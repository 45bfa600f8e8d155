//! [`keys`]: the rows a batch of events will read, known from the events alone, so the store
//! can load the missing ones in a few `IN (…)` queries before the handlers run instead of one
//! query per cache miss inside them.
//!
//! The list is a hint, not a contract: a key left out is still read on demand, and a key
//! listed but never read costs one slot in a query. Rows reached only through other rows
//! (a domain's latest registration) are prefetched by the store in a second round.

use alloy::primitives::{B256, U256};
use entities::raw_hex::RawHash;

use super::{DecodedEvent, EnsEvent, IndexContext, name::resolver_record_id};
use crate::store::PrefetchKeys;

/// Keys the handlers of `events` will look up.
pub fn keys(ctx: &IndexContext, events: &[DecodedEvent]) -> PrefetchKeys {
    let mut keys = PrefetchKeys::default();
    let token = |id: &U256| ctx.token_node(*id);
    for decoded in events {
        let in_ctx = ctx.for_event(&decoded.event);
        let mut node = |n: B256| keys.domains.push(in_ctx.domain_id(n));
        match &decoded.event {
            EnsEvent::NewOwner { parent, label, .. } => {
                node(super::name::child_node(*parent, *label));
                if *parent != B256::ZERO {
                    node(*parent);
                }
                keys.labels.push(RawHash::new(label.0));
            }
            EnsEvent::RegistryTransfer { node: n, .. }
            | EnsEvent::NewResolver { node: n, .. }
            | EnsEvent::NewTtl { node: n, .. }
            | EnsEvent::NameWrapped { node: n, .. }
            | EnsEvent::NameUnwrapped { node: n, .. }
            | EnsEvent::FusesSet { node: n, .. }
            | EnsEvent::ExpiryExtended { node: n, .. } => node(*n),
            EnsEvent::NameRegistered { token_id, .. }
            | EnsEvent::NameRenewed { token_id, .. }
            | EnsEvent::TokenTransfer { token_id, .. } => node(token(token_id)),
            EnsEvent::WrapperTransfer { id, .. } => node(B256::from(*id)),
            EnsEvent::ControllerRegistered { label, .. }
            | EnsEvent::ControllerRenewed { label, .. } => {
                node(super::name::child_node(ctx.registrar_node, *label));
                keys.labels.push(RawHash::new(label.0));
            }
            EnsEvent::AddrChanged { node: n, .. }
            | EnsEvent::AddressChanged { node: n, .. }
            | EnsEvent::TextChanged { node: n, .. }
            | EnsEvent::ContenthashChanged { node: n, .. }
            | EnsEvent::NameChanged { node: n, .. }
            | EnsEvent::PubkeyChanged { node: n, .. }
            | EnsEvent::VersionChanged { node: n, .. } => {
                keys.records.push(resolver_record_id(ctx.chain_id, decoded.meta.address, *n));
            }
            EnsEvent::ThreeDnsRegistered { node: n, fqdn, .. } => {
                node(*n);
                for label in
                    super::name::decode_dns_name(fqdn).unwrap_or_default().into_iter().flatten()
                {
                    keys.labels.push(RawHash::new(super::name::labelhash(&label).0));
                }
            }
            EnsEvent::ThreeDnsExtended { node: n, .. } => node(*n),
            EnsEvent::NameForAddrChanged { addr, .. } => {
                let n = super::reverse_registrar::reverse_node(&ctx.reverse_label, *addr);
                keys.records.push(resolver_record_id(ctx.chain_id, decoded.meta.address, n));
            }
        }
    }
    keys
}
