//! [`Handler`]: applies decoded events to the [`EntityStore`] strictly in chain order and
//! flushes the dirty set with the checkpoint. Messages: [`DecodedBatch`] from the decoder.
//!
//! Batches are handled atomically (`AtomicResponse`): no second batch starts before the first
//! is applied. A batch must begin right after the previous one; a gap is refused. After any
//! fatal error the handler is poisoned and refuses every later batch, so a half-applied batch
//! can never be flushed: the supervisor replaces the whole pipeline instead.

use std::time::Instant;

use actix::prelude::*;

use super::{PipelineError, mailbox::MailboxGauge};
use crate::{
    ens::{DecodedEvent, IndexContext, apply_event},
    store::{Checkpoint, EntityStore},
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
}

/// The handler actor of one chain.
#[derive(Debug)]
pub struct Handler {
    ctx: IndexContext,
    store: Option<EntityStore>,
    flush_rows: usize,
    mailbox_capacity: usize,
    gauge: MailboxGauge,
    expected_from: Option<u64>,
    poisoned: bool,
}

impl Handler {
    /// A handler writing through `store`, flushing at `flush_rows` dirty rows.
    pub fn new(
        ctx: IndexContext,
        store: EntityStore,
        flush_rows: usize,
        mailbox_capacity: usize,
        gauge: MailboxGauge,
    ) -> Self {
        Self {
            ctx,
            store: Some(store),
            flush_rows,
            mailbox_capacity,
            gauge,
            expected_from: None,
            poisoned: false,
        }
    }
}

impl Actor for Handler {
    type Context = Context<Self>;

    fn started(&mut self, ctx: &mut Self::Context) {
        ctx.set_mailbox_capacity(self.mailbox_capacity);
    }
}

async fn apply_batch(
    ctx: IndexContext,
    mut store: EntityStore,
    batch: DecodedBatch,
    flush_rows: usize,
) -> (EntityStore, Result<(), PipelineError>) {
    let chain = ctx.chain_id.to_string();
    for decoded in &batch.events {
        let event = decoded.event.name();
        let started = Instant::now();
        match apply_event(&ctx, &mut store, decoded).await {
            Ok(()) => {
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
    if batch.at_head || store.dirty_rows() >= flush_rows {
        let checkpoint = Checkpoint {
            chain_id: ctx.chain_id,
            block_number: batch.to,
            block_hash: batch.to_hash,
        };
        let started = Instant::now();
        match store.flush(&checkpoint).await {
            Ok(rows) => {
                metrics::histogram!("ensemble_flush_seconds", "chain" => chain.clone())
                    .record(started.elapsed().as_secs_f64());
                metrics::histogram!("ensemble_flush_rows", "chain" => chain.clone())
                    .record(rows as f64);
                metrics::gauge!("ensemble_chain_indexed_block", "chain" => chain.clone())
                    .set(batch.to as f64);
                tracing::debug!(target: "indexer::handler", chain = ctx.chain_id, block = batch.to, rows, "Flushed");
            }
            Err(err) => return (store, Err(err.into())),
        }
    }
    (store, Ok(()))
}

impl actix::Handler<DecodedBatch> for Handler {
    type Result = AtomicResponse<Self, Result<(), PipelineError>>;

    fn handle(&mut self, batch: DecodedBatch, _: &mut Self::Context) -> Self::Result {
        self.gauge.dequeued();
        let refused = if self.poisoned {
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
                self.poisoned = true;
                let err = refused.unwrap_or(PipelineError::Poisoned { actor: "handler" });
                return AtomicResponse::new(Box::pin(fut::ready(Err(err))));
            }
        };
        let next = batch.to + 1;
        let fut = apply_batch(self.ctx.clone(), store, batch, self.flush_rows);
        AtomicResponse::new(Box::pin(fut.into_actor(self).map(move |(store, result), act, _| {
            act.store = Some(store);
            match &result {
                Ok(()) => act.expected_from = Some(next),
                Err(_) => act.poisoned = true,
            }
            result
        })))
    }
}
