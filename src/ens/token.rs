//! Ownership tokens: the base registrar's ERC-721 and the NameWrapper's ERC-1155 both make
//! the token holder the domain's effective owner.

use alloy::primitives::{Address, B256};

use super::{HandlerError, IndexContext, context::nonzero_raw, name::hex_b256};
use crate::store::EntityStore;

/// Moves the effective owner of `node` to `to`. A mint (`from` zero) for a node the registry
/// has not created yet is expected (tokens are minted before the registry call in the same
/// transaction) and skipped: the event that follows sets the owner.
pub async fn transfer(
    ctx: &IndexContext,
    store: &mut EntityStore,
    node: B256,
    from: Address,
    to: Address,
) -> Result<(), HandlerError> {
    match store.domain(&ctx.domain_id(node)).await? {
        Some(mut domain) => {
            domain.owner = nonzero_raw(to);
            store.put_domain(domain);
            Ok(())
        }
        None if from.is_zero() => Ok(()),
        None => Err(HandlerError::unknown("domain", hex_b256(node))),
    }
}
