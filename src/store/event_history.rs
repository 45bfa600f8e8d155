//! [`EntityStore::record_event`]: the history row of an applied event, packed (its topics and
//! data with the words its domain holds written as references), with one row per block and
//! per transaction among the events of a flush; and [`delete_from`], which deletes a chain's
//! history from a block on.

use std::sync::Arc;

use alloy::primitives::LogData;
use entities::{
    domain::{self, DomainKey},
    event, event_block, event_transaction,
    packed_words::PackedWords,
};
use sea_orm::{ColumnTrait, ConnectionTrait, EntityTrait, QueryFilter};

use super::{EntityStore, StoreError, row_size::RowSize};

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

impl EntityStore {
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
            let found = match self.tables.domains.newest_ref(&id) {
                Some(row) => Some(found(row)),
                None => self.domain(&id).await?.as_ref().map(found),
            };
            event.domain_seq = Some(found.as_ref().map_or(event::NO_DOMAIN, |(seq, _)| *seq));
            words = found.map(|(_, words)| words);
        }
        let topics = log.topics().get(1..).unwrap_or_default();
        event.topics = PackedWords::pack_words(topics.iter().map(|t| &t.0), words.as_ref());
        event.data = PackedWords::pack_with(&log.data, words.as_ref());
        self.history_heap += event.heap_bytes();
        self.events.push(event);
        if self.event_blocks.last() != Some(&block) {
            self.history_heap += block.heap_bytes();
            self.event_blocks.push(block);
        }
        if self.event_transactions.last() != Some(&transaction) {
            self.history_heap += transaction.heap_bytes();
            self.event_transactions.push(transaction);
        }
        Ok(())
    }
}

/// Deletes `chain`'s event history from block `first` on: what a reorg undoes, and what was
/// written ahead of a checkpoint that never followed ([`super::history_ahead`]).
pub(super) async fn delete_from<C: ConnectionTrait>(
    db: &C,
    chain: i64,
    first: i64,
) -> Result<(), StoreError> {
    event::Entity::delete_many()
        .filter(event::Column::ChainId.eq(chain))
        .filter(event::Column::BlockNumber.gte(first))
        .exec(db)
        .await
        .map_err(StoreError::db("delete events"))?;
    event_block::Entity::delete_many()
        .filter(event_block::Column::ChainId.eq(chain))
        .filter(event_block::Column::BlockNumber.gte(first))
        .exec(db)
        .await
        .map_err(StoreError::db("delete event blocks"))?;
    event_transaction::Entity::delete_many()
        .filter(event_transaction::Column::ChainId.eq(chain))
        .filter(event_transaction::Column::BlockNumber.gte(first))
        .exec(db)
        .await
        .map_err(StoreError::db("delete event transactions"))?;
    Ok(())
}
