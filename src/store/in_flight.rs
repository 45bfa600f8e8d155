//! [`InFlight`]: the rows of the flush being written, readable by key while the writer
//! writes them, without a copy for either side.
//!
//! A flush moves a table's dirty rows into one vector sorted by primary key and shares it
//! with the writer: sorted, because the writer upserts in key order (consecutive upserts then
//! walk the primary key's B-tree from one end to the other and find its pages cached). Before,
//! the in-flight rows stayed in their map and the writer got a sorted copy: a third copy of
//! every row, next to the dirty set being refilled, and about a quarter of the memory a flush
//! held (the `memory` test measures what a flush holds).
//!
//! Rows are found by key through [`SlotIndex`], positions in the vector hashed by key: about
//! five bytes a slot where the map held a key and a row. The handlers ask whether a key is in
//! flight for nearly every key they read, and a binary search over a flush's tens of
//! thousands of hash keys touched a new cache line at each of its ~16 steps: it was a tenth
//! of the pipeline thread's time (BENCHMARKS.md).

use std::{
    borrow::Borrow,
    hash::{BuildHasher, Hash},
    sync::Arc,
};

use foldhash::HashMap;

/// The rows of one table handed to the writer, sorted by primary key.
pub type SharedRows<M> = Arc<Vec<M>>;

/// One table's rows in flight, sorted by the key `key_of` reads off a row.
#[derive(Debug)]
pub struct InFlight<K, M> {
    rows: SharedRows<M>,
    index: SlotIndex,
    key_of: fn(&M) -> &K,
}

impl<K: Ord + Hash, M> InFlight<K, M> {
    /// Nothing in flight.
    pub fn empty(key_of: fn(&M) -> &K) -> Self {
        Self { rows: Arc::new(Vec::new()), index: SlotIndex::default(), key_of }
    }

    /// Moves `dirty` in flight and returns the rows for the writer, sorted by key.
    pub fn begin(&mut self, dirty: HashMap<K, Box<M>>) -> SharedRows<M> {
        debug_assert!(self.rows.is_empty(), "one flush in flight at a time");
        let mut rows: Vec<M> = dirty.into_values().map(|row| *row).collect();
        let key_of = self.key_of;
        rows.sort_unstable_by(|a, b| key_of(a).cmp(key_of(b)));
        self.index.build(rows.iter().map(key_of));
        self.rows = Arc::new(rows);
        self.rows.clone()
    }

    /// Takes the rows out, leaving nothing in flight: for a committed flush, whose keys the
    /// read cache forgets after the next flush has begun.
    pub fn take(&mut self) -> Self {
        std::mem::replace(self, Self::empty(self.key_of))
    }

    /// The row of `key`, if it is in flight.
    pub fn get<Q: Eq + Hash + ?Sized>(&self, key: &Q) -> Option<&M>
    where
        K: Borrow<Q>,
    {
        let key_of = self.key_of;
        self.index.find(key, |i| key_of(&self.rows[i]).borrow() == key).map(|i| &self.rows[i])
    }

    /// Whether `key` is in flight.
    pub fn contains_key<Q: Eq + Hash + ?Sized>(&self, key: &Q) -> bool
    where
        K: Borrow<Q>,
    {
        self.get(key).is_some()
    }

    /// The keys in flight, in key order.
    pub fn keys(&self) -> impl Iterator<Item = &K> {
        self.rows.iter().map(self.key_of)
    }

    /// Whether nothing is in flight.
    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }
}

/// Positions of rows, found by the hash of their key. The table holds positions only, no
/// key: a lookup compares the row at each position whose hash matches.
#[derive(Debug, Default)]
struct SlotIndex {
    positions: hashbrown::HashTable<u32>,
    hasher: foldhash::fast::RandomState,
}

impl SlotIndex {
    /// Indexes the keys at positions `0..`, replacing what was indexed.
    fn build<'a, K: Hash + 'a>(&mut self, keys: impl ExactSizeIterator<Item = &'a K>) {
        let hashes: Vec<u64> = keys.map(|key| self.hasher.hash_one(key)).collect();
        self.positions = hashbrown::HashTable::with_capacity(hashes.len());
        for (position, &hash) in hashes.iter().enumerate() {
            let position = u32::try_from(position).expect("a flush holds fewer than 2^32 rows");
            self.positions.insert_unique(hash, position, |&p| hashes[p as usize]);
        }
    }

    /// The position whose row `is_key` accepts among those hashed like `key`.
    fn find<Q: Hash + ?Sized>(&self, key: &Q, is_key: impl Fn(usize) -> bool) -> Option<usize> {
        let hash = self.hasher.hash_one(key);
        self.positions.find(hash, |&p| is_key(p as usize)).map(|&p| p as usize)
    }
}

#[cfg(test)]
mod tests {
    use foldhash::HashMapExt;

    use super::*;

    #[derive(Debug, Clone, PartialEq)]
    struct Row {
        key: String,
        value: u32,
    }

    #[test]
    fn rows_are_found_by_key_and_handed_over_sorted() {
        let mut in_flight = InFlight::empty(|r: &Row| &r.key);
        assert!(in_flight.get("b").is_none());
        let mut dirty = HashMap::new();
        for (key, value) in [("c", 3), ("a", 1), ("b", 2), ("e", 5)] {
            dirty.insert(key.to_owned(), Box::new(Row { key: key.to_owned(), value }));
        }
        let rows = in_flight.begin(dirty);
        let keys: Vec<&str> = rows.iter().map(|r| r.key.as_str()).collect();
        assert_eq!(keys, ["a", "b", "c", "e"]);
        assert_eq!(in_flight.get("b").map(|r| r.value), Some(2));
        assert_eq!(in_flight.get("e").map(|r| r.value), Some(5));
        assert!(!in_flight.contains_key("d"));
        assert!(!in_flight.contains_key("0"));
        // Taken out while the writer still holds its share: the writer's rows stay whole.
        let taken = in_flight.take();
        assert_eq!(taken.keys().map(String::as_str).collect::<Vec<_>>(), ["a", "b", "c", "e"]);
        assert!(in_flight.is_empty());
        assert!(!in_flight.contains_key("a"));
        assert_eq!(rows.len(), 4);
    }

    #[test]
    fn every_row_of_a_large_flush_is_found_and_no_other_key() {
        let mut in_flight = InFlight::empty(|r: &Row| &r.key);
        let mut dirty = HashMap::new();
        for value in 0..10_000u32 {
            let key = format!("key-{value}");
            dirty.insert(key.clone(), Box::new(Row { key, value }));
        }
        let rows = in_flight.begin(dirty);
        assert!(rows.windows(2).all(|w| w[0].key < w[1].key));
        for value in 0..10_000u32 {
            assert_eq!(
                in_flight.get(format!("key-{value}").as_str()).map(|r| r.value),
                Some(value)
            );
        }
        for value in 10_000..20_000u32 {
            assert!(!in_flight.contains_key(format!("key-{value}").as_str()));
        }
        drop(rows);
        assert_eq!(in_flight.take().keys().count(), 10_000);
        assert!(!in_flight.contains_key("key-1"));
    }
}
