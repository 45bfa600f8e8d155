//! [`ChainSupervisor`]: owns one chain's pipeline (handler, decoder, fetcher), replaces it when
//! it fails, and obeys control commands. Messages: [`PipelineFailed`] and [`PipelineFinished`]
//! from its fetcher; [`Control`] (restart, pause, resume, shutdown) and [`GetStatus`] from the
//! service and the admin API.
//!
//! Every pipeline starts from the database checkpoint with a fresh entity store, so a restart
//! is a resume. A pipeline is always *drained* before another one starts: the fetcher stops,
//! the decoder and handler finish what is queued, and the handler either commits it (a
//! deliberate stop) or, after a failure, writes nothing more. Two pipelines of one chain never
//! write at the same time. Each pipeline has a generation number, so a late report from a
//! replaced pipeline is ignored.
//!
//! Failures restart with exponential backoff (capped, reset after a healthy run); a fatal error
//! (the endpoint serves another chain) stops the chain instead of looping. Every
//! [`STATUS_INTERVAL`] the supervisor writes the chain's status row.

use std::{
    collections::HashMap,
    sync::Arc,
    time::{Duration, Instant},
};

use actix::prelude::*;
use entities::chain_status;
use sea_orm::DatabaseConnection;

use super::{
    PipelineError,
    decoder::{DecodeJob, Decoder, DrainDecoder},
    fetcher::{FetchJob, Fetcher, StopFetching},
    handler::{Drain, Handler},
    mailbox::MailboxGauge,
    progress::ChainProgress,
    source::SharedSource,
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
/// A chain that has synced stays `following` while it lags the head by at most this many
/// blocks: new blocks arrive all the time, and readiness must not flap with each of them.
pub const FOLLOWING_MAX_LAG: u64 = 8;
/// How often the status row and progress numbers are refreshed.
pub const STATUS_INTERVAL: Duration = Duration::from_secs(1);

/// What a chain is doing.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Phase {
    /// Pipeline started, position not known yet.
    Starting,
    /// Catching up with the head.
    Backfill,
    /// At the head, following it.
    Following,
    /// Stopped by an operator; resumes on request.
    Paused,
    /// Waiting to restart after a failure.
    Restarting,
    /// Stopped for good by a fatal error.
    Failed(String),
    /// Stopped for shutdown.
    Stopped,
    /// Reached the configured `end_block`.
    Finished,
}

impl Phase {
    /// Stable name for status output.
    pub fn as_str(&self) -> &'static str {
        match self {
            Self::Starting => "starting",
            Self::Backfill => "backfill",
            Self::Following => "following",
            Self::Paused => "paused",
            Self::Restarting => "restarting",
            Self::Failed(_) => "failed",
            Self::Stopped => "stopped",
            Self::Finished => "finished",
        }
    }
}

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

/// An operator command.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Command {
    /// Drain the pipeline (committing what it applied) and start a new one from the checkpoint.
    Restart,
    /// Drain the pipeline and stay stopped.
    Pause,
    /// Start a pipeline again after a pause (or a fatal failure).
    Resume,
    /// Drain for process shutdown.
    Shutdown,
}

/// Runs a [`Command`]; answers with the resulting status.
#[derive(Debug, Message)]
#[rtype(result = "ChainStatus")]
pub struct Control(pub Command);

/// Asks for the chain's status.
#[derive(Debug, Message)]
#[rtype(result = "ChainStatus")]
pub struct GetStatus;

/// A chain's status as the supervisor sees it.
#[derive(Clone, Debug, serde::Serialize)]
pub struct ChainStatus {
    /// Chain id.
    pub chain_id: u64,
    /// Configured name.
    pub name: String,
    /// Phase name.
    pub phase: &'static str,
    /// Head targeted (after confirmations).
    pub head_block: u64,
    /// Last committed block.
    pub indexed_block: u64,
    /// Last applied block: ahead of the committed one during a backfill.
    pub applied_block: u64,
    /// Events per second over the last interval.
    pub events_per_second: f64,
    /// Seconds to the head at the current pace.
    pub eta_seconds: Option<u64>,
    /// Pipeline restarts so far.
    pub restarts: u64,
    /// The fatal error, if failed.
    pub error: Option<String>,
}

#[derive(Debug)]
struct Pipeline {
    fetcher: Addr<Fetcher>,
    fetcher_gauge: MailboxGauge,
    decoder: Addr<Decoder>,
    handler: Addr<Handler>,
}

/// Supervisor of one chain.
#[derive(Debug)]
pub struct ChainSupervisor {
    chain: ChainConfig,
    /// The namespace's bridges (`ens::canonical`).
    bridges: Vec<Bridge>,
    indexer: IndexerConfig,
    db: DatabaseConnection,
    generation: u64,
    phase: Phase,
    restarts: u64,
    consecutive_failures: u32,
    started_at: Instant,
    pipeline: Option<Pipeline>,
    pending_start: Option<SpawnHandle>,
    progress: Arc<ChainProgress>,
    last_sample: (Instant, u64, u64),
    events_per_second: f64,
    blocks_per_second: f64,
    /// Reached the head with everything committed (and has not fallen far behind since).
    synced: bool,
    /// Why the last pipeline failed, shown while the chain waits to restart.
    last_failure: Option<String>,
    /// Where the chain is read from (its endpoint, unless a source was given), kept to follow
    /// the head while the chain is paused.
    source: Option<SharedSource>,
    /// A head poll of a paused chain is under way.
    head_poll: bool,
}

/// How often a paused chain still reads the head, so its lag stays true.
pub const PAUSED_HEAD_POLL: Duration = Duration::from_secs(5);

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

    fn label(&self) -> String {
        self.chain.id.to_string()
    }

    fn start_pipeline(&mut self, ctx: &mut Context<Self>) {
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
                tracing::error!(target: "indexer::supervisor", chain = self.chain.id, "Chain not indexed: {reason}");
                self.phase = Phase::Failed(reason);
                return;
            }
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
        let job = DecodeJob {
            chain_id: chain.id,
            roles,
            source: source.clone(),
            db: self.db.clone(),
            handler: handler.clone(),
            handler_gauge,
        };
        let decoder = Decoder::new(job, decoder_gauge.clone(), cap).start();
        let job = FetchJob {
            chain: chain.clone(),
            source,
            db: self.db.clone(),
            decoder: decoder.clone(),
            decoder_gauge,
            mailbox_capacity: cap,
            progress: self.progress.clone(),
        };
        let me = ctx.address();
        let fetcher =
            Fetcher::new(job, self.generation, me.clone().recipient(), me.recipient()).start();
        let fetcher_gauge =
            MailboxGauge::new(chain.id, "fetcher", "supervisor", super::fetcher::MAILBOX_CAPACITY);
        self.pipeline = Some(Pipeline { fetcher, fetcher_gauge, decoder, handler });
        tracing::info!(target: "indexer::supervisor", chain = chain.id, generation = self.generation, "Pipeline started");
    }

    /// Stops the current pipeline in order; with `commit` the handler flushes what it applied.
    /// Reports of the drained pipeline are ignored from here on.
    fn drain(&mut self, ctx: &mut Context<Self>, commit: bool) -> impl Future<Output = ()> + use<> {
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
                tracing::warn!(target: "indexer::supervisor", chain, error = %err, "Final flush failed; the chain resumes from its previous checkpoint");
            }
        }
    }

    fn status(&self) -> ChainStatus {
        let head = self.progress.head();
        let indexed = self.progress.indexed();
        let applied = self.progress.applied();
        let behind = head.saturating_sub(applied);
        let eta_seconds = (behind > 0 && self.blocks_per_second > 0.0)
            .then(|| (behind as f64 / self.blocks_per_second).ceil() as u64);
        let phase = match &self.phase {
            Phase::Starting | Phase::Backfill | Phase::Following if self.pipeline.is_some() => {
                if self.synced {
                    Phase::Following
                } else if head > 0 {
                    Phase::Backfill
                } else {
                    Phase::Starting
                }
            }
            other => other.clone(),
        };
        ChainStatus {
            chain_id: self.chain.id,
            name: self.chain.name.clone(),
            phase: phase.as_str(),
            head_block: head,
            indexed_block: indexed,
            applied_block: applied,
            events_per_second: self.events_per_second,
            eta_seconds,
            restarts: self.restarts,
            error: match &self.phase {
                Phase::Failed(e) => Some(e.clone()),
                Phase::Stopped | Phase::Finished | Phase::Paused => None,
                Phase::Restarting => {
                    self.progress.rpc_error().or_else(|| self.last_failure.clone())
                }
                _ => self.progress.rpc_error(),
            },
        }
    }

    /// While paused, reads the head now and then (one call at a time), so the status shows
    /// how far behind the paused chain falls.
    fn poll_paused_head(&mut self, ctx: &mut Context<Self>) {
        if self.phase != Phase::Paused || self.head_poll {
            return;
        }
        let Some(source) = self.source.clone() else { return };
        self.head_poll = true;
        let confirmations = self.chain.confirmations;
        ctx.spawn(
            async move {
                let head = source.block_number().await;
                tokio::time::sleep(PAUSED_HEAD_POLL).await;
                head
            }
            .into_actor(self)
            .map(move |head, act, _| {
                act.head_poll = false;
                if let Ok(head) = head {
                    act.progress.set_head(head.saturating_sub(confirmations));
                }
            }),
        );
    }

    /// Where the chain is read from: the source given, else the chain's endpoint client,
    /// built once and kept (a paused chain reads the head with it too); why there is none when
    /// the chain has no usable endpoint.
    fn source(&mut self) -> Result<SharedSource, String> {
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

    fn sample(&mut self) {
        // Synced means the fetcher reached the head *and* it is committed: windows in flight
        // do not count, or /ready would answer before the data is there.
        let (head, indexed) = (self.progress.head(), self.progress.indexed());
        if self.pipeline.is_some() && self.progress.caught_up() && head > 0 && indexed >= head {
            self.synced = true;
        }
        if head.saturating_sub(indexed) > FOLLOWING_MAX_LAG {
            self.synced = false;
        }
        let now = Instant::now();
        let (at, events, blocks) = self.last_sample;
        let secs = now.duration_since(at).as_secs_f64().max(1e-3);
        // The pace is that of applying: a backfill commits only now and then.
        let (e, b) = (self.progress.events(), self.progress.applied());
        self.events_per_second = (e.saturating_sub(events)) as f64 / secs;
        self.blocks_per_second = (b.saturating_sub(blocks)) as f64 / secs;
        self.last_sample = (now, e, b);
        let label = self.label();
        metrics::gauge!("ensemble_chain_lag_blocks", "chain" => label)
            .set(self.progress.head().saturating_sub(b) as f64);
    }

    /// Writes the status row now (the returned future does the write).
    fn status_write(&self) -> impl Future<Output = ()> + use<> {
        let s = self.status();
        let row = chain_status::Model {
            chain_id: s.chain_id as i64,
            name: s.name,
            phase: s.phase.to_owned(),
            head_block: s.head_block as i64,
            indexed_block: s.indexed_block as i64,
            applied_block: s.applied_block as i64,
            events_per_second: s.events_per_second,
            eta_seconds: s.eta_seconds.map(|e| i64::try_from(e).unwrap_or(i64::MAX)),
            restarts: s.restarts as i64,
            error: s.error,
            updated_at: std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_secs() as i64),
        };
        let db = self.db.clone();
        let chain = self.chain.id;
        async move {
            if let Err(err) = crate::store::status_row::write_status(&db, row).await {
                tracing::debug!(target: "indexer::supervisor", chain, error = %err, "Status not written");
            }
        }
    }

    fn write_status(&self, ctx: &mut Context<Self>) {
        ctx.spawn(self.status_write().into_actor(self));
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
        tracing::warn!(target: "indexer::supervisor", chain, fork_block, indexed = at, "Reorg: rolling back");
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
                tracing::info!(target: "indexer::supervisor", chain, block, "Rolled back; re-indexing the canonical chain");
                act.start_pipeline(ctx);
            }
            Err(err) => {
                tracing::error!(target: "indexer::supervisor", chain, error = %err, "Chain stopped");
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
                tracing::info!(target: "indexer::supervisor", chain = act.chain.id, "Chain was paused; it stays paused until resumed");
                act.phase = Phase::Paused;
                // Without an endpoint the paused chain's head simply is not read.
                let _ = act.source();
            } else {
                act.start_pipeline(ctx);
            }
            act.write_status(ctx);
        }));
        ctx.run_interval(STATUS_INTERVAL, |act, ctx| {
            act.sample();
            act.write_status(ctx);
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
            tracing::error!(target: "indexer::supervisor", chain, error = %msg.error, "Chain stopped: fix the configuration and restart");
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
        tracing::warn!(target: "indexer::supervisor", chain, error = %msg.error, ?delay, "Pipeline failed; restarting from checkpoint");
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
            tracing::info!(target: "indexer::supervisor", chain = self.chain.id, block = msg.block, "Reached end block");
        }
    }
}

impl actix::Handler<Control> for ChainSupervisor {
    type Result = AtomicResponse<Self, ChainStatus>;

    fn handle(&mut self, Control(command): Control, ctx: &mut Self::Context) -> Self::Result {
        let chain = self.chain.id;
        tracing::info!(target: "indexer::supervisor", chain, ?command, "Control command");
        let (commit, next) = match command {
            Command::Restart => (true, Some(Phase::Starting)),
            Command::Pause => (true, Some(Phase::Paused)),
            Command::Shutdown => (true, Some(Phase::Stopped)),
            Command::Resume if self.pipeline.is_none() => (true, Some(Phase::Starting)),
            Command::Resume => (true, None),
        };
        let Some(next) = next else {
            return AtomicResponse::new(Box::pin(fut::ready(self.status())));
        };
        if command == Command::Restart {
            self.restarts += 1;
            metrics::counter!("ensemble_actor_restarts_total", "chain" => self.label(), "actor" => "pipeline")
                .increment(1);
        }
        let drained = self.drain(ctx, commit);
        // The answer waits for the status row: after a shutdown or pause returns, every
        // process reading the database sees it.
        AtomicResponse::new(Box::pin(drained.into_actor(self).then(move |(), act, ctx| {
            if next == Phase::Starting {
                act.consecutive_failures = 0;
                act.start_pipeline(ctx);
            } else if !(next == Phase::Stopped && act.phase == Phase::Paused) {
                // A paused chain stays paused through a shutdown: its row says so, and the
                // next process keeps it paused.
                act.phase = next;
            }
            let status = act.status();
            act.status_write().into_actor(act).map(move |(), _, _| status)
        })))
    }
}

impl actix::Handler<GetStatus> for ChainSupervisor {
    type Result = MessageResult<GetStatus>;

    fn handle(&mut self, _: GetStatus, _: &mut Self::Context) -> Self::Result {
        MessageResult(self.status())
    }
}
