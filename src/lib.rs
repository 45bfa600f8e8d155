//! Ensemble: a multi-chain ENS indexer with an Omnigraph-style GraphQL API.
//!
//! # Layout
//!
//! ```text
//! config     Config: defaults + --config file + env, validated once
//! chain/     per-chain actors: ChainSupervisor → Fetcher → Decoder → Handler
//! ens/       pure ENS logic: sol! events, EnsEvent, names & labels, one handler per contract
//! rpc/       alloy HTTP provider with retries and error classification
//! resolution/  forward and reverse resolution (ENSIP-10, ENSIP-19, CCIP-Read): index or live
//! store/     EntityStore (moka cache + dirty set), one-transaction flushes with the checkpoint
//! label_import  `ensemble labels import`: text, CSV and ENSRainbow label files
//! dump       deterministic text dump of the indexed state, for comparing databases
//! http       actix-web: /graphql (GraphiQL), /metrics, /health, /ready, /status
//! admin      bearer-token admin API: list, restart, pause, resume chains
//! actor_system  the actix system: runs the main future, tears down without panicking
//! service    starts the chains and/or the HTTP server (run, serve, index), stops gracefully
//! runtime    what each binary does around the service: tracing, signals, glibc arenas
//! ```
//!
//! The GraphQL schema lives in the `graphql` crate, the tables in `entities`, their schema in
//! `migrations`. The devnet (anvil with the real ENS contracts) and the benchmarks are tooling,
//! in the `ensemble-devkit` crate (`tests/devkit`), not in the service.

pub mod actor_system;
pub mod admin;
pub mod chain;
pub mod chain_id;
pub mod config;
pub mod dump;
pub mod ens;
pub mod error;
pub mod http;
pub mod label_import;
pub mod metrics;
pub mod progress;
pub mod redaction;
pub mod resolution;
pub mod rpc;
pub mod runtime;
pub mod service;
pub mod store;

pub use chain_id::ChainId;
pub use config::Config;
pub use error::Error;
pub use service::{Mode, Service};
