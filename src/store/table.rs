//! `Table`: one cached, write-behind table of the [`super::EntityStore`], in four layers a
//! read looks through in turn: the rows changed since the last flush (dirty), the rows pinned
//! for the batch being applied, the rows of the flush being written (in flight), and the moka
//! cache; below them the database, unless the filter of the keys stored says the key is not
//! there. Also the byte accounting of its containers.

use std::{borrow::Borrow, hash::Hash};

// foldhash rather than std's SipHash: the handler thread hashes every key it reads or writes
// several times over (dirty, in flight, batch, cache), and SipHash was 6% of its profile.
// foldhash is still seeded per process, so crafted keys cannot be aimed at one table layout.
use foldhash::{HashMap, HashMapExt, HashSet, HashSetExt};
use sea_orm::{DatabaseConnection, EntityTrait, PrimaryKeyTrait};

use super::{
    StoreError,
    cache::{CacheKey, EntityCache},
    in_flight::{InFlight, SharedRows},
    key_filter::StoredKeys,
    row_size::RowSize,
};

/// One cached, write-behind table, by primary key `K`.
#[derive(Debug)]
pub(super) struct Table<M: Clone + Send + Sync + 'static, K: CacheKey> {
    pub(super) cache: EntityCache<M, K>,
    /// Rows changed since the last flush began, each in a box of its own: the map's slots
    /// then hold a key and a pointer, and the half-empty slots a map carries after it grows
    /// cost little. With rows in the slots (a domain row is 304 bytes), the free slots of a
    /// map that had just doubled took up to half of the flush's share of the budget, and
    /// flushes were cut that much shorter (BENCHMARKS.md).
    pub(super) dirty: HashMap<K, Box<M>>,
    /// Rows of the flush being written: not committed yet, so the database does not have
    /// them and the cache does not hold them.
    pub(super) inflight: InFlight<K, M>,
    /// Rows (and absences) prefetched for the batch being applied, held here until the batch
    /// ends ([`Table::end_batch`]): a full cache may evict a row before the batch reads it,
    /// and when moka still admitted keys by frequency (TinyLFU), at 5M events that turned 40%
    /// of the prefetched reads back into single queries (BENCHMARKS.md).
    pub(super) batch: HashMap<K, Option<M>>,
    /// Keys of `batch` read from the database (the others were pinned from the cache). At the
    /// batch's end those the batch did not change go into the cache; a changed one does not
    /// (its flush writes it, [`Table::forget_committed`]). Caching every row as it was read
    /// cost a moka insert for rows about to be replaced: those inserts were an eighth of the
    /// pipeline thread's time (BENCHMARKS.md).
    pub(super) loaded: Vec<K>,
    /// Keys of `dirty` the store created since the last flush began ([`Table::create`]): no
    /// version of them is stored, so the flush inserts them without asking the database.
    pub(super) created: HashSet<K>,
    /// The keys of the chain's stored rows, when the table keeps them ([`StoredKeys`]): a key
    /// it knows absent is pinned as absent without a query. Every key a flush writes is added
    /// when the flush begins; until then the key is dirty, and dirty rows are looked at first.
    pub(super) stored: StoredKeys<K>,
    /// Bytes of the filter [`Table::stored`] is built with (0: the table keeps none).
    pub(super) filter_bytes: u64,
    key_of: fn(&M) -> &K,
}

impl<M: RowSize + Clone + Send + Sync + 'static, K: CacheKey> Table<M, K> {
    /// A table whose read cache holds `bytes` and whose filter of stored keys takes
    /// `filter_bytes` (none when 0).
    pub(super) fn new(
        name: &'static str,
        bytes: u64,
        filter_bytes: u64,
        key_of: fn(&M) -> &K,
    ) -> Self {
        Self {
            cache: EntityCache::new(name, bytes),
            dirty: HashMap::new(),
            inflight: InFlight::empty(key_of),
            batch: HashMap::new(),
            loaded: Vec::new(),
            created: HashSet::new(),
            stored: if filter_bytes > 0 { StoredKeys::Unknown } else { StoredKeys::Off },
            filter_bytes,
            key_of,
        }
    }
}

impl<M: Clone + Send + Sync + 'static, K: CacheKey> Table<M, K> {
    /// Whether the newest version of `key` is in memory and not committed.
    pub(super) fn uncommitted<Q: Hash + Eq + ?Sized>(&self, key: &Q) -> bool
    where
        K: Borrow<Q>,
    {
        self.dirty.contains_key(key) || self.inflight.contains_key(key)
    }

    /// Dirty, in-flight or cached row; `None` when the database must be asked.
    ///
    /// Rows pinned for the batch are looked at before the flush in flight: the two never
    /// share a key. The prefetch pins only keys that are neither dirty nor in flight, and a
    /// flush begins only between batches, after the pins are dropped.
    pub(super) fn local<Q: Hash + Eq + ?Sized>(&self, key: &Q) -> Option<Option<M>>
    where
        K: Borrow<Q>,
    {
        if let Some(row) = self.dirty.get(key) {
            return Some(Some(M::clone(row)));
        }
        if let Some(row) = self.batch.get(key) {
            self.cache.record_hit();
            return Some(row.clone());
        }
        if let Some(row) = self.inflight.get(key) {
            return Some(Some(row.clone()));
        }
        self.cache.get(key)
    }

    /// The newest version of `key` held outside the cache (dirty, pinned for the batch or in
    /// flight), borrowed.
    pub(super) fn newest_ref<Q: Hash + Eq + ?Sized>(&self, key: &Q) -> Option<&M>
    where
        K: Borrow<Q>,
    {
        self.dirty
            .get(key)
            .map(|row| &**row)
            .or_else(|| self.batch.get(key).and_then(Option::as_ref))
            .or_else(|| self.inflight.get(key))
    }

    /// The newest in-memory version of `key`, if any; not counted as a cache lookup.
    pub(super) fn peek<Q: Hash + Eq + ?Sized>(&self, key: &Q) -> Option<M>
    where
        K: Borrow<Q>,
    {
        if let Some(row) = self.dirty.get(key) {
            return Some(M::clone(row));
        }
        if let Some(known) = self.batch.get(key) {
            return known.clone();
        }
        match self.inflight.get(key) {
            Some(row) => Some(row.clone()),
            None => self.cache.peek(key),
        }
    }

    /// Pins `row` (or its absence), just read from the database, for the batch.
    pub(super) fn pin_loaded(&mut self, key: K, row: Option<M>) {
        self.batch.insert(key.clone(), row);
        self.loaded.push(key);
    }

    /// Counts `keys` lookups the filter of stored keys answered: absent, without a query.
    pub(super) fn count_known_absent(&self, keys: u64) {
        metrics::counter!("ensemble_key_filter_absent_total", "entity" => self.cache.table())
            .increment(keys);
    }

    /// Forgets the rows pinned for the batch just applied, caching those it read from the
    /// database and left unchanged. The pins are dropped before a flush begins, so a key the
    /// batch changed is still dirty here.
    pub(super) fn end_batch(&mut self) {
        for key in self.loaded.drain(..) {
            if self.dirty.contains_key(&key) {
                continue;
            }
            if let Some(row) = self.batch.remove(&key) {
                self.cache.insert(key, row);
            }
        }
        self.batch.clear();
    }

    /// Moves the dirty rows in flight and returns them for the writer in key order. The keys
    /// are hashes, so in the map's order every upsert lands on another page of the primary
    /// key's B-tree; in key order consecutive upserts walk it from one end to the other and
    /// find their pages still cached.
    ///
    /// Beside each row, whether [`Table::create`] created it since the last flush began.
    pub(super) fn begin_flush(&mut self) -> (SharedRows<M>, Vec<bool>) {
        let rows = self.inflight.begin(std::mem::take(&mut self.dirty));
        for row in rows.iter() {
            self.stored.insert((self.key_of)(row));
        }
        let created = std::mem::take(&mut self.created);
        let flags = rows.iter().map(|row| created.contains((self.key_of)(row))).collect();
        (rows, flags)
    }

    /// The committed flush's rows, out of flight: the caller hands them to
    /// [`Table::forget_committed`] before the table is read again.
    pub(super) fn take_committed(&mut self) -> InFlight<K, M> {
        self.inflight.take()
    }

    /// The flush in flight committed: its rows are the database's now. The read cache forgets
    /// whatever it held for their keys (an older version, or an absence), so the next read of
    /// one that is neither dirty nor in flight asks the database; the rows themselves are
    /// dropped, not cached.
    ///
    /// Caching them cost more than it spared. On SQLite a flush holds more rows than the
    /// read cache (up to three eighths of the budget against an eighth), so most of them
    /// evicted each other as they went in, and they spared 3.5% of the prefetch's reads; on
    /// PostgreSQL, whose cache holds a flush, they spared 23%. Inserting them took 5–9 s of
    /// the handler's thread at 5M events (the handover between flushes took 7.7–12.6 s with
    /// them, 2.8–3.9 s without). Without them the backfill ran 4.0% (SQLite) and 3.4%
    /// (PostgreSQL) faster on average, within the machine's drift; on PostgreSQL with 7–12 s
    /// less CPU and a peak about 100 MB lower (BENCHMARKS.md, the committed-rows runs).
    pub(super) fn forget_committed(&mut self, committed: InFlight<K, M>) {
        for key in committed.keys() {
            self.cache.invalidate(key);
        }
    }

    /// Keys of the rows not committed yet (dirty and in flight): a filter of the stored keys
    /// scanned now adds them, since the database may not hold them yet.
    pub(super) fn uncommitted_keys(&self) -> impl Iterator<Item = &K> {
        self.dirty.keys().chain(self.inflight.keys())
    }

    /// Stores `row`, which the caller has just looked for and found nowhere, as
    /// [`Table::put`] does, and remembers that it is new.
    pub(super) fn create(&mut self, key: K, row: M, heap: &mut usize)
    where
        M: RowSize,
    {
        self.created.insert(key.clone());
        self.put(key, row, heap);
    }

    /// Stores `row` as dirty and keeps `heap`, the dirty set's heap bytes, up to date: a new
    /// key adds its boxed row and the row's heap (the key is inline in the map's slot), a
    /// replaced row the difference of the heaps. The map's own slots are counted from its
    /// capacity ([`map_bytes`]).
    pub(super) fn put(&mut self, key: K, row: M, heap: &mut usize)
    where
        M: RowSize,
    {
        let row_part = row.heap_bytes();
        match self.dirty.get_mut(&key) {
            Some(old) => {
                *heap = (*heap + row_part).saturating_sub(old.heap_bytes());
                **old = row;
            }
            None => {
                *heap += size_of::<M>() + row_part;
                self.dirty.insert(key, Box::new(row));
            }
        }
    }
}

/// Bytes a hash map's slots take: hashbrown keeps a control byte per slot and at least one
/// slot in eight free, beyond what [`HashMap::capacity`] reports.
pub(super) fn map_bytes<K, V, S>(map: &std::collections::HashMap<K, V, S>) -> usize {
    map.capacity() * (size_of::<(K, V)>() + 1) * 8 / 7
}

pub(super) fn set_bytes<K, S>(set: &std::collections::HashSet<K, S>) -> usize {
    set.capacity() * (size_of::<K>() + 1) * 8 / 7
}

pub(super) fn vec_bytes<T>(vec: &Vec<T>) -> usize {
    vec.capacity() * size_of::<T>()
}

/// Reads one row by primary key through `table`'s dirty set and cache, then the database.
pub(super) async fn load<E, K, Q>(
    db: &DatabaseConnection,
    table: &Table<E::Model, K>,
    key: &Q,
    op: &'static str,
) -> Result<Option<E::Model>, StoreError>
where
    E: EntityTrait,
    E::Model: Clone + Send + Sync + 'static,
    K: CacheKey + Borrow<Q>,
    Q: Hash + Ord + ToOwned<Owned = K> + ?Sized,
    <E::PrimaryKey as PrimaryKeyTrait>::ValueType: From<K>,
{
    if let Some(hit) = table.local(key) {
        return Ok(hit);
    }
    if !table.stored.may_hold(key) {
        table.count_known_absent(1);
        return Ok(None);
    }
    let row = E::find_by_id(key.to_owned()).one(db).await.map_err(StoreError::db(op))?;
    table.cache.insert(key.to_owned(), row.clone());
    Ok(row)
}
