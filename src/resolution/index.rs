//! Resolution from the index: the same walk as the live path, over the indexed registry
//! (every `NewResolver` of the registry is indexed, so a node with no resolver row has none),
//! and records from the indexed record events. It answers only what the index knows exactly:
//!
//! - The resolver found must be a static resolver of its chain (configured; its records are
//!   exactly its events). Any other resolver may compute its answers: that goes live.
//! - A static resolver on an ancestor is no resolver of the name (static resolvers are not
//!   ENSIP-10 extended), which the index knows too.
//! - A bridge's resolver on its origin name hands names below it to the bridged chain's
//!   registry, where the name's own resolver must be static (the origin name itself, whose
//!   records the bridge resolver keeps, goes live).
//! - ABI and interface records are not indexed (their events carry no value), nor is a text
//!   whose value could not be read when its event was indexed: those go live.

use std::collections::{HashMap, HashSet};

use alloy::primitives::{Address, B256};
use entities::{
    domain, domain_key::DomainKey, namegraph_bridge, resolver_address, resolver_record,
    resolver_record_key::ResolverRecordKey, resolver_text,
};
use graphql::resolution::{ResolutionError, ResolverUsed, error_code};
use sea_orm::{ColumnTrait, DatabaseConnection, EntityTrait, QueryFilter, QuerySelect};

use super::{
    chains::ResolutionChains,
    name::ResolvableName,
    records::{Outcome, Record, address_value, bytes_value, pubkey_value, text_value},
    trace::Trace,
};

/// A chain's registry and static resolvers, as the index path needs them.
#[derive(Clone, Debug)]
pub struct IndexedChain {
    /// EIP-155 chain id.
    pub chain_id: u64,
    /// The registry its domains are keyed by.
    pub registry: Address,
    /// Resolvers whose records are exactly their events.
    pub static_resolvers: HashSet<Address>,
}

/// What the index says.
#[derive(Debug)]
pub enum IndexAnswer {
    /// The answer.
    Known {
        /// The resolver used; none when the name has no usable resolver.
        resolver: Option<ResolverUsed>,
        /// The records' outcomes, in the order asked.
        outcomes: Vec<Outcome>,
        /// The chain a bridge led to, whose freshness the caller checks too.
        bridged_to: Option<u64>,
    },
    /// Only a live call can know; why.
    Live(String),
}

fn db_error(err: sea_orm::DbErr) -> ResolutionError {
    tracing::warn!(target: "ensemble::resolution", error = %err, "Index lookup failed");
    ResolutionError::new(error_code::INTERNAL, "the index could not be read")
}

/// The resolvers set on `nodes[..upto]` in `chain`'s registry, by position.
async fn resolvers_of(
    db: &DatabaseConnection,
    chain: &IndexedChain,
    nodes: &[B256],
) -> Result<Vec<Option<Address>>, ResolutionError> {
    let keys: Vec<DomainKey> =
        nodes.iter().map(|n| DomainKey::new(chain.chain_id, &chain.registry.0.0, &n.0)).collect();
    let rows: Vec<(DomainKey, Option<entities::raw_hex::RawAddress>)> = domain::Entity::find()
        .select_only()
        .column(domain::Column::Id)
        .column(domain::Column::Resolver)
        .filter(domain::Column::Id.is_in(keys.clone()))
        .into_tuple()
        .all(db)
        .await
        .map_err(db_error)?;
    let by_key: HashMap<DomainKey, Address> = rows
        .into_iter()
        .filter_map(|(key, resolver)| {
            let resolver = Address::try_from(resolver?.as_bytes()).ok()?;
            (!resolver.is_zero()).then_some((key, resolver))
        })
        .collect();
    Ok(keys.iter().map(|k| by_key.get(k).copied()).collect())
}

/// Resolves `records` of `name` from the index of `root` (and of a bridged chain).
pub async fn forward(
    db: &DatabaseConnection,
    root: &IndexedChain,
    chains: &ResolutionChains,
    bridges: &[namegraph_bridge::Model],
    name: &ResolvableName,
    records: &[Record],
    trace: &Trace,
) -> Result<IndexAnswer, ResolutionError> {
    if let Some(record) =
        records.iter().find(|r| matches!(r, Record::Abi(_) | Record::Interface(_)))
    {
        return Ok(IndexAnswer::Live(format!("{} is not indexed", record.label())));
    }
    let nodes = name.suffix_nodes();
    let depth = name.depth();
    // The name's records are read under each static resolver of the root chain while the walk
    // runs (one round trip instead of two): the resolver the walk finds is usually one of
    // them, and a key that holds no records costs an index probe.
    let keys: Vec<ResolverRecordKey> = root
        .static_resolvers
        .iter()
        .map(|r| ResolverRecordKey::new(root.chain_id, &r.0.0, &nodes[0].0))
        .collect();
    let (resolvers, prefetched) =
        futures::try_join!(resolvers_of(db, root, &nodes[..depth]), read_rows(db, &keys, records))?;
    let unset = || records.iter().map(|_| Ok(None)).collect::<Vec<_>>();
    let Some((skip, resolver)) = resolvers.iter().enumerate().find_map(|(i, r)| r.map(|r| (i, r)))
    else {
        trace.step("index.walk", || "no resolver on the name or any ancestor".into());
        return Ok(IndexAnswer::Known { resolver: None, outcomes: unset(), bridged_to: None });
    };
    trace.step("index.walk", || format!("{resolver:#x} set on {:?}", name.suffix(skip)));

    // A bridge's resolver on its origin name leads to the bridged chain's registry.
    let origin = DomainKey::new(root.chain_id, &root.registry.0.0, &nodes[skip].0);
    let bridge = bridges
        .iter()
        .find(|b| b.origin_domain == origin && b.resolver.as_bytes() == resolver.as_slice())
        .cloned();
    if let Some(bridge) = bridge {
        if skip == 0 {
            return Ok(IndexAnswer::Live(format!(
                "{:?} is a bridge's origin name: its records are the bridge resolver's",
                name.as_str()
            )));
        }
        let target_chain = u64::try_from(bridge.target_chain).unwrap_or_default();
        let Some(target) = chains.indexed(target_chain) else {
            return Ok(IndexAnswer::Live(format!(
                "bridged chain {target_chain} is not indexed here"
            )));
        };
        let target = IndexedChain {
            registry: Address::from_slice(bridge.target_domain.registry()),
            ..target.clone()
        };
        trace.step("index.bridge", || {
            format!("{:?} leads to chain {target_chain}", name.suffix(skip))
        });
        let bridged = resolvers_of(db, &target, &nodes[..1]).await?;
        let Some(resolver) = bridged[0] else {
            return Ok(IndexAnswer::Live(format!(
                "{:?} has no resolver on chain {target_chain}: the bridge resolver decides",
                name.as_str()
            )));
        };
        if !target.static_resolvers.contains(&resolver) {
            return Ok(IndexAnswer::Live(format!(
                "{resolver:#x} on chain {target_chain} is not a static resolver"
            )));
        }
        let key = ResolverRecordKey::new(target_chain, &resolver.0.0, &nodes[0].0);
        let rows = read_rows(db, std::slice::from_ref(&key), records).await?;
        return Ok(answer(
            &target,
            name,
            &key,
            resolver,
            &rows,
            records,
            trace,
            Some(target_chain),
        ));
    }

    if !root.static_resolvers.contains(&resolver) {
        return Ok(IndexAnswer::Live(format!("{resolver:#x} is not a static resolver")));
    }
    if skip > 0 {
        trace.step("index.walk", || {
            format!("{resolver:#x} is on an ancestor and is not extended: no resolver")
        });
        return Ok(IndexAnswer::Known { resolver: None, outcomes: unset(), bridged_to: None });
    }
    let key = ResolverRecordKey::new(root.chain_id, &resolver.0.0, &nodes[0].0);
    Ok(answer(root, name, &key, resolver, &prefetched, records, trace, None))
}

/// The record rows of some `(chain, resolver, node)` keys, as `records` needs them.
#[derive(Debug, Default)]
struct Rows {
    records: HashMap<ResolverRecordKey, resolver_record::Model>,
    addresses: HashMap<ResolverRecordKey, HashMap<i64, String>>,
    texts: HashMap<ResolverRecordKey, HashMap<String, Option<String>>>,
}

/// Reads the rows `records` needs under `keys`: the record row, the address rows and the
/// asked text rows, at once.
async fn read_rows(
    db: &DatabaseConnection,
    keys: &[ResolverRecordKey],
    records: &[Record],
) -> Result<Rows, ResolutionError> {
    if keys.is_empty() {
        return Ok(Rows::default());
    }
    let wants = |f: fn(&Record) -> bool| records.iter().any(f);
    let text_hashes: Vec<entities::raw_hex::RawHash> = records
        .iter()
        .filter_map(|r| match r {
            Record::Text(key) => {
                Some(entities::raw_hex::RawHash::new(alloy::primitives::keccak256(key).0))
            }
            _ => None,
        })
        .collect();
    // The three reads are independent: run at once, they cost one round trip's latency.
    let row = async {
        if wants(|r| matches!(r, Record::Contenthash | Record::Name | Record::Pubkey)) {
            resolver_record::Entity::find()
                .filter(resolver_record::Column::Id.is_in(keys.to_vec()))
                .all(db)
                .await
        } else {
            Ok(Vec::new())
        }
    };
    let addresses = async {
        if wants(|r| matches!(r, Record::Address(_))) {
            resolver_address::Entity::find()
                .filter(resolver_address::Column::RecordId.is_in(keys.to_vec()))
                .all(db)
                .await
        } else {
            Ok(Vec::new())
        }
    };
    let texts = async {
        if text_hashes.is_empty() {
            return Ok(Vec::new());
        }
        resolver_text::Entity::find()
            .filter(resolver_text::Column::RecordId.is_in(keys.to_vec()))
            .filter(resolver_text::Column::KeyHash.is_in(text_hashes.clone()))
            .all(db)
            .await
    };
    let (row, addresses, texts) = futures::try_join!(row, addresses, texts).map_err(db_error)?;
    let mut rows = Rows::default();
    for record in row {
        rows.records.insert(record.id.clone(), record);
    }
    for address in addresses {
        rows.addresses
            .entry(address.record_id)
            .or_default()
            .insert(address.coin_type, address.address);
    }
    for text in texts {
        rows.texts.entry(text.record_id).or_default().insert(text.key, text.value);
    }
    Ok(rows)
}

/// The answer from the rows of `key`: `resolver`'s records of the name (set on the name
/// itself) on `chain`.
#[allow(clippy::too_many_arguments)]
fn answer(
    chain: &IndexedChain,
    name: &ResolvableName,
    key: &ResolverRecordKey,
    resolver: Address,
    rows: &Rows,
    records: &[Record],
    trace: &Trace,
    bridged_to: Option<u64>,
) -> IndexAnswer {
    let row = rows.records.get(key);
    let no_addresses = HashMap::new();
    let addresses = rows.addresses.get(key).unwrap_or(&no_addresses);
    let no_texts = HashMap::new();
    let texts = rows.texts.get(key).unwrap_or(&no_texts);
    let mut outcomes = Vec::with_capacity(records.len());
    for record in records {
        let value = match record {
            Record::Address(coin) => {
                let Ok(stored) = i64::try_from(*coin) else {
                    return IndexAnswer::Live(format!("coin type {coin} is beyond the index"));
                };
                match addresses.get(&stored) {
                    Some(hex) => address_value(*coin, &decode_hex(hex)),
                    None => None,
                }
            }
            Record::Text(key) => match texts.get(key) {
                Some(Some(value)) => text_value(value),
                Some(None) => {
                    return IndexAnswer::Live(format!(
                        "the value of text {:?} was not readable when indexed",
                        key.chars().take(64).collect::<String>()
                    ));
                }
                None => None,
            },
            Record::Contenthash => row
                .and_then(|r| r.contenthash.as_deref())
                .and_then(|hex| bytes_value(&decode_hex(hex))),
            Record::Name => row.and_then(|r| r.name.as_deref()).and_then(text_value),
            Record::Pubkey => row.and_then(|r| {
                let x: B256 = r.pubkey_x.as_deref()?.parse().ok()?;
                let y: B256 = r.pubkey_y.as_deref()?.parse().ok()?;
                pubkey_value(x, y)
            }),
            // Sent live before any lookup.
            Record::Abi(_) | Record::Interface(_) => None,
        };
        outcomes.push(Ok(value));
    }
    trace.step("index.records", || {
        format!("{} record(s) of {:?} on {resolver:#x}", records.len(), name.as_str())
    });
    let used = ResolverUsed {
        chain_id: chain.chain_id,
        address: format!("{resolver:#x}"),
        found_at: name.as_str().to_owned(),
        extended: Some(false),
    };
    IndexAnswer::Known { resolver: Some(used), outcomes, bridged_to }
}

/// The bytes of stored `0x` hex (the index writes only valid hex).
fn decode_hex(text: &str) -> Vec<u8> {
    hex::decode(text.trim_start_matches("0x")).unwrap_or_default()
}
