//! 3DNS token handlers (Optimism, Base). The token is a registry of its own: its `NewOwner`
//! and `Transfer(node, owner)` go through the registry handlers in its context
//! (`IndexContext::three_dns`), so its domains' ids name the token and none of them is in the
//! canonical namegraph (3DNS names resolve on mainnet through an offchain resolver, which
//! ENS events do not describe). `RegistrationCreated` opens a registration and heals every
//! label of the registered name; `RegistrationExtended` renews it.

use alloy::primitives::{Address, B256};

use super::{
    HandlerError, IndexContext,
    context::{nonzero, nonzero_raw},
    event::EventMeta,
    labels::ensure_label,
    name::{decode_dns_name, hex_b256, labelhash},
    registration::{self, Opening},
};
use crate::store::EntityStore;

/// Registration kind of 3DNS (the Omnigraph's `ThreeDNSRegistration`).
pub const KIND: &str = "ThreeDNS";

/// `RegistrationCreated(node, tld, fqdn, registrant, controlBitmap, expiry)`.
pub async fn registration_created(
    ctx: &IndexContext,
    store: &mut EntityStore,
    meta: &EventMeta,
    node: B256,
    fqdn: &[u8],
    registrant: Address,
    expiry: u64,
) -> Result<(), HandlerError> {
    // The registered name carries every label in plaintext.
    for label in decode_dns_name(fqdn).unwrap_or_default().into_iter().flatten() {
        ensure_label(store, labelhash(&label), Some(&label)).await?;
    }
    let Some(mut domain) = store.domain(&ctx.domain_id(node)).await? else {
        return Err(HandlerError::unknown("domain", hex_b256(node)));
    };
    let opening = Opening {
        kind: KIND,
        registrant: nonzero(registrant),
        expiry: Some(i64::try_from(expiry).unwrap_or(i64::MAX)),
        grace_period: 0,
        fuses: None,
    };
    registration::open(ctx, store, &mut domain, meta.address, meta, opening);
    domain.owner = nonzero_raw(registrant);
    store.put_domain(domain);
    Ok(())
}

/// `RegistrationExtended(node, duration, newExpiry)`.
pub async fn registration_extended(
    ctx: &IndexContext,
    store: &mut EntityStore,
    meta: &EventMeta,
    node: B256,
    expiry: u64,
) -> Result<(), HandlerError> {
    let expiry = i64::try_from(expiry).unwrap_or(i64::MAX);
    registration::renew_latest(store, &ctx.domain_id(node), expiry, meta).await
}
