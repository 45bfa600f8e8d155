//! Storage: the only code that touches sea-orm on the write path.
//!
//! - [`database`] opens SQLite or PostgreSQL and runs the migrations;
//! - [`EntityStore`] is what handlers read and write: a moka read cache in front of the
//!   database plus a dirty set of changed rows;
//! - [`domain_seq`] numbers new domains, per chain;
//! - [`memory_budget`] splits a chain's memory budget among the read cache, the rows
//!   written behind, the key filters and SQLite's page cache;
//! - [`key_filter`] knows which keys of its chain a table stores, so that a new key is not
//!   looked up;
//! - [`in_flight`] holds the rows of the flush being written, shared with the writer;
//! - [`row_chunks`] holds the event history a flush collects, in chunks;
//! - [`history_ahead`] writes that history ahead of the checkpoint while a chain catches up,
//!   in parts of its own;
//! - [`writer`] flushes a dirty set in ONE transaction together with the chain checkpoint, so
//!   a crash leaves either all of a batch or none of it, and a restart resumes after the
//!   checkpoint with nothing applied twice; [`write_txn`] is that transaction (on PostgreSQL
//!   the driver's own, so that a `COPY` runs in it);
//! - [`name_search`] keeps SQLite's name search in step with the names a flush writes;
//! - [`namespace`] records the namespace's bridges and reverse registrars for the API;
//! - [`status_row`] writes each chain's status row, [`rpc_cache`] the answers of the calls
//!   the decoder makes;
//! - [`heal_log`] carries labels that became known to every chain's domains;
//! - [`query_indexes`] sets the API's query indexes aside during a fresh database's first
//!   backfill and builds them once when it catches up;
//! - [`unnest_upsert`] is PostgreSQL's bulk upsert, one array per column, [`pg_copy`] its
//!   bulk insert of rows known to be new, and [`sqlite_upsert`] SQLite's upsert, with as
//!   little statement journal as each table allows;
//! - [`tcp_nodelay`] turns Nagle's algorithm off for the PostgreSQL connections.

pub mod cache;
pub mod contract_codes;
pub mod database;
pub mod domain_seq;
pub mod entity_store;
pub mod error;
pub mod event_history;
pub mod flush;
pub mod heal_index;
pub mod heal_log;
pub mod heal_log_cursor;
pub mod history_ahead;
pub mod in_flight;
pub mod journal;
pub mod key_filter;
pub mod memory_budget;
pub mod name_search;
pub mod namespace;
pub mod pg_copy;
pub mod prefetch;
pub mod query_indexes;
pub mod row_chunks;
pub mod row_size;
pub mod rpc_cache;
pub mod sqlite_upsert;
pub mod status_row;
pub mod table;
pub mod tables;
pub mod tcp_nodelay;
pub mod unnest_upsert;
pub mod write_txn;
pub mod writer;

pub use entity_store::EntityStore;
pub use error::StoreError;
pub use event_history::HistoryRows;
pub use flush::{Committed, PendingFlush};
pub use prefetch::PrefetchKeys;
pub use writer::Checkpoint;
