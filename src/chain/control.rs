//! Operator commands: [`Control`] runs a [`Command`] (restart, pause, resume, shutdown) on a
//! chain's supervisor and answers with its status; a paused chain still reads the head now
//! and then, so its lag stays true. [`Halt`] ends a supervisor for good.

use std::time::Duration;

use actix::prelude::*;

use super::{
    status::{ChainStatus, Phase},
    supervisor::ChainSupervisor,
};

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

/// Ends the supervisor at once: its pipeline is dropped without a final flush (a write
/// already in flight is waited for, so the database holds whole batches only), then the
/// supervisor stops. Until then the pipeline keeps indexing: the fetcher's reports hold the
/// supervisor alive, so dropping its address alone does not end it.
#[derive(Debug, Message)]
#[rtype(result = "()")]
pub struct Halt;

impl actix::Handler<Halt> for ChainSupervisor {
    type Result = AtomicResponse<Self, ()>;

    fn handle(&mut self, _: Halt, ctx: &mut Self::Context) -> Self::Result {
        tracing::info!(target: "indexer::supervisor", chain = self.chain.id.get(), "Halt");
        let drained = self.drain(ctx, false);
        AtomicResponse::new(Box::pin(drained.into_actor(self).map(|(), act, ctx| {
            act.phase = Phase::Stopped;
            ctx.stop();
        })))
    }
}

/// How often a paused chain still reads the head, so its lag stays true.
pub const PAUSED_HEAD_POLL: Duration = Duration::from_secs(5);

impl ChainSupervisor {
    /// While paused, reads the head now and then (one call at a time), so the status shows
    /// how far behind the paused chain falls.
    pub(super) fn poll_paused_head(&mut self, ctx: &mut Context<Self>) {
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
}

impl actix::Handler<Control> for ChainSupervisor {
    type Result = AtomicResponse<Self, ChainStatus>;

    fn handle(&mut self, Control(command): Control, ctx: &mut Self::Context) -> Self::Result {
        let chain = self.chain.id;
        tracing::info!(target: "indexer::supervisor", chain = chain.get(), ?command, "Control command");
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
            act.status_write().into_actor(act).map(move |_, _, _| status)
        })))
    }
}
