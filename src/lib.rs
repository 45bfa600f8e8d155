//! Ensemble: a multi-chain ENS indexer with an Omnigraph-style GraphQL API.
//!
//! # Layout
//!
//! ```text
//! config     Config: defaults + --config file + env, validated once
//! chain/     per-chain actors: ChainSupervisor → Fetcher → Decoder → Handler
//! ens/       pure ENS logic: sol! events, EnsEvent, names & labels, one handler per contract
//! rpc/       alloy HTTP provider with retries and error classification
//! store/     EntityStore (moka cache + dirty set), one-transaction flushes with the checkpoint
//! label_import  `ensemble labels import`: text, CSV and ENSRainbow label files
//! dump       deterministic text dump of the indexed state, for comparing databases
//! http       actix-web: /graphql (GraphiQL), /metrics, /health, /ready, /status
//! admin      bearer-token admin API: list, restart, pause, resume chains
//! actor_system  the actix system: runs the main future, tears down without panicking
//! service    starts the chains and/or the HTTP server (run, serve, index), stops gracefully
//! devnet/    anvil + the real ENS contracts from npm, scenarios, ground truth via eth_call
//! bench/     benchmarks: generated namegraphs, query timings, BENCHMARKS.md rows
//! ```
//!
//! The GraphQL schema lives in the `graphql` crate, the tables in `entities`, their schema in
//! `migrations`.

pub mod actor_system;
pub mod admin;
pub mod bench;
pub mod chain;
pub mod config;
pub mod devnet;
pub mod dump;
pub mod ens;
pub mod error;
pub mod http;
pub mod label_import;
pub mod metrics;
pub mod progress;
pub mod redaction;
pub mod rpc;
pub mod service;
pub mod store;

pub use config::Config;
pub use error::Error;
pub use service::{Mode, Service};
