//! [`Handler`]: applies decoded events to the [`EntityStore`] strictly in chain order and
//! flushes the dirty set with the checkpoint. Messages: [`DecodedBatch`] from the decoder.
//!
//! Batches are handled atomically (`AtomicResponse`): no second batch starts before the first
//! is applied. A batch must begin right after the previous one; a gap is refused. After any
//! fatal error the handler is poisoned and refuses every later batch, so a half-applied batch
//! can never be flushed: the supervisor replaces the whole pipeline instead.
//!
//! Before a batch is applied, the rows it will read are prefetched in a few queries. A full
//! dirty set is written behind, on the handler's writer thread, while the next batches are
//! applied; the chain's progress moves only when that write has committed. On SQLite the
//! event history goes ahead between those flushes, in parts (`store::history_ahead`).

use std::time::Instant;

use actix::prelude::*;

use std::sync::Arc;

use super::{PipelineError, mailbox::MailboxGauge, progress::ChainProgress};
use crate::{
    ens::{DecodedEvent, IndexContext, apply_event, history::history_rows},
    store::{Checkpoint, Committed, EntityStore, history_ahead::part_rows, journal::JournalWindow},
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

/// How often a handler looks at the heal log between batches.
pub const IDLE_HEAL_INTERVAL: std::time::Duration = std::time::Duration::from_secs(1);

/// Apply what the heal log holds for this chain now, between batches, and commit it.
#[derive(Debug, Message)]
#[rtype(result = "Result<(), PipelineError>")]
struct ApplyHeals;

/// The handler actor of one chain.
#[derive(Debug)]
pub struct Handler {
    ctx: IndexContext,
    /// The store and what is pending on it; taken while a batch is applied.
    carry: Option<Carry>,
    /// The thread that writes flushes behind (stopped with the handler).
    writer: actix::Arbiter,
    flush_rows: usize,
    mailbox_capacity: usize,
    gauge: MailboxGauge,
    progress: Arc<ChainProgress>,
    expected_from: Option<u64>,
    /// Set after a failure (state may be half-applied) or a drain: refuse every batch.
    closed: bool,
    /// An [`ApplyHeals`] is queued (at most one is).
    heal_tick_queued: bool,
    /// When the last batch arrived or was done.
    last_batch: Instant,
}

impl Handler {
    /// A handler writing through `store`, flushing at `flush_rows` dirty rows or when the
    /// dirty rows hold the store's share of the memory budget (`EntityStore::flush_bytes`).
    pub fn new(
        ctx: IndexContext,
        store: EntityStore,
        flush_rows: usize,
        mailbox_capacity: usize,
        gauge: MailboxGauge,
        progress: Arc<ChainProgress>,
    ) -> Self {
        let writer = actix::Arbiter::new();
        Self {
            ctx,
            carry: Some(Carry { store, writer: writer.handle(), unflushed: None, writing: None }),
            writer,
            flush_rows,
            mailbox_capacity,
            gauge,
            progress,
            expected_from: None,
            closed: false,
            heal_tick_queued: false,
            last_batch: Instant::now(),
        }
    }
}

impl Actor for Handler {
    type Context = Context<Self>;

    fn started(&mut self, ctx: &mut Self::Context) {
        ctx.set_mailbox_capacity(self.mailbox_capacity);
        // A chain at its head may see no batch for a long time (or none at all, when it has
        // reached its end block); labels other chains learn must still reach its names.
        ctx.run_interval(IDLE_HEAL_INTERVAL, |act, ctx| {
            // Only when idle: a chain receiving batches applies the log with each of them.
            let idle = act.last_batch.elapsed() >= IDLE_HEAL_INTERVAL;
            if idle && act.carry.is_some() && !act.closed && !act.heal_tick_queued {
                act.heal_tick_queued = true;
                ctx.notify(ApplyHeals);
            }
        });
    }

    fn stopped(&mut self, _: &mut Self::Context) {
        self.writer.stop();
    }
}

/// A flush being written in the background: at most one at a time, so the database never
/// holds more than one uncommitted batch of this chain and commits stay in chain order.
#[derive(Debug)]
pub struct Writing {
    done: tokio::sync::oneshot::Receiver<Result<usize, crate::store::StoreError>>,
    abort: futures::future::AbortHandle,
    checkpoint: Checkpoint,
    started: Instant,
}

impl Drop for Writing {
    /// A pipeline that is dropped (not drained) takes its write with it: the transaction
    /// rolls back unless it already committed, and either way rows and checkpoint agree.
    /// A write must never outlive its pipeline and commit under the next one's feet.
    fn drop(&mut self) {
        self.abort.abort();
    }
}

/// Starts writing everything dirty with `checkpoint` on the writer thread, without waiting
/// for it. The write runs on its own thread: on the handler's thread it would only make
/// progress while the handler waits, and applying a batch rarely waits. Both engines write
/// behind: SQLite went from 14.3k to 18.4k events/s, PostgreSQL from 7.2k to 10.8k once the
/// allocator was mimalloc (with glibc's, PostgreSQL had lost by it; BENCHMARKS.md).
fn write_behind(
    store: &mut EntityStore,
    writer: &actix::ArbiterHandle,
    checkpoint: Checkpoint,
) -> Writing {
    record_flush_bytes(store, &checkpoint);
    let pending = store.begin_flush();
    let cp = checkpoint.clone();
    let (tx, done) = tokio::sync::oneshot::channel();
    let (abort, registration) = futures::future::AbortHandle::new_pair();
    let write = futures::future::Abortable::new(
        async move {
            // The write (and its share of the rows) ends before the answer goes out, so the
            // store can take the rows back without copying them.
            let written = pending.write_behind(&cp).await;
            let _ = tx.send(written);
        },
        registration,
    );
    writer.spawn(async move {
        let _ = write.await;
    });
    Writing { done, abort, checkpoint, started: Instant::now() }
}

/// Waits for the write in flight, if any; once it is committed its rows are the database's
/// and its checkpoint is the chain's progress.
async fn settle(
    store: &mut EntityStore,
    writing: Option<Writing>,
    progress: &ChainProgress,
) -> Result<(), PipelineError> {
    let Some(writing) = writing else { return Ok(()) };
    let chain = writing.checkpoint.chain_id;
    let committed = committed(store, writing, progress).await?;
    let started = Instant::now();
    store.forget_committed(committed);
    record_phase(chain, Phase::WriteHandover, started);
    Ok(())
}

/// Waits for `writing` to commit and takes its rows out of flight, for the caller to have the
/// read cache forget ([`EntityStore::take_committed`]).
async fn committed(
    store: &mut EntityStore,
    mut writing: Writing,
    progress: &ChainProgress,
) -> Result<Committed, PipelineError> {
    let started = Instant::now();
    let written = (&mut writing.done).await;
    record_phase(writing.checkpoint.chain_id, Phase::WriteWait, started);
    let rows = match written {
        Ok(result) => result?,
        Err(_) => return Err(PipelineError::MailboxClosed { actor: "writer" }),
    };
    let committed = store.take_committed();
    record_flush(&writing.checkpoint, writing.started, rows, progress);
    Ok(committed)
}

/// Waits for the write in flight, if any, and starts writing everything dirty behind it
/// with `checkpoint`. The read cache forgets the committed rows after the next write has
/// begun: the writer waits for nothing the handler does with them (when the rows went into
/// the cache, the writer had waited 8.9 s of a 5M-event SQLite backfill for those inserts,
/// against 1.3 s for handing the next flush over; BENCHMARKS.md).
async fn write_next(
    store: &mut EntityStore,
    writing: &mut Option<Writing>,
    writer: &actix::ArbiterHandle,
    checkpoint: Checkpoint,
    progress: &ChainProgress,
) -> Result<(), PipelineError> {
    // The flush moves the checkpoint past the history a part took: that must be committed.
    let started = Instant::now();
    store.settle_history().await?;
    record_phase(checkpoint.chain_id, Phase::WriteWait, started);
    let committed = match writing.take() {
        Some(last) => Some(committed(store, last, progress).await?),
        None => None,
    };
    // No await from here on: the store is not read while the committed rows are out of
    // flight and the cache may still hold older versions of them.
    let (chain, started) = (checkpoint.chain_id, Instant::now());
    *writing = Some(write_behind(store, writer, checkpoint));
    if let Some(committed) = committed {
        store.forget_committed(committed);
    }
    record_phase(chain, Phase::WriteHandover, started);
    Ok(())
}

/// Records how much memory the flush about to begin holds.
fn record_flush_bytes(store: &EntityStore, checkpoint: &Checkpoint) {
    metrics::histogram!("ensemble_flush_bytes", "chain" => checkpoint.chain_id.to_string())
        .record(store.dirty_bytes() as f64);
}

fn record_flush(checkpoint: &Checkpoint, started: Instant, rows: usize, progress: &ChainProgress) {
    let chain = checkpoint.chain_id.to_string();
    metrics::histogram!("ensemble_flush_seconds", "chain" => chain.clone())
        .record(started.elapsed().as_secs_f64());
    metrics::histogram!("ensemble_flush_rows", "chain" => chain.clone()).record(rows as f64);
    metrics::gauge!("ensemble_chain_indexed_block", "chain" => chain)
        .set(checkpoint.block_number as f64);
    progress.set_indexed(checkpoint.block_number);
    tracing::debug!(target: "indexer::handler", chain = checkpoint.chain_id.get(), block = checkpoint.block_number, rows, "Flushed");
}

/// Flushes `store` with `checkpoint`, waits for it, and records the metrics of the flush.
async fn flush(
    store: &mut EntityStore,
    checkpoint: &Checkpoint,
    journal: Option<&JournalWindow>,
    progress: &ChainProgress,
) -> Result<(), PipelineError> {
    let started = Instant::now();
    record_flush_bytes(store, checkpoint);
    let rows = store.flush(checkpoint, journal).await?;
    record_flush(checkpoint, started, rows, progress);
    record_phase(checkpoint.chain_id, Phase::WriteWait, started);
    Ok(())
}

/// What the handler spends a batch's time on, in `ensemble_handler_phase_seconds{chain,
/// phase}`: computing (applying events) or waiting for the database (most of the prefetch,
/// the write behind). Over a backfill the sums say which of them bounds the chain: the
/// pipeline's thread applies while the database reads and writes elsewhere, so time spent
/// waiting is time that thread did not compute.
#[derive(Clone, Copy, Debug)]
enum Phase {
    /// Listing the keys a batch will read and reading those not in memory.
    Prefetch,
    /// Applying its events and building their history rows.
    Apply,
    /// Caching the rows the batch read and left unchanged.
    BatchEnd,
    /// Waiting for a flush to commit: the one written behind, or one written in place.
    WriteWait,
    /// Handing the next flush to the writer and caching the committed flush's rows.
    WriteHandover,
}

impl Phase {
    fn as_str(self) -> &'static str {
        match self {
            Self::Prefetch => "prefetch",
            Self::Apply => "apply",
            Self::BatchEnd => "batch_end",
            Self::WriteWait => "write_wait",
            Self::WriteHandover => "write_handover",
        }
    }
}

/// Records the time since `started` as `phase` of `chain`'s handler.
fn record_phase(chain: crate::ChainId, phase: Phase, started: Instant) {
    metrics::histogram!("ensemble_handler_phase_seconds", "chain" => chain.to_string(), "phase" => phase.as_str())
        .record(started.elapsed().as_secs_f64());
}

/// What the handler carries from one batch to the next.
#[derive(Debug)]
struct Carry {
    store: EntityStore,
    /// The thread flushes are written behind on.
    writer: actix::ArbiterHandle,
    /// Checkpoint of applied changes not handed to a flush yet.
    unflushed: Option<Checkpoint>,
    writing: Option<Writing>,
}

/// Applies the heal log's entries for this chain. A large import renames many domains: they
/// are flushed chunk by chunk with the last applied block, within the budget. Returns the
/// labels that renamed something.
async fn apply_heals(
    ctx: &IndexContext,
    store: &mut EntityStore,
    writing: &mut Option<Writing>,
    unflushed: &mut Option<Checkpoint>,
    flush_rows: usize,
    progress: &ChainProgress,
) -> Result<usize, PipelineError> {
    let mut renamed = 0;
    loop {
        let (count, more) = crate::ens::heal::apply_log_chunk(store).await?;
        renamed += count;
        if !more {
            return Ok(renamed);
        }
        if store.dirty_rows() >= flush_rows || store.dirty_bytes() >= store.flush_bytes() {
            settle(store, writing.take(), progress).await?;
            let committed = crate::store::writer::read_checkpoint(store.db(), ctx.chain_id).await?;
            if let Some(checkpoint) = unflushed.take().or(committed) {
                flush(store, &checkpoint, None, progress).await?;
            }
        }
    }
}

/// Between batches: applies the heal log and commits what it changed (and the mark) with the
/// applied block, so an idle chain's names heal within [`IDLE_HEAL_INTERVAL`].
async fn apply_idle_heals(
    ctx: &IndexContext,
    carry: &mut Carry,
    flush_rows: usize,
    progress: &ChainProgress,
) -> Result<(), PipelineError> {
    let Carry { store, unflushed, writing, .. } = carry;
    let renamed = apply_heals(ctx, store, writing, unflushed, flush_rows, progress).await?;
    // Commit renamed names now. A mark that merely moved (past entries that renamed nothing,
    // this chain's own among them) is stored with the next flush, unless nothing else is
    // pending: a flush here would cut a backfill's batch of rows short, and waiting here for
    // a write in flight would stop the next batches from being applied while it is written.
    let only_mark = renamed == 0 && store.heal_mark_moved();
    if renamed == 0
        && (!only_mark || store.dirty_rows() > 0 || unflushed.is_some() || writing.is_some())
    {
        return Ok(());
    }
    settle(store, writing.take(), progress).await?;
    let committed = crate::store::writer::read_checkpoint(store.db(), ctx.chain_id).await?;
    // A chain that has committed nothing has no names to heal; its mark is stored with its
    // first flush.
    if let Some(checkpoint) = unflushed.take().or(committed) {
        flush(store, &checkpoint, None, progress).await?;
    }
    Ok(())
}

/// Applies a batch. When enough is dirty, the flush is written behind while the next batches
/// are applied; a batch at the head or in a journal window is flushed and waited for, so the
/// API sees it and a reorg can undo exactly it.
async fn apply_batch(
    ctx: IndexContext,
    carry: Carry,
    batch: DecodedBatch,
    flush_rows: usize,
    progress: Arc<ChainProgress>,
) -> (Carry, Result<(), PipelineError>) {
    let mut carry = carry;
    let result = apply(&ctx, &mut carry, batch, flush_rows, &progress).await;
    (carry, result)
}

async fn apply(
    ctx: &IndexContext,
    carry: &mut Carry,
    batch: DecodedBatch,
    flush_rows: usize,
    progress: &ChainProgress,
) -> Result<(), PipelineError> {
    let Carry { store, writer, unflushed, writing } = carry;
    let chain = ctx.chain_id.to_string();
    // What an earlier pipeline wrote ahead of the checkpoint goes before this one writes.
    store.clear_history_ahead().await?;
    // A journal window must hold exactly its own changes: commit earlier work first.
    if batch.journal.is_some() {
        settle(store, writing.take(), progress).await?;
        if let Some(earlier) = unflushed.take() {
            flush(store, &earlier, None, progress).await?;
        }
    }
    // Labels other chains and imports made known since the last batch: this chain's domains
    // are renamed before its events read them (`ens::heal`).
    apply_heals(ctx, store, writing, unflushed, flush_rows, progress).await?;
    // Every row the batch will read that is not in memory, in a few queries.
    let started = Instant::now();
    store.prefetch(crate::ens::prefetch::keys(ctx, &batch.events)).await?;
    record_phase(ctx.chain_id, Phase::Prefetch, started);
    let applying = Instant::now();
    // Each event counts into and times itself under its name. The handles are looked up
    // once per name and batch: a lookup builds the labels and searches the registry, and at
    // every event that was 3% of the pipeline thread's time (BENCHMARKS.md).
    let mut event_metrics: foldhash::HashMap<&'static str, (metrics::Counter, metrics::Histogram)> =
        foldhash::HashMap::default();
    // Position of an event among those decoded from the same log.
    let mut seq = 0;
    let mut previous_log = None;
    for decoded in &batch.events {
        let event = decoded.event.name();
        let started = Instant::now();
        let log = (decoded.meta.block_number, decoded.meta.log_index);
        seq = if previous_log == Some(log) { seq + 1 } else { 0 };
        previous_log = Some(log);
        // Built before the event is applied: an event the history cannot record is not applied.
        let history = history_rows(ctx, decoded, seq)?;
        let (processed, seconds) = event_metrics.entry(event).or_insert_with(|| {
            (
                metrics::counter!("ensemble_events_processed_total", "chain" => chain.clone(), "event" => event),
                metrics::histogram!("ensemble_handler_seconds", "chain" => chain.clone(), "event" => event),
            )
        });
        match apply_event(ctx, store, decoded).await {
            Ok(()) => {
                store.record_event(history).await?;
                processed.increment(1);
            }
            Err(err) if !err.is_fatal() => {
                metrics::counter!("ensemble_events_skipped_total", "chain" => chain.clone(), "event" => event)
                    .increment(1);
                tracing::warn!(
                    target: "indexer::handler",
                    chain = ctx.chain_id.get(),
                    block = decoded.meta.block_number,
                    log_index = decoded.meta.log_index,
                    tx = %decoded.meta.tx_hash,
                    event,
                    error = %err,
                    "Skipped event"
                );
            }
            Err(err) => return Err(err.into()),
        }
        seconds.record(started.elapsed().as_secs_f64());
    }
    record_phase(ctx.chain_id, Phase::Apply, applying);
    let started = Instant::now();
    store.end_batch();
    record_phase(ctx.chain_id, Phase::BatchEnd, started);
    progress.add_events(batch.events.len() as u64);
    progress.set_applied(batch.to);
    let checkpoint =
        Checkpoint { chain_id: ctx.chain_id, block_number: batch.to, block_hash: batch.to_hash };
    *unflushed = None;
    if batch.at_head || batch.journal.is_some() {
        settle(store, writing.take(), progress).await?;
        flush(store, &checkpoint, batch.journal.as_ref(), progress).await?;
    } else if store.dirty_rows() >= flush_rows || store.dirty_bytes() >= store.flush_bytes() {
        write_next(store, writing, writer, checkpoint, progress).await?;
    } else {
        *unflushed = Some(checkpoint);
        // Between flushes of a chain catching up, its history may go ahead in a part of its
        // own (on SQLite: `store::history_ahead` says why).
        if let Some(part) = store.take_history_part(part_rows(flush_rows))? {
            writer.spawn(part);
        }
    }
    Ok(())
}

impl actix::Handler<DecodedBatch> for Handler {
    type Result = AtomicResponse<Self, Result<(), PipelineError>>;

    fn handle(&mut self, batch: DecodedBatch, _: &mut Self::Context) -> Self::Result {
        self.gauge.dequeued(batch.sent_at);
        self.last_batch = Instant::now();
        let refused = if self.closed {
            Some(PipelineError::Poisoned { actor: "handler" })
        } else if let Some(expected) = self.expected_from.filter(|e| *e != batch.from) {
            Some(PipelineError::Gap { expected, got: batch.from })
        } else {
            None
        };
        let carry = match (refused, self.carry.take()) {
            (None, Some(carry)) => carry,
            (refused, carry) => {
                self.carry = carry;
                self.closed = true;
                let err = refused.unwrap_or(PipelineError::Poisoned { actor: "handler" });
                return AtomicResponse::new(Box::pin(fut::ready(Err(err))));
            }
        };
        let next = batch.to + 1;
        let fut =
            apply_batch(self.ctx.clone(), carry, batch, self.flush_rows, self.progress.clone());
        AtomicResponse::new(Box::pin(fut.into_actor(self).map(move |(carry, result), act, _| {
            act.carry = Some(carry);
            // Idle time counts from here: a batch waiting for the write before it is busy.
            act.last_batch = Instant::now();
            match result {
                Ok(()) => {
                    act.expected_from = Some(next);
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

impl actix::Handler<ApplyHeals> for Handler {
    type Result = AtomicResponse<Self, Result<(), PipelineError>>;

    fn handle(&mut self, _: ApplyHeals, _: &mut Self::Context) -> Self::Result {
        self.heal_tick_queued = false;
        if self.closed {
            return AtomicResponse::new(Box::pin(fut::ready(Ok(()))));
        }
        let Some(mut carry) = self.carry.take() else {
            return AtomicResponse::new(Box::pin(fut::ready(Ok(()))));
        };
        let (ctx, flush_rows, progress) =
            (self.ctx.clone(), self.flush_rows, self.progress.clone());
        let fut = async move {
            let result = apply_idle_heals(&ctx, &mut carry, flush_rows, &progress).await;
            (carry, result)
        };
        AtomicResponse::new(Box::pin(fut.into_actor(self).map(|(carry, result), act, _| {
            act.carry = Some(carry);
            if let Err(err) = &result {
                // The next batch sees the same failure and reports it through the pipeline;
                // until then nothing more is written.
                act.closed = true;
                tracing::warn!(target: "indexer::handler", chain = act.ctx.chain_id.get(), error = %err, "Applying logged heals failed");
            }
            result
        })))
    }
}

impl actix::Handler<Drain> for Handler {
    type Result = AtomicResponse<Self, Result<(), PipelineError>>;

    fn handle(&mut self, drain: Drain, _: &mut Self::Context) -> Self::Result {
        // A closed handler may hold a half-applied batch: it must never flush. A write
        // already in flight holds only whole batches: it is waited for either way (a crash
        // would have left it committed or not, and both resume correctly).
        let was_closed = std::mem::replace(&mut self.closed, true);
        let Some(mut carry) = self.carry.take() else {
            return AtomicResponse::new(Box::pin(fut::ready(Ok(()))));
        };
        let commit = drain.flush && !was_closed;
        let progress = self.progress.clone();
        let fut = async move {
            let result = async {
                settle(&mut carry.store, carry.writing.take(), &progress).await?;
                carry.store.settle_history().await?;
                if let (true, Some(checkpoint)) = (commit, carry.unflushed.take()) {
                    flush(&mut carry.store, &checkpoint, None, &progress).await?;
                }
                Ok(())
            }
            .await;
            (carry, result)
        };
        AtomicResponse::new(Box::pin(fut.into_actor(self).map(|(carry, result), act, _| {
            act.carry = Some(carry);
            result
        })))
    }
}
