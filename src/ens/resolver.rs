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

/// A node's record on a resolver as the handler found it, and whether it was stored before:
/// the store inserts a record it created and updates the others without asking the
/// database which it holds.
struct Record {
    row: resolver_record::Model,
    created: bool,
}

impl Record {
    fn store(self, store: &mut EntityStore) {
        if self.created {
            store.create_record(self.row);
        } else {
            store.put_record(self.row);
        }
    }
}

async fn record(
    ctx: &IndexContext,
    store: &mut EntityStore,
    resolver: Address,
    node: B256,
) -> Result<Record, HandlerError> {
    let id = resolver_record_id(ctx.chain_id, resolver, node);
    Ok(match store.record(&id).await? {
        Some(row) => Record { row, created: false },
        None => Record {
            row: resolver_record::Model {
                id,
                name: None,
                contenthash: None,
                pubkey_x: None,
                pubkey_y: None,
                version: 0,
            },
            created: true,
        },
    })
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
        record_id: rec.row.id.clone(),
        coin_type,
        address: hex_bytes(address),
    });
    rec.store(store);
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
        record_id: rec.row.id.clone(),
        key_hash: RawHash::new(keccak256(key.as_bytes()).0),
        key: key.to_owned(),
        value: value.map(str::to_owned),
    });
    rec.store(store);
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
    rec.row.contenthash = (!hash.is_empty()).then(|| hex_bytes(hash));
    rec.store(store);
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
    rec.row.name = (!name.is_empty()).then(|| name.to_owned());
    rec.store(store);
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
    rec.row.pubkey_x = Some(hex_b256(x));
    rec.row.pubkey_y = Some(hex_b256(y));
    rec.store(store);
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
    rec.row.name = None;
    rec.row.contenthash = None;
    rec.row.pubkey_x = None;
    rec.row.pubkey_y = None;
    rec.row.version = i64::try_from(version).unwrap_or(i64::MAX);
    store.clear_record_entries(&rec.row.id);
    rec.store(store);
    Ok(())
}
