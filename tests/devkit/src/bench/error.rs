//! [`BenchError`]: what stops a benchmark.

use ensemble::store::StoreError;

/// A benchmark failure.
#[derive(Debug, thiserror::Error)]
pub enum BenchError {
    /// The database refused a write or a read.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// A benchmarked query answered with errors: its timing would be meaningless.
    #[error("query {name} failed: {errors}")]
    Query {
        /// Which query.
        name: String,
        /// The GraphQL errors.
        errors: String,
    },
    /// The database holds no domains to query.
    #[error("the database holds no domains; generate some with --domains")]
    Empty,
    /// A corpus file could not be written or read.
    #[error("corpus {0}")]
    Corpus(String),
    /// A benchmark run could not be set up or the indexer failed during it.
    #[error("bench run: {0}")]
    Run(String),
    /// Writing the report.
    #[error("writing {path}: {source}")]
    Report {
        /// The report file.
        path: String,
        /// The cause.
        source: std::io::Error,
    },
}
