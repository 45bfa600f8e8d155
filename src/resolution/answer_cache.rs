//! [`AnswerCache`]: answers the index gave, kept for the block they were read at.
//!
//! An entry records the indexed block (chain and hash) of every chain its answer read: the
//! root chain, and the bridged chain when a bridge was crossed. It is served only while each of
//! those chains is still indexed at that block, so a cached answer is exactly the index's
//! answer at the block it names; a checkpoint that moves (a new block, a reorg) retires every
//! entry read before it. Live answers are never cached: the chain may change them between
//! blocks the index has not seen. Bounded by bytes, since names may be long.

use std::sync::Arc;

use graphql::resolution::{BlockRef, ResolverUsed};

use super::records::{Outcome, Record};

/// What an entry is found by.
#[derive(Clone, Debug, Hash, PartialEq, Eq)]
struct Key {
    name: String,
    records: Vec<Record>,
}

/// A cached answer.
#[derive(Debug)]
pub struct Entry {
    /// The resolver used.
    pub resolver: Option<ResolverUsed>,
    /// The records' outcomes, in the order asked.
    pub outcomes: Vec<Outcome>,
    /// The root chain's block the answer is for.
    pub block: BlockRef,
    /// Every chain the answer read, with the hash of the block it was read at.
    pub read_at: Vec<(u64, String)>,
}

/// The cache.
#[derive(Debug)]
pub struct AnswerCache {
    entries: moka::sync::Cache<Key, Arc<Entry>>,
}

/// Bytes an entry is weighed at beyond its name and keys: the answer's rows.
const ENTRY_OVERHEAD: usize = 512;

impl AnswerCache {
    /// A cache holding about `max_bytes` of answers.
    pub fn new(max_bytes: u64) -> Self {
        let entries = moka::sync::Cache::builder()
            .max_capacity(max_bytes)
            .weigher(|key: &Key, _: &Arc<Entry>| {
                let keys: usize = key
                    .records
                    .iter()
                    .map(|r| match r {
                        Record::Text(k) => k.len() + 32,
                        _ => 32,
                    })
                    .sum();
                u32::try_from(key.name.len() + keys + ENTRY_OVERHEAD).unwrap_or(u32::MAX)
            })
            .build();
        Self { entries }
    }

    /// The entry for `records` of `name`, if one is kept (current or not: the caller checks
    /// [`Entry::read_at`]).
    pub fn get(&self, name: &str, records: &[Record]) -> Option<Arc<Entry>> {
        self.entries.get(&Key { name: name.to_owned(), records: records.to_vec() })
    }

    /// Keeps `entry` for `records` of `name`.
    pub fn insert(&self, name: &str, records: &[Record], entry: Entry) {
        self.entries
            .insert(Key { name: name.to_owned(), records: records.to_vec() }, Arc::new(entry));
    }
}
