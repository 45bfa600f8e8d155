//! NameWrapper handlers. Wrapping a live `.eth` second-level name marks its base registrar
//! registration as wrapped; wrapping anything else opens a NameWrapper registration (expiry 0
//! means it never expires). The ERC-1155 token's holder owns a wrapped name
//! (`ens::ownership`). As the contract does, an unwrap keeps the registration's expiry and its
//! parent-controlled fuses, and a later wrap takes the later expiry and those fuses back.

use alloy::primitives::{Address, B256, U256};

use super::{
    HandlerError, IndexContext, base_registrar,
    context::{nonzero, nonzero_raw},
    event::EventMeta,
    labels::ensure_label,
    name::{decode_dns_name, hex_b256, labelhash},
    registration::{self, Opening},
    token,
};
use crate::store::EntityStore;

/// Registration kind of the NameWrapper.
pub const KIND: &str = "NameWrapper";

/// The fuses only a name's parent can burn (the upper 16 bits: `PARENT_CANNOT_CONTROL`,
/// `IS_DOT_ETH`, `CAN_EXTEND_EXPIRY` and the parent's own). The wrapper keeps them, with the
/// expiry, when a name is unwrapped, and merges them into the next wrap while that expiry has
/// not passed.
pub const PARENT_CONTROLLED_FUSES: i64 = 0xFFFF_0000;

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
    domain.wrapped_owner = nonzero_raw(owner);
    super::ownership::refresh(ctx, &mut domain);
    let live_eth_2ld = match registration::latest(store, &domain).await? {
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
        // What the wrapper kept of an earlier wrap: `NameWrapped` carries the arguments of the
        // wrap, but the token gets the later expiry, and the kept parent-controlled fuses
        // while that expiry has not passed (ERC1155Fuse `_mint`).
        // An expiry of 0 is stored as none.
        let (kept_expiry, kept_fuses) = match registration::latest(store, &domain).await? {
            Some(reg) if reg.kind == KIND => (reg.expiry.unwrap_or(0), reg.fuses.unwrap_or(0)),
            _ => (0, 0),
        };
        let expiry = i64::try_from(expiry).unwrap_or(i64::MAX).max(kept_expiry);
        let mut fuses = i64::from(fuses);
        if kept_expiry >= meta.timestamp as i64 {
            fuses |= kept_fuses & PARENT_CONTROLLED_FUSES;
        }
        let opening = Opening {
            kind: KIND,
            registrant: nonzero(owner),
            expiry: (expiry != 0).then_some(expiry),
            grace_period: 0,
            fuses: Some(fuses),
        };
        registration::open(ctx, store, &mut domain, meta.address, meta, opening);
    }
    store.put_domain(domain);
    Ok(())
}

async fn wrapped_domain(
    ctx: &IndexContext,
    store: &mut EntityStore,
    node: B256,
) -> Result<(entities::domain::Model, Option<entities::registration::Model>), HandlerError> {
    let id = ctx.domain_id(node);
    let Some(domain) = store.domain(&id).await? else {
        return Err(HandlerError::unknown("domain", hex_b256(node)));
    };
    let reg = registration::latest(store, &domain).await?;
    Ok((domain, reg))
}

/// `NameUnwrapped(node, owner)`. The registry record goes to `owner`, which the registry's own
/// `Transfer` records; here the wrapper token stops standing for the name.
pub async fn name_unwrapped(
    ctx: &IndexContext,
    store: &mut EntityStore,
    node: B256,
) -> Result<(), HandlerError> {
    let (mut domain, reg) = wrapped_domain(ctx, store, node).await?;
    domain.wrapped_owner = None;
    super::ownership::refresh(ctx, &mut domain);
    store.put_domain(domain);
    if let Some(mut reg) = reg {
        if reg.kind == KIND {
            // The wrapper keeps the expiry and the parent-controlled fuses (they still bind
            // the parent until that expiry); the owner-controlled ones go with the token.
            reg.fuses = reg.fuses.map(|f| f & PARENT_CONTROLLED_FUSES);
        } else {
            reg.wrapped = false;
            reg.fuses = None;
        }
        registration::save(store, reg).await?;
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
    // Extending a wrapped .eth 2LD mirrors a base registrar renewal already recorded.
    if let Some(reg) = reg.filter(|r| r.kind == KIND) {
        registration::renew(store, reg, i64::try_from(expiry).unwrap_or(i64::MAX), meta).await?;
    }
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
    token::transfer(ctx, store, token::Token::Wrapper, B256::from(id), from, to).await
}
