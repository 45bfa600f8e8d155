//! Integration tests: one binary, one module per concern. Every test runs against real parts:
//! anvil with the real ENS contracts, SQLite files and the local PostgreSQL.

#![allow(unreachable_pub, missing_docs, clippy::unwrap_used, clippy::expect_used)]

mod admin;
mod bridged_resolution;
mod bulk_upsert;
mod ccip_read;
mod connection_walk;
mod container;
mod cursors;
mod database_faults;
mod decode_errors;
mod faults;
mod fetch_cache;
mod fuzz;
mod gateway;
mod graphql;
mod handlers;
mod history;
mod history_ahead;
mod hostile;
mod indexing;
mod key_listings;
mod label_heal;
mod long_names;
mod metrics;
mod multichain;
mod name_search;
mod operations;
mod ordering;
mod playground;
mod postgres;
mod query_indexes;
mod reorg;
mod reorg_positions;
mod resolution;
mod restart;
mod schema;
mod secrets;
mod split;
mod sqlite_settings;
mod status;
mod subgraph;
mod support;
mod teardown;
mod throughput;
