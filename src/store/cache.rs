//! [`EntityCache`]: a bounded moka cache of rows by primary key, with hit and miss counters.
//!
//! It caches absence too (`None`): only the chain's own handler writes these rows, so a row
//! known to be missing stays missing until the handler itself creates it.

use moka::sync::Cache;

/// Bounded cache of one table's rows.
#[derive(Debug)]
pub struct EntityCache<V: Clone + Send + Sync + 'static> {
    inner: Cache<String, Option<V>>,
    table: &'static str,
}

impl<V: Clone + Send + Sync + 'static> EntityCache<V> {
    /// A cache of at most `capacity` rows of `table`.
    pub fn new(table: &'static str, capacity: u64) -> Self {
        Self { inner: Cache::new(capacity), table }
    }

    /// `Some(row or known absence)` on a hit, `None` on a miss.
    pub fn get(&self, key: &str) -> Option<Option<V>> {
        let hit = self.inner.get(key);
        let metric =
            if hit.is_some() { "ensemble_cache_hits_total" } else { "ensemble_cache_misses_total" };
        metrics::counter!(metric, "entity" => self.table).increment(1);
        hit
    }

    /// Counts a lookup served from memory in front of the cache (rows pinned for a batch).
    pub fn record_hit(&self) {
        metrics::counter!("ensemble_cache_hits_total", "entity" => self.table).increment(1);
    }

    /// The cached row or absence of `key`, if the cache knows it; not counted as a lookup.
    pub fn peek_entry(&self, key: &str) -> Option<Option<V>> {
        self.inner.get(key)
    }

    /// The cached row of `key`, if any; not counted as a lookup.
    pub fn peek(&self, key: &str) -> Option<V> {
        self.inner.get(key).flatten()
    }

    /// Whether a row (not an absence) is cached; not counted as a lookup.
    pub fn holds_row(&self, key: &str) -> bool {
        matches!(self.inner.get(key), Some(Some(_)))
    }

    /// Remembers a row (or its absence).
    pub fn insert(&self, key: String, value: Option<V>) {
        self.inner.insert(key, value);
    }
}
