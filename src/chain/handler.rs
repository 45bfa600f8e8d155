//! [`Handler`]: applies decoded events to the [`EntityStore`] strictly in chain order and
//! flushes the dirty set with the checkpoint. Messages: [`DecodedBatch`] from the decoder.
//!
//! Batches are handled atomically (`AtomicResponse`): no second batch starts before the first
//! is applied. A batch must begin right after the previous one; a gap is refused. After any
//! fatal error the handler is poisoned and refuses every later batch, so a half-applied batch
//! can never be flushed: the supervisor replaces the whole pipeline instead.

use std::time::Instant;

use actix::prelude::*;

use std::sync::Arc;

use super::{PipelineError, mailbox::MailboxGauge, progress::ChainProgress};
use crate::{
    ens::{DecodedEvent, IndexContext, apply_event, history::history_row},
    store::{Checkpoint, EntityStore, journal::JournalWindow},
};

/// A decoded block range.
#[derive(Debug, Message)]
#[rtype(result = "Result<(), PipelineError>")]
pub struct DecodedBatch {
    /// First block of the range.
    pub from: u64,
    /// Last block of the range (inclusive).
    pub to: u64,
    /// Hash of `to`.
    pub to_hash: String,
    /// Events in chain order.
    pub events: Vec<DecodedEvent>,
    /// Whether `to` is the current target head: flush now so the API sees it.
    pub at_head: bool,
    /// When it was sent (mailbox wait time).
    pub sent_at: std::time::Instant,
    /// Set when the range is above finality: its changes are journaled so a reorg can undo
    /// them, and it is flushed on its own.
    pub journal: Option<JournalWindow>,
}

/// Finish what is queued, optionally flush it, and accept nothing more: how a pipeline is
/// stopped without losing or half-writing a batch.
#[derive(Debug, Message)]
#[rtype(result = "Result<(), PipelineError>")]
pub struct Drain {
    /// Commit what was applied since the last flush.
    pub flush: bool,
}

/// The handler actor of one chain.
#[derive(Debug)]
pub struct Handler {
    ctx: IndexContext,
    store: Option<EntityStore>,
    flush_rows: usize,
    mailbox_capacity: usize,
    gauge: MailboxGauge,
    progress: Arc<ChainProgress>,
    expected_from: Option<u64>,
    /// Checkpoint of the last applied batch when it is not flushed yet.
    unflushed: Option<Checkpoint>,
    /// Set after a failure (state may be half-applied) or a drain: refuse every batch.
    closed: bool,
}

impl Handler {
    /// A handler writing through `store`, flushing at `flush_rows` dirty rows.
    pub fn new(
        ctx: IndexContext,
        store: EntityStore,
        flush_rows: usize,
        mailbox_capacity: usize,
        gauge: MailboxGauge,
        progress: Arc<ChainProgress>,
    ) -> Self {
        Self {
            ctx,
            store: Some(store),
            flush_rows,
            mailbox_capacity,
            gauge,
            progress,
            expected_from: None,
            unflushed: None,
            closed: false,
        }
    }
}

impl Actor for Handler {
    type Context = Context<Self>;

    fn started(&mut self, ctx: &mut Self::Context) {
        ctx.set_mailbox_capacity(self.mailbox_capacity);
    }
}

/// Flushes `store` with `checkpoint` and records the metrics of the flush.
async fn flush(
    store: &mut EntityStore,
    checkpoint: &Checkpoint,
    journal: Option<&JournalWindow>,
    progress: &ChainProgress,
) -> Result<(), PipelineError> {
    let chain = checkpoint.chain_id.to_string();
    let started = Instant::now();
    let rows = store.flush(checkpoint, journal).await?;
    metrics::histogram!("ensemble_flush_seconds", "chain" => chain.clone())
        .record(started.elapsed().as_secs_f64());
    metrics::histogram!("ensemble_flush_rows", "chain" => chain.clone()).record(rows as f64);
    metrics::gauge!("ensemble_chain_indexed_block", "chain" => chain)
        .set(checkpoint.block_number as f64);
    progress.set_indexed(checkpoint.block_number);
    tracing::debug!(target: "indexer::handler", chain = checkpoint.chain_id, block = checkpoint.block_number, rows, "Flushed");
    Ok(())
}

/// Applies a batch; flushes when enough is dirty or the batch reached the head. Returns the
/// store and whether the batch's checkpoint is still unflushed.
async fn apply_batch(
    ctx: IndexContext,
    mut store: EntityStore,
    batch: DecodedBatch,
    flush_rows: usize,
    unflushed: Option<Checkpoint>,
    progress: Arc<ChainProgress>,
) -> (EntityStore, Result<bool, PipelineError>) {
    let chain = ctx.chain_id.to_string();
    // A journal window must hold exactly its own changes: commit earlier work first.
    if let (Some(_), Some(earlier)) = (&batch.journal, &unflushed)
        && let Err(err) = flush(&mut store, earlier, None, &progress).await
    {
        return (store, Err(err));
    }
    // Every row the batch will read that is not in memory, in a few queries.
    let keys = crate::ens::prefetch::keys(&ctx, &batch.events);
    if let Err(err) = store.prefetch(keys).await {
        return (store, Err(err.into()));
    }
    // Position of an event among those decoded from the same log.
    let mut seq = 0;
    let mut previous_log = None;
    for decoded in &batch.events {
        let event = decoded.event.name();
        let started = Instant::now();
        let log = (decoded.meta.block_number, decoded.meta.log_index);
        seq = if previous_log == Some(log) { seq + 1 } else { 0 };
        previous_log = Some(log);
        match apply_event(&ctx, &mut store, decoded).await {
            Ok(()) => {
                store.record_event(history_row(&ctx, decoded, seq));
                metrics::counter!("ensemble_events_processed_total", "chain" => chain.clone(), "event" => event)
                    .increment(1);
            }
            Err(err) if !err.is_fatal() => {
                metrics::counter!("ensemble_events_skipped_total", "chain" => chain.clone(), "event" => event)
                    .increment(1);
                tracing::warn!(
                    target: "indexer::handler",
                    chain = ctx.chain_id,
                    block = decoded.meta.block_number,
                    log_index = decoded.meta.log_index,
                    tx = %decoded.meta.tx_hash,
                    event,
                    error = %err,
                    "Skipped event"
                );
            }
            Err(err) => return (store, Err(err.into())),
        }
        metrics::histogram!("ensemble_handler_seconds", "chain" => chain.clone(), "event" => event)
            .record(started.elapsed().as_secs_f64());
    }
    progress.add_events(batch.events.len() as u64);
    let checkpoint =
        Checkpoint { chain_id: ctx.chain_id, block_number: batch.to, block_hash: batch.to_hash };
    if batch.at_head || batch.journal.is_some() || store.dirty_rows() >= flush_rows {
        if let Err(err) = flush(&mut store, &checkpoint, batch.journal.as_ref(), &progress).await {
            return (store, Err(err));
        }
        return (store, Ok(false));
    }
    (store, Ok(true))
}

impl actix::Handler<DecodedBatch> for Handler {
    type Result = AtomicResponse<Self, Result<(), PipelineError>>;

    fn handle(&mut self, batch: DecodedBatch, _: &mut Self::Context) -> Self::Result {
        self.gauge.dequeued(batch.sent_at);
        let refused = if self.closed {
            Some(PipelineError::Poisoned { actor: "handler" })
        } else if let Some(expected) = self.expected_from.filter(|e| *e != batch.from) {
            Some(PipelineError::Gap { expected, got: batch.from })
        } else {
            None
        };
        let store = match (refused, self.store.take()) {
            (None, Some(store)) => store,
            (refused, store) => {
                self.store = store;
                self.closed = true;
                let err = refused.unwrap_or(PipelineError::Poisoned { actor: "handler" });
                return AtomicResponse::new(Box::pin(fut::ready(Err(err))));
            }
        };
        let next = batch.to + 1;
        let pending = Checkpoint {
            chain_id: self.ctx.chain_id,
            block_number: batch.to,
            block_hash: batch.to_hash.clone(),
        };
        let unflushed = self.unflushed.take();
        let fut = apply_batch(
            self.ctx.clone(),
            store,
            batch,
            self.flush_rows,
            unflushed,
            self.progress.clone(),
        );
        AtomicResponse::new(Box::pin(fut.into_actor(self).map(move |(store, result), act, _| {
            act.store = Some(store);
            match result {
                Ok(unflushed) => {
                    act.expected_from = Some(next);
                    act.unflushed = unflushed.then_some(pending);
                    Ok(())
                }
                Err(err) => {
                    act.closed = true;
                    Err(err)
                }
            }
        })))
    }
}

impl actix::Handler<Drain> for Handler {
    type Result = AtomicResponse<Self, Result<(), PipelineError>>;

    fn handle(&mut self, drain: Drain, _: &mut Self::Context) -> Self::Result {
        // A closed handler may hold a half-applied batch: it must never flush.
        let was_closed = std::mem::replace(&mut self.closed, true);
        let checkpoint = if drain.flush && !was_closed { self.unflushed.take() } else { None };
        let (Some(checkpoint), Some(mut store)) = (checkpoint, self.store.take()) else {
            return AtomicResponse::new(Box::pin(fut::ready(Ok(()))));
        };
        let progress = self.progress.clone();
        let fut = async move {
            let result = flush(&mut store, &checkpoint, None, &progress).await;
            (store, result)
        };
        AtomicResponse::new(Box::pin(fut.into_actor(self).map(|(store, result), act, _| {
            act.store = Some(store);
            result
        })))
    }
}
