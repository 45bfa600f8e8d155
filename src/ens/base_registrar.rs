//! `.eth` base registrar handlers: `NameRegistered` opens a registration, `NameRenewed` appends
//! a renewal, ERC-721 `Transfer` moves the effective owner.
//!
//! Within a registration transaction the registrar mints the token (Transfer) *before* the
//! registry creates the node (NewOwner), so a mint for a node that does not exist yet is
//! expected and skipped: the following `NameRegistered` sets the owner.

use alloy::primitives::{Address, U256};
use entities::{registration, renewal};

use super::{
    HandlerError, IndexContext,
    context::{BASE_REGISTRAR_GRACE_PERIOD, clamp_u256, nonzero},
    event::EventMeta,
    name::{hex_address, hex_b256},
};
use crate::store::EntityStore;

/// Registration kind of the base registrar.
pub const KIND: &str = "BaseRegistrar";

/// `NameRegistered(id, owner, expires)`.
pub async fn name_registered(
    ctx: &IndexContext,
    store: &mut EntityStore,
    meta: &EventMeta,
    token_id: U256,
    owner: Address,
    expires: U256,
) -> Result<(), HandlerError> {
    let node = ctx.token_node(token_id);
    let id = ctx.domain_id(node);
    let Some(mut domain) = store.domain(&id).await? else {
        return Err(HandlerError::unknown("domain", hex_b256(node)));
    };
    let index = domain.registration_count;
    let registration_id = format!("{id}-{index}");
    store.put_registration(registration::Model {
        id: registration_id.clone(),
        domain_id: id,
        index,
        kind: KIND.to_owned(),
        registrar_chain_id: ctx.chain_id as i64,
        registrar: hex_address(meta.address),
        registrant: nonzero(owner),
        start: meta.timestamp as i64,
        expiry: Some(clamp_u256(expires)),
        grace_period: BASE_REGISTRAR_GRACE_PERIOD,
        base_cost: None,
        premium: None,
        referrer: None,
        fuses: None,
        wrapped: false,
        renewal_count: 0,
        block_number: meta.block_number as i64,
    });
    domain.registration_id = Some(registration_id);
    domain.registration_count += 1;
    domain.owner = nonzero(owner);
    store.put_domain(domain);
    Ok(())
}

/// `NameRenewed(id, expires)`.
pub async fn name_renewed(
    ctx: &IndexContext,
    store: &mut EntityStore,
    meta: &EventMeta,
    token_id: U256,
    expires: U256,
) -> Result<(), HandlerError> {
    let node = ctx.token_node(token_id);
    let id = ctx.domain_id(node);
    let Some(domain) = store.domain(&id).await? else {
        return Err(HandlerError::unknown("domain", hex_b256(node)));
    };
    let Some(reg_id) = domain.registration_id else {
        return Err(HandlerError::unknown("registration", id));
    };
    let Some(mut reg) = store.registration(&reg_id).await? else {
        return Err(HandlerError::unknown("registration", reg_id));
    };
    let expiry = clamp_u256(expires);
    let index = reg.renewal_count;
    store.put_renewal(renewal::Model {
        id: format!("{reg_id}-{index}"),
        registration_id: reg_id,
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

/// ERC-721 `Transfer(from, to, tokenId)`.
pub async fn transfer(
    ctx: &IndexContext,
    store: &mut EntityStore,
    from: Address,
    to: Address,
    token_id: U256,
) -> Result<(), HandlerError> {
    let node = ctx.token_node(token_id);
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
