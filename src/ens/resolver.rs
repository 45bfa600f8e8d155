//! Resolver handlers: records are kept per `(chain, resolver address, node)`, whoever the
//! resolver is. `VersionChanged` clears every record of the node on that resolver.

use alloy::primitives::{Address, B256, Bytes, keccak256};
use entities::{raw_hex::RawHash, resolver_address, resolver_record, resolver_text};

use super::{
    HandlerError, IndexContext,
    event::EventMeta,
    name::{hex_b256, resolver_record_id},
};
use crate::store::EntityStore;

/// SLIP-44 coin type of ETH, which `AddrChanged` sets.
pub const COIN_TYPE_ETH: i64 = 60;

async fn record(
    ctx: &IndexContext,
    store: &mut EntityStore,
    resolver: Address,
    node: B256,
) -> Result<resolver_record::Model, HandlerError> {
    let id = resolver_record_id(ctx.chain_id, resolver, node);
    Ok(store.record(&id).await?.unwrap_or(resolver_record::Model {
        id,
        name: None,
        contenthash: None,
        pubkey_x: None,
        pubkey_y: None,
        version: 0,
    }))
}

fn hex_bytes(bytes: &[u8]) -> String {
    format!("0x{}", hex::encode(bytes))
}

/// `AddrChanged` / `AddressChanged`. Coin types beyond `i64` (none are assigned) are
/// clamped rather than dropped so the event stays visible.
pub async fn address_changed(
    ctx: &IndexContext,
    store: &mut EntityStore,
    meta: &EventMeta,
    node: B256,
    coin_type: i64,
    address: &[u8],
) -> Result<(), HandlerError> {
    let rec = record(ctx, store, meta.address, node).await?;
    store.put_address(resolver_address::Model {
        record_id: rec.id.clone(),
        coin_type,
        address: hex_bytes(address),
    });
    store.put_record(rec);
    Ok(())
}

/// `TextChanged` (either form; `value` is `None` when it could not be read).
pub async fn text_changed(
    ctx: &IndexContext,
    store: &mut EntityStore,
    meta: &EventMeta,
    node: B256,
    key: &str,
    value: Option<&str>,
) -> Result<(), HandlerError> {
    let rec = record(ctx, store, meta.address, node).await?;
    store.put_text(resolver_text::Model {
        record_id: rec.id.clone(),
        key_hash: RawHash::new(keccak256(key.as_bytes()).0),
        key: key.to_owned(),
        value: value.map(str::to_owned),
    });
    store.put_record(rec);
    Ok(())
}

/// `ContenthashChanged`.
pub async fn contenthash_changed(
    ctx: &IndexContext,
    store: &mut EntityStore,
    meta: &EventMeta,
    node: B256,
    hash: &Bytes,
) -> Result<(), HandlerError> {
    let mut rec = record(ctx, store, meta.address, node).await?;
    rec.contenthash = (!hash.is_empty()).then(|| hex_bytes(hash));
    store.put_record(rec);
    Ok(())
}

/// `NameChanged` (the name record; reverse names are set this way).
pub async fn name_changed(
    ctx: &IndexContext,
    store: &mut EntityStore,
    meta: &EventMeta,
    node: B256,
    name: &str,
) -> Result<(), HandlerError> {
    let mut rec = record(ctx, store, meta.address, node).await?;
    rec.name = (!name.is_empty()).then(|| name.to_owned());
    store.put_record(rec);
    Ok(())
}

/// `PubkeyChanged`.
pub async fn pubkey_changed(
    ctx: &IndexContext,
    store: &mut EntityStore,
    meta: &EventMeta,
    node: B256,
    x: B256,
    y: B256,
) -> Result<(), HandlerError> {
    let mut rec = record(ctx, store, meta.address, node).await?;
    rec.pubkey_x = Some(hex_b256(x));
    rec.pubkey_y = Some(hex_b256(y));
    store.put_record(rec);
    Ok(())
}

/// `VersionChanged`: every record of the node on this resolver is gone.
pub async fn version_changed(
    ctx: &IndexContext,
    store: &mut EntityStore,
    meta: &EventMeta,
    node: B256,
    version: u64,
) -> Result<(), HandlerError> {
    let mut rec = record(ctx, store, meta.address, node).await?;
    rec.name = None;
    rec.contenthash = None;
    rec.pubkey_x = None;
    rec.pubkey_y = None;
    rec.version = i64::try_from(version).unwrap_or(i64::MAX);
    store.clear_record_entries(&rec.id);
    store.put_record(rec);
    Ok(())
}
