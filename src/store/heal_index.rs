//! The store's side of the heal cascade: finding the domains a healed label renames. Rows that
//! exist in the database are found through the `label_hash` and `parent_seq` indexes; rows
//! created since the last commit through `NewRows`, two small in-memory indexes. A domain's
//! label and parent never change after creation, so these indexes never go stale.

use std::hash::Hash;

use entities::{
    domain::{self, DomainKey, RawHash},
    label,
};
use foldhash::{HashMap, HashSet};
use sea_orm::{ColumnTrait, EntityTrait, QueryFilter, Select, sea_query::Expr};

use super::{
    EntityStore, StoreError,
    prefetch::PREFETCH_CHUNK,
    query_indexes::UNKNOWN_LEAF,
    table::{map_bytes, set_bytes},
};

/// Rows no database index can find yet: domains and labels created since the last commit,
/// domains by label hash and by parent (its `seq`).
#[derive(Debug, Default)]
pub(super) struct NewRows {
    by_label: HashMap<RawHash, Vec<DomainKey>>,
    children: HashMap<i64, Vec<DomainKey>>,
    pub(super) domains: HashSet<DomainKey>,
    pub(super) labels: HashSet<RawHash>,
    /// Heap bytes of the keys and lists above.
    heap: usize,
}

impl NewRows {
    pub(super) fn add_domain(&mut self, row: &domain::Model) {
        self.domains.insert(row.id.clone());
        let heap = &mut self.heap;
        let same_label = self.by_label.entry(row.label_hash.clone()).or_insert_with(|| {
            *heap += RawHash::BYTES;
            Vec::new()
        });
        push_key(heap, same_label, &row.id);
        if let Some(parent) = row.parent_seq {
            push_key(heap, self.children.entry(parent).or_default(), &row.id);
        }
    }

    /// Remembers that `label_hash` was stored since the last commit: it labels no stored
    /// domain, so [`EntityStore::domains_with_labels`] does not look for one.
    pub(super) fn add_label(&mut self, label_hash: &RawHash) {
        self.labels.insert(label_hash.clone());
    }

    /// Bytes held, as [`EntityStore::dirty_bytes`] counts them.
    pub(super) fn bytes(&self) -> usize {
        self.heap + map_bytes(&self.by_label) + map_bytes(&self.children) + set_bytes(&self.domains)
    }
}

/// Pushes a copy of `id` onto `ids`, counting what the copy and any growth of the list hold.
fn push_key(heap: &mut usize, ids: &mut Vec<DomainKey>, id: &DomainKey) {
    let capacity = ids.capacity();
    ids.push(id.clone());
    *heap += (ids.capacity() - capacity) * size_of::<DomainKey>();
}

/// The stored domains of chain `chain` (its column value) whose leaf label is one of
/// `label_hashes` and unknown, the only ones a label learned now can rename. Stating that
/// their name begins with the hash ([`UNKNOWN_LEAF`]) lets the partial index that stands in
/// for `domains_label_hash` during a backfill serve the query
/// ([`super::query_indexes::STAND_INS`]).
pub fn labelled_query(chain: i64, label_hashes: &[RawHash]) -> Select<domain::Entity> {
    domain::Entity::find()
        .filter(domain::Column::ChainId.eq(chain))
        .filter(domain::Column::LabelHash.is_in(label_hashes.iter().cloned()))
        .filter(Expr::cust(UNKNOWN_LEAF))
}

impl EntityStore {
    /// Drops this store's read copies of a label another writer made known, so the next read
    /// finds it in the database. Returns whether a copy that is not committed yet says it
    /// is unknown: that one the caller must replace ([`EntityStore::reload_labels`]).
    pub fn forget_label(&mut self, label_hash: &RawHash) -> bool {
        self.tables.labels.batch.remove(label_hash);
        self.tables.labels.cache.invalidate(label_hash);
        let stale = |row: Option<&label::Model>| row.is_some_and(|l| l.label.is_none());
        stale(self.tables.labels.dirty.get(label_hash).map(|row| &**row))
            || stale(self.tables.labels.inflight.get(label_hash))
    }

    /// Current versions of the domains listed in `ids`, in order, skipping unknown ids.
    async fn current(&mut self, ids: Vec<DomainKey>) -> Result<Vec<domain::Model>, StoreError> {
        let mut rows = Vec::with_capacity(ids.len());
        for id in ids {
            if let Some(row) = self.domain(&id).await? {
                rows.push(row);
            }
        }
        Ok(rows)
    }

    /// The current versions of domain rows just read from the database: a version in memory
    /// (changed since, or in flight) is newer; the others are cached.
    fn newest_domains(&mut self, rows: Vec<domain::Model>) -> Vec<domain::Model> {
        rows.into_iter()
            .map(|row| match self.tables.domains.local(&row.id) {
                Some(Some(current)) => current,
                _ => {
                    self.tables.domains.cache.insert(row.id.clone(), Some(row.clone()));
                    row
                }
            })
            .collect()
    }

    /// This chain's domains listed under any of `keys`: stored rows, by the statement `query`
    /// builds for each chunk of `stored` (the keys that can match a stored row), then the rows
    /// created since the last commit that `index` lists under any of `keys`.
    async fn domains_by<V>(
        &mut self,
        query: impl Fn(i64, &[V]) -> Select<domain::Entity>,
        stored: &[V],
        keys: &[V],
        index: fn(&NewRows) -> &HashMap<V, Vec<DomainKey>>,
        op: &'static str,
    ) -> Result<Vec<domain::Model>, StoreError>
    where
        V: Clone + Hash + Eq,
    {
        let mut rows = Vec::new();
        for chunk in stored.chunks(PREFETCH_CHUNK) {
            let chunk_rows = query(self.chain_id.column(), chunk).all(&self.db).await;
            rows.extend(chunk_rows.map_err(StoreError::db(op))?);
        }
        let mut rows = self.newest_domains(rows);
        let seen: HashSet<DomainKey> = rows.iter().map(|r| r.id.clone()).collect();
        let fresh: Vec<DomainKey> = keys
            .iter()
            .flat_map(|k| [&self.new, &self.new_inflight].map(|n| index(n).get(k)))
            .flatten()
            .flatten()
            .filter(|id| !seen.contains(*id))
            .cloned()
            .collect();
        rows.extend(self.current(fresh).await?);
        Ok(rows)
    }

    /// Every domain of this chain whose leaf label is one of `label_hashes` and was unknown
    /// when it was named: the stored ones through [`labelled_query`], and the rows created
    /// since the last commit.
    pub async fn domains_with_labels(
        &mut self,
        label_hashes: &[RawHash],
    ) -> Result<Vec<domain::Model>, StoreError> {
        // A label stored since the last commit labels no stored domain: no query for it.
        let stored: Vec<RawHash> = label_hashes
            .iter()
            .filter(|h| !self.new.labels.contains(*h) && !self.new_inflight.labels.contains(*h))
            .cloned()
            .collect();
        let op = "domains by labels";
        self.domains_by(labelled_query, &stored, label_hashes, |n| &n.by_label, op).await
    }

    /// The children of `parents` (each by number and key), through the children index and
    /// the rows created since the last commit.
    pub async fn children_of(
        &mut self,
        parents: &[(i64, DomainKey)],
    ) -> Result<Vec<domain::Model>, StoreError> {
        // A parent created since the last commit has no stored children: no query for it.
        let stored: Vec<i64> = parents
            .iter()
            .filter(|(_, id)| {
                !self.new.domains.contains(id) && !self.new_inflight.domains.contains(id)
            })
            .map(|(seq, _)| *seq)
            .collect();
        let seqs: Vec<i64> = parents.iter().map(|(seq, _)| *seq).collect();
        let children = |chain: i64, parents: &[i64]| {
            domain::Entity::find()
                .filter(domain::Column::ChainId.eq(chain))
                .filter(domain::Column::ParentSeq.is_in(parents.iter().copied()))
        };
        self.domains_by(children, &stored, &seqs, |n| &n.children, "children of domains").await
    }

    /// Labels as the database holds them now, bypassing this store's copies (another writer
    /// may have made them known since this store read them), one query per chunk; known
    /// labels replace the store's copies. Returns the rows found.
    pub async fn reload_labels(
        &mut self,
        label_hashes: &[RawHash],
    ) -> Result<Vec<label::Model>, StoreError> {
        let mut rows = Vec::new();
        for chunk in label_hashes.chunks(PREFETCH_CHUNK) {
            rows.extend(
                label::Entity::find()
                    .filter(label::Column::LabelHash.is_in(chunk.iter().cloned()))
                    .all(&self.db)
                    .await
                    .map_err(StoreError::db("reload labels"))?,
            );
        }
        for known in rows.iter().filter(|l| l.label.is_some()) {
            self.put_label(known.clone(), false);
        }
        Ok(rows)
    }
}
