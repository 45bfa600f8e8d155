//! SQLite's name search (`domains_name_fts`, an FTS5 trigram table over the names' search
//! texts, [`entities::search_text`]), kept in step with `domains` by the statements that change
//! names, a flush's worth at a time.
//!
//! Triggers kept it in step before, one name per row written. FTS5 writes the terms it holds
//! to a new segment of its index at every savepoint, and a multi-row upsert whose trigger
//! inserts into a virtual table opens one per statement: each 256-row statement of a flush
//! wrote a small segment, and FTS5 merged them as they piled up. Here a flush forgets the
//! names it replaces and indexes the names it wrote in a few statements of thousands of rows
//! each, one larger segment per statement (the 5M-event backfill's domain writes took 10–15 s
//! less; BENCHMARKS.md).
//!
//! Whoever writes `domains` on SQLite reads [`last_row`], calls [`forget`] for the rows it
//! renames, writes, and calls [`index`]: the flush ([`super::tables`]) and the benchmark's
//! generated namegraph. A rollback that deletes a domain calls [`forget`]
//! ([`super::journal`]). PostgreSQL's trigram search is an ordinary index, kept by the
//! database: every function here is a no-op there.

use entities::{domain::DomainKey, search_text};
use sea_orm::{ConnectionTrait, DatabaseBackend, Statement, Value};

use super::StoreError;

/// Domain keys per statement at most. A statement binds a power of two of them (a chunk
/// repeats its last key up to that, which an `IN` list ignores), so each of the two statements
/// has at most thirteen shapes, each prepared once, and a rollback that forgets one name binds
/// one key, not thousands.
pub const KEYS_PER_STATEMENT: usize = 4096;

/// The highest rowid of `domains` (0 when empty): rows a statement inserts after this read
/// have higher ones. Read before a flush writes its domains, for [`index`].
pub async fn last_row<C: ConnectionTrait>(db: &C) -> Result<i64, StoreError> {
    if db.get_database_backend() != DatabaseBackend::Sqlite {
        return Ok(0);
    }
    let row = db
        .query_one_raw(Statement::from_string(
            DatabaseBackend::Sqlite,
            "SELECT coalesce(max(rowid), 0) AS last FROM domains",
        ))
        .await
        .map_err(StoreError::db("last domain row"))?;
    row.map_or(Ok(0), |r| r.try_get::<i64>("", "last")).map_err(StoreError::db("last domain row"))
}

/// Removes the stored names of `ids` from the name search, before they are overwritten or
/// deleted. Keys with no stored row are ignored.
pub async fn forget<C: ConnectionTrait>(db: &C, ids: &[&DomainKey]) -> Result<(), StoreError> {
    // FTS5 removes the terms of the text it is given, which must be the one it indexed.
    for_keys(
        db,
        |keys| {
            format!(
                "INSERT INTO domains_name_fts(domains_name_fts, rowid, name) {}",
                search_text::sqlite_rows("'delete', rid, text", &format!("id IN {keys}"))
            )
        },
        None,
        ids,
        "forget names",
    )
    .await
}

/// Adds to the name search every domain inserted since [`last_row`] read `last`, and the
/// stored names of `renamed` (whose old names [`forget`] removed). Every row a write inserts
/// is indexed whether or not it was named as renamed: a new domain missing from the search
/// would go unfound without a trace.
pub async fn index<C: ConnectionTrait>(
    db: &C,
    renamed: &[&DomainKey],
    last: i64,
) -> Result<(), StoreError> {
    if db.get_database_backend() != DatabaseBackend::Sqlite {
        return Ok(());
    }
    db.execute_raw(Statement::from_sql_and_values(
        DatabaseBackend::Sqlite,
        format!(
            "INSERT INTO domains_name_fts(rowid, name) {}",
            search_text::sqlite_rows("rid, text", "rowid > ?")
        ),
        [last.into()],
    ))
    .await
    .map_err(StoreError::db("index new names"))?;
    for_keys(
        db,
        |keys| {
            format!(
                "INSERT INTO domains_name_fts(rowid, name) {}",
                search_text::sqlite_rows("rid, text", &format!("rowid <= ? AND id IN {keys}"))
            )
        },
        Some(last),
        renamed,
        "index renamed names",
    )
    .await
}

/// Runs `statement((?, …))` over `ids` in fixed-size chunks, binding `bound` first if there is
/// one.
async fn for_keys<C: ConnectionTrait>(
    db: &C,
    statement: impl Fn(&str) -> String,
    bound: Option<i64>,
    ids: &[&DomainKey],
    op: &'static str,
) -> Result<(), StoreError> {
    if db.get_database_backend() != DatabaseBackend::Sqlite || ids.is_empty() {
        return Ok(());
    }
    for chunk in ids.chunks(KEYS_PER_STATEMENT) {
        let keys = chunk.len().next_power_of_two();
        let sql = statement(&format!("({})", vec!["?"; keys].join(", ")));
        let pad = chunk.last().into_iter().cycle().take(keys - chunk.len());
        let values: Vec<Value> = bound
            .map(Value::from)
            .into_iter()
            .chain(chunk.iter().chain(pad).map(|id| (*id).clone().into()))
            .collect();
        db.execute_raw(Statement::from_sql_and_values(DatabaseBackend::Sqlite, &sql, values))
            .await
            .map_err(StoreError::db(op))?;
    }
    Ok(())
}
