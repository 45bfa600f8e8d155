//! [`EntityStore`]: what handlers read and write.
//!
//! Reads look at the dirty set, then the rows of the flush in flight, then the moka cache,
//! then the database; the cache holds rows read from the database that no batch has changed
//! since. Writes go to the dirty set. [`EntityStore::begin_flush`] moves the dirty set in
//! flight and hands it to the writer as one transaction with the checkpoint; the handler may
//! apply the next batch while it is written, and once it is committed
//! [`EntityStore::complete_flush`] drops the in-flight rows and has the cache forget its
//! older versions of them (or [`EntityStore::take_committed`] and
//! [`EntityStore::forget_committed`], with the next flush begun in between).
//! If a write fails, nothing of it was committed; the handler stops and the chain resumes
//! from the previous checkpoint, as after a crash.
//!
//! The heal cascade needs "domains with this label" and "children of this domain". Rows that
//! exist in the database are found through indexes; rows created since the last flush are
//! found through two small in-memory indexes kept here. A domain's label and parent never
//! change after creation, so these indexes never go stale.

use entities::{
    domain::{self, DomainKey},
    event, event_block, event_transaction,
    label::{self, RawHash},
    registration::{self, RegistrationKey},
    renewal::{self, RenewalKey},
    resolver_address,
    resolver_record::{self, ResolverRecordKey},
    resolver_text,
};
use foldhash::{HashMap, HashMapExt, HashSet, HashSetExt};
use sea_orm::DatabaseConnection;

use super::{
    StoreError,
    contract_codes::ContractCodes,
    domain_seq::DomainSeqs,
    heal_index::NewRows,
    history_ahead::{PartInFlight, WriteTurn},
    memory_budget::MemoryBudget,
    row_chunks::RowChunks,
    row_size::RowSize,
    table::load,
    tables::CachedTables,
};
use crate::ChainId;

/// Handler-facing view of the database for one chain.
#[derive(Debug)]
pub struct EntityStore {
    pub(super) db: DatabaseConnection,
    /// Where flushes are written ([`super::database::writer_connection`]).
    pub(super) writer: DatabaseConnection,
    /// The turn of each write through `writer`.
    pub(super) turn: WriteTurn,
    /// Whether the history goes ahead of the checkpoint in parts ([`super::history_ahead`]):
    /// on SQLite.
    pub(super) history_ahead: bool,
    /// The history part being written, if any.
    pub(super) part_in_flight: Option<PartInFlight>,
    /// Whether the history past the checkpoint was deleted ([`EntityStore::clear_history_ahead`]).
    pub(super) history_cleared: bool,
    pub(super) tables: CachedTables,
    pub(super) addresses: HashMap<(ResolverRecordKey, i64), resolver_address::Model>,
    pub(super) texts: HashMap<(ResolverRecordKey, RawHash), resolver_text::Model>,
    pub(super) cleared_records: Vec<ResolverRecordKey>,
    /// Rows created since the last flush began, and those of the flush in flight.
    pub(super) new: NewRows,
    pub(super) new_inflight: NewRows,
    /// History rows of the events applied since the last flush or history part, in chain
    /// order, with one row per block and per transaction among them.
    pub(super) events: RowChunks<event::Model>,
    pub(super) event_blocks: RowChunks<event_block::Model>,
    pub(super) event_transactions: RowChunks<event_transaction::Model>,
    /// Domains put since the last flush whose name may differ from the stored one.
    pub(super) renamed_domains: HashSet<DomainKey>,
    /// Heap bytes the rows and keys changed since the last flush hold, kept as they change;
    /// [`EntityStore::dirty_bytes`] adds the containers' own slots.
    pub(super) dirty_heap: usize,
    /// The same of the history rows held.
    pub(super) history_heap: usize,
    /// Dirty bytes at which a flush is due.
    pub(super) flush_bytes: usize,
    /// Creation numbers of new domains.
    pub(super) seqs: DomainSeqs,
    /// Codes of the contracts that emit events.
    pub(super) contracts: ContractCodes,
    /// The chain whose domains this store renders.
    pub(super) chain_id: ChainId,
    /// Labels made known since the last flush, for the heal log.
    pub(super) heals: Vec<RawHash>,
    /// This chain's mark in the heal log: read at the first look at the log.
    pub(super) heal_mark: Option<i64>,
    /// Whether the mark moved since the last flush.
    pub(super) heal_mark_moved: bool,
}

impl EntityStore {
    /// A store over `db` whose read cache, rows written behind and (on SQLite) writer page
    /// cache hold at most `budget_bytes` together ([`MemoryBudget`]). The read cache is
    /// shared among the tables by how much the handlers read them (domains most, renewals
    /// least).
    pub fn new(db: DatabaseConnection, chain_id: ChainId, budget_bytes: u64) -> Self {
        let budget = MemoryBudget::split(budget_bytes, db.get_database_backend());
        let writer = super::database::writer_connection(&db, budget.page_cache);
        let history_ahead = db.get_database_backend() == sea_orm::DatabaseBackend::Sqlite;
        Self {
            db,
            writer,
            turn: WriteTurn::default(),
            history_ahead,
            part_in_flight: None,
            history_cleared: false,
            flush_bytes: budget.flush_bytes(),
            tables: CachedTables::new(budget.read_cache, budget.key_filter),
            addresses: HashMap::new(),
            texts: HashMap::new(),
            cleared_records: Vec::new(),
            new: NewRows::default(),
            new_inflight: NewRows::default(),
            events: RowChunks::default(),
            event_blocks: RowChunks::default(),
            event_transactions: RowChunks::default(),
            renamed_domains: HashSet::new(),
            dirty_heap: 0,
            history_heap: 0,
            seqs: DomainSeqs::default(),
            contracts: ContractCodes::default(),
            chain_id,
            heals: Vec::new(),
            heal_mark: None,
            heal_mark_moved: false,
        }
    }

    /// The chain whose domains this store renders.
    pub fn chain_id(&self) -> ChainId {
        self.chain_id
    }

    /// The database this store writes to.
    pub fn db(&self) -> &DatabaseConnection {
        &self.db
    }

    /// Forgets the rows pinned for the batch just applied (the cache may still hold them).
    pub fn end_batch(&mut self) {
        self.tables.end_batch();
    }

    /// A domain by key.
    pub async fn domain(&mut self, id: &DomainKey) -> Result<Option<domain::Model>, StoreError> {
        load::<domain::Entity, _, _>(&self.db, &self.tables.domains, id, "load domain").await
    }

    /// The creation number (`seq`) of a new domain of `chain_id`.
    pub async fn next_domain_seq(&mut self, chain_id: ChainId) -> Result<i64, StoreError> {
        self.seqs.next(&self.db, chain_id).await
    }

    /// Stores a domain that did not exist: the caller has just read its id and found nothing,
    /// and numbered it with [`EntityStore::next_domain_seq`]. Until it is flushed, the heals
    /// look for its children and for it by label in memory only.
    pub fn create_domain(&mut self, row: domain::Model) {
        self.new.add_domain(&row);
        // Not marked renamed: the flush inserts a new row whole, its name included, and the
        // name search indexes every row a flush inserts ([`super::name_search::index`]).
        // Marked, it would be looked up by key twice more in the flush, found in neither.
        self.tables.domains.create(row.id.clone(), row, &mut self.dirty_heap);
    }

    /// Stores a new version of a domain (a new domain goes through
    /// [`EntityStore::create_domain`]). A domain's `seq`, `label_hash` and `parent_seq` must
    /// never change.
    pub fn put_domain(&mut self, row: domain::Model) {
        // Whether the name may have changed: the flush rewrites `name` (and the indexes that
        // hold it) only for these rows. Unknown previous versions count as changed.
        if self.tables.domains.newest_ref(&row.id).is_none_or(|old| old.name != row.name) {
            self.renamed_domains.insert(row.id.clone());
        }
        // Whether the domain is new is not guessed here from the dirty rows and the cache: the
        // cache may have evicted (or never admitted) a stored row, and a stored domain taken for
        // new would hide its stored children from `children`, so a heal would miss them (the
        // same fault as labels had, see `put_label`).
        self.tables.domains.put(row.id.clone(), row, &mut self.dirty_heap);
    }

    /// A label by hash.
    pub async fn label(
        &mut self,
        label_hash: &RawHash,
    ) -> Result<Option<label::Model>, StoreError> {
        load::<label::Entity, _, _>(&self.db, &self.tables.labels, label_hash, "load label").await
    }

    /// Stores a label; `created` when no version of it was stored before. The caller says so
    /// because it read the label first: the cache cannot tell, since it may have evicted (or
    /// never admitted) the row that read returned, and a stored label taken for new hides its
    /// domains from [`EntityStore::domains_with_labels`], so its heal renamed nothing (seen
    /// as an intermittent failure of the handlers' heal test).
    pub fn put_label(&mut self, row: label::Model, created: bool) {
        if created && !self.tables.labels.uncommitted(&row.label_hash) {
            self.new.add_label(&row.label_hash);
        }
        self.tables.labels.put(row.label_hash.clone(), row, &mut self.dirty_heap);
    }

    /// A registration by id.
    pub async fn registration(
        &mut self,
        id: &RegistrationKey,
    ) -> Result<Option<registration::Model>, StoreError> {
        load::<registration::Entity, _, _>(
            &self.db,
            &self.tables.registrations,
            id,
            "load registration",
        )
        .await
    }

    /// Stores a new version of a registration (a new registration goes through
    /// [`EntityStore::create_registration`]).
    pub fn put_registration(&mut self, row: registration::Model) {
        self.tables.registrations.put(row.id.clone(), row, &mut self.dirty_heap);
    }

    /// Stores a registration that did not exist: the next of its domain's, numbered after
    /// the domain's count of them.
    pub fn create_registration(&mut self, row: registration::Model) {
        self.tables.registrations.create(row.id.clone(), row, &mut self.dirty_heap);
    }

    /// A renewal by id.
    pub async fn renewal(&mut self, id: &RenewalKey) -> Result<Option<renewal::Model>, StoreError> {
        load::<renewal::Entity, _, _>(&self.db, &self.tables.renewals, id, "load renewal").await
    }

    /// Stores a new version of a renewal (a new renewal goes through
    /// [`EntityStore::create_renewal`]).
    pub fn put_renewal(&mut self, row: renewal::Model) {
        self.tables.renewals.put(row.id.clone(), row, &mut self.dirty_heap);
    }

    /// Stores a renewal that did not exist: the next of its registration's, numbered after
    /// the registration's count of them.
    pub fn create_renewal(&mut self, row: renewal::Model) {
        self.tables.renewals.create(row.id.clone(), row, &mut self.dirty_heap);
    }

    /// A resolver record by id.
    pub async fn record(
        &mut self,
        id: &ResolverRecordKey,
    ) -> Result<Option<resolver_record::Model>, StoreError> {
        load::<resolver_record::Entity, _, _>(
            &self.db,
            &self.tables.records,
            id,
            "load resolver record",
        )
        .await
    }

    /// Stores a new version of a resolver record (a new record goes through
    /// [`EntityStore::create_record`]).
    pub fn put_record(&mut self, row: resolver_record::Model) {
        self.tables.records.put(row.id.clone(), row, &mut self.dirty_heap);
    }

    /// Stores a resolver record that did not exist: the caller has just read its id and
    /// found nothing.
    pub fn create_record(&mut self, row: resolver_record::Model) {
        self.tables.records.create(row.id.clone(), row, &mut self.dirty_heap);
    }

    /// Stores an address record (write-only: handlers never read them back).
    pub fn put_address(&mut self, row: resolver_address::Model) {
        // Counted again when it replaces a row of the same key: an overestimate until the
        // next flush, and replacing an address in one flush window is rare.
        self.dirty_heap += row.heap_bytes();
        self.addresses.insert((row.record_id.clone(), row.coin_type), row);
    }

    /// Stores a text record (write-only).
    pub fn put_text(&mut self, row: resolver_text::Model) {
        self.dirty_heap += row.heap_bytes();
        self.texts.insert((row.record_id.clone(), row.key_hash.clone()), row);
    }

    /// Deletes every address and text record of `record_id`, including ones set earlier in
    /// this batch.
    pub fn clear_record_entries(&mut self, record_id: &ResolverRecordKey) {
        self.addresses.retain(|(id, _), _| id != record_id);
        self.texts.retain(|(id, _), _| id != record_id);
        self.cleared_records.push(record_id.clone());
    }
}
