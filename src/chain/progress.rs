//! [`ChainProgress`]: the live numbers of one chain, shared by its actors. The fetcher stores
//! the head it sees and whether it has caught up; the handler stores the last committed block
//! and counts applied events. The supervisor reads them for `/status`, metrics and the
//! progress bar. Plain atomics: each number has a single writer. The RPC client of the
//! chain's pipeline reports its failing calls into [`ChainProgress::rpc_error`], so a chain
//! that cannot reach its node says why while it retries.

use std::sync::{
    Arc, Mutex,
    atomic::{AtomicBool, AtomicU64, Ordering},
};

/// Live progress of one chain.
#[derive(Debug, Default)]
pub struct ChainProgress {
    head: AtomicU64,
    indexed: AtomicU64,
    applied: AtomicU64,
    events: AtomicU64,
    caught_up: AtomicBool,
    rpc_error: Arc<Mutex<Option<String>>>,
}

impl ChainProgress {
    /// The fetcher saw `head` (after confirmations).
    pub fn set_head(&self, head: u64) {
        self.head.store(head, Ordering::Relaxed);
    }

    /// The handler committed everything up to `block`.
    pub fn set_indexed(&self, block: u64) {
        self.indexed.store(block, Ordering::Relaxed);
    }

    /// The handler applied every event up to `block` (committed or not yet).
    pub fn set_applied(&self, block: u64) {
        self.applied.store(block, Ordering::Relaxed);
    }

    /// Last block applied: ahead of [`ChainProgress::indexed`] while a backfill holds its
    /// rows in memory between flushes, never behind it.
    pub fn applied(&self) -> u64 {
        self.applied.load(Ordering::Relaxed).max(self.indexed())
    }

    /// The handler applied `n` more events.
    pub fn add_events(&self, n: u64) {
        self.events.fetch_add(n, Ordering::Relaxed);
    }

    /// The fetcher reached the head (backfill is over) or fell behind again.
    pub fn set_caught_up(&self, caught_up: bool) {
        self.caught_up.store(caught_up, Ordering::Relaxed);
    }

    /// Head seen.
    pub fn head(&self) -> u64 {
        self.head.load(Ordering::Relaxed)
    }

    /// Last committed block.
    pub fn indexed(&self) -> u64 {
        self.indexed.load(Ordering::Relaxed)
    }

    /// Events applied since the process started.
    pub fn events(&self) -> u64 {
        self.events.load(Ordering::Relaxed)
    }

    /// The slot the chain's RPC client reports its failing calls to (cleared on success).
    pub fn rpc_error_slot(&self) -> Arc<Mutex<Option<String>>> {
        self.rpc_error.clone()
    }

    /// What the chain's RPC calls fail with now, if they do.
    pub fn rpc_error(&self) -> Option<String> {
        self.rpc_error.lock().ok().and_then(|e| e.clone())
    }

    /// Whether the fetcher is at the head.
    pub fn caught_up(&self) -> bool {
        self.caught_up.load(Ordering::Relaxed)
    }
}
