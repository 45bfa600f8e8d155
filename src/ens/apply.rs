//! [`apply_event`]: routes a decoded event to its contract's handler.

use alloy::primitives::U256;

use super::{
    DecodedEvent, EnsEvent, HandlerError, IndexContext, base_registrar, controller, name_wrapper,
    registry, resolver, reverse_registrar, three_dns,
};
use crate::store::EntityStore;

/// Applies one event. Events must be applied in chain order.
pub async fn apply_event(
    ctx: &IndexContext,
    store: &mut EntityStore,
    decoded: &DecodedEvent,
) -> Result<(), HandlerError> {
    let meta = &decoded.meta;
    let ctx = ctx.for_event(&decoded.event);
    match &decoded.event {
        EnsEvent::NewOwner { source, parent, label, owner } => {
            registry::new_owner(ctx, store, meta, *source, *parent, *label, *owner).await
        }
        EnsEvent::RegistryTransfer { source, node, owner } => {
            registry::transfer(ctx, store, *source, *node, *owner).await
        }
        EnsEvent::NewResolver { source, node, resolver } => {
            registry::new_resolver(ctx, store, *source, *node, *resolver).await
        }
        EnsEvent::NewTtl { source, node, ttl } => {
            registry::new_ttl(ctx, store, *source, *node, *ttl).await
        }
        EnsEvent::NameRegistered { token_id, owner, expires } => {
            base_registrar::name_registered(ctx, store, meta, *token_id, *owner, *expires).await
        }
        EnsEvent::ThreeDnsRegistered { node, fqdn, registrant, expiry } => {
            three_dns::registration_created(ctx, store, meta, *node, fqdn, *registrant, *expiry)
                .await
        }
        EnsEvent::ThreeDnsExtended { node, expiry } => {
            three_dns::registration_extended(ctx, store, meta, *node, *expiry).await
        }
        EnsEvent::NameForAddrChanged { addr, name } => {
            reverse_registrar::name_for_addr_changed(ctx, store, meta, *addr, name).await
        }
        EnsEvent::NameRenewed { token_id, expires } => {
            base_registrar::name_renewed(ctx, store, meta, *token_id, *expires).await
        }
        EnsEvent::TokenTransfer { from, to, token_id } => {
            base_registrar::transfer(ctx, store, *from, *to, *token_id).await
        }
        EnsEvent::ControllerRegistered { name, label, base_cost, premium, referrer, .. } => {
            controller::name_registered(ctx, store, name, *label, *base_cost, *premium, *referrer)
                .await
        }
        EnsEvent::ControllerRenewed { name, label, cost, referrer } => {
            controller::name_renewed(ctx, store, name, *label, *cost, *referrer).await
        }
        EnsEvent::AddrChanged { node, addr } => {
            resolver::address_changed(
                ctx,
                store,
                meta,
                *node,
                resolver::COIN_TYPE_ETH,
                addr.as_slice(),
            )
            .await
        }
        EnsEvent::AddressChanged { node, coin_type, address } => {
            let coin = i64::try_from(*coin_type).unwrap_or(i64::MAX);
            if *coin_type > U256::from(i64::MAX) {
                tracing::warn!(target: "indexer::handler", %coin_type, "coin type beyond i64 clamped");
            }
            resolver::address_changed(ctx, store, meta, *node, coin, address).await
        }
        EnsEvent::TextChanged { node, key, value } => {
            resolver::text_changed(ctx, store, meta, *node, key, value.as_deref()).await
        }
        EnsEvent::ContenthashChanged { node, hash } => {
            resolver::contenthash_changed(ctx, store, meta, *node, hash).await
        }
        EnsEvent::NameChanged { node, name } => {
            resolver::name_changed(ctx, store, meta, *node, name).await
        }
        EnsEvent::PubkeyChanged { node, x, y } => {
            resolver::pubkey_changed(ctx, store, meta, *node, *x, *y).await
        }
        EnsEvent::VersionChanged { node, version } => {
            resolver::version_changed(ctx, store, meta, *node, *version).await
        }
        EnsEvent::NameWrapped { node, name, owner, fuses, expiry } => {
            let wrapped = name_wrapper::Wrapped {
                node: *node,
                dns_name: name,
                owner: *owner,
                fuses: *fuses,
                expiry: *expiry,
            };
            name_wrapper::name_wrapped(ctx, store, meta, wrapped).await
        }
        EnsEvent::NameUnwrapped { node, .. } => {
            name_wrapper::name_unwrapped(ctx, store, *node).await
        }
        EnsEvent::FusesSet { node, fuses } => {
            name_wrapper::fuses_set(ctx, store, *node, *fuses).await
        }
        EnsEvent::ExpiryExtended { node, expiry } => {
            name_wrapper::expiry_extended(ctx, store, meta, *node, *expiry).await
        }
        EnsEvent::WrapperTransfer { from, to, id } => {
            name_wrapper::transfer(ctx, store, *from, *to, *id).await
        }
    }
}
