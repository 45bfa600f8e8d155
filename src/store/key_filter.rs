//! [`KeyFilter`]: the keys one table holds for the store's chain, as a Bloom filter, so that
//! a key the chain never stored is known absent without a query.
//!
//! In a backfill many of the keys a batch reads are new: the node a `NewOwner` creates, the
//! record a resolver's first event for a node opens (at 5M events, about 40% of the keys the
//! prefetch asked the database for). Each was an index probe that found nothing before its
//! handler created it. Domains and resolver records are written by their chain's store alone
//! (their keys begin with the chain id), so the store can know every key of its chain that
//! exists: those stored when it first reads (one scan of the chain's key range,
//! [`KeyFilter::scan`]) and those it flushes after. A key the filter does not hold is not
//! stored. A key it holds is read as before: so is about one absent key in a hundred, at ten
//! bits a key.
//!
//! Its bits are a fixed share of the memory budget
//! ([`super::memory_budget::MemoryBudget`]): past the keys it was sized for it answers "maybe
//! stored" more often, never wrongly. Rows deleted (a reorg undoing their creation) leave
//! their keys behind, which costs the same. A reorg's rollback is written beside the store,
//! so the pipeline that follows starts with a new one.

use std::hash::{BuildHasher, Hash};

use entities::{
    contract_node_key::{ADDRESS_BYTES, NODE_BYTES},
    domain::{self, DomainKey},
    resolver_record::{self, ResolverRecordKey},
};
use futures::TryStreamExt;
use sea_orm::{
    ColumnTrait, DatabaseConnection, EntityTrait, QueryFilter, QuerySelect, TryGetableMany,
};

use super::{EntityStore, StoreError, table::Table, tables::WriteBehind};
use crate::ChainId;

/// Bits a block holds: one cache line, so a lookup reads one line of memory.
const BLOCK_WORDS: usize = 8;

/// Odd multipliers, one per word of a block: each maps the key's hash to the bit it sets in
/// its word, so a key sets one bit in every word of its block.
const SALTS: [u32; BLOCK_WORDS] = [
    0x9e37_79b1,
    0x85eb_ca77,
    0xc2b2_ae3d,
    0x27d4_eb2f,
    0x1656_67b1,
    0xd3a2_646d,
    0xfd70_46c5,
    0xb55a_4f09,
];

/// A blocked Bloom filter of keys: each key sets eight bits, all in one block of 512.
#[derive(Debug)]
pub struct KeyFilter {
    blocks: Box<[[u64; BLOCK_WORDS]]>,
    hasher: foldhash::fast::RandomState,
    /// Keys added, repeats included.
    added: u64,
}

impl KeyFilter {
    /// A filter of about `bytes` (at least one block); at ten bits a key it holds
    /// `bytes * 8 / 10` keys at a false-positive rate near 1%.
    pub fn with_bytes(bytes: u64) -> Self {
        let blocks = usize::try_from(bytes / (BLOCK_WORDS as u64 * 8))
            .unwrap_or(usize::MAX)
            .clamp(1, u32::MAX as usize);
        Self {
            blocks: vec![[0; BLOCK_WORDS]; blocks].into_boxed_slice(),
            hasher: foldhash::fast::RandomState::default(),
            added: 0,
        }
    }

    /// Bytes its bits take.
    pub fn bytes(&self) -> usize {
        size_of_val(&*self.blocks)
    }

    /// Keys added so far (a key added twice counts twice).
    pub fn added(&self) -> u64 {
        self.added
    }

    /// The block of `hash` and the bit of each of its words.
    fn probe(&self, hash: u64) -> (usize, [u64; BLOCK_WORDS]) {
        // The high half picks the block (a multiply-shift, not a modulo), the low half the
        // bits, so the two are independent.
        let block = ((hash >> 32) * self.blocks.len() as u64) >> 32;
        let low = hash as u32;
        let bits = SALTS.map(|salt| 1u64 << (low.wrapping_mul(salt) >> 26));
        (block as usize, bits)
    }

    /// Remembers `key` as stored.
    pub fn insert<Q: Hash + ?Sized>(&mut self, key: &Q) {
        let (block, bits) = self.probe(self.hasher.hash_one(key));
        for (word, bit) in self.blocks[block].iter_mut().zip(bits) {
            *word |= bit;
        }
        self.added += 1;
    }

    /// `false` when `key` was never inserted; `true` when it may have been.
    pub fn may_hold<Q: Hash + ?Sized>(&self, key: &Q) -> bool {
        let (block, bits) = self.probe(self.hasher.hash_one(key));
        self.blocks[block].iter().zip(bits).all(|(word, bit)| word & bit != 0)
    }

    /// Adds every key of `E` from `from` (inclusive) to `to` (exclusive; no end when `None`),
    /// read in key order from the primary key's index. Returns how many it read.
    pub async fn scan<E, K>(
        &mut self,
        db: &DatabaseConnection,
        column: E::Column,
        from: K,
        to: Option<K>,
    ) -> Result<u64, StoreError>
    where
        E: EntityTrait,
        K: Hash + Into<sea_orm::Value> + TryGetableMany + Send + Sync + 'static,
    {
        let mut query = E::find().select_only().column(column).filter(column.gte(from));
        if let Some(to) = to {
            query = query.filter(column.lt(to));
        }
        let mut keys =
            query.into_tuple::<K>().stream(db).await.map_err(StoreError::db("scan stored keys"))?;
        let mut read = 0;
        while let Some(key) = keys.try_next().await.map_err(StoreError::db("scan stored keys"))? {
            self.insert(&key);
            read += 1;
        }
        Ok(read)
    }
}

/// A table's filter of stored keys `K`, once known, and the key range it covers.
#[derive(Debug)]
pub enum StoredKeys<K> {
    /// Not scanned yet: every key may be stored.
    Unknown,
    /// Every stored key from `from` to `to` is in `filter`. A key outside the range (another
    /// chain's) may be stored.
    Known {
        /// The keys stored in the range.
        filter: KeyFilter,
        /// The range's first key.
        from: K,
        /// The first key past the range; `None`: no end.
        to: Option<K>,
    },
    /// The table keeps no filter (no share of the budget, or its keys are shared with other
    /// writers).
    Off,
}

impl<K> StoredKeys<K> {
    /// `false` only when `key` is known not to be stored.
    pub fn may_hold<Q>(&self, key: &Q) -> bool
    where
        K: std::borrow::Borrow<Q>,
        Q: Hash + Ord + ?Sized,
    {
        match self {
            Self::Known { filter, from, to } => {
                key < from.borrow()
                    || to.as_ref().is_some_and(|to| key >= to.borrow())
                    || filter.may_hold(key)
            }
            Self::Unknown | Self::Off => true,
        }
    }

    /// Remembers `key` as stored, when keys are being tracked.
    pub fn insert<Q: Hash + ?Sized>(&mut self, key: &Q) {
        if let Self::Known { filter, .. } = self {
            filter.insert(key);
        }
    }

    /// Bytes its bits take.
    pub fn bytes(&self) -> usize {
        match self {
            Self::Known { filter, .. } => filter.bytes(),
            Self::Unknown | Self::Off => 0,
        }
    }
}

/// The first key of `chain` and the first of the next chain, for keys made by `new` (chain,
/// contract, node: domains and resolver records); no end for the last chain id a key holds.
fn chain_range<K>(
    chain: ChainId,
    new: fn(u64, &[u8; ADDRESS_BYTES], &[u8; NODE_BYTES]) -> K,
) -> (K, Option<K>) {
    let first = |chain: u64| new(chain, &[0; ADDRESS_BYTES], &[0; NODE_BYTES]);
    let next = (chain.0 < u64::from(u32::MAX)).then(|| first(chain.0 + 1));
    (first(chain.0), next)
}

/// Builds `table`'s filter of stored keys, when it keeps one and has none yet: every stored
/// key of `E` in `range`, and the keys not committed yet.
async fn know_stored<E>(
    db: &DatabaseConnection,
    table: &mut Table<E::Model, E::Key>,
    column: E::Column,
    (from, to): (E::Key, Option<E::Key>),
) -> Result<(), StoreError>
where
    E: WriteBehind,
    E::Key: Into<sea_orm::Value> + sea_orm::TryGetableMany,
{
    if !matches!(table.stored, StoredKeys::Unknown) {
        return Ok(());
    }
    let started = std::time::Instant::now();
    let mut filter = KeyFilter::with_bytes(table.filter_bytes);
    let stored = filter.scan::<E, E::Key>(db, column, from.clone(), to.clone()).await?;
    for key in table.uncommitted_keys() {
        filter.insert(key);
    }
    tracing::info!(
        target: "store::keys",
        entity = E::NAME,
        stored,
        bytes = filter.bytes(),
        secs = started.elapsed().as_secs_f64(),
        "Read the stored keys"
    );
    table.stored = StoredKeys::Known { filter, from, to };
    Ok(())
}

impl EntityStore {
    /// Builds the filters of stored keys the tables keep, once ([`super::key_filter`]).
    pub(super) async fn know_stored_keys(&mut self) -> Result<(), StoreError> {
        let chain = self.chain_id;
        know_stored::<domain::Entity>(
            &self.db,
            &mut self.tables.domains,
            domain::Column::Id,
            chain_range(chain, DomainKey::new),
        )
        .await?;
        know_stored::<resolver_record::Entity>(
            &self.db,
            &mut self.tables.records,
            resolver_record::Column::Id,
            chain_range(chain, ResolverRecordKey::new),
        )
        .await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_inserted_key_is_held_and_few_others() {
        // 1 MiB for 800k keys: ten bits a key.
        let mut filter = KeyFilter::with_bytes(1 << 20);
        assert_eq!(filter.bytes(), 1 << 20);
        let key = |n: u64| {
            let mut bytes = [0x5a_u8; 56];
            bytes[48..].copy_from_slice(&n.to_be_bytes());
            bytes
        };
        for n in 0..800_000 {
            filter.insert(&key(n));
        }
        assert_eq!(filter.added(), 800_000);
        assert!((0..800_000).all(|n| filter.may_hold(&key(n))));
        let others = 200_000;
        let false_positives =
            (800_000..800_000 + others).filter(|&n| filter.may_hold(&key(n))).count();
        // Near 1% at ten bits a key; 2% leaves room for the blocks' uneven load.
        assert!(false_positives < others as usize / 50, "{false_positives} of {others}");
    }

    #[test]
    fn a_filter_past_its_size_still_holds_every_key() {
        let mut filter = KeyFilter::with_bytes(0);
        assert_eq!(filter.bytes(), 64);
        for n in 0..10_000u32 {
            filter.insert(&n);
        }
        assert!((0..10_000u32).all(|n| filter.may_hold(&n)));
        let mut off = StoredKeys::<u32>::Off;
        off.insert(&1u32);
        assert!(off.may_hold(&2u32) && StoredKeys::<u32>::Unknown.may_hold(&2u32));
    }

    #[test]
    fn keys_outside_the_range_may_be_stored() {
        let mut stored = StoredKeys::Known {
            filter: KeyFilter::with_bytes(1 << 10),
            from: 100u32,
            to: Some(200),
        };
        stored.insert(&150u32);
        assert!(stored.may_hold(&150u32));
        // One key in sixteen blocks: the others in the range are known absent.
        assert!((100..200u32).filter(|&n| n != 150).all(|n| !stored.may_hold(&n)));
        // Another chain's keys: never scanned, so never said absent.
        assert!(stored.may_hold(&99u32) && stored.may_hold(&200u32) && stored.may_hold(&7000u32));
        let open = StoredKeys::Known { filter: KeyFilter::with_bytes(64), from: 100u32, to: None };
        assert!(open.may_hold(&50u32));
    }
}
