//! [`EntityCache`]: a moka cache of rows by primary key, bounded by bytes (each entry weighs
//! its key, its row's [`RowSize`] and moka's own bookkeeping), with hit and miss counters.
//!
//! It caches absence too (`None`): only the chain's own handler writes these rows, so a row
//! known to be missing stays missing until the handler itself creates it.

use std::{borrow::Borrow, hash::Hash};

use entities::{
    domain_key::DomainKey, raw_hex::RawHash, registration_key::RegistrationKey,
    renewal_key::RenewalKey, resolver_record_key::ResolverRecordKey,
};
use moka::sync::Cache;

use super::row_size::RowSize;

/// What moka itself holds per entry besides key and value (the entry's `Arc`, its hash,
/// access-order and write-order list nodes, frequency sketch share). Measured by the
/// `memory` test against the heap (with 160, a full cache held 15% more than its budget).
/// The key is weighed apart, by its inline size.
const ENTRY_OVERHEAD: usize = 232;

/// A primary key the cache can hold: the raw keys of the tables the handlers read. All are
/// held inline (byte arrays), so an entry weighs its key by `size_of` alone.
pub trait CacheKey: Clone + Eq + Hash + Ord + Send + Sync + 'static {}

impl CacheKey for ResolverRecordKey {}
impl CacheKey for DomainKey {}
impl CacheKey for RegistrationKey {}
impl CacheKey for RenewalKey {}
impl CacheKey for RawHash {}

/// Bounded cache of one table's rows, by primary key `K`.
#[derive(Debug)]
pub struct EntityCache<V: Clone + Send + Sync + 'static, K: CacheKey> {
    inner: Cache<K, Option<V>, foldhash::fast::RandomState>,
    table: &'static str,
    /// `ensemble_cache_hits_total` and `_misses_total` of this table, registered once: the
    /// handlers count a lookup for nearly every row they read.
    hits: metrics::Counter,
    misses: metrics::Counter,
}

impl<V: RowSize + Clone + Send + Sync + 'static, K: CacheKey> EntityCache<V, K> {
    /// A cache of `table`'s rows holding at most `bytes` (0 caches nothing).
    pub fn new(table: &'static str, bytes: u64) -> Self {
        let inner = Cache::builder()
            .max_capacity(bytes)
            // Least recently used goes first, and every row offered is admitted. Rows enter
            // once, when their flush commits (`Table::cache_committed`), and moka's default
            // admission (TinyLFU) turns away a new key seen fewer times than the entry it
            // would evict: the rows a flush just wrote, the likeliest to be read next.
            .eviction_policy(moka::policy::EvictionPolicy::lru())
            .weigher(|_: &K, row: &Option<V>| Self::weight(row.as_ref()))
            // Hashed like the store's own maps (see `entity_store`), not with SipHash.
            .build_with_hasher(foldhash::fast::RandomState::default());
        let hits = metrics::counter!("ensemble_cache_hits_total", "entity" => table);
        let misses = metrics::counter!("ensemble_cache_misses_total", "entity" => table);
        Self { inner, table, hits, misses }
    }

    /// What an entry of `row` (or of an absence) weighs against the cache's bytes.
    fn weight(row: Option<&V>) -> u32 {
        // A row's size includes its inline part; an absence is just the `Option`.
        let size = ENTRY_OVERHEAD
            + size_of::<K>()
            + row.map_or(size_of::<Option<V>>(), RowSize::row_bytes);
        u32::try_from(size).unwrap_or(u32::MAX)
    }

    /// Caches `rows`, a committed flush's in key order, in place of any version of their
    /// keys the cache held.
    ///
    /// Least recently used goes first, so of rows weighing more than the cache holds only
    /// the last ones would stay: the others would be evicted by the rows inserted after them,
    /// before anything reads the cache. Those are not inserted at all, only forgotten where
    /// the cache holds an older version of them. A flush writes several times as many rows
    /// as the cache holds at the default budget, and the inserts it would have evicted (with
    /// moka's bookkeeping of each) took about a fifth of the pipeline thread's time
    /// (BENCHMARKS.md).
    pub fn insert_committed(&self, rows: Vec<V>, key_of: fn(&V) -> &K) {
        let capacity = self.inner.policy().max_capacity().unwrap_or(u64::MAX);
        let mut weight = 0u64;
        let kept = rows
            .iter()
            .rev()
            .take_while(|row| {
                weight += u64::from(Self::weight(Some(row)));
                weight <= capacity
            })
            .count();
        let first_kept = rows.len() - kept;
        for row in &rows[..first_kept] {
            self.inner.invalidate(key_of(row));
        }
        for row in rows.into_iter().skip(first_kept) {
            self.inner.insert(key_of(&row).clone(), Some(row));
        }
    }
}

impl<V: Clone + Send + Sync + 'static, K: CacheKey> EntityCache<V, K> {
    /// `Some(row or known absence)` on a hit, `None` on a miss.
    pub fn get<Q>(&self, key: &Q) -> Option<Option<V>>
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        let hit = self.inner.get(key);
        if hit.is_some() { &self.hits } else { &self.misses }.increment(1);
        hit
    }

    /// The table whose rows it caches (the `entity` label of its metrics).
    pub fn table(&self) -> &'static str {
        self.table
    }

    /// Counts a lookup served from memory in front of the cache (rows pinned for a batch).
    pub fn record_hit(&self) {
        self.hits.increment(1);
    }

    /// The cached row or absence of `key`, if the cache knows it; not counted as a lookup.
    pub fn peek_entry<Q>(&self, key: &Q) -> Option<Option<V>>
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        self.inner.get(key)
    }

    /// The cached row of `key`, if any; not counted as a lookup.
    pub fn peek<Q>(&self, key: &Q) -> Option<V>
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        self.inner.get(key).flatten()
    }

    /// Remembers a row (or its absence).
    pub fn insert(&self, key: K, value: Option<V>) {
        self.inner.insert(key, value);
    }

    /// Forgets `key`: the next read asks the database (which another writer changed).
    pub fn invalidate<Q>(&self, key: &Q)
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        self.inner.invalidate(key);
    }

    /// Applies the evictions moka has queued, so the cache holds no more than its budget now
    /// (it does so in the background, a few hundred inserts late, otherwise).
    pub fn settle(&self) {
        self.inner.run_pending_tasks();
    }

    /// Entries held (rows and absences), after [`EntityCache::settle`].
    pub fn len(&self) -> u64 {
        self.inner.entry_count()
    }

    /// Whether the cache holds nothing.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use entities::label;

    use super::*;

    fn row(n: u32, version: &str) -> label::Model {
        let mut hash = [0u8; 32];
        hash[..4].copy_from_slice(&n.to_be_bytes());
        label::Model {
            label_hash: RawHash::new(hash),
            label: Some(format!("{version}-{n:06}")),
            normalized: true,
        }
    }

    fn key_of(row: &label::Model) -> &RawHash {
        &row.label_hash
    }

    fn weight(n: u32, version: &str) -> u64 {
        u64::from(EntityCache::<label::Model, RawHash>::weight(Some(&row(n, version))))
    }

    #[test]
    fn a_committed_flush_larger_than_the_cache_leaves_no_older_version() {
        // Room for about 100 rows.
        let cache = EntityCache::<label::Model, RawHash>::new("labels", weight(0, "new") * 100);
        for n in 0..100 {
            cache.insert(row(n, "old").label_hash, Some(row(n, "old")));
        }
        cache.settle();
        assert_eq!(cache.len(), 100);

        // A flush of 1,000 rows in key order, 100 of them newer versions of the cached ones.
        let rows: Vec<label::Model> = (0..1_000).map(|n| row(n, "new")).collect();
        cache.insert_committed(rows, key_of);
        cache.settle();

        for n in 0..1_000 {
            let cached = cache.peek_entry(&row(n, "new").label_hash);
            assert!(cached.is_none() || cached == Some(Some(row(n, "new"))), "row {n}: {cached:?}");
        }
        // The cache holds the flush's last rows, as many as fit.
        assert_eq!(cache.len(), 100);
        for n in 900..1_000 {
            assert_eq!(cache.peek(&row(n, "new").label_hash), Some(row(n, "new")), "row {n}");
        }
    }

    #[test]
    fn a_row_left_out_of_the_cache_leaves_no_older_version_behind() {
        // Room for ten small rows; the flush ends with two rows of six each, so only its
        // last row is inserted, and the three older versions cached would still fit beside it.
        let cache = EntityCache::<label::Model, RawHash>::new("labels", weight(0, "new") * 10);
        for n in 0..3 {
            cache.insert(row(n, "old").label_hash, Some(row(n, "old")));
        }
        let large = |n: u32| {
            let mut row = row(n, "new");
            while u64::from(EntityCache::<label::Model, RawHash>::weight(Some(&row)))
                < weight(0, "new") * 6
            {
                row.label.as_mut().expect("a label").push('x');
            }
            row
        };
        let rows = vec![row(0, "new"), row(1, "new"), row(2, "new"), large(3), large(4)];
        cache.insert_committed(rows, key_of);
        cache.settle();
        for n in 0..4 {
            assert_eq!(cache.peek_entry(&row(n, "new").label_hash), None, "row {n}");
        }
        assert_eq!(cache.peek(&row(4, "new").label_hash), Some(large(4)));
        assert_eq!(cache.len(), 1);
    }

    #[test]
    fn a_committed_flush_within_the_cache_is_cached_whole() {
        let cache = EntityCache::<label::Model, RawHash>::new("labels", weight(0, "new") * 100);
        cache.insert(row(3, "old").label_hash, Some(row(3, "old")));
        cache.insert(row(500, "old").label_hash, None);
        let rows: Vec<label::Model> = (0..50).map(|n| row(n, "new")).collect();
        cache.insert_committed(rows, key_of);
        cache.settle();
        for n in 0..50 {
            assert_eq!(cache.peek(&row(n, "new").label_hash), Some(row(n, "new")), "row {n}");
        }
        // A key the flush did not write keeps what the cache knew of it.
        assert_eq!(cache.peek_entry(&row(500, "old").label_hash), Some(None));
        assert_eq!(cache.len(), 51);
    }

    #[test]
    fn a_cache_of_no_bytes_keeps_no_committed_row() {
        let cache = EntityCache::<label::Model, RawHash>::new("labels", 0);
        cache.insert_committed((0..10).map(|n| row(n, "new")).collect(), key_of);
        cache.settle();
        assert!(cache.is_empty());
    }
}
