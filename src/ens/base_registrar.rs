//! `.eth` base registrar handlers: `NameRegistered` opens a registration, `NameRenewed` appends
//! a renewal, ERC-721 `Transfer` moves the effective owner.
//!
//! Within a registration transaction the registrar mints the token (Transfer) *before* the
//! registry creates the node (NewOwner); see [`token::transfer`] for how that is handled.

use super::{
    HandlerError, IndexContext,
    context::{BASE_REGISTRAR_GRACE_PERIOD, clamp_u256, nonzero, nonzero_raw},
    event::EventMeta,
    name::hex_b256,
    registration::{self, Opening},
    token,
};
use crate::store::EntityStore;
use alloy::primitives::{Address, U256};

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
    let Some(mut domain) = store.domain(&ctx.domain_id(node)).await? else {
        return Err(HandlerError::unknown("domain", hex_b256(node)));
    };
    let opening = Opening {
        kind: KIND,
        registrant: nonzero(owner),
        expiry: Some(clamp_u256(expires)),
        grace_period: BASE_REGISTRAR_GRACE_PERIOD,
        fuses: None,
    };
    registration::open(ctx, store, &mut domain, meta.address, meta, opening);
    // The token was minted to `owner` just before (its Transfer came before the registry
    // created the node, so it was not recorded then).
    domain.token_owner = nonzero_raw(owner);
    super::ownership::refresh(ctx, &mut domain);
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
    let id = ctx.domain_id(ctx.token_node(token_id));
    registration::renew_latest(store, &id, clamp_u256(expires), meta).await
}

/// ERC-721 `Transfer(from, to, tokenId)`.
pub async fn transfer(
    ctx: &IndexContext,
    store: &mut EntityStore,
    from: Address,
    to: Address,
    token_id: U256,
) -> Result<(), HandlerError> {
    token::transfer(ctx, store, token::Token::Registrar, ctx.token_node(token_id), from, to).await
}
