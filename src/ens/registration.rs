//! Registrations and renewals, shared by the base registrar and NameWrapper handlers:
//! registrations are append-only per domain (`${domainId}-${index}`) with the domain pointing
//! at its latest one; renewals are append-only per registration.

use alloy::primitives::Address;
use entities::{domain, registration, renewal};

use super::{HandlerError, IndexContext, event::EventMeta, name::hex_address};
use crate::store::EntityStore;

/// What a new registration starts with.
#[derive(Clone, Debug)]
pub struct Opening {
    /// `BaseRegistrar` or `NameWrapper`.
    pub kind: &'static str,
    /// Registrant.
    pub registrant: Option<String>,
    /// Expiry; `None` never expires.
    pub expiry: Option<i64>,
    /// Grace period after expiry, seconds.
    pub grace_period: i64,
    /// NameWrapper fuses.
    pub fuses: Option<i64>,
}

/// Opens the next registration of `domain` (the caller stores the updated domain).
pub fn open(
    ctx: &IndexContext,
    store: &mut EntityStore,
    domain: &mut domain::Model,
    registrar: Address,
    meta: &EventMeta,
    opening: Opening,
) {
    let index = u32::try_from(domain.registration_count).unwrap_or_default();
    store.create_registration(registration::Model {
        id: registration::RegistrationKey::new(&domain.id, index),
        kind: opening.kind.to_owned(),
        registrar_chain_id: ctx.chain_id.column(),
        registrar: hex_address(registrar),
        registrant: opening.registrant,
        start: meta.timestamp as i64,
        expiry: opening.expiry,
        grace_period: opening.grace_period,
        base_cost: None,
        premium: None,
        referrer: None,
        fuses: opening.fuses,
        wrapped: false,
        renewal_count: 0,
        block_number: meta.block_number as i64,
    });
    domain.registration_count += 1;
    domain.registration_start = meta.timestamp as i64;
    domain.registration_expiry = opening.expiry.unwrap_or(i64::MAX);
}

/// Stores `reg` and mirrors its expiry onto its domain when it is the domain's latest
/// registration, the one with the last index (domain listings order by it).
pub async fn save(store: &mut EntityStore, reg: registration::Model) -> Result<(), HandlerError> {
    if let Some(mut domain) = store.domain(&reg.domain_id()).await?
        && reg.index() + 1 == domain.registration_count
    {
        let expiry = reg.expiry.unwrap_or(i64::MAX);
        if domain.registration_expiry != expiry {
            domain.registration_expiry = expiry;
            store.put_domain(domain);
        }
    }
    store.put_registration(reg);
    Ok(())
}

/// The latest registration of `domain`, if any.
pub async fn latest(
    store: &mut EntityStore,
    domain: &domain::Model,
) -> Result<Option<registration::Model>, HandlerError> {
    match domain.registration_id() {
        Some(id) => Ok(store.registration(&id).await?),
        None => Ok(None),
    }
}

/// Renews the latest registration of the domain `id` to `expiry`.
pub async fn renew_latest(
    store: &mut EntityStore,
    id: &entities::domain_key::DomainKey,
    expiry: i64,
    meta: &EventMeta,
) -> Result<(), HandlerError> {
    let Some(domain) = store.domain(id).await? else {
        return Err(HandlerError::unknown("domain", id.node_hex()));
    };
    let Some(reg) = latest(store, &domain).await? else {
        return Err(HandlerError::unknown("registration", id.to_string()));
    };
    renew(store, reg, expiry, meta).await
}

/// Appends a renewal to `reg` that moves its expiry to `expiry`.
pub async fn renew(
    store: &mut EntityStore,
    mut reg: registration::Model,
    expiry: i64,
    meta: &EventMeta,
) -> Result<(), HandlerError> {
    let index = u32::try_from(reg.renewal_count).unwrap_or_default();
    store.create_renewal(renewal::Model {
        id: renewal::RenewalKey::new(&reg.id, index),
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
    save(store, reg).await
}
