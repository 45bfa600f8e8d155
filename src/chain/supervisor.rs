//! [`ChainSupervisor`]: owns one chain's pipeline (handler, decoder, fetcher), replaces it when
//! it fails, and obeys control commands. Messages: [`PipelineFailed`] and [`PipelineFinished`]
//! from its fetcher; [`super::control::Control`] (restart, pause, resume, shutdown) and
//! [`super::status::GetStatus`] from the
//! service and the admin API.
//!
//! Every pipeline starts from the database checkpoint with a fresh entity store, so a restart
//! is a resume. A pipeline is always *drained* before another one starts: the fetcher stops,
//! the decoder and handler finish what is queued, and the handler either commits it (a
//! deliberate stop) or, after a failure, writes nothing more. Two pipelines of one chain never
//! write at the same time. Each pipeline has a generation number, so a late report from a
//! replaced pipeline is ignored.
//!
//! A pipeline's fetcher and decoder run on a thread of their own ([`FetchThread`]); its
//! handler runs on the supervisor's thread and writes on a thread of its own.
//!
//! Failures restart with exponential backoff (capped, reset after a healthy run); a fatal error
//! (the endpoint serves another chain) stops the chain instead of looping. Every
//! [`STATUS_INTERVAL`] the supervisor writes the chain's status row ([`super::status`]);
//! operator commands are in [`super::control`].

use std::{
    collections::HashMap,
    sync::Arc,
    time::{Duration, Instant},
};

use actix::prelude::*;
use sea_orm::DatabaseConnection;

use super::{
    PipelineError,
    decoder::{DecodeJob, Decoder, DrainDecoder},
    fetch_cache::{CachedCalls, FetchCacheConfig},
    fetcher::{FetchJob, Fetcher, StopFetching},
    handler::{Drain, Handler},
    mailbox::MailboxGauge,
    progress::ChainProgress,
    source::SharedSource,
    status::{Phase, STATUS_INTERVAL, StatusOrder},
};
use crate::{
    config::{Bridge, ChainConfig, IndexerConfig},
    ens::IndexContext,
    rpc::RpcClient,
    store::EntityStore,
};

/// First restart delay; doubles per consecutive failure up to [`MAX_RESTART_DELAY`].
pub const BASE_RESTART_DELAY: Duration = Duration::from_millis(500);
/// Longest restart delay.
pub const MAX_RESTART_DELAY: Duration = Duration::from_secs(30);
/// A pipeline that ran this long before failing counts as healthy: the backoff starts over.
pub const HEALTHY_RUN: Duration = Duration::from_secs(60);
/// A pipeline stopped with an error.
#[derive(Debug, Message)]
#[rtype(result = "()")]
pub struct PipelineFailed {
    /// Generation of the failed pipeline.
    pub generation: u64,
    /// Why.
    pub error: PipelineError,
}

/// A pipeline reached the configured `end_block`.
#[derive(Debug, Message)]
#[rtype(result = "()")]
pub struct PipelineFinished {
    /// Generation of the pipeline.
    pub generation: u64,
    /// The end block.
    pub block: u64,
}

#[derive(Debug)]
pub(super) struct Pipeline {
    pub(super) fetcher: Addr<Fetcher>,
    pub(super) fetcher_gauge: MailboxGauge,
    pub(super) decoder: Addr<Decoder>,
    pub(super) handler: Addr<Handler>,
    /// The thread the fetcher and decoder run on; stopped when the pipeline is dropped.
    pub(super) fetch_thread: FetchThread,
}

/// The thread of a pipeline's fetcher and decoder. The handler stays on the supervisor's
/// thread. With reading and decoding there too, that one thread bounded a backfill on both
/// engines: it read and decoded the next batches while the handler awaited its prefetch, and
/// the handler's next steps waited for that work (BENCHMARKS.md, the fetch-thread runs).
#[derive(Debug)]
pub(super) struct FetchThread(actix::Arbiter);

impl FetchThread {
    /// A new thread whose events go where the starting thread's go: the service's subscriber
    /// is global, but one installed for a thread alone (as a test's log capture is) would
    /// otherwise never see the fetcher's and decoder's events.
    fn start() -> Self {
        let arbiter = actix::Arbiter::new();
        let dispatch = tracing::dispatcher::get_default(Clone::clone);
        // Runs before the actors start: an arbiter runs what it is given in order.
        arbiter.spawn_fn(move || {
            // The guard would restore the thread's previous default when dropped; the thread
            // keeps this one for its whole life instead.
            std::mem::forget(tracing::dispatcher::set_default(&dispatch));
        });
        Self(arbiter)
    }
}

impl Drop for FetchThread {
    /// A pipeline's fetcher and decoder never outlive it: a dropped pipeline (drained, or
    /// abandoned with its supervisor) takes its thread and the actors on it along.
    fn drop(&mut self) {
        self.0.stop();
    }
}

/// Supervisor of one chain.
#[derive(Debug)]
pub struct ChainSupervisor {
    pub(super) chain: ChainConfig,
    /// The namespace's bridges (`ens::canonical`).
    pub(super) bridges: Vec<Bridge>,
    pub(super) indexer: IndexerConfig,
    pub(super) db: DatabaseConnection,
    pub(super) generation: u64,
    pub(super) phase: Phase,
    pub(super) restarts: u64,
    pub(super) consecutive_failures: u32,
    pub(super) started_at: Instant,
    pub(super) pipeline: Option<Pipeline>,
    pub(super) pending_start: Option<SpawnHandle>,
    pub(super) progress: Arc<ChainProgress>,
    pub(super) last_sample: (Instant, u64, u64),
    pub(super) events_per_second: f64,
    pub(super) blocks_per_second: f64,
    /// Reached the head with everything committed (and has not fallen far behind since).
    pub(super) synced: bool,
    /// Why the last pipeline failed, shown while the chain waits to restart.
    pub(super) last_failure: Option<String>,
    /// Where the chain is read from (its endpoint, unless a source was given), kept to follow
    /// the head while the chain is paused.
    pub(super) source: Option<SharedSource>,
    /// A head poll of a paused chain is under way.
    pub(super) head_poll: bool,
    /// Orders the status row's writes ([`super::status`]).
    pub(super) status_order: StatusOrder,
    /// The chain's fetch cache, when one is configured and its file could be placed
    /// ([`super::fetch_cache`]); made once, on the first pipeline.
    pub(super) fetch_cache: Option<Option<FetchCacheHandle>>,
}

/// A chain's fetch cache: where it lives and its (lazily connected) pool.
pub type FetchCacheHandle = (FetchCacheConfig, sea_orm::sqlx::SqlitePool);

impl ChainSupervisor {
    /// A supervisor for `chain` writing to `db`.
    pub fn new(chain: ChainConfig, indexer: IndexerConfig, db: DatabaseConnection) -> Self {
        Self {
            chain,
            bridges: Vec::new(),
            indexer,
            db,
            generation: 0,
            phase: Phase::Starting,
            restarts: 0,
            consecutive_failures: 0,
            started_at: Instant::now(),
            pipeline: None,
            pending_start: None,
            progress: Arc::new(ChainProgress::default()),
            last_sample: (Instant::now(), 0, 0),
            events_per_second: 0.0,
            blocks_per_second: 0.0,
            synced: false,
            last_failure: None,
            source: None,
            head_poll: false,
            status_order: StatusOrder::default(),
            fetch_cache: None,
        }
    }

    /// The same supervisor reading the chain from `source` instead of its RPC endpoint: how
    /// the benchmark drives the real pipeline from a recorded corpus.
    pub fn with_source(mut self, source: SharedSource) -> Self {
        self.source = Some(source);
        self
    }

    /// The same supervisor in a namespace with `bridges` (canonicality across chains).
    pub fn with_bridges(mut self, bridges: Vec<Bridge>) -> Self {
        self.bridges = bridges;
        self
    }

    pub(super) fn label(&self) -> String {
        self.chain.id.to_string()
    }

    pub(super) fn start_pipeline(&mut self, ctx: &mut Context<Self>) {
        self.pending_start = None;
        self.generation += 1;
        // What a drained pipeline applied and did not commit is applied again from the
        // checkpoint.
        self.progress.set_applied(self.progress.indexed());
        self.started_at = Instant::now();
        self.phase = Phase::Starting;
        self.synced = false;
        let source = match self.source() {
            Ok(source) => source,
            Err(reason) => {
                tracing::error!(target: "indexer::supervisor", chain = self.chain.id.get(), "Chain not indexed: {reason}");
                self.phase = Phase::Failed(reason);
                return;
            }
        };
        let fetch_cache = self.fetch_cache();
        let source = match &fetch_cache {
            Some((_, pool)) => CachedCalls::wrap(source, pool.clone()),
            None => source,
        };
        let chain = &self.chain;
        let cap = self.indexer.mailbox_capacity;
        let handler_gauge = MailboxGauge::new(chain.id, "handler", "decoder", cap);
        let decoder_gauge = MailboxGauge::new(chain.id, "decoder", "fetcher", cap);
        let store = EntityStore::new(self.db.clone(), chain.id, self.indexer.cache_mb << 20);
        let handler = Handler::new(
            IndexContext::for_chain(chain, &self.bridges),
            store,
            self.indexer.flush_rows,
            cap,
            handler_gauge.clone(),
            self.progress.clone(),
        )
        .start();
        let roles: HashMap<_, _> = chain.contracts.iter().map(|c| (c.address, c.role)).collect();
        let fetch_thread = FetchThread::start();
        // Opened, used and dropped on the fetch thread alone (`database::fetch_connection`).
        let fetch_db = crate::store::database::fetch_connection(&self.db);
        let job = DecodeJob {
            chain_id: chain.id,
            roles,
            source: source.clone(),
            db: fetch_db.clone(),
            handler: handler.clone(),
            handler_gauge,
            max_concurrent_calls: chain.max_concurrent_requests,
        };
        let gauge = decoder_gauge.clone();
        let decoder = Decoder::start_in_arbiter(&fetch_thread.0.handle(), move |_| {
            Decoder::new(job, gauge, cap)
        });
        let job = FetchJob {
            chain: chain.clone(),
            source,
            db: fetch_db,
            decoder: decoder.clone(),
            decoder_gauge,
            mailbox_capacity: cap,
            progress: self.progress.clone(),
            fetch_cache,
        };
        let me = ctx.address();
        let generation = self.generation;
        let fetcher = Fetcher::start_in_arbiter(&fetch_thread.0.handle(), move |_| {
            Fetcher::new(job, generation, me.clone().recipient(), me.recipient())
        });
        let fetcher_gauge =
            MailboxGauge::new(chain.id, "fetcher", "supervisor", super::fetcher::MAILBOX_CAPACITY);
        self.pipeline = Some(Pipeline { fetcher, fetcher_gauge, decoder, handler, fetch_thread });
        tracing::info!(target: "indexer::supervisor", chain = chain.id.get(), generation = self.generation, "Pipeline started");
    }

    /// Stops the current pipeline in order; with `commit` the handler flushes what it applied.
    /// Reports of the drained pipeline are ignored from here on.
    pub(super) fn drain(
        &mut self,
        ctx: &mut Context<Self>,
        commit: bool,
    ) -> impl Future<Output = ()> + use<> {
        self.generation += 1;
        if let Some(handle) = self.pending_start.take() {
            ctx.cancel_future(handle);
        }
        let pipeline = self.pipeline.take();
        let chain = self.chain.id;
        async move {
            let Some(p) = pipeline else { return };
            let sent = (p.fetcher_gauge.enqueued(), p.fetcher_gauge.clone());
            if p.fetcher.send(StopFetching { sent }).await.is_err() {
                // The fetcher had stopped already (its loop ended): the message never arrived.
                p.fetcher_gauge.undo();
            }
            let _ = p.decoder.send(DrainDecoder).await;
            if let Ok(Err(err)) = p.handler.send(Drain { flush: commit }).await {
                tracing::warn!(target: "indexer::supervisor", chain = chain.get(), error = %err, "Final flush failed; the chain resumes from its previous checkpoint");
            }
            // Fetcher and decoder have nothing left to do; their thread goes with the pipeline.
            drop(p.fetch_thread);
        }
    }

    /// The chain's fetch cache, placed on first use; a cache that cannot be placed is
    /// reported once and the chain runs without it.
    fn fetch_cache(&mut self) -> Option<FetchCacheHandle> {
        let chain = self.chain.id;
        let indexer = &self.indexer;
        self.fetch_cache
            .get_or_insert_with(|| {
                let config = indexer.fetch_cache()?;
                match config.pool(chain) {
                    Ok(pool) => Some((config, pool)),
                    Err(err) => {
                        tracing::error!(target: "indexer::supervisor", chain = chain.get(), error = %err, "Fetch cache unavailable; reading the node only");
                        None
                    }
                }
            })
            .clone()
    }

    /// Where the chain is read from: the source given, else the chain's endpoint client,
    /// built once and kept (a paused chain reads the head with it too); why there is none when
    /// the chain has no usable endpoint.
    pub(super) fn source(&mut self) -> Result<SharedSource, String> {
        if let Some(source) = &self.source {
            return Ok(source.clone());
        }
        let chain = &self.chain;
        let Some(url) = chain.rpc_url.as_deref().filter(|url| !url.is_empty()) else {
            return Err(format!(
                "no RPC endpoint; set RPC_URL_{id}=<url> or rpc_url in its [[chains]] entry",
                id = chain.id
            ));
        };
        let rpc = RpcClient::with_timeout(url, chain.id, chain.request_timeout())
            .map_err(|err| err.to_string())?
            .reporting_to(self.progress.rpc_error_slot());
        let source: SharedSource = Arc::new(rpc);
        self.source = Some(source.clone());
        Ok(source)
    }
}

impl ChainSupervisor {
    /// After the pipeline is drained: undo the journaled windows from `fork_block` on in one
    /// transaction, then index the canonical chain from the restored checkpoint.
    fn handle_reorg(
        &mut self,
        ctx: &mut Context<Self>,
        drained: impl Future<Output = ()> + 'static,
        fork_block: u64,
    ) {
        let chain = self.chain.id;
        let db = self.db.clone();
        self.phase = Phase::Restarting;
        let at = self.progress.indexed();
        metrics::counter!("ensemble_reorgs_total", "chain" => self.label()).increment(1);
        tracing::warn!(target: "indexer::supervisor", chain = chain.get(), fork_block, indexed = at, "Reorg: rolling back");
        let work = async move {
            drained.await;
            crate::store::journal::rollback(&db, chain, fork_block).await
        };
        ctx.wait(work.into_actor(self).map(move |result, act, ctx| match result {
            Ok(restored) => {
                let block = restored.map_or(0, |r| r.block_number);
                metrics::histogram!("ensemble_reorg_depth_blocks", "chain" => act.label())
                    .record(at.saturating_sub(block) as f64);
                act.progress.set_indexed(block);
                act.progress.set_applied(block);
                tracing::info!(target: "indexer::supervisor", chain = chain.get(), block, "Rolled back; re-indexing the canonical chain");
                act.start_pipeline(ctx);
            }
            Err(err) => {
                tracing::error!(target: "indexer::supervisor", chain = chain.get(), error = %err, "Chain stopped");
                act.phase = Phase::Failed(err.to_string());
            }
        }));
    }
}

impl Actor for ChainSupervisor {
    type Context = Context<Self>;

    /// Reads where the chain stands before anything runs: its checkpoint (the status shows
    /// it from the first second, and `/ready` does not wait for a new block to learn it) and
    /// its last status row (a chain paused by an operator stays paused across restarts of
    /// the process, until `resume`).
    fn started(&mut self, ctx: &mut Self::Context) {
        let roles: Vec<&'static str> =
            self.chain.contracts.iter().map(|c| c.role.as_str()).collect();
        crate::metrics::register_chain(self.chain.id, &roles);
        let db = self.db.clone();
        let chain = self.chain.id;
        let read = async move {
            let checkpoint = crate::store::writer::read_checkpoint(&db, chain).await;
            let row = crate::store::status_row::read_status(&db, chain).await;
            (checkpoint, row)
        };
        ctx.wait(read.into_actor(self).map(|(checkpoint, row), act, ctx| {
            if let Ok(Some(checkpoint)) = checkpoint {
                act.progress.set_indexed(checkpoint.block_number);
                act.last_sample.2 = checkpoint.block_number;
            }
            let paused = matches!(&row, Ok(Some(row)) if row.phase == Phase::Paused.as_str());
            if paused {
                tracing::info!(target: "indexer::supervisor", chain = act.chain.id.get(), "Chain was paused; it stays paused until resumed");
                act.phase = Phase::Paused;
                // Without an endpoint the paused chain's head simply is not read.
                let _ = act.source();
            } else {
                act.start_pipeline(ctx);
            }
            act.write_status();
        }));
        ctx.run_interval(STATUS_INTERVAL, |act, ctx| {
            act.sample();
            act.write_status();
            act.poll_paused_head(ctx);
        });
    }
}

impl actix::Handler<PipelineFailed> for ChainSupervisor {
    type Result = ();

    fn handle(&mut self, msg: PipelineFailed, ctx: &mut Self::Context) {
        if msg.generation != self.generation {
            return;
        }
        let chain = self.chain.id;
        self.last_failure = Some(crate::redaction::redact(&msg.error.to_string()).into_owned());
        // Drain without committing: the failed handler refuses to flush anyway, and the next
        // pipeline must not start before the old one is quiet.
        let drained = self.drain(ctx, false);
        if let PipelineError::Reorg { fork_block } = msg.error {
            self.handle_reorg(ctx, drained, fork_block);
            return;
        }
        if msg.error.is_fatal() {
            tracing::error!(target: "indexer::supervisor", chain = chain.get(), error = %msg.error, "Chain stopped: fix the configuration and restart");
            self.phase = Phase::Failed(msg.error.to_string());
            ctx.spawn(drained.into_actor(self));
            return;
        }
        if self.started_at.elapsed() >= HEALTHY_RUN {
            self.consecutive_failures = 0;
        }
        self.consecutive_failures += 1;
        self.restarts += 1;
        self.phase = Phase::Restarting;
        let delay = BASE_RESTART_DELAY
            .saturating_mul(1 << self.consecutive_failures.min(8))
            .min(MAX_RESTART_DELAY);
        metrics::counter!("ensemble_actor_restarts_total", "chain" => self.label(), "actor" => "pipeline")
            .increment(1);
        tracing::warn!(target: "indexer::supervisor", chain = chain.get(), error = %msg.error, ?delay, "Pipeline failed; restarting from checkpoint");
        ctx.wait(drained.into_actor(self));
        self.pending_start = Some(ctx.run_later(delay, |act, ctx| act.start_pipeline(ctx)));
    }
}

impl actix::Handler<PipelineFinished> for ChainSupervisor {
    type Result = ();

    fn handle(&mut self, msg: PipelineFinished, _: &mut Self::Context) {
        if msg.generation == self.generation {
            self.consecutive_failures = 0;
            self.phase = Phase::Finished;
            tracing::info!(target: "indexer::supervisor", chain = self.chain.id.get(), block = msg.block, "Reached end block");
        }
    }
}
