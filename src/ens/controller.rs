//! Registrar controller handlers: every generation's `NameRegistered` / `NameRenewed`. They
//! carry the plaintext label (which heals it) and the price, which is patched onto the
//! registration or renewal the base registrar opened earlier in the same transaction.

use alloy::primitives::{B256, U256};

use entities::{registration, renewal::RenewalKey};

use super::{
    HandlerError, IndexContext, labels::ensure_label, name::hex_b256,
    registration::latest as latest_registration,
};
use crate::store::EntityStore;

fn dec(value: Option<U256>) -> Option<String> {
    value.map(|v| v.to_string())
}

/// Heals `label` from the controller's plaintext and returns the latest registration of
/// `label.<registrar node>`, which the base registrar opened earlier in the transaction.
async fn healed_registration(
    ctx: &IndexContext,
    store: &mut EntityStore,
    name: &str,
    label: B256,
) -> Result<registration::Model, HandlerError> {
    ensure_label(store, label, Some(name)).await?;
    let id = ctx.domain_id(super::name::child_node(ctx.registrar_node, label));
    let Some(domain) = store.domain(&id).await? else {
        return Err(HandlerError::unknown("domain", id.to_string()));
    };
    latest_registration(store, &domain)
        .await?
        .ok_or_else(|| HandlerError::unknown("registration", id.to_string()))
}

/// Controller `NameRegistered`.
pub async fn name_registered(
    ctx: &IndexContext,
    store: &mut EntityStore,
    name: &str,
    label: B256,
    base_cost: Option<U256>,
    premium: Option<U256>,
    referrer: Option<B256>,
) -> Result<(), HandlerError> {
    let mut reg = healed_registration(ctx, store, name, label).await?;
    reg.base_cost = dec(base_cost);
    reg.premium = dec(premium);
    reg.referrer = referrer.map(hex_b256);
    store.put_registration(reg);
    Ok(())
}

/// Controller `NameRenewed`.
pub async fn name_renewed(
    ctx: &IndexContext,
    store: &mut EntityStore,
    name: &str,
    label: B256,
    cost: Option<U256>,
    referrer: Option<B256>,
) -> Result<(), HandlerError> {
    let reg = healed_registration(ctx, store, name, label).await?;
    let reg_id = reg.id;
    let Some(last) = reg.renewal_count.checked_sub(1) else {
        return Err(HandlerError::unknown("renewal", reg_id.to_string()));
    };
    let renewal_id = RenewalKey::new(&reg_id, u32::try_from(last).unwrap_or_default());
    let Some(mut renewal) = store.renewal(&renewal_id).await? else {
        return Err(HandlerError::unknown("renewal", renewal_id.to_string()));
    };
    renewal.base_cost = dec(cost);
    renewal.referrer = referrer.map(hex_b256);
    store.put_renewal(renewal);
    Ok(())
}
