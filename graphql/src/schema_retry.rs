//! [`retry_schema_change`]: one more try for a read that SQLite refused because the schema
//! changed under it (`SQLITE_SCHEMA`, code 17). That happens while the indexer builds the
//! deferred query indexes (`ensemble::store::query_indexes`): a name search opening the FTS5
//! table at the moment an index lands fails with "vtable constructor failed". The second try
//! sees the new schema. Any other error, and any error of the second try, is returned as is.

use sea_orm::{DbErr, RuntimeErr};

/// Whether `err` is SQLite's "the schema changed" refusal.
pub fn is_schema_change(err: &DbErr) -> bool {
    match err {
        DbErr::Query(RuntimeErr::SqlxError(e)) | DbErr::Exec(RuntimeErr::SqlxError(e)) => {
            e.as_database_error().and_then(|d| d.code()).is_some_and(|code| code == "17")
        }
        _ => false,
    }
}

/// Runs `read`, and once more if SQLite refused it for a schema change.
pub async fn retry_schema_change<T, F, Fut>(mut read: F) -> Result<T, DbErr>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<T, DbErr>>,
{
    match read().await {
        Err(err) if is_schema_change(&err) => {
            tracing::debug!(target: "api::graphql", error = %err, "Schema changed during a read; retrying");
            read().await
        }
        other => other,
    }
}
