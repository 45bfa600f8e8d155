//! NameWrapper handlers. Wrapping a live `.eth` second-level name marks its base registrar
//! registration as wrapped; wrapping anything else opens a NameWrapper registration (expiry 0
//! means it never expires). The ERC-1155 token owner becomes the effective owner.

use alloy::primitives::{Address, B256, U256};
use entities::{registration, renewal};

use super::{
    HandlerError, IndexContext, base_registrar,
    context::nonzero,
    event::EventMeta,
    labels::ensure_label,
    name::{decode_dns_name, hex_address, hex_b256, labelhash},
};
use crate::store::EntityStore;

/// Registration kind of the NameWrapper.
pub const KIND: &str = "NameWrapper";

async fn latest_registration(
    store: &mut EntityStore,
    domain: &entities::domain::Model,
) -> Result<Option<registration::Model>, HandlerError> {
    match &domain.registration_id {
        Some(id) => Ok(store.registration(id).await?),
        None => Ok(None),
    }
}

/// The fields of a `NameWrapped` event.
#[derive(Clone, Copy, Debug)]
pub struct Wrapped<'a> {
    /// Node.
    pub node: B256,
    /// DNS-encoded name.
    pub dns_name: &'a [u8],
    /// Token owner.
    pub owner: Address,
    /// Fuses.
    pub fuses: u32,
    /// Expiry (0 = never).
    pub expiry: u64,
}

/// `NameWrapped(node, name, owner, fuses, expiry)`.
pub async fn name_wrapped(
    ctx: &IndexContext,
    store: &mut EntityStore,
    meta: &EventMeta,
    wrapped: Wrapped<'_>,
) -> Result<(), HandlerError> {
    let Wrapped { node, dns_name, owner, fuses, expiry } = wrapped;
    // The wrapped name carries every label in plaintext: heal them all.
    for label in decode_dns_name(dns_name).unwrap_or_default().into_iter().flatten() {
        ensure_label(store, labelhash(&label), Some(&label)).await?;
    }
    let id = ctx.domain_id(node);
    let Some(mut domain) = store.domain(&id).await? else {
        return Err(HandlerError::unknown("domain", hex_b256(node)));
    };
    domain.owner = nonzero(owner);
    let live_eth_2ld = match latest_registration(store, &domain).await? {
        Some(reg)
            if reg.kind == base_registrar::KIND
                && reg.expiry.unwrap_or(i64::MAX).saturating_add(reg.grace_period)
                    > meta.timestamp as i64 =>
        {
            Some(reg)
        }
        _ => None,
    };
    if let Some(mut reg) = live_eth_2ld {
        reg.wrapped = true;
        reg.fuses = Some(i64::from(fuses));
        store.put_registration(reg);
    } else {
        let index = domain.registration_count;
        let reg_id = format!("{id}-{index}");
        store.put_registration(registration::Model {
            id: reg_id.clone(),
            domain_id: id,
            index,
            kind: KIND.to_owned(),
            registrar_chain_id: ctx.chain_id as i64,
            registrar: hex_address(meta.address),
            registrant: nonzero(owner),
            start: meta.timestamp as i64,
            expiry: (expiry != 0).then(|| i64::try_from(expiry).unwrap_or(i64::MAX)),
            grace_period: 0,
            base_cost: None,
            premium: None,
            referrer: None,
            fuses: Some(i64::from(fuses)),
            wrapped: false,
            renewal_count: 0,
            block_number: meta.block_number as i64,
        });
        domain.registration_id = Some(reg_id);
        domain.registration_count += 1;
    }
    store.put_domain(domain);
    Ok(())
}

async fn wrapped_domain(
    ctx: &IndexContext,
    store: &mut EntityStore,
    node: B256,
) -> Result<(entities::domain::Model, Option<registration::Model>), HandlerError> {
    let id = ctx.domain_id(node);
    let Some(domain) = store.domain(&id).await? else {
        return Err(HandlerError::unknown("domain", hex_b256(node)));
    };
    let reg = latest_registration(store, &domain).await?;
    Ok((domain, reg))
}

/// `NameUnwrapped(node, owner)`.
pub async fn name_unwrapped(
    ctx: &IndexContext,
    store: &mut EntityStore,
    meta: &EventMeta,
    node: B256,
    owner: Address,
) -> Result<(), HandlerError> {
    let (mut domain, reg) = wrapped_domain(ctx, store, node).await?;
    domain.owner = nonzero(owner);
    store.put_domain(domain);
    if let Some(mut reg) = reg {
        if reg.kind == KIND {
            reg.expiry = Some(meta.timestamp as i64);
        } else {
            reg.wrapped = false;
            reg.fuses = None;
        }
        store.put_registration(reg);
    }
    Ok(())
}

/// `FusesSet(node, fuses)`.
pub async fn fuses_set(
    ctx: &IndexContext,
    store: &mut EntityStore,
    node: B256,
    fuses: u32,
) -> Result<(), HandlerError> {
    let (_, reg) = wrapped_domain(ctx, store, node).await?;
    if let Some(mut reg) = reg.filter(|r| r.kind == KIND || r.wrapped) {
        reg.fuses = Some(i64::from(fuses));
        store.put_registration(reg);
    }
    Ok(())
}

/// `ExpiryExtended(node, expiry)`: a renewal of a NameWrapper registration.
pub async fn expiry_extended(
    ctx: &IndexContext,
    store: &mut EntityStore,
    meta: &EventMeta,
    node: B256,
    expiry: u64,
) -> Result<(), HandlerError> {
    let (_, reg) = wrapped_domain(ctx, store, node).await?;
    let Some(mut reg) = reg.filter(|r| r.kind == KIND) else {
        // Extending a wrapped .eth 2LD mirrors a base registrar renewal already recorded.
        return Ok(());
    };
    let expiry = i64::try_from(expiry).unwrap_or(i64::MAX);
    let index = reg.renewal_count;
    store.put_renewal(renewal::Model {
        id: format!("{}-{index}", reg.id),
        registration_id: reg.id.clone(),
        index,
        duration: expiry.saturating_sub(reg.expiry.unwrap_or(expiry)),
        expiry,
        base_cost: None,
        premium: None,
        referrer: None,
        block_number: meta.block_number as i64,
        timestamp: meta.timestamp as i64,
    });
    reg.expiry = Some(expiry);
    reg.renewal_count += 1;
    store.put_registration(reg);
    Ok(())
}

/// ERC-1155 `TransferSingle` / `TransferBatch` (one call per token).
pub async fn transfer(
    ctx: &IndexContext,
    store: &mut EntityStore,
    from: Address,
    to: Address,
    id: U256,
) -> Result<(), HandlerError> {
    let node = B256::from(id);
    match store.domain(&ctx.domain_id(node)).await? {
        Some(mut domain) => {
            domain.owner = nonzero(to);
            store.put_domain(domain);
            Ok(())
        }
        None if from.is_zero() => Ok(()),
        None => Err(HandlerError::unknown("domain", hex_b256(node))),
    }
}
