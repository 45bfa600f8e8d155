//! Ownership tokens: the base registrar's ERC-721 (one per direct child of the registrar's
//! name) and the NameWrapper's ERC-1155 (one per wrapped name). A transfer moves the holder
//! kept on the domain, and the registrant of the registration the token stands for; the
//! domain's owner follows from the holders ([`super::ownership`]).

use alloy::primitives::{Address, B256};

use super::{
    HandlerError, IndexContext, base_registrar, context::nonzero_raw, name::hex_b256, name_wrapper,
    ownership, registration,
};
use crate::store::EntityStore;

/// Which token moved.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Token {
    /// The base registrar's ERC-721.
    Registrar,
    /// The NameWrapper's ERC-1155.
    Wrapper,
}

/// Moves `token` of `node` from `from` to `to`. A mint (`from` zero) for a node the registry
/// has not created yet is expected (tokens are minted before the registry call in the same
/// transaction) and skipped: the registration event that follows records the holder.
pub async fn transfer(
    ctx: &IndexContext,
    store: &mut EntityStore,
    token: Token,
    node: B256,
    from: Address,
    to: Address,
) -> Result<(), HandlerError> {
    let Some(mut domain) = store.domain(&ctx.domain_id(node)).await? else {
        return if from.is_zero() {
            Ok(())
        } else {
            Err(HandlerError::unknown("domain", hex_b256(node)))
        };
    };
    let holder = nonzero_raw(to);
    match token {
        Token::Registrar => domain.token_owner.clone_from(&holder),
        // A wrapper token only stands for the name while it is wrapped: a transfer of a
        // token whose name was unwrapped (or never wrapped here) holds nothing.
        Token::Wrapper if domain.wrapped_owner.is_none() && !from.is_zero() => return Ok(()),
        Token::Wrapper => domain.wrapped_owner.clone_from(&holder),
    }
    // The registrant of the registration the token stands for is its holder; a burn (before
    // a re-registration mints it anew) leaves the ended registration's last holder.
    if let Some(holder) = holder
        && let Some(mut reg) = registration::latest(store, &domain).await?
    {
        let kind = match token {
            Token::Registrar => base_registrar::KIND,
            Token::Wrapper => name_wrapper::KIND,
        };
        let registrant = Some(holder.to_string());
        if reg.kind == kind && reg.registrant != registrant {
            reg.registrant = registrant;
            store.put_registration(reg);
        }
    }
    ownership::refresh(ctx, &mut domain);
    store.put_domain(domain);
    Ok(())
}
