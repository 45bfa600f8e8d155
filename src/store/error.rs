//! [`StoreError`]: failures of the storage layer.

use sea_orm::DbErr;

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
    /// The database URL is not one Ensemble can use.
    #[error("unsupported database url {0:?}: use sqlite://<file>?mode=rwc or postgres://...")]
    UnsupportedUrl(String),
}

impl StoreError {
    pub(crate) fn db(op: &'static str) -> impl FnOnce(DbErr) -> Self {
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
            Self::UnsupportedUrl(_) => false,
        }
    }
}
