//! A chain's status: its [`Phase`], the [`ChainStatus`] the service and the admin API ask for
//! ([`GetStatus`]), the pace sampled every [`STATUS_INTERVAL`], and the status row written to
//! the database for every process to read.

use std::{
    sync::Arc,
    time::{Duration, Instant},
};

use actix::prelude::*;
use entities::chain_status;

use super::supervisor::ChainSupervisor;
use crate::ChainId;

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

/// Asks for the chain's status.
#[derive(Debug, Message)]
#[rtype(result = "ChainStatus")]
pub struct GetStatus;

/// A chain's status as the supervisor sees it.
#[derive(Clone, Debug, serde::Serialize)]
pub struct ChainStatus {
    /// Chain id.
    pub chain_id: ChainId,
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

impl ChainSupervisor {
    /// The status now.
    pub(super) fn status(&self) -> ChainStatus {
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

    /// Updates whether the chain is synced from its progress, and returns whether it has
    /// just become so. Runs at every sample and whenever the status is asked for, so that the
    /// query-index builder, which asks, learns that a backfill has caught up when it asks
    /// next rather than at the next sample.
    fn note_synced(&mut self) -> bool {
        let was = self.synced;
        // Synced means the fetcher reached the head *and* it is committed: windows in flight
        // do not count, or /ready would answer before the data is there.
        let (head, indexed) = (self.progress.head(), self.progress.indexed());
        if self.pipeline.is_some() && self.progress.caught_up() && head > 0 && indexed >= head {
            self.synced = true;
        }
        if head.saturating_sub(indexed) > FOLLOWING_MAX_LAG {
            self.synced = false;
        }
        self.synced && !was
    }

    /// Samples the pace and whether the chain is synced.
    pub(super) fn sample(&mut self) {
        self.note_synced();
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

    /// The status row's write, of a snapshot taken at this call (the returned future does the
    /// write, and resolves to whether it wrote). Snapshots are numbered and written one at a time, and one older than the last
    /// written is dropped: writes run concurrently, and a snapshot taken just before a
    /// shutdown ("starting", its pipeline already drained) must not land after the
    /// shutdown's "stopped".
    pub(super) fn status_write(&mut self) -> impl Future<Output = bool> + use<> {
        let s = self.status();
        let row = chain_status::Model {
            chain_id: s.chain_id.column(),
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
        self.status_order.in_order(async move {
            if let Err(err) = crate::store::status_row::write_status(&db, row).await {
                tracing::debug!(target: "indexer::supervisor", chain = chain.get(), error = %err, "Status not written");
            }
        })
    }

    /// Writes the status in the background. The write runs as a task of its own, not in the
    /// actor's context: a command's answer waits in the context for its own status write,
    /// which must not wait behind a write the context no longer polls.
    pub(super) fn write_status(&mut self) {
        actix::spawn(self.status_write());
    }
}

/// The order of a supervisor's status snapshots: how many were taken, and the number of the
/// last one written (held while writing, so writes never overlap).
#[derive(Debug, Default)]
pub struct StatusOrder {
    taken: u64,
    written: Arc<tokio::sync::Mutex<u64>>,
}

impl StatusOrder {
    /// Numbers the snapshot `write` holds (snapshots are numbered as they are taken) and
    /// returns the write to run: it waits for the write before it, and does nothing if a
    /// later snapshot was written meanwhile. Resolves to whether it wrote.
    pub fn in_order<F: Future<Output = ()>>(
        &mut self,
        write: F,
    ) -> impl Future<Output = bool> + use<F> {
        self.taken += 1;
        let snapshot = self.taken;
        let written = self.written.clone();
        async move {
            let mut last = written.lock().await;
            if *last > snapshot {
                return false;
            }
            write.await;
            *last = snapshot;
            true
        }
    }
}

impl actix::Handler<GetStatus> for ChainSupervisor {
    type Result = MessageResult<GetStatus>;

    fn handle(&mut self, _: GetStatus, _: &mut Self::Context) -> Self::Result {
        // `/ready` reads the status row: write it now rather than at the next sample.
        if self.note_synced() {
            self.write_status();
        }
        MessageResult(self.status())
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use super::*;

    /// A snapshot that reaches the lock after a later one was written is dropped; snapshots
    /// that come in order are all written, in order.
    #[tokio::test]
    async fn a_stale_snapshot_never_lands_after_a_newer_one() {
        let rows = Arc::new(Mutex::new(Vec::new()));
        let mut order = StatusOrder::default();
        let write = |phase: &'static str| {
            let rows = rows.clone();
            async move { rows.lock().unwrap().push(phase) }
        };
        let starting = order.in_order(write("starting"));
        let stopped = order.in_order(write("stopped"));
        assert!(stopped.await);
        assert!(!starting.await, "the older snapshot is dropped");
        assert_eq!(*rows.lock().unwrap(), ["stopped"]);
        // In order, every snapshot is written.
        let later = [order.in_order(write("paused")), order.in_order(write("starting"))];
        for write in later {
            assert!(write.await);
        }
        assert_eq!(*rows.lock().unwrap(), ["stopped", "paused", "starting"]);
    }
}
