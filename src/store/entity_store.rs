//! [`EntityStore`]: what handlers read and write.
//!
//! Reads look at the dirty set, then the rows of the flush in flight, then the moka cache,
//! then the database. Writes go to the dirty set (and the cache). [`EntityStore::begin_flush`]
//! moves the dirty set in flight and hands it to the writer as one transaction with the
//! checkpoint; the handler may apply the next batch while it is written, and
//! [`EntityStore::complete_flush`] drops the in-flight rows once committed. If a write fails,
//! nothing of it was committed; the handler stops and the chain resumes from the previous
//! checkpoint, as after a crash.
//!
//! The heal cascade needs "domains with this label" and "children of this domain". Rows that
//! exist in the database are found through indexes; rows created since the last flush are
//! found through two small in-memory indexes kept here. A domain's label and parent never
//! change after creation, so these indexes never go stale.

use std::{borrow::Borrow, hash::Hash, sync::Arc};

use alloy::primitives::LogData;

use entities::{
    domain::{self, DomainKey, RawHash},
    event, event_block, event_transaction, label,
    packed_words::PackedWords,
    registration::{self, RegistrationKey},
    renewal::{self, RenewalKey},
    resolver_address,
    resolver_record::{self, ResolverRecordKey},
    resolver_text,
};
// foldhash rather than std's SipHash: the handler thread hashes every key it reads or writes
// several times over (dirty, in flight, batch, cache), and SipHash was 6% of its profile.
// foldhash is still seeded per process, so crafted keys cannot be aimed at one table layout.
use foldhash::{HashMap, HashMapExt, HashSet, HashSetExt};
use sea_orm::{ColumnTrait, DatabaseConnection, EntityTrait, PrimaryKeyTrait, QueryFilter};

use super::{
    StoreError,
    cache::{CacheKey, EntityCache},
    contract_codes::ContractCodes,
    domain_seq::DomainSeqs,
    heal_log,
    in_flight::{InFlight, SharedRows},
    journal::JournalWindow,
    memory_budget::MemoryBudget,
    row_size::RowSize,
    writer::{self, Changes, Checkpoint},
};

/// One cached, write-behind table, by primary key `K`.
#[derive(Debug)]
struct Table<M: Clone + Send + Sync + 'static, K: CacheKey> {
    cache: EntityCache<M, K>,
    /// Rows changed since the last flush began.
    dirty: HashMap<K, M>,
    /// Rows of the flush being written: not committed yet, so the database does not have
    /// them and the cache may already have evicted them.
    inflight: InFlight<K, M>,
    /// Rows (and absences) prefetched for the batch being applied. Held here, not only in
    /// the cache: a full moka cache may refuse to admit new keys (TinyLFU), and at 5M events
    /// that turned 40% of the prefetched reads back into single queries (BENCHMARKS.md).
    batch: HashMap<K, Option<M>>,
}

impl<M: RowSize + Clone + Send + Sync + 'static, K: CacheKey> Table<M, K> {
    fn new(name: &'static str, bytes: u64, key_of: fn(&M) -> &K) -> Self {
        Self {
            cache: EntityCache::new(name, bytes),
            dirty: HashMap::new(),
            inflight: InFlight::empty(key_of),
            batch: HashMap::new(),
        }
    }
}

impl<M: Clone + Send + Sync + 'static, K: CacheKey> Table<M, K> {
    /// Whether the newest version of `key` is in memory and not committed.
    fn uncommitted<Q: Hash + Ord + ?Sized>(&self, key: &Q) -> bool
    where
        K: Borrow<Q>,
    {
        self.dirty.contains_key(key) || self.inflight.contains_key(key)
    }

    /// Dirty, in-flight or cached row; `None` when the database must be asked.
    ///
    /// Rows pinned for the batch are looked at before the flush in flight, whose lookup is a
    /// binary search: the two never share a key. The prefetch pins only keys that are neither
    /// dirty nor in flight, and a flush begins only between batches, after the pins are dropped.
    fn local<Q: Hash + Ord + ?Sized>(&self, key: &Q) -> Option<Option<M>>
    where
        K: Borrow<Q>,
    {
        if let Some(row) = self.dirty.get(key) {
            return Some(Some(row.clone()));
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
    fn newest_ref<Q: Hash + Ord + ?Sized>(&self, key: &Q) -> Option<&M>
    where
        K: Borrow<Q>,
    {
        self.dirty
            .get(key)
            .or_else(|| self.batch.get(key).and_then(Option::as_ref))
            .or_else(|| self.inflight.get(key))
    }

    /// The newest in-memory version of `key`, if any; not counted as a cache lookup.
    fn peek<Q: Hash + Ord + ?Sized>(&self, key: &Q) -> Option<M>
    where
        K: Borrow<Q>,
    {
        if let Some(row) = self.dirty.get(key) {
            return Some(row.clone());
        }
        if let Some(known) = self.batch.get(key) {
            return known.clone();
        }
        match self.inflight.get(key) {
            Some(row) => Some(row.clone()),
            None => self.cache.peek(key),
        }
    }

    /// Moves the dirty rows in flight and returns them for the writer in key order. The keys
    /// are hashes, so in the map's order every upsert lands on another page of the primary
    /// key's B-tree; in key order consecutive upserts walk it from one end to the other and
    /// find their pages still cached.
    fn begin_flush(&mut self) -> SharedRows<M> {
        self.inflight.begin(std::mem::take(&mut self.dirty))
    }

    /// Stores `row` as dirty and keeps `heap`, the dirty set's heap bytes, up to date: a new
    /// key adds its row and key, a replaced row the difference. The map's own slots are
    /// counted from its capacity ([`map_bytes`]).
    fn put(&mut self, key: K, row: M, heap: &mut usize)
    where
        M: RowSize,
    {
        let key_part = key.key_bytes();
        let row_part = row.heap_bytes();
        self.cache.insert(key.clone(), Some(row.clone()));
        *heap = match self.dirty.insert(key, row) {
            Some(old) => (*heap + row_part).saturating_sub(old.heap_bytes()),
            None => *heap + key_part + row_part,
        };
    }
}

/// Bytes a hash map's slots take: hashbrown keeps a control byte per slot and at least one
/// slot in eight free, beyond what [`HashMap::capacity`] reports.
fn map_bytes<K, V, S>(map: &std::collections::HashMap<K, V, S>) -> usize {
    map.capacity() * (size_of::<(K, V)>() + 1) * 8 / 7
}

fn set_bytes<K, S>(set: &std::collections::HashSet<K, S>) -> usize {
    set.capacity() * (size_of::<K>() + 1) * 8 / 7
}

fn vec_bytes<T>(vec: &Vec<T>) -> usize {
    vec.capacity() * size_of::<T>()
}

/// Reads one row by primary key through `table`'s dirty set and cache, then the database.
async fn load<E, K, Q>(
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
    let row = E::find_by_id(key.to_owned()).one(db).await.map_err(StoreError::db(op))?;
    table.cache.insert(key.to_owned(), row.clone());
    Ok(row)
}

/// Primary keys a batch will read, per table (see `ens::prefetch`).
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct PrefetchKeys {
    /// Domain keys.
    pub domains: Vec<DomainKey>,
    /// Label hashes.
    pub labels: Vec<RawHash>,
    /// Resolver record ids.
    pub records: Vec<ResolverRecordKey>,
}

/// Keys per `IN (…)` query of a prefetch. Every query binds exactly this many values (the
/// last chunk repeats its last key), so each table has one prefetch statement and the
/// prepared-statement cache holds one entry for it, not one per batch size.
pub const PREFETCH_CHUNK: usize = 500;

/// Loads the rows of `keys` that are neither dirty nor cached, in fixed-size `IN` queries,
/// and caches every answer (absences too). Returns the rows read from the database.
async fn prefetch_table<E, K>(
    db: &DatabaseConnection,
    table: &mut Table<E::Model, K>,
    column: E::Column,
    mut keys: Vec<K>,
    key_of: impl Fn(&E::Model) -> &K,
) -> Result<usize, StoreError>
where
    E: EntityTrait,
    E::Model: Clone + Send + Sync + 'static,
    K: CacheKey + Into<sea_orm::Value>,
{
    keys.sort_unstable();
    keys.dedup();
    keys.retain(|k| !table.uncommitted(k));
    // Known to the cache: pinned for the batch without a query.
    keys.retain(|k| match table.cache.peek_entry(k) {
        Some(known) => {
            table.batch.insert(k.clone(), known);
            false
        }
        None => true,
    });
    let mut loaded = 0;
    for chunk in keys.chunks(PREFETCH_CHUNK) {
        let pad = chunk.last().cloned().into_iter().cycle().take(PREFETCH_CHUNK - chunk.len());
        let rows = E::find()
            .filter(column.is_in(chunk.iter().cloned().chain(pad)))
            .all(db)
            .await
            .map_err(StoreError::db("prefetch"))?;
        loaded += rows.len();
        let found: HashSet<K> = rows.iter().map(|r| key_of(r).clone()).collect();
        for row in rows {
            table.cache.insert(key_of(&row).clone(), Some(row.clone()));
            table.batch.insert(key_of(&row).clone(), Some(row));
        }
        for key in chunk.iter().filter(|k| !found.contains(*k)) {
            table.cache.insert(key.clone(), None);
            table.batch.insert(key.clone(), None);
        }
    }
    Ok(loaded)
}

/// Rows no database index can find yet: domains and labels created since the last commit,
/// domains by label hash and by parent (its `seq`).
#[derive(Debug, Default)]
struct NewRows {
    by_label: HashMap<RawHash, Vec<DomainKey>>,
    children: HashMap<i64, Vec<DomainKey>>,
    domains: HashSet<DomainKey>,
    labels: HashSet<RawHash>,
    /// Heap bytes of the keys and lists above.
    heap: usize,
}

impl NewRows {
    fn add_domain(&mut self, row: &domain::Model) {
        self.heap += row.id.key_bytes();
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

    /// Bytes held, as [`EntityStore::dirty_bytes`] counts them.
    fn add_label(&mut self, label_hash: &RawHash) {
        if self.labels.insert(label_hash.clone()) {
            self.heap += label_hash.key_bytes();
        }
    }

    /// Bytes held, as [`EntityStore::dirty_bytes`] counts them.
    fn bytes(&self) -> usize {
        self.heap + map_bytes(&self.by_label) + map_bytes(&self.children) + set_bytes(&self.domains)
    }
}

/// Pushes a copy of `id` onto `ids`, counting what the copy and any growth of the list hold.
fn push_key(heap: &mut usize, ids: &mut Vec<DomainKey>, id: &DomainKey) {
    let capacity = ids.capacity();
    ids.push(id.clone());
    *heap += id.key_bytes() + (ids.capacity() - capacity) * size_of::<DomainKey>();
}

/// What a flush hands to the writer; the store keeps the rows readable (in flight) until
/// [`EntityStore::complete_flush`].
#[derive(Debug)]
pub struct PendingFlush {
    db: DatabaseConnection,
    changes: Changes,
}

impl PendingFlush {
    /// Writes the changes and `checkpoint` in one transaction. Returns the rows written.
    pub async fn write(
        self,
        checkpoint: &Checkpoint,
        journal: Option<&JournalWindow>,
    ) -> Result<usize, StoreError> {
        writer::write(&self.db, &self.changes, checkpoint, journal).await?;
        Ok(self.changes.len())
    }
}

/// The rows that record one applied event: the event, and the block and transaction rows it
/// refers to (the same for every event of the block or transaction; the store keeps one).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HistoryRows {
    /// The event; its `domain_seq`, `contract`, `topics` and `data` are filled in when it is
    /// recorded.
    pub event: event::Model,
    /// The log as emitted: its topics after topic0 and its data are packed when the event is
    /// recorded, with the words its domain holds written as references
    /// ([`entities::packed_words::SubjectWords`]).
    pub log: Arc<LogData>,
    /// The domain the event is about; none for resolver events.
    pub subject: Option<DomainKey>,
    /// The node of that domain's parent, when the event carries it (`NewOwner`).
    pub subject_parent: Option<[u8; 32]>,
    /// The contract that emitted it; the event's `contract` code is filled in from it.
    pub address: [u8; 20],
    /// Its block's hash.
    pub block: event_block::Model,
    /// Its transaction's hash, sender, recipient and block time.
    pub transaction: event_transaction::Model,
}

/// Handler-facing view of the database for one chain.
#[derive(Debug)]
pub struct EntityStore {
    db: DatabaseConnection,
    /// Where flushes are written ([`super::database::writer_connection`]).
    writer: DatabaseConnection,
    domains: Table<domain::Model, DomainKey>,
    labels: Table<label::Model, RawHash>,
    registrations: Table<registration::Model, RegistrationKey>,
    renewals: Table<renewal::Model, RenewalKey>,
    records: Table<resolver_record::Model, ResolverRecordKey>,
    addresses: HashMap<(ResolverRecordKey, i64), resolver_address::Model>,
    texts: HashMap<(ResolverRecordKey, RawHash), resolver_text::Model>,
    cleared_records: Vec<ResolverRecordKey>,
    /// Rows created since the last flush began, and those of the flush in flight.
    new: NewRows,
    new_inflight: NewRows,
    /// History rows of the events applied since the last flush, in chain order, with one
    /// row per block and per transaction among them.
    events: Vec<event::Model>,
    event_blocks: Vec<event_block::Model>,
    event_transactions: Vec<event_transaction::Model>,
    /// Domains put since the last flush whose name may differ from the stored one.
    renamed_domains: HashSet<DomainKey>,
    /// Heap bytes the rows and keys changed since the last flush hold, kept as they change;
    /// [`EntityStore::dirty_bytes`] adds the containers' own slots.
    dirty_heap: usize,
    /// Dirty bytes at which a flush is due.
    flush_bytes: usize,
    /// Creation numbers of new domains.
    seqs: DomainSeqs,
    /// Codes of the contracts that emit events.
    contracts: ContractCodes,
    /// The chain whose domains this store renders.
    chain_id: u64,
    /// Labels made known since the last flush, for the heal log.
    heals: Vec<RawHash>,
    /// This chain's mark in the heal log: read at the first look at the log.
    heal_mark: Option<i64>,
    /// Whether the mark moved since the last flush.
    heal_mark_moved: bool,
}

impl EntityStore {
    /// A store over `db` whose read cache, rows written behind and (on SQLite) writer page
    /// cache hold at most `budget_bytes` together ([`MemoryBudget`]). The read cache is
    /// shared among the tables by how much the handlers read them (domains most, renewals
    /// least).
    pub fn new(db: DatabaseConnection, chain_id: u64, budget_bytes: u64) -> Self {
        let budget = MemoryBudget::split(budget_bytes, db.get_database_backend());
        let writer = super::database::writer_connection(&db, budget.page_cache);
        let share = |percent: u64| budget.read_cache / 100 * percent;
        Self {
            db,
            writer,
            flush_bytes: budget.flush_bytes(),
            domains: Table::new("domain", share(40), |r| &r.id),
            labels: Table::new("label", share(20), |r| &r.label_hash),
            registrations: Table::new("registration", share(15), |r| &r.id),
            renewals: Table::new("renewal", share(5), |r| &r.id),
            records: Table::new("resolver_record", share(20), |r| &r.id),
            addresses: HashMap::new(),
            texts: HashMap::new(),
            cleared_records: Vec::new(),
            new: NewRows::default(),
            new_inflight: NewRows::default(),
            events: Vec::new(),
            event_blocks: Vec::new(),
            event_transactions: Vec::new(),
            renamed_domains: HashSet::new(),
            dirty_heap: 0,
            seqs: DomainSeqs::default(),
            contracts: ContractCodes::default(),
            chain_id,
            heals: Vec::new(),
            heal_mark: None,
            heal_mark_moved: false,
        }
    }

    /// The chain whose domains this store renders.
    pub fn chain_id(&self) -> u64 {
        self.chain_id
    }

    /// Records that this chain made `label_hash` known: the flush appends it to the heal
    /// log, from which the other chains rename their domains.
    pub fn log_heal(&mut self, label_hash: RawHash) {
        self.dirty_heap += label_hash.key_bytes();
        self.heals.push(label_hash);
    }

    /// The next entries of the heal log this chain has not applied (up to
    /// [`heal_log::READ_CHUNK`]); its own entries among them are already applied.
    pub async fn unapplied_heals(&mut self) -> Result<Vec<heal_log::Heal>, StoreError> {
        let mark = match self.heal_mark {
            Some(mark) => mark,
            None => {
                let mark = heal_log::mark(&self.db, self.chain_id).await?;
                self.heal_mark = Some(mark);
                mark
            }
        };
        heal_log::read_after(&self.db, mark).await
    }

    /// Moves this chain's mark in the heal log to `seq`; the next flush stores it with the
    /// names the applied entries changed.
    pub fn mark_heals_applied(&mut self, seq: i64) {
        if self.heal_mark.is_none_or(|mark| seq > mark) {
            self.heal_mark = Some(seq);
            self.heal_mark_moved = true;
        }
    }

    /// Whether the heal-log mark moved since the last flush stored it.
    pub fn heal_mark_moved(&self) -> bool {
        self.heal_mark_moved
    }

    /// Drops this store's read copies of a label another writer made known, so the next read
    /// finds it in the database. Returns whether a copy that is not committed yet says it
    /// is unknown: that one the caller must replace ([`EntityStore::reload_labels`]).
    pub fn forget_label(&mut self, label_hash: &RawHash) -> bool {
        self.labels.batch.remove(label_hash);
        self.labels.cache.invalidate(label_hash);
        let stale = |row: Option<&label::Model>| row.is_some_and(|l| l.label.is_none());
        stale(self.labels.dirty.get(label_hash)) || stale(self.labels.inflight.get(label_hash))
    }

    /// The database this store writes to.
    pub fn db(&self) -> &DatabaseConnection {
        &self.db
    }

    /// Forgets the rows pinned for the batch just applied (the cache may still hold them).
    pub fn end_batch(&mut self) {
        self.domains.batch.clear();
        self.labels.batch.clear();
        self.registrations.batch.clear();
        self.renewals.batch.clear();
        self.records.batch.clear();
    }

    /// Loads, in a few queries, the rows of `keys` that are not in memory yet, then the
    /// latest registration of each of those domains, so the handlers of a batch find what
    /// they read in the cache. Returns the rows read from the database.
    pub async fn prefetch(&mut self, keys: PrefetchKeys) -> Result<usize, StoreError> {
        let PrefetchKeys { domains, labels, records } = keys;
        let mut loaded = prefetch_table::<label::Entity, _>(
            &self.db,
            &mut self.labels,
            label::Column::LabelHash,
            labels,
            |r| &r.label_hash,
        )
        .await?;
        loaded += prefetch_table::<resolver_record::Entity, _>(
            &self.db,
            &mut self.records,
            resolver_record::Column::Id,
            records,
            |r| &r.id,
        )
        .await?;
        loaded += prefetch_table::<domain::Entity, _>(
            &self.db,
            &mut self.domains,
            domain::Column::Id,
            domains.clone(),
            |r| &r.id,
        )
        .await?;
        let registrations: Vec<RegistrationKey> = domains
            .iter()
            .filter_map(|id| self.domains.peek(id).and_then(|row| row.registration_id()))
            .collect();
        loaded += prefetch_table::<registration::Entity, _>(
            &self.db,
            &mut self.registrations,
            registration::Column::Id,
            registrations,
            |r| &r.id,
        )
        .await?;
        Ok(loaded)
    }

    /// A domain by key.
    pub async fn domain(&mut self, id: &DomainKey) -> Result<Option<domain::Model>, StoreError> {
        load::<domain::Entity, _, _>(&self.db, &self.domains, id, "load domain").await
    }

    /// The creation number (`seq`) of a new domain of `chain_id`.
    pub async fn next_domain_seq(&mut self, chain_id: u64) -> Result<i64, StoreError> {
        self.seqs.next(&self.db, chain_id).await
    }

    /// Stores a domain that did not exist: the caller has just read its id and found nothing,
    /// and numbered it with [`EntityStore::next_domain_seq`]. Until it is flushed, the heals
    /// look for its children and for it by label in memory only.
    pub fn create_domain(&mut self, row: domain::Model) {
        self.new.add_domain(&row);
        self.put_domain(row);
    }

    /// Stores a new version of a domain (a new domain goes through
    /// [`EntityStore::create_domain`]). A domain's `seq`, `label_hash` and `parent_seq` must
    /// never change.
    pub fn put_domain(&mut self, row: domain::Model) {
        // Whether the name may have changed: the flush rewrites `name` (and the indexes that
        // hold it) only for these rows. Unknown previous versions count as changed.
        if self.domains.newest_ref(&row.id).is_none_or(|old| old.name != row.name)
            && self.renamed_domains.insert(row.id.clone())
        {
            self.dirty_heap += row.id.key_bytes();
        }
        // Whether the domain is new is not guessed here from the dirty rows and the cache: the
        // cache may have evicted (or never admitted) a stored row, and a stored domain taken for
        // new would hide its stored children from `children`, so a heal would miss them (the
        // same fault as labels had, see `put_label`).
        self.domains.put(row.id.clone(), row, &mut self.dirty_heap);
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
            .map(|row| match self.domains.local(&row.id) {
                Some(Some(current)) => current,
                _ => {
                    self.domains.cache.insert(row.id.clone(), Some(row.clone()));
                    row
                }
            })
            .collect()
    }

    /// This chain's domains whose `column` is one of `keys`: stored rows, one query per chunk
    /// of `stored` (the keys that can match a stored row) through that column's index, then
    /// the rows created since the last commit that `index` lists under any of `keys`.
    async fn domains_by<V>(
        &mut self,
        column: domain::Column,
        stored: &[V],
        keys: &[V],
        index: fn(&NewRows) -> &HashMap<V, Vec<DomainKey>>,
        op: &'static str,
    ) -> Result<Vec<domain::Model>, StoreError>
    where
        V: Into<sea_orm::Value> + Clone + Hash + Eq,
    {
        let mut rows = Vec::new();
        for chunk in stored.chunks(PREFETCH_CHUNK) {
            rows.extend(
                domain::Entity::find()
                    .filter(domain::Column::ChainId.eq(self.chain_id as i64))
                    .filter(column.is_in(chunk.iter().cloned()))
                    .all(&self.db)
                    .await
                    .map_err(StoreError::db(op))?,
            );
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

    /// Every domain of this chain whose leaf label is one of `label_hashes`, through the
    /// `domains_label_hash` index and the rows created since the last commit.
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
        let column = domain::Column::LabelHash;
        self.domains_by(column, &stored, label_hashes, |n| &n.by_label, "domains by labels").await
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
        let column = domain::Column::ParentSeq;
        self.domains_by(column, &stored, &seqs, |n| &n.children, "children of domains").await
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

    /// A label by hash.
    pub async fn label(
        &mut self,
        label_hash: &RawHash,
    ) -> Result<Option<label::Model>, StoreError> {
        load::<label::Entity, _, _>(&self.db, &self.labels, label_hash, "load label").await
    }

    /// Stores a label; `created` when no version of it was stored before. The caller says so
    /// because it read the label first: the cache cannot tell, since it may have evicted (or
    /// never admitted) the row that read returned, and a stored label taken for new hides its
    /// domains from [`EntityStore::domains_with_labels`], so its heal renamed nothing (seen
    /// as an intermittent failure of the handlers' heal test).
    pub fn put_label(&mut self, row: label::Model, created: bool) {
        if created && !self.labels.uncommitted(&row.label_hash) {
            self.new.add_label(&row.label_hash);
        }
        self.labels.put(row.label_hash.clone(), row, &mut self.dirty_heap);
    }

    /// A registration by id.
    pub async fn registration(
        &mut self,
        id: &RegistrationKey,
    ) -> Result<Option<registration::Model>, StoreError> {
        load::<registration::Entity, _, _>(&self.db, &self.registrations, id, "load registration")
            .await
    }

    /// Stores a registration.
    pub fn put_registration(&mut self, row: registration::Model) {
        self.registrations.put(row.id.clone(), row, &mut self.dirty_heap);
    }

    /// A renewal by id.
    pub async fn renewal(&mut self, id: &RenewalKey) -> Result<Option<renewal::Model>, StoreError> {
        load::<renewal::Entity, _, _>(&self.db, &self.renewals, id, "load renewal").await
    }

    /// Stores a renewal.
    pub fn put_renewal(&mut self, row: renewal::Model) {
        self.renewals.put(row.id.clone(), row, &mut self.dirty_heap);
    }

    /// A resolver record by id.
    pub async fn record(
        &mut self,
        id: &ResolverRecordKey,
    ) -> Result<Option<resolver_record::Model>, StoreError> {
        load::<resolver_record::Entity, _, _>(&self.db, &self.records, id, "load resolver record")
            .await
    }

    /// Stores a resolver record.
    pub fn put_record(&mut self, row: resolver_record::Model) {
        self.records.put(row.id.clone(), row, &mut self.dirty_heap);
    }

    /// Stores an address record (write-only: handlers never read them back).
    pub fn put_address(&mut self, row: resolver_address::Model) {
        // Counted again when it replaces a row of the same key: an overestimate until the
        // next flush, and replacing an address in one flush window is rare.
        self.dirty_heap += row.heap_bytes() + row.record_id.key_bytes();
        self.addresses.insert((row.record_id.clone(), row.coin_type), row);
    }

    /// Stores a text record (write-only).
    pub fn put_text(&mut self, row: resolver_text::Model) {
        self.dirty_heap += row.heap_bytes() + row.record_id.key_bytes() + row.key_hash.key_bytes();
        self.texts.insert((row.record_id.clone(), row.key_hash.clone()), row);
    }

    /// Deletes every address and text record of `record_id`, including ones set earlier in
    /// this batch.
    pub fn clear_record_entries(&mut self, record_id: &ResolverRecordKey) {
        self.addresses.retain(|(id, _), _| id != record_id);
        self.texts.retain(|(id, _), _| id != record_id);
        self.dirty_heap += record_id.key_bytes();
        self.cleared_records.push(record_id.clone());
    }

    /// Records an applied event in the history, naming its domain by creation number (the
    /// handler has just read the domain, so it is in memory). Events arrive in chain order,
    /// so a block's or transaction's row repeats only right after itself, and one comparison
    /// keeps one.
    pub async fn record_event(&mut self, rows: HistoryRows) -> Result<(), StoreError> {
        let HistoryRows { mut event, log, subject, subject_parent, address, block, transaction } =
            rows;
        event.contract = self.contracts.code(&self.db, event.chain_id, address).await?;
        let mut words = None;
        if let Some(id) = subject {
            // The words a reader finds from the row: its node and label hash, and its
            // parent's node when the row names a parent (the one the event carries, since the
            // node is the hash of the two).
            let found = |row: &domain::Model| {
                (row.seq, row.subject_words(row.parent_seq.and(subject_parent)))
            };
            let found = match self.domains.newest_ref(&id) {
                Some(row) => Some(found(row)),
                None => self.domain(&id).await?.as_ref().map(found),
            };
            event.domain_seq = Some(found.as_ref().map_or(event::NO_DOMAIN, |(seq, _)| *seq));
            words = found.map(|(_, words)| words);
        }
        let topics = log.topics().get(1..).unwrap_or_default();
        event.topics = PackedWords::pack_words(topics.iter().map(|t| &t.0), words.as_ref());
        event.data = PackedWords::pack_with(&log.data, words.as_ref());
        self.dirty_heap += event.heap_bytes();
        self.events.push(event);
        if self.event_blocks.last() != Some(&block) {
            self.dirty_heap += block.heap_bytes();
            self.event_blocks.push(block);
        }
        if self.event_transactions.last() != Some(&transaction) {
            self.dirty_heap += transaction.heap_bytes();
            self.event_transactions.push(transaction);
        }
        Ok(())
    }

    /// Domains renamed (their name may differ from the stored one) since the last flush.
    pub fn renamed_domains(&self) -> usize {
        self.renamed_domains.len()
    }

    /// Rows changed since the last flush.
    pub fn dirty_rows(&self) -> usize {
        self.domains.dirty.len()
            + self.labels.dirty.len()
            + self.registrations.dirty.len()
            + self.renewals.dirty.len()
            + self.records.dirty.len()
            + self.addresses.len()
            + self.texts.len()
            + self.cleared_records.len()
            + self.events.len()
            + self.event_blocks.len()
            + self.event_transactions.len()
    }

    /// Bytes the changes since the last flush hold in memory: the rows' and keys' heap bytes
    /// ([`RowSize`]) and the slots of the maps and vectors holding them, by their capacity.
    /// A row replaced since the last flush counts once (address and text records, which
    /// are never read back, count each time they are set). The flush in flight holds about
    /// as much again until it commits. The `memory` test checks this against the heap.
    pub fn dirty_bytes(&self) -> usize {
        self.dirty_heap
            + map_bytes(&self.domains.dirty)
            + map_bytes(&self.labels.dirty)
            + map_bytes(&self.registrations.dirty)
            + map_bytes(&self.renewals.dirty)
            + map_bytes(&self.records.dirty)
            + map_bytes(&self.addresses)
            + map_bytes(&self.texts)
            + vec_bytes(&self.cleared_records)
            + vec_bytes(&self.events)
            + vec_bytes(&self.event_blocks)
            + vec_bytes(&self.event_transactions)
            + set_bytes(&self.renamed_domains)
            + self.new.bytes()
    }

    /// Dirty bytes at which a flush is due, whatever the row count.
    pub fn flush_bytes(&self) -> usize {
        self.flush_bytes
    }

    /// Hands every change since the last flush to a [`PendingFlush`]; the rows stay readable
    /// (in flight) until [`EntityStore::complete_flush`]. One flush may be in flight at a
    /// time, and handlers may go on applying events while it is written.
    pub fn begin_flush(&mut self) -> PendingFlush {
        let changes = Changes {
            domains: self.domains.begin_flush(),
            labels: self.labels.begin_flush(),
            registrations: self.registrations.begin_flush(),
            renewals: self.renewals.begin_flush(),
            records: self.records.begin_flush(),
            cleared_records: std::mem::take(&mut self.cleared_records),
            addresses: std::mem::take(&mut self.addresses).into_values().collect(),
            texts: std::mem::take(&mut self.texts).into_values().collect(),
            contracts: self.contracts.take_new(),
            events: std::mem::take(&mut self.events),
            event_blocks: std::mem::take(&mut self.event_blocks),
            event_transactions: std::mem::take(&mut self.event_transactions),
            renamed_domains: std::mem::take(&mut self.renamed_domains),
            heals: std::mem::take(&mut self.heals),
            heal_mark: std::mem::take(&mut self.heal_mark_moved)
                .then_some(self.heal_mark)
                .flatten(),
        };
        self.new_inflight = std::mem::take(&mut self.new);
        self.dirty_heap = 0;
        PendingFlush { db: self.writer.clone(), changes }
    }

    /// The flush in flight is committed: its rows are the database's now.
    pub fn complete_flush(&mut self) {
        self.domains.inflight.clear();
        self.labels.inflight.clear();
        self.registrations.inflight.clear();
        self.renewals.inflight.clear();
        self.records.inflight.clear();
        self.new_inflight = NewRows::default();
    }

    /// Writes every change and `checkpoint` in one transaction and waits for it. On error
    /// nothing is committed and the store must not be flushed again: its handler is
    /// poisoned, and the chain resumes from the previous checkpoint with a fresh store.
    /// Returns the rows written.
    pub async fn flush(
        &mut self,
        checkpoint: &Checkpoint,
        journal: Option<&JournalWindow>,
    ) -> Result<usize, StoreError> {
        let rows = self.begin_flush().write(checkpoint, journal).await?;
        self.complete_flush();
        Ok(rows)
    }
}
