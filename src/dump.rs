//! A deterministic text dump of the indexed state: every row of every entity table, sorted by
//! primary key, one JSON object per line. Two databases that index the same chain to the same
//! block produce byte-identical dumps, whatever the engine and however often the indexer was
//! interrupted. Checkpoint times and the RPC cache are left out: they describe the run, not
//! the chain. So are labels no domain carries and the heal log: a label is knowledge about a
//! hash that an import or an orphaned block may leave without any name using it, and what
//! the namegraph shows of labels is in the names and the labels of its domains.

use std::collections::HashMap;

use alloy::hex::encode_prefixed as hex;
use entities::{
    checkpoint, contract, domain, event, event_block, event_selector, event_transaction, label,
    packed_words::SubjectWords, registration, renewal, resolver_address, resolver_record,
    resolver_text,
};
use sea_orm::{DatabaseConnection, EntityTrait, QueryOrder};
use serde_json::json;

use crate::store::StoreError;

/// Dumps the database.
pub async fn dump(db: &DatabaseConnection) -> Result<String, StoreError> {
    let mut out = String::new();
    let err = StoreError::db;
    let mut line = |table: &str, row: serde_json::Value| {
        out.push_str(&json!({ "table": table, "row": row }).to_string());
        out.push('\n');
    };
    // Each domain's words and parent by number: events store the words of their domain as
    // references to it, and the dump shows them as the log held them.
    let mut subjects: HashMap<i64, (SubjectWords, Option<i64>)> = HashMap::new();
    let mut carried = std::collections::HashSet::new();
    for d in domain::Entity::find()
        .order_by_asc(domain::Column::Id)
        .all(db)
        .await
        .map_err(err("dump"))?
    {
        subjects.insert(d.seq, (d.subject_words(None), d.parent_seq));
        carried.insert(d.label_hash.clone());
        line(
            "domains",
            json!([
                d.id,
                d.chain_id,
                d.registry_hex(),
                d.node_hex(),
                d.label_hash,
                d.parent_seq,
                d.owner,
                d.registry_owner,
                d.resolver,
                d.ttl,
                d.name,
                d.depth,
                d.migrated,
                d.registration_id(),
                d.registration_count,
                d.registration_start,
                d.registration_expiry,
                d.created_block,
                d.created_at,
                d.seq,
                d.link,
                d.token_owner,
                d.wrapped_owner
            ]),
        );
    }
    for l in label::Entity::find()
        .order_by_asc(label::Column::LabelHash)
        .all(db)
        .await
        .map_err(err("dump"))?
        .into_iter()
        .filter(|l| carried.contains(&l.label_hash))
    {
        line("labels", json!([l.label_hash, l.label, l.interpreted()]));
    }
    for r in registration::Entity::find()
        .order_by_asc(registration::Column::Id)
        .all(db)
        .await
        .map_err(err("dump"))?
    {
        line(
            "registrations",
            json!([
                r.id,
                r.domain_id(),
                r.index(),
                r.kind,
                r.registrar_chain_id,
                r.registrar,
                r.registrant,
                r.start,
                r.expiry,
                r.grace_period,
                r.base_cost,
                r.premium,
                r.referrer,
                r.fuses,
                r.wrapped,
                r.renewal_count,
                r.block_number
            ]),
        );
    }
    for r in renewal::Entity::find()
        .order_by_asc(renewal::Column::Id)
        .all(db)
        .await
        .map_err(err("dump"))?
    {
        line(
            "renewals",
            json!([
                r.id,
                r.registration_id(),
                r.index(),
                r.duration,
                r.expiry,
                r.base_cost,
                r.premium,
                r.referrer,
                r.block_number,
                r.timestamp
            ]),
        );
    }
    for r in resolver_record::Entity::find()
        .order_by_asc(resolver_record::Column::Id)
        .all(db)
        .await
        .map_err(err("dump"))?
    {
        line(
            "resolver_records",
            json!([
                r.id,
                r.chain_id(),
                r.resolver(),
                r.node(),
                r.name,
                r.contenthash,
                r.pubkey_x,
                r.pubkey_y,
                r.version
            ]),
        );
    }
    for a in resolver_address::Entity::find()
        .order_by_asc(resolver_address::Column::RecordId)
        .order_by_asc(resolver_address::Column::CoinType)
        .all(db)
        .await
        .map_err(err("dump"))?
    {
        line("resolver_addresses", json!([a.record_id, a.coin_type, a.address]));
    }
    for t in resolver_text::Entity::find()
        .order_by_asc(resolver_text::Column::RecordId)
        .order_by_asc(resolver_text::Column::KeyHash)
        .all(db)
        .await
        .map_err(err("dump"))?
    {
        line("resolver_texts", json!([t.record_id, t.key_hash, t.key, t.value]));
    }
    // Events are stored compactly (bytes, a selector code, block and transaction facts in their
    // own tables); the dump shows each event whole, in hex, so it reads the same whatever the
    // storage layout.
    let blocks: HashMap<(i64, i64), Vec<u8>> = event_block::Entity::find()
        .all(db)
        .await
        .map_err(err("dump"))?
        .into_iter()
        .map(|b| ((b.chain_id, b.block_number), b.hash))
        .collect();
    let transactions: HashMap<(i64, i64, i32), event_transaction::Model> =
        event_transaction::Entity::find()
            .all(db)
            .await
            .map_err(err("dump"))?
            .into_iter()
            .map(|t| ((t.chain_id, t.block_number, t.tx_index), t))
            .collect();
    // Events show their contract's address: codes depend on the order chains were indexed
    // in, addresses do not.
    let contracts: HashMap<(i64, i32), Vec<u8>> = contract::Entity::find()
        .all(db)
        .await
        .map_err(err("dump"))?
        .into_iter()
        .map(|c| ((c.chain_id, c.code), c.address))
        .collect();
    for e in event::Entity::find()
        .order_by_asc(event::Column::ChainId)
        .order_by_asc(event::Column::BlockNumber)
        .order_by_asc(event::Column::LogIndex)
        .order_by_asc(event::Column::Seq)
        .all(db)
        .await
        .map_err(err("dump"))?
    {
        let tx = transactions.get(&(e.chain_id, e.block_number, e.tx_index));
        let malformed = |source| StoreError::MalformedEvent {
            chain_id: e.chain_id,
            block_number: e.block_number,
            log_index: e.log_index,
            source,
        };
        let subject = e.domain_seq.and_then(|seq| subjects.get(&seq)).map(|(words, parent)| {
            let parent_node = parent.and_then(|p| subjects.get(&p)).map(|(p, _)| p.node);
            SubjectWords { parent_node, ..words.clone() }
        });
        let topics = e.topics.unpack_with(subject.as_ref()).map_err(malformed)?;
        let data = e.data.unpack_with(subject.as_ref()).map_err(malformed)?;
        line(
            "events",
            json!({
                "chain_id": e.chain_id,
                "block_number": e.block_number,
                "log_index": e.log_index,
                "seq": e.seq,
                "timestamp": e.timestamp,
                "block_hash": blocks.get(&(e.chain_id, e.block_number)).map(hex),
                "tx_hash": tx.map(|t| hex(&t.hash)),
                "tx_index": e.tx_index,
                "tx_from": tx.map(|t| hex(&t.tx_from)),
                "tx_to": tx.and_then(|t| t.to_address.as_ref()).map(hex),
                "address": contracts.get(&(e.chain_id, e.contract)).map(hex),
                "selector": event_selector::selector(e.selector).map(hex),
                "topics": topics.chunks(32).map(hex).collect::<Vec<_>>().join(","),
                "data": hex(&data),
                "domain_seq": e.domain_seq,
            }),
        );
    }
    for c in checkpoint::Entity::find()
        .order_by_asc(checkpoint::Column::ChainId)
        .all(db)
        .await
        .map_err(err("dump"))?
    {
        line("checkpoints", json!([c.chain_id, c.block_number, c.block_hash]));
    }
    Ok(out)
}
