//! Registry handlers (`NewOwner`, `Transfer`, `NewResolver`, `NewTTL`) for the current and the
//! old registry. Old-registry events for a node that has appeared in the current registry are
//! ignored, as `ENSRegistryWithFallback` ignores the old registry for such nodes.

use alloy::primitives::{Address, B256};
use entities::domain::{self, RawHash};

use super::{
    HandlerError, IndexContext,
    context::nonzero_raw,
    event::{EventMeta, RegistrySource},
    labels::{child_name, ensure_label},
    name::{hex_b256, labelhash},
};
use crate::store::EntityStore;

/// `NewOwner(parent, label, owner)`: creates the domain or reassigns it.
pub async fn new_owner(
    ctx: &IndexContext,
    store: &mut EntityStore,
    meta: &EventMeta,
    source: RegistrySource,
    parent: B256,
    label: B256,
    owner: Address,
) -> Result<(), HandlerError> {
    let node = super::name::child_node(parent, label);
    let id = ctx.domain_id(node);
    let owner_raw = nonzero_raw(owner);
    if let Some(mut row) = store.domain(&id).await? {
        if source == RegistrySource::Old && row.migrated {
            return Ok(());
        }
        if source == RegistrySource::Current && !row.migrated {
            // The node's first record in the current registry: from now on the fallback
            // registry answers from this record only, whose resolver and TTL are unset until
            // set here (the old registry's stay behind).
            row.resolver = None;
            row.ttl = None;
            row.migrated = true;
        }
        row.registry_owner = owner_raw;
        super::ownership::refresh(ctx, &mut row);
        store.put_domain(row);
        return Ok(());
    }
    let parent_row = if parent == B256::ZERO {
        None
    } else {
        let parent_id = ctx.domain_id(parent);
        match store.domain(&parent_id).await? {
            Some(p) => Some(p),
            None => return Err(HandlerError::unknown("parent domain", hex_b256(parent))),
        }
    };
    // Reverse records are named after the address they reverse: the owner, or the sender of
    // the transaction when a reverse registrar claims on the sender's behalf.
    let reverse_label = (parent == ctx.addr_reverse_node)
        .then_some([owner, meta.tx_from])
        .into_iter()
        .flatten()
        .map(hex::encode)
        .find(|l| labelhash(l) == label);
    let interpreted = ensure_label(store, label, reverse_label.as_deref()).await?;
    let (name, depth) = child_name(&interpreted, parent_row.as_ref());
    let link = ctx.links.of_child(parent_row.as_ref().map(|p| (parent, p.link)));
    let seq = store.next_domain_seq(ctx.chain_id).await?;
    store.create_domain(domain::Model {
        id,
        seq,
        chain_id: ctx.chain_id.column(),
        label_hash: RawHash::new(label.0),
        parent_seq: parent_row.map(|p| p.seq),
        owner: owner_raw.clone(),
        registry_owner: owner_raw,
        token_owner: None,
        wrapped_owner: None,
        resolver: None,
        ttl: None,
        name,
        depth,
        migrated: source == RegistrySource::Current,
        registration_count: 0,
        registration_start: i64::MAX,
        registration_expiry: i64::MAX,
        created_block: meta.block_number as i64,
        created_at: meta.timestamp as i64,
        link,
    });
    Ok(())
}

/// Loads the domain a registry event is about; `None` when the event is to be ignored.
async fn target(
    ctx: &IndexContext,
    store: &mut EntityStore,
    source: RegistrySource,
    node: B256,
) -> Result<Option<domain::Model>, HandlerError> {
    // The root node has no domain row; events on it change nothing we index.
    if node == B256::ZERO {
        return Ok(None);
    }
    match store.domain(&ctx.domain_id(node)).await? {
        Some(row) if source == RegistrySource::Old && row.migrated => Ok(None),
        Some(row) => Ok(Some(row)),
        None => Err(HandlerError::unknown("domain", hex_b256(node))),
    }
}

/// `Transfer(node, owner)`.
pub async fn transfer(
    ctx: &IndexContext,
    store: &mut EntityStore,
    source: RegistrySource,
    node: B256,
    owner: Address,
) -> Result<(), HandlerError> {
    if let Some(mut row) = target(ctx, store, source, node).await? {
        row.registry_owner = nonzero_raw(owner);
        super::ownership::refresh(ctx, &mut row);
        store.put_domain(row);
    }
    Ok(())
}

/// `NewResolver(node, resolver)`.
pub async fn new_resolver(
    ctx: &IndexContext,
    store: &mut EntityStore,
    source: RegistrySource,
    node: B256,
    resolver: Address,
) -> Result<(), HandlerError> {
    if let Some(mut row) = target(ctx, store, source, node).await? {
        row.resolver = nonzero_raw(resolver);
        store.put_domain(row);
    }
    Ok(())
}

/// `NewTTL(node, ttl)`.
pub async fn new_ttl(
    ctx: &IndexContext,
    store: &mut EntityStore,
    source: RegistrySource,
    node: B256,
    ttl: u64,
) -> Result<(), HandlerError> {
    if let Some(mut row) = target(ctx, store, source, node).await? {
        row.ttl = Some(i64::try_from(ttl).unwrap_or(i64::MAX));
        store.put_domain(row);
    }
    Ok(())
}
