//! [`EntityCache`]: a moka cache of rows by primary key, bounded by bytes (each entry weighs
//! its key, its row's [`RowSize`] and moka's own bookkeeping), with hit and miss counters.
//!
//! It caches absence too (`None`): only the chain's own handler writes these rows, so a row
//! known to be missing stays missing until the handler itself creates it.

use moka::sync::Cache;

use super::row_size::RowSize;

/// What moka itself holds per entry besides key and value (the entry's `Arc`, its hash,
/// access-order and write-order list nodes, frequency sketch share), measured roughly.
const ENTRY_OVERHEAD: usize = 160;

/// Bounded cache of one table's rows.
#[derive(Debug)]
pub struct EntityCache<V: Clone + Send + Sync + 'static> {
    inner: Cache<String, Option<V>>,
    table: &'static str,
}

impl<V: RowSize + Clone + Send + Sync + 'static> EntityCache<V> {
    /// A cache of `table`'s rows holding at most `bytes` (0 caches nothing).
    pub fn new(table: &'static str, bytes: u64) -> Self {
        let inner = Cache::builder()
            .max_capacity(bytes)
            .weigher(|key: &String, row: &Option<V>| {
                // A row's size includes its inline part; an absence is just the `Option`.
                let size = ENTRY_OVERHEAD
                    + key.len()
                    + row.as_ref().map_or(size_of::<Option<V>>(), RowSize::row_bytes);
                u32::try_from(size).unwrap_or(u32::MAX)
            })
            .build();
        Self { inner, table }
    }
}

impl<V: Clone + Send + Sync + 'static> EntityCache<V> {
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
