//! Labels and the heal cascade.
//!
//! A domain's name is materialized when the domain is created, from the labels known then.
//! When a label becomes known later (a controller event, a NameWrapper name), every domain with
//! that label and every descendant is re-rendered. The affected rows are found through the
//! `label_hash` and `parent_seq` indexes, so a heal costs O(affected names), never a scan.
//!
//! Labels are shared by every chain; each chain renames only its own domains. A label this
//! chain makes known goes into the heal log ([`crate::store::heal_log`]) with its flush, and
//! before each batch a chain applies what the other chains and label imports logged
//! ([`apply_logged_heals`]), so a heal reaches every chain whatever the order they run in.

use std::{
    collections::{HashMap, HashSet},
    sync::LazyLock,
};

use alloy::primitives::B256;
use entities::{
    domain::{self, RawHash},
    label,
};

use super::{
    HandlerError,
    name::{encoded_label_hash, is_normalized_label, labelhash},
};
use crate::store::{EntityStore, entity_store::PrefetchKeys};

/// Labels every ENS deployment uses that no event ever spells out (registries create them
/// with `setSubnodeOwner(labelhash)`): top-level and infrastructure labels.
pub const WELL_KNOWN_LABELS: &[&str] =
    &["eth", "reverse", "addr", "resolver", "xyz", "com", "test"];

static WELL_KNOWN: LazyLock<HashMap<B256, &'static str>> =
    LazyLock::new(|| WELL_KNOWN_LABELS.iter().map(|l| (labelhash(l), *l)).collect());

/// The plaintext of a well-known label hash.
pub fn well_known_label(hash: B256) -> Option<&'static str> {
    WELL_KNOWN.get(&hash).copied()
}

/// Makes sure a `labels` row exists for `hash` and returns its interpreted form. With a
/// `literal` that matches the hash, an unknown label heals and its names are re-rendered; a
/// literal that does not match is ignored (it would be a lie about the hash).
pub async fn ensure_label(
    store: &mut EntityStore,
    hash: B256,
    literal: Option<&str>,
) -> Result<String, HandlerError> {
    let key = RawHash::new(hash.0);
    let literal = literal.filter(|l| labelhash(l) == hash);
    let existing = store.label(&key).await?;
    match (existing, literal) {
        (Some(row), None) => Ok(row.interpreted()),
        (Some(row), Some(_)) if row.label.is_some() => Ok(row.interpreted()),
        (Some(_), Some(lit)) => {
            let normalized = is_normalized_label(lit);
            store.put_label(
                label::Model { label_hash: key.clone(), label: Some(lit.to_owned()), normalized },
                false,
            );
            // An unnormalized literal still renders as the hash: nothing to re-render.
            if !normalized {
                return Ok(encoded_label_hash(hash));
            }
            store.log_heal(key);
            cascade(store, hash).await?;
            Ok(lit.to_owned())
        }
        (None, lit) => {
            let from_event = lit.is_some();
            let lit = lit.or_else(|| well_known_label(hash));
            // ENSIP-15 normalization is costly (it was 1% of a backfill's samples): once.
            let normalized = lit.is_some_and(is_normalized_label);
            // Another chain may hold domains with this label that it could not name.
            // (Every chain knows the well-known labels: nothing to tell.)
            if from_event && normalized {
                store.log_heal(key.clone());
            }
            let interpreted = match lit {
                Some(lit) if normalized => lit.to_owned(),
                _ => encoded_label_hash(hash),
            };
            store.put_label(
                label::Model { label_hash: key, label: lit.map(str::to_owned), normalized },
                true,
            );
            Ok(interpreted)
        }
    }
}

/// Applies the heal log past this chain's mark: every label another chain or an import made
/// known is reloaded, and this chain's domains with it are renamed. Returns the labels that
/// renamed something. The chain's own entries are skipped (it renamed its domains when it
/// logged them), and labels no domain of this chain carries cost only the batched lookup of
/// the domains with any of them.
///
/// Everything renamed stays dirty until the caller flushes; a caller bounded by a memory
/// budget applies the log chunk by chunk ([`apply_logged_heal_chunk`]) and flushes between.
pub async fn apply_logged_heals(store: &mut EntityStore) -> Result<usize, HandlerError> {
    let mut renamed = 0;
    loop {
        let (labels, more) = apply_logged_heal_chunk(store).await?;
        renamed += labels;
        if !more {
            return Ok(renamed);
        }
    }
}

/// [`apply_logged_heals`] for the next chunk of the log only (up to
/// [`crate::store::heal_log::READ_CHUNK`] entries). Returns the labels that renamed
/// something, and whether more entries may follow.
pub async fn apply_logged_heal_chunk(
    store: &mut EntityStore,
) -> Result<(usize, bool), HandlerError> {
    let own = i64::try_from(store.chain_id()).unwrap_or(i64::MAX);
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

/// Re-renders every domain labelled with one of `label_hashes` and, where a name changed, its
/// descendants, level by level: the domains with those labels, then the children of those
/// renamed, and so on, each level in a few batched queries (domains, their labels, their
/// children). Returns the domains renamed.
///
/// A child's name is its leaf label's rendering, a dot, and its parent's name; a rendered
/// label never holds a dot (`is_normalized_label`), so the parent's name is what follows the
/// first dot of the child's, except for children of a domain renamed here, which get their
/// parent's new name. No parent is looked up. A domain both labelled with a healed label and
/// child of a renamed domain is renamed at both levels, and the later one holds.
async fn cascade_many(
    store: &mut EntityStore,
    label_hashes: &[RawHash],
) -> Result<usize, HandlerError> {
    let labelled = store.domains_with_labels(label_hashes).await?;
    cascade_from(store, labelled).await
}

/// [`cascade_many`] from the domains labelled with the healed labels, already read.
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

/// The name of a child with `interpreted` label under `parent`.
pub fn child_name(interpreted: &str, parent: Option<&domain::Model>) -> (String, i32) {
    match parent {
        Some(p) => (format!("{interpreted}.{}", p.name), p.depth + 1),
        None => (interpreted.to_owned(), 1),
    }
}

/// Re-renders every domain labelled `label_hash` and, where a name changed, its descendants
/// ([`cascade_many`] for one label).
async fn cascade(store: &mut EntityStore, label_hash: B256) -> Result<(), HandlerError> {
    cascade_many(store, &[RawHash::new(label_hash.0)]).await?;
    Ok(())
}
