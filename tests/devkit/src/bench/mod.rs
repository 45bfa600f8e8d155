//! Benchmarks, run from the command line (`ensemble bench ...`), never from tests: what they
//! measure depends on the machine, so they report numbers instead of asserting them.
//!
//! - [`namegraph`] generates a mainnet-shaped namegraph of any size straight into the
//!   database (domains, labels, registrations, resolver records), deterministic for a seed;
//! - [`query`] times the GraphQL queries users run most against such a database and reports
//!   p50/p99 per query;
//! - [`generate`] writes a mainnet-shaped corpus of ENS logs ([`corpus`] is its file format);
//! - [`run`] feeds a corpus through the indexer, from the file or through a local JSON-RPC
//!   endpoint ([`rpc_server`]), and reports throughput, memory and bytes per event;
//! - [`heal`] times label heals (one, then a label file in bulk) on an indexed database;
//! - [`bridge`] times a bridge going up and down on a generated namegraph;
//! - [`resolve`] times resolution from the index against live calls (devnet), and from the
//!   index on a generated namegraph;
//! - [`chain`] plays the devnet scenario at scale on anvil and indexes it through JSON-RPC
//!   from the service's start to `/ready`, cold and from a warm fetch cache;
//! - [`report`] formats results as `BENCHMARKS.md` rows and appends them.

pub mod bridge;
pub mod chain;
pub mod corpus;
pub mod corpus_source;
pub mod error;
pub mod generate;
pub mod heal;
pub mod namegraph;
pub mod query;
pub mod report;
pub mod resolve;
pub mod rpc_server;
pub mod run;

pub use error::BenchError;
