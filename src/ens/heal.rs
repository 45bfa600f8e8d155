//! The heal cascade, in one place.
//!
//! A domain's name is materialized when the domain is created, from the labels known then.
//! When a label becomes known later, every domain with that label and every descendant is
//! re-rendered. The affected rows are found through the `label_hash` and `parent_seq` indexes
//! (and, for rows created since the last commit, the store's in-memory
//! [`crate::store::heal_index`]), so a heal costs O(affected names), never a scan.
//!
//! Labels are shared by every chain; each chain renames only its own domains. A heal starts
//! from one of three triggers, each with its entry point here:
//!
//! - **an event** of this chain spells out a label: [`label_healed`] renames this chain's
//!   domains now and logs the label; [`label_learned`] only logs a label no name held yet;
//! - **an import** of a label file: [`import`] stores the labels and logs the ones that render
//!   as themselves;
//! - **the log** of the other chains and the imports ([`crate::store::heal_log`]): before each
//!   batch, and between batches when idle, a chain applies what was logged since its mark
//!   ([`apply_log_chunk`]), so a heal reaches every chain whatever the order they run in.

use std::collections::{HashMap, HashSet};

use alloy::primitives::B256;
use entities::{
    domain::{self, RawHash},
    label,
};
use sea_orm::{ColumnTrait, EntityTrait, QueryFilter};

use super::{HandlerError, name::is_normalized_label};
use crate::store::{
    EntityStore, PrefetchKeys, StoreError, heal_log,
    prefetch::PREFETCH_CHUNK,
    write_txn::WriteTxn,
    writer::{Conflict, write_rows},
};

/// An event of this chain made a stored, unknown label known: this chain's domains with it
/// are renamed now, and the flush logs it for the other chains.
pub async fn label_healed(
    store: &mut EntityStore,
    label_hash: RawHash,
) -> Result<(), HandlerError> {
    store.log_heal(label_hash.clone());
    let labelled = store.domains_with_labels(&[label_hash]).await?;
    cascade_from(store, labelled).await?;
    Ok(())
}

/// An event of this chain spelled out a label no row held yet: no domain of this chain has it,
/// but another chain's may, so the flush logs it.
pub fn label_learned(store: &mut EntityStore, label_hash: RawHash) {
    store.log_heal(label_hash);
}

/// What [`import`] did with one batch of labels.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Imported {
    /// Labels stored that were not known before.
    pub learned: u64,
    /// Of those, the ones some name held as `[hash]` until now (their row existed, unknown).
    pub healed: u64,
    /// Labels that were known already.
    pub known: u64,
}

/// Stores the labels of `batch` not known yet and logs the normalized ones, in `txn`: every
/// chain renames its own domains from the log. A label known already is skipped, so an import
/// can be run again without writing anything twice.
pub async fn import(txn: &WriteTxn, batch: &HashMap<B256, String>) -> Result<Imported, StoreError> {
    let mut hashes: Vec<RawHash> = batch.keys().map(|h| RawHash::new(h.0)).collect();
    // Key order, as the indexer's flushes write: concurrent writers then lock label rows
    // in the same order.
    hashes.sort_unstable();
    let mut stored: HashMap<RawHash, bool> = HashMap::new();
    for chunk in hashes.chunks(PREFETCH_CHUNK) {
        let rows = label::Entity::find()
            .filter(label::Column::LabelHash.is_in(chunk.iter().cloned()))
            .all(txn)
            .await
            .map_err(StoreError::db("labels of an import batch"))?;
        stored.extend(rows.into_iter().map(|row| (row.label_hash, row.label.is_some())));
    }
    let mut imported = Imported::default();
    let mut rows = Vec::new();
    let mut heals = Vec::new();
    for hash in hashes {
        match stored.get(&hash) {
            Some(true) => {
                imported.known += 1;
                continue;
            }
            Some(false) => imported.healed += 1,
            None => {}
        }
        imported.learned += 1;
        let label = batch[&B256::from_slice(hash.as_bytes())].clone();
        let normalized = is_normalized_label(&label);
        if normalized {
            heals.push(hash.clone());
        }
        rows.push(label::Model { label_hash: hash, label: Some(label), normalized });
    }
    write_rows::<label::Entity, _, _>(txn, &rows, Conflict::UPDATE_ALL).await?;
    heal_log::append(txn, &heals, entities::label_heal::NO_CHAIN).await?;
    Ok(imported)
}

/// Applies the heal log past this chain's mark: every label another chain or an import made
/// known is reloaded, and this chain's domains with it are renamed. Returns the labels that
/// renamed something. The chain's own entries are skipped (it renamed its domains when it
/// logged them), and labels no domain of this chain carries cost only the batched lookup of
/// the domains with any of them.
///
/// Everything renamed stays dirty until the caller flushes; a caller bounded by a memory
/// budget applies the log chunk by chunk ([`apply_log_chunk`]) and flushes between.
pub async fn apply_log(store: &mut EntityStore) -> Result<usize, HandlerError> {
    let mut renamed = 0;
    loop {
        let (labels, more) = apply_log_chunk(store).await?;
        renamed += labels;
        if !more {
            return Ok(renamed);
        }
    }
}

/// [`apply_log`] for the next chunk of the log only (up to
/// [`crate::store::heal_log::READ_CHUNK`] entries). Returns the labels that renamed
/// something, and whether more entries may follow.
pub async fn apply_log_chunk(store: &mut EntityStore) -> Result<(usize, bool), HandlerError> {
    let own = store.chain_id().column();
    let heals = store.unapplied_heals().await?;
    let Some(last) = heals.last().map(|h| h.seq) else { return Ok((0, false)) };
    let mut foreign: Vec<RawHash> =
        heals.iter().filter(|h| h.origin_chain != own).map(|h| h.label_hash.clone()).collect();
    foreign.sort_unstable();
    foreign.dedup();
    // This chain's domains with any of those labels; the other labels only go stale.
    let carriers = store.domains_with_labels(&foreign).await?;
    let used: HashSet<RawHash> = carriers.iter().map(|d| d.label_hash.clone()).collect();
    let (used, unused): (Vec<RawHash>, Vec<RawHash>) =
        foreign.into_iter().partition(|h| used.contains(h));
    let mut stale = Vec::new();
    for hash in unused {
        if store.forget_label(&hash) {
            stale.push(hash);
        }
    }
    store.reload_labels(&stale).await?;
    let healed: HashSet<RawHash> = store
        .reload_labels(&used)
        .await?
        .into_iter()
        .filter(|l| l.normalized)
        .map(|l| l.label_hash)
        .collect();
    let renamed = healed.len();
    let first = carriers.into_iter().filter(|d| healed.contains(&d.label_hash)).collect();
    cascade_from(store, first).await?;
    // Its label rows were pinned like a batch's (`EntityStore::prefetch`); the chain's next
    // batch pins its own.
    store.end_batch();
    store.mark_heals_applied(last);
    Ok((renamed, heals.len() as u64 >= crate::store::heal_log::READ_CHUNK))
}

/// Re-renders the domains of `labelled` (read with a healed label) and, where a name changed,
/// their descendants, level by level: the domains with those labels, then the children of
/// those renamed, and so on, each level in a few batched queries (domains, their labels, their
/// children). Returns the domains renamed.
///
/// A child's name is its leaf label's rendering, a dot, and its parent's name; a rendered
/// label never holds a dot (`is_normalized_label`), so the parent's name is what follows the
/// first dot of the child's, except for children of a domain renamed here, which get their
/// parent's new name. No parent is looked up. A domain both labelled with a healed label and
/// child of a renamed domain is renamed at both levels, and the later one holds.
async fn cascade_from(
    store: &mut EntityStore,
    labelled: Vec<domain::Model>,
) -> Result<usize, HandlerError> {
    let mut level: Vec<(domain::Model, Option<String>)> =
        labelled.into_iter().map(|d| (d, None)).collect();
    let mut renamed = 0;
    while !level.is_empty() {
        let labels: Vec<RawHash> = level.iter().map(|(d, _)| d.label_hash.clone()).collect();
        store.prefetch(PrefetchKeys { labels, ..PrefetchKeys::default() }).await?;
        let mut parents: HashMap<i64, (domain::DomainKey, String)> = HashMap::new();
        for (mut row, parent_name) in level {
            let interpreted = match store.label(&row.label_hash).await? {
                Some(l) => l.interpreted(),
                None => continue,
            };
            let name = match (row.parent_seq, parent_name) {
                (None, _) => interpreted,
                (Some(_), Some(parent)) => format!("{interpreted}.{parent}"),
                (Some(_), None) => match row.name.split_once('.') {
                    Some((_, parent)) => format!("{interpreted}.{parent}"),
                    None => {
                        return Err(HandlerError::unknown(
                            "parent name of domain",
                            row.id.to_string(),
                        ));
                    }
                },
            };
            if name == row.name {
                continue;
            }
            parents.insert(row.seq, (row.id.clone(), name.clone()));
            row.name = name;
            store.put_domain(row);
            renamed += 1;
        }
        let keys: Vec<(i64, domain::DomainKey)> =
            parents.iter().map(|(seq, (id, _))| (*seq, id.clone())).collect();
        level = store
            .children_of(&keys)
            .await?
            .into_iter()
            .filter_map(|child| {
                let parent = parents.get(&child.parent_seq?)?.1.clone();
                Some((child, Some(parent)))
            })
            .collect();
    }
    Ok(renamed)
}
