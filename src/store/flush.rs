//! The flush hand-off: [`EntityStore::begin_flush`] moves every change since the last flush
//! into a [`PendingFlush`] for the writer, keeping the rows readable (in flight) until
//! [`EntityStore::complete_flush`]; and the accounting that says when a flush is due.

use sea_orm::DatabaseConnection;

use super::{
    EntityStore, StoreError,
    database::WalBound,
    heal_index::NewRows,
    history_ahead::WriteTurn,
    journal::JournalWindow,
    table::{map_bytes, set_bytes, vec_bytes},
    writer::{self, Changes, Checkpoint},
};

/// The rows of a committed flush, out of flight, whose keys the read cache has yet to forget
/// ([`EntityStore::take_committed`]).
#[derive(Debug)]
pub struct Committed(super::tables::CommittedRows);

/// What a flush hands to the writer; the store keeps the rows readable (in flight) until
/// [`EntityStore::complete_flush`].
#[derive(Debug)]
pub struct PendingFlush {
    db: DatabaseConnection,
    turn: WriteTurn,
    changes: Changes,
}

impl PendingFlush {
    /// Writes the changes and `checkpoint` in one transaction. Returns the rows written.
    pub async fn write(
        self,
        checkpoint: &Checkpoint,
        journal: Option<&JournalWindow>,
    ) -> Result<usize, StoreError> {
        let _turn = self.turn.lock().await;
        writer::write(&self.db, &self.changes, checkpoint, journal, WalBound::Truncate).await?;
        Ok(self.changes.len())
    }

    /// [`PendingFlush::write`] for a flush written behind while the chain catches up: no
    /// journal, and a WAL past its bound is restarted in its file rather than truncated
    /// ([`WalBound::Reuse`]), since the next flushes fill it again.
    pub async fn write_behind(self, checkpoint: &Checkpoint) -> Result<usize, StoreError> {
        let _turn = self.turn.lock().await;
        writer::write(&self.db, &self.changes, checkpoint, None, WalBound::Reuse).await?;
        Ok(self.changes.len())
    }
}

impl EntityStore {
    /// Domains renamed (their name may differ from the stored one) since the last flush.
    pub fn renamed_domains(&self) -> usize {
        self.renamed_domains.len()
    }

    /// Rows changed since the last flush and held for the next one (not the history a part
    /// took, [`super::history_ahead`]).
    pub fn dirty_rows(&self) -> usize {
        self.tables.dirty_rows()
            + self.addresses.len()
            + self.texts.len()
            + self.cleared_records.len()
            + self.events.len()
            + self.event_blocks.len()
            + self.event_transactions.len()
    }

    /// Bytes the changes since the last flush hold in memory: the rows' and keys' heap bytes
    /// ([`super::row_size::RowSize`]) and the slots of the maps and vectors holding them, by their capacity.
    /// A row replaced since the last flush counts once (address and text records, which
    /// are never read back, count each time they are set). The flush in flight holds about
    /// as much again until it commits. A history part being written counts until it is
    /// ([`super::history_ahead`]). The `memory` test checks this against the heap.
    pub fn dirty_bytes(&self) -> usize {
        self.dirty_heap
            + self.history_heap
            + self.part_bytes()
            + self.tables.dirty_slot_bytes()
            + map_bytes(&self.addresses)
            + map_bytes(&self.texts)
            + vec_bytes(&self.cleared_records)
            + self.events.slot_bytes()
            + self.event_blocks.slot_bytes()
            + self.event_transactions.slot_bytes()
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
        // Of a table that knows its created rows, every other row handed over was read from
        // a stored version, or one in flight, stored by the time this flush writes.
        let (tables, created) = self.tables.begin_flush();
        let changes = Changes {
            tables,
            created: Some(created),
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
        self.history_heap = 0;
        PendingFlush { db: self.writer.clone(), turn: self.turn.clone(), changes }
    }

    /// The flush in flight is committed: its rows are the database's now, and the next read
    /// of one that is not dirty asks the database.
    pub fn complete_flush(&mut self) {
        let committed = self.take_committed();
        self.forget_committed(committed);
    }

    /// [`EntityStore::complete_flush`] in two steps, so that the next flush can begin in
    /// between: this one takes the committed rows out of flight, and
    /// [`EntityStore::forget_committed`] has the read cache forget what it holds for them.
    /// Nothing may read the store between the two: the cache may still hold an older version
    /// of a committed row (or its absence) that the flight no longer hides.
    pub fn take_committed(&mut self) -> Committed {
        self.new_inflight = NewRows::default();
        Committed(self.tables.take_committed())
    }

    /// Has the read cache forget its versions of the rows [`EntityStore::take_committed`]
    /// took, and drops those rows.
    pub fn forget_committed(&mut self, committed: Committed) {
        self.tables.forget_committed(committed.0);
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
        self.settle_history().await?;
        let rows = self.begin_flush().write(checkpoint, journal).await?;
        self.complete_flush();
        Ok(rows)
    }
}

#[cfg(test)]
mod tests {
    use entities::{
        contract_node_key::{ADDRESS_BYTES, NODE_BYTES},
        resolver_record::{self, ResolverRecordKey},
    };

    use super::*;
    use crate::{
        ChainId,
        store::{database, prefetch::PrefetchKeys},
    };

    fn record(name: &str) -> resolver_record::Model {
        resolver_record::Model {
            id: ResolverRecordKey::new(1, &[0x11; ADDRESS_BYTES], &[0x22; NODE_BYTES]),
            name: Some(name.to_owned()),
            contenthash: None,
            pubkey_x: None,
            pubkey_y: None,
            version: 0,
        }
    }

    async fn flush(store: &mut EntityStore, block: u64) {
        let checkpoint = Checkpoint {
            chain_id: ChainId(1),
            block_number: block,
            block_hash: format!("{block:#066x}"),
        };
        store.flush(&checkpoint, None).await.expect("flush");
    }

    /// What a prefetch of `key` pinned for the batch.
    async fn prefetched(
        store: &mut EntityStore,
        key: &ResolverRecordKey,
    ) -> Option<Option<resolver_record::Model>> {
        let keys = PrefetchKeys { records: vec![key.clone()], ..Default::default() };
        store.prefetch(keys).await.expect("prefetch");
        store.tables.records.batch.get(key).cloned()
    }

    /// Once its flush has committed, a row is read from the database, never from what the
    /// read cache held for its key before: an absence, or an older version a batch read.
    #[tokio::test]
    async fn a_committed_row_is_read_from_the_database_not_an_older_cached_version() {
        let dir = tempfile::tempdir().expect("tempdir");
        let url = format!("sqlite://{}?mode=rwc", dir.path().join("forget.sqlite").display());
        let db = database::connect(&url).await.expect("database");
        let mut store = EntityStore::new(db, ChainId(1), 1 << 20);
        let first = record("first");
        // An absence cached before the row existed (a read the key filter let through).
        store.tables.records.cache.insert(first.id.clone(), None);
        store.create_record(first.clone());
        flush(&mut store, 1).await;
        assert_eq!(prefetched(&mut store, &first.id).await, Some(Some(first.clone())));
        // Read and left unchanged: the batch's end caches it.
        store.end_batch();
        assert_eq!(store.tables.records.cache.peek(&first.id), Some(first.clone()));

        let second = record("second");
        store.put_record(second.clone());
        flush(&mut store, 2).await;
        assert_eq!(store.tables.records.cache.peek(&first.id), None, "the cache forgot it");
        assert_eq!(prefetched(&mut store, &first.id).await, Some(Some(second)));
    }
}
