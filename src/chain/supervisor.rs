//! [`ChainSupervisor`]: owns one chain's pipeline (handler, decoder, fetcher) and replaces it
//! when it fails. Messages: [`PipelineFailed`] and [`PipelineFinished`] from its fetcher.
//!
//! A replacement pipeline starts from the database checkpoint with a fresh entity store, so a
//! restart is a resume. Restarts back off exponentially (capped); a fatal error (the endpoint
//! serves another chain) stops the chain instead of looping. Each pipeline has a generation
//! number so a late report from a replaced pipeline is ignored.

use std::{collections::HashMap, time::Duration};

use actix::prelude::*;
use sea_orm::DatabaseConnection;

use super::{
    PipelineError,
    decoder::{DecodeJob, Decoder},
    fetcher::{FetchJob, Fetcher},
    handler::Handler,
    mailbox::MailboxGauge,
};
use crate::{
    config::{ChainConfig, IndexerConfig},
    ens::{IndexContext, role::ContractRole},
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

/// Supervisor of one chain.
#[derive(Debug)]
pub struct ChainSupervisor {
    chain: ChainConfig,
    indexer: IndexerConfig,
    db: DatabaseConnection,
    generation: u64,
    consecutive_failures: u32,
    started_at: std::time::Instant,
    fetcher: Option<Addr<Fetcher>>,
}

impl ChainSupervisor {
    /// A supervisor for `chain` writing to `db`.
    pub fn new(chain: ChainConfig, indexer: IndexerConfig, db: DatabaseConnection) -> Self {
        Self {
            chain,
            indexer,
            db,
            generation: 0,
            consecutive_failures: 0,
            started_at: std::time::Instant::now(),
            fetcher: None,
        }
    }

    fn start_pipeline(&mut self, ctx: &mut Context<Self>) {
        self.generation += 1;
        self.started_at = std::time::Instant::now();
        let chain = &self.chain;
        let registry =
            chain.contract(ContractRole::Registry).expect("validated: one registry per chain");
        let rpc_url = chain.rpc_url.as_deref().expect("validated: rpc url present");
        let rpc = match RpcClient::new(rpc_url, chain.id) {
            Ok(rpc) => rpc,
            Err(err) => {
                tracing::error!(target: "indexer::supervisor", chain = chain.id, error = %err, "Chain stopped");
                return;
            }
        };
        let cap = self.indexer.mailbox_capacity;
        let handler_gauge = MailboxGauge::new(chain.id, "handler", cap);
        let decoder_gauge = MailboxGauge::new(chain.id, "decoder", cap);
        let store = EntityStore::new(self.db.clone(), self.indexer.cache_rows);
        let handler = Handler::new(
            IndexContext::new(chain.id, registry),
            store,
            self.indexer.flush_rows,
            cap,
            handler_gauge.clone(),
        )
        .start();
        let roles: HashMap<_, _> = chain.contracts.iter().map(|c| (c.address, c.role)).collect();
        let job = DecodeJob {
            chain_id: chain.id,
            roles,
            rpc: rpc.clone(),
            db: self.db.clone(),
            handler,
            handler_gauge,
        };
        let decoder = Decoder::new(job, decoder_gauge.clone(), cap).start();
        let job = FetchJob {
            chain: chain.clone(),
            rpc,
            db: self.db.clone(),
            decoder,
            decoder_gauge,
            mailbox_capacity: cap,
        };
        let me = ctx.address();
        self.fetcher = Some(
            Fetcher::new(job, self.generation, me.clone().recipient(), me.recipient()).start(),
        );
        tracing::info!(target: "indexer::supervisor", chain = chain.id, generation = self.generation, "Pipeline started");
    }
}

impl Actor for ChainSupervisor {
    type Context = Context<Self>;

    fn started(&mut self, ctx: &mut Self::Context) {
        self.start_pipeline(ctx);
    }
}

impl actix::Handler<PipelineFailed> for ChainSupervisor {
    type Result = ();

    fn handle(&mut self, msg: PipelineFailed, ctx: &mut Self::Context) {
        if msg.generation != self.generation {
            return;
        }
        // Dropping the fetcher's address lets the whole pipeline wind down: the decoder and
        // handler are poisoned and stop once their addresses are gone.
        self.fetcher = None;
        let chain = self.chain.id;
        if msg.error.is_fatal() {
            tracing::error!(target: "indexer::supervisor", chain, error = %msg.error, "Chain stopped: fix the configuration and restart");
            return;
        }
        if self.started_at.elapsed() >= HEALTHY_RUN {
            self.consecutive_failures = 0;
        }
        self.consecutive_failures += 1;
        let delay = BASE_RESTART_DELAY
            .saturating_mul(1 << self.consecutive_failures.min(8))
            .min(MAX_RESTART_DELAY);
        metrics::counter!("ensemble_actor_restarts_total", "chain" => chain.to_string(), "actor" => "pipeline")
            .increment(1);
        tracing::warn!(target: "indexer::supervisor", chain, error = %msg.error, ?delay, "Pipeline failed; restarting from checkpoint");
        ctx.run_later(delay, |act, ctx| act.start_pipeline(ctx));
    }
}

impl actix::Handler<PipelineFinished> for ChainSupervisor {
    type Result = ();

    fn handle(&mut self, msg: PipelineFinished, _: &mut Self::Context) {
        if msg.generation == self.generation {
            self.consecutive_failures = 0;
            tracing::info!(target: "indexer::supervisor", chain = self.chain.id, block = msg.block, "Reached end block");
        }
    }
}
