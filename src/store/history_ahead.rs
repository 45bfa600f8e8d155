//! The event history written ahead of the checkpoint while a chain catches up.
//!
//! Most rows a backfill writes are the event history (events, their blocks and
//! transactions): appended in chain order and never read back by the indexer. Held until the
//! flush that moves the checkpoint past them, they filled most of each flush's rows and a
//! good part of its memory, so flushes came more often; and every flush rewrites nearly each
//! page of the tables' random-keyed indexes, whatever its size. While a chain catches up
//! (batches written behind), a SQLite store hands its history to the writer instead, in
//! parts of a quarter of a flush's rows ([`part_rows`]), each in a transaction of its own
//! ([`EntityStore::take_history_part`]); a flush carries only what no part took.
//!
//! Two rules keep the history exact across crashes:
//! - a part commits before the checkpoint passes its blocks: a flush first waits for the
//!   part in flight ([`EntityStore::settle_history`]), and a part that failed fails the flush
//!   (the chain resumes from the checkpoint before both);
//! - a part may commit before the flush that covers its blocks, and a crash in between
//!   leaves history past the checkpoint: a pipeline deletes its chain's history past the
//!   checkpoint before it writes anything ([`EntityStore::clear_history_ahead`]), so the
//!   blocks it indexes again are recorded once.
//!
//! While the chain catches up, a reader may therefore see the history of up to one flush's
//! blocks before their effects on the entities; at the head every batch's history commits
//! with it, as before.
//!
//! On SQLite, where a flush ends at `indexer.flush_rows` before it fills its share of the
//! memory budget (200,000 rows at a 256 MiB budget), this makes fewer, larger flushes: 38–39
//! instead of 54 at 5M events, 11–21% faster (BENCHMARKS.md, the history-ahead runs). With
//! the default bound and budget the share ends SQLite's flushes first; parts were not
//! measured apart there. A part is written on the flush's connection, each write in its turn
//! ([`WriteTurn`]). On PostgreSQL parts were slower whatever ended its flushes. Where the
//! flushes filled their share of the budget before their rows, a part freed no memory sooner
//! than a flush did (its rows count until written): parts changed no flush count and ran
//! 3–13% slower. Where the flushes ended at their rows (an eighth of the budget for the read
//! cache; BENCHMARKS.md, the read-cache runs), parts made 36 flushes instead of 54 and the run
//! was 12% slower in one pair, the flushes' statements taking longer in all. So the history
//! stays in the flush.

use std::{future::Future, sync::Arc};

use entities::{checkpoint, event, event_block, event_transaction};
use futures::future::{AbortHandle, Abortable};
use sea_orm::{ColumnTrait, DatabaseConnection, EntityTrait, PaginatorTrait, QueryFilter};
use tokio::sync::oneshot;

use super::{EntityStore, StoreError, row_chunks::RowChunks, writer::timed_insert};

/// Whose turn it is to write through the writer's connection (a pool of one): held for a
/// whole transaction, so that a history part waits for the flush before it (and the reverse)
/// without the pool's acquire timeout, which a long flush could outlast.
pub type WriteTurn = Arc<tokio::sync::Mutex<()>>;

/// History rows at which the store hands them to the writer, for a chain flushing at
/// `flush_rows`: a quarter of it, so that the history never ends a flush.
pub fn part_rows(flush_rows: usize) -> usize {
    (flush_rows / 4).max(1)
}

/// The part being written, as the store sees it.
#[derive(Debug)]
pub(super) struct PartInFlight {
    done: oneshot::Receiver<Result<usize, StoreError>>,
    abort: AbortHandle,
    /// Bytes its rows hold until it is written: they count toward the flush's share of the
    /// budget.
    pub(super) bytes: usize,
}

impl Drop for PartInFlight {
    /// A store that is dropped takes its part along: the part's transaction rolls back
    /// unless it committed. Either way the next pipeline deletes what is past its
    /// checkpoint.
    fn drop(&mut self) {
        self.abort.abort();
    }
}

impl EntityStore {
    /// The history rows held since the last flush or part, when they are at least
    /// `part_rows` and no part is in flight: a write that takes them, to run on the writer's
    /// thread. The rows must end at a block's end (the store keeps one row per block and
    /// transaction by comparing with the last one), as they do between batches. Fails with
    /// the error of the part before, if it failed.
    pub fn take_history_part(
        &mut self,
        part_rows: usize,
    ) -> Result<Option<impl Future<Output = ()> + Send + 'static>, StoreError> {
        let held = self.events.len() + self.event_blocks.len() + self.event_transactions.len();
        if !self.history_ahead || held < part_rows || self.history_busy()? {
            return Ok(None);
        }
        let events = std::mem::take(&mut self.events);
        let blocks = std::mem::take(&mut self.event_blocks);
        let transactions = std::mem::take(&mut self.event_transactions);
        let bytes = std::mem::take(&mut self.history_heap)
            + events.slot_bytes()
            + blocks.slot_bytes()
            + transactions.slot_bytes();
        let (db, turn) = (self.writer.clone(), self.turn.clone());
        let (tx, done) = oneshot::channel();
        let (abort, registration) = AbortHandle::new_pair();
        self.part_in_flight = Some(PartInFlight { done, abort, bytes });
        let write = async move {
            let _turn = turn.lock().await;
            let written = write_part(&db, &events, &blocks, &transactions).await;
            // The rows go before the answer, so that the store counts them as long as they
            // are held.
            drop((events, blocks, transactions));
            let _ = tx.send(written);
        };
        Ok(Some(async move {
            let _ = Abortable::new(write, registration).await;
        }))
    }

    /// Whether a part is being written; a part that finished is forgotten, or its error
    /// returned.
    fn history_busy(&mut self) -> Result<bool, StoreError> {
        let Some(part) = &mut self.part_in_flight else { return Ok(false) };
        match part.done.try_recv() {
            Err(oneshot::error::TryRecvError::Empty) => Ok(true),
            Ok(written) => {
                self.part_in_flight = None;
                written.map(|_| false)
            }
            Err(oneshot::error::TryRecvError::Closed) => {
                self.part_in_flight = None;
                Err(StoreError::HistoryPartLost)
            }
        }
    }

    /// Waits for the part in flight, if any: a flush must not move the checkpoint past
    /// history that is not committed.
    pub async fn settle_history(&mut self) -> Result<(), StoreError> {
        let Some(mut part) = self.part_in_flight.take() else { return Ok(()) };
        match (&mut part.done).await {
            Ok(written) => written.map(|_| ()),
            Err(_) => Err(StoreError::HistoryPartLost),
        }
    }

    /// Bytes the part in flight holds.
    pub(super) fn part_bytes(&self) -> usize {
        self.part_in_flight.as_ref().map_or(0, |part| part.bytes)
    }

    /// Deletes this chain's history past its checkpoint (all of it, with no checkpoint):
    /// parts an earlier pipeline wrote ahead of a flush that never committed. Once per store,
    /// before anything of its own is written; a look first, so that a clean database takes
    /// no write lock.
    pub async fn clear_history_ahead(&mut self) -> Result<u64, StoreError> {
        if self.history_cleared {
            return Ok(0);
        }
        let chain = self.chain_id.column();
        let past = checkpoint::Entity::find_by_id(chain)
            .one(&self.db)
            .await
            .map_err(StoreError::db("read checkpoint"))?
            .map_or(-1, |c| c.block_number);
        let ahead = event_block::Entity::find()
            .filter(event_block::Column::ChainId.eq(chain))
            .filter(event_block::Column::BlockNumber.gt(past))
            .count(&self.db)
            .await
            .map_err(StoreError::db("look for history ahead"))?;
        if ahead > 0 {
            let _turn = self.turn.lock().await;
            // Nothing else writes this chain's checkpoint before its pipeline's first write.
            let txn = super::database::begin_write(&self.writer).await?;
            super::event_history::delete_from(&txn, chain, past + 1).await?;
            txn.commit().await.map_err(StoreError::db("commit history cleared"))?;
            tracing::info!(target: "indexer::store", chain = chain, after = past, blocks = ahead, "Deleted the event history written ahead of the checkpoint");
        }
        self.history_cleared = true;
        Ok(ahead)
    }
}

/// Writes a part's rows in one transaction; returns how many.
async fn write_part(
    db: &DatabaseConnection,
    events: &RowChunks<event::Model>,
    blocks: &RowChunks<event_block::Model>,
    transactions: &RowChunks<event_transaction::Model>,
) -> Result<usize, StoreError> {
    let txn = super::database::begin_write(db).await?;
    timed_insert::<event::Entity>(&txn, events.chunks(), "event").await?;
    timed_insert::<event_block::Entity>(&txn, blocks.chunks(), "event_block").await?;
    timed_insert::<event_transaction::Entity>(&txn, transactions.chunks(), "event_transaction")
        .await?;
    let started = std::time::Instant::now();
    txn.commit().await.map_err(StoreError::db("commit history part"))?;
    super::writer::record_table_time("history_commit", started);
    Ok(events.len() + blocks.len() + transactions.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_part_is_a_quarter_of_a_flush() {
        assert_eq!(part_rows(200_000), 50_000);
        assert_eq!(part_rows(1_500), 375);
        assert_eq!(part_rows(3), 1);
        assert_eq!(part_rows(0), 1);
    }
}
