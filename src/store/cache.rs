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
            // Least recently used goes first, and every row offered is admitted. A row enters
            // once, when a batch has read it from the database and left it unchanged
            // (`Table::end_batch`). Moka's default admission (TinyLFU) turns away a new key
            // seen fewer times than the entry it would evict: a key offered once, as each is
            // here, would mostly be turned away.
            .eviction_policy(moka::policy::EvictionPolicy::lru())
            .weigher(|_: &K, row: &Option<V>| {
                // A row's size includes its inline part; an absence is just the `Option`.
                let size = ENTRY_OVERHEAD
                    + size_of::<K>()
                    + row.as_ref().map_or(size_of::<Option<V>>(), RowSize::row_bytes);
                u32::try_from(size).unwrap_or(u32::MAX)
            })
            // Hashed like the store's own maps (see `entity_store`), not with SipHash.
            .build_with_hasher(foldhash::fast::RandomState::default());
        let hits = metrics::counter!("ensemble_cache_hits_total", "entity" => table);
        let misses = metrics::counter!("ensemble_cache_misses_total", "entity" => table);
        Self { inner, table, hits, misses }
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
