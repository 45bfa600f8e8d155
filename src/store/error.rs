//! [`StoreError`]: failures of the storage layer.

use sea_orm::DbErr;

use crate::ChainId;

/// A storage failure.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The database refused or failed a statement.
    #[error("database error during {op}: {source}")]
    Db {
        /// What the store was doing.
        op: &'static str,
        /// The driver's error.
        #[source]
        source: DbErr,
    },
    /// The journal holds something that does not parse back (a bug, or a hand-edited row).
    #[error("reorg journal: {0}")]
    Journal(String),
    /// A reorg forks below the oldest journaled window: the chain reorganized deeper than
    /// the configured finality depth, and only a re-index from before the fork can repair it.
    #[error(
        "chain {chain_id} reorganized at block {fork_block}, deeper than the journal (raise finality_depth and re-index from before the fork)"
    )]
    ReorgBeyondJournal {
        /// Chain.
        chain_id: ChainId,
        /// First block that differs.
        fork_block: u64,
    },
    /// A column PostgreSQL's bulk writes cannot send: a value type the array upsert or the
    /// `COPY` stream does not encode, or (in an array) a NULL in a NOT NULL column (a bug: an
    /// entity changed without `unnest_upsert` or `pg_copy`).
    #[error("bulk write cannot send {table}.{column}: a value it cannot encode")]
    UnsupportedColumn {
        /// Table.
        table: &'static str,
        /// Column.
        column: &'static str,
    },
    /// A chain whose id has no range of domain numbers (`entities::domain::seq_range`), or
    /// whose range is used up.
    #[error("chain {chain_id}: no domain numbers left (chain ids above 2^31-1 are not supported)")]
    DomainSeqExhausted {
        /// Chain.
        chain_id: ChainId,
    },
    /// A stored event's topics or data do not unpack (a hand-edited or damaged row).
    #[error("event {chain_id}-{block_number}-{log_index}: {source}")]
    MalformedEvent {
        /// Chain.
        chain_id: i64,
        /// Block.
        block_number: i64,
        /// Log index.
        log_index: i32,
        /// What is wrong with the stored bytes.
        #[source]
        source: entities::packed_words::MalformedPacking,
    },
    /// The database server could not be reached when the process started.
    #[error("cannot reach the database at {target}: {reason}")]
    Unreachable {
        /// Host and port (never the password).
        target: String,
        /// What connecting said.
        reason: String,
    },
    /// The database's schema is older than this build (or absent).
    #[error(
        "the database schema is {pending} migrations behind this build; run `ensemble migrate` (or start the indexer) first"
    )]
    SchemaBehind {
        /// Migrations not applied.
        pending: usize,
    },
    /// The database holds a migration this build does not have: it was made by another build's
    /// schema history (a newer release, or one from before the schema's baseline).
    #[error(
        "the database was migrated by a build this one does not know (migration {version}); use this build with a new database, or the build that made it"
    )]
    SchemaUnknown {
        /// The first unknown migration.
        version: String,
    },
    /// A flush's update of rows the store took for stored found fewer of them than it was
    /// given: the store's view of what the database holds is wrong (a bug). The flush is
    /// not committed, so nothing is lost.
    #[error("flush updated {updated} of the {expected} {table} rows it took for stored")]
    StoredRowsMissing {
        /// Table.
        table: &'static str,
        /// Rows the update was given.
        expected: usize,
        /// Rows it changed.
        updated: u64,
    },
    /// The event history written ahead of the checkpoint stopped before it answered (its
    /// writer's thread stopped). Nothing past the checkpoint is kept: the chain resumes from
    /// it.
    #[error("the event history written ahead of the checkpoint was lost with its writer")]
    HistoryPartLost,
    /// The database URL is not one Ensemble can use.
    #[error("unsupported database url {0:?}: use sqlite://<file>?mode=rwc or postgres://...")]
    UnsupportedUrl(String),
}

impl StoreError {
    /// Wraps a database error of operation `op` (for `map_err`).
    pub fn db(op: &'static str) -> impl FnOnce(DbErr) -> Self {
        move |source| Self::Db { op, source }
    }

    /// Connection-level failures (database restarting, pool exhausted) may pass; the
    /// supervisor retries the batch from the checkpoint.
    pub fn is_retryable(&self) -> bool {
        match self {
            Self::Db { source, .. } => matches!(
                source,
                DbErr::Conn(_) | DbErr::ConnectionAcquire(_) | DbErr::Exec(_) | DbErr::Query(_)
            ),
            Self::Unreachable { .. } | Self::HistoryPartLost => true,
            Self::UnsupportedUrl(_)
            | Self::SchemaBehind { .. }
            | Self::SchemaUnknown { .. }
            | Self::UnsupportedColumn { .. }
            | Self::StoredRowsMissing { .. }
            | Self::Journal(_)
            | Self::MalformedEvent { .. }
            | Self::ReorgBeyondJournal { .. }
            | Self::DomainSeqExhausted { .. } => false,
        }
    }
}
