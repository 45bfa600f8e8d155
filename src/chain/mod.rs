//! Per-chain actors. One [`ChainSupervisor`] per chain owns a pipeline of three actors that
//! pass typed messages over bounded mailboxes:
//!
//! ```text
//! Fetcher ─ FetchedRange{logs, blocks} ─▶ Decoder ─ DecodedBatch{events} ─▶ Handler ─▶ EntityStore
//! ```
//!
//! Every data message is sent with `send().await`, so a full mailbox holds the sender back
//! (backpressure). A failure anywhere poisons the pipeline: the supervisor drops it and starts
//! a fresh one from the database checkpoint, so nothing is applied twice and nothing skipped.
//!
//! The fetcher and decoder read the chain through a [`source::ChainSource`]: the node's
//! JSON-RPC endpoint in the service, a recorded corpus in the benchmark.

pub mod control;
pub mod decoder;
pub mod error;
pub mod fetch_cache;
pub mod fetcher;
pub mod handler;
pub mod mailbox;
pub mod progress;
pub mod source;
pub mod status;
pub mod supervisor;

pub use error::PipelineError;
pub use supervisor::ChainSupervisor;
