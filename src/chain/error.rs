//! [`PipelineError`]: why a chain's pipeline stopped.

use crate::{ens::HandlerError, rpc::RpcError, store::StoreError};

/// A pipeline failure, reported to the chain supervisor.
#[derive(Debug, thiserror::Error)]
pub enum PipelineError {
    /// The RPC endpoint failed beyond its retries.
    #[error(transparent)]
    Rpc(#[from] RpcError),
    /// The database failed.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// A handler hit a fatal error.
    #[error(transparent)]
    Handler(#[from] HandlerError),
    /// The next actor is gone (stopped after an earlier failure).
    #[error("mailbox of {actor} closed")]
    MailboxClosed {
        /// Which actor.
        actor: &'static str,
    },
    /// A batch did not start where the previous one ended: refuse rather than skip blocks.
    #[error("block gap: expected batch from {expected}, got {got}")]
    Gap {
        /// Expected first block.
        expected: u64,
        /// First block received.
        got: u64,
    },
    /// The actor already failed and refuses further batches until it is replaced.
    #[error("{actor} is poisoned by an earlier failure")]
    Poisoned {
        /// Which actor.
        actor: &'static str,
    },
    /// The chain reorganized: blocks from `fork_block` on differ from what was indexed.
    #[error("reorg detected: blocks from {fork_block} on changed")]
    Reorg {
        /// First block that differs.
        fork_block: u64,
    },
    /// The endpoint serves another chain than configured.
    #[error("rpc endpoint serves chain {actual}, config says {expected}")]
    WrongChain {
        /// Configured id.
        expected: u64,
        /// Reported id.
        actual: u64,
    },
}

impl PipelineError {
    /// Whether restarting the pipeline cannot help (a configuration mistake).
    pub fn is_fatal(&self) -> bool {
        matches!(self, Self::WrongChain { .. })
    }
}
