//! The writer: one flush = one database transaction holding every changed row and the chain
//! checkpoint ([`super::write_txn`]). Rows that may be stored go out as upserts (`INSERT ..
//! ON CONFLICT DO UPDATE`): chunked multi-row `VALUES` on SQLite ([`super::sqlite_upsert`]),
//! one array per column on PostgreSQL ([`super::unnest_upsert`]). Rows known to be new (the
//! event history, and the rows created since the last flush of the tables whose new rows the
//! store knows: domains, registrations, renewals, resolver records) go in as plain inserts on
//! SQLite and by `COPY` on PostgreSQL ([`super::pg_copy`]); on SQLite the stored rows of those
//! tables go out as an `UPDATE` ([`super::tables`]).

use entities::{
    checkpoint, contract, event, event_block, event_transaction, resolver_address, resolver_text,
};

use sea_orm::{ColumnTrait, DatabaseConnection, EntityTrait, QueryFilter};

use super::{
    StoreError,
    database::WalBound,
    journal::JournalWindow,
    row_chunks::RowChunks,
    sqlite_upsert::Stored,
    tables::{CachedRows, CreatedRows},
    write_txn::WriteTxn,
};
use crate::ChainId;

/// SQLite allows 32 766 bound values per statement and PostgreSQL 65 535; chunks stay under
/// this many values so one chunk fits either engine.
pub const MAX_BINDS_PER_STATEMENT: usize = 30_000;

/// Rows per upsert statement. Statements come in a few fixed shapes (this many rows, then
/// halves of it for the remainder: 128, 64, … 1), so each table has at most nine statement
/// texts, parsed and prepared once per connection. Chunks sized by whatever was dirty made a
/// new multi-thousand-row statement text nearly every flush: parsed each time and kept in
/// the prepared-statement cache, they cost more than the rows (BENCHMARKS.md).
pub const UPSERT_ROWS: usize = 256;

/// Splits `len` rows into the fixed statement sizes: full [`UPSERT_ROWS`] chunks, then the
/// remainder's binary digits, largest first.
pub fn statement_sizes(len: usize) -> impl Iterator<Item = usize> {
    let full = std::iter::repeat_n(UPSERT_ROWS, len / UPSERT_ROWS);
    let rest = len % UPSERT_ROWS;
    let bits =
        (0..UPSERT_ROWS.trailing_zeros()).rev().map(|b| 1 << b).filter(move |b| rest & b != 0);
    full.chain(bits)
}

/// How far a chain is indexed: written in the same transaction as the rows.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Checkpoint {
    /// Chain id.
    pub chain_id: ChainId,
    /// Last fully applied block.
    pub block_number: u64,
    /// Its hash, hex.
    pub block_hash: String,
}

/// Every row a batch of events changed.
#[derive(Debug, Default)]
pub struct Changes {
    /// Rows of the write-behind tables ([`super::tables`]).
    pub tables: CachedRows,
    /// Records whose address and text rows are deleted before the upserts (`VersionChanged`).
    pub cleared_records: Vec<entities::resolver_record::ResolverRecordKey>,
    /// Address records.
    pub addresses: Vec<resolver_address::Model>,
    /// Text records.
    pub texts: Vec<resolver_text::Model>,
    /// Contracts that emitted events for the first time (their codes were handed out since
    /// the last flush; append-only).
    pub contracts: Vec<contract::Model>,
    /// History rows of the applied events (append-only: a reorg deletes them by block, so
    /// the journal does not record them).
    pub events: RowChunks<event::Model>,
    /// Block hashes of those events, one row per block.
    pub event_blocks: RowChunks<event_block::Model>,
    /// Transactions of those events (hash, sender, recipient, time), one row per transaction.
    pub event_transactions: RowChunks<event_transaction::Model>,
    /// Ids of the `domains` whose name may have changed; the others keep their stored name.
    pub renamed_domains: foldhash::HashSet<entities::domain_key::DomainKey>,
    /// Which rows of `tables` the store created since the last flush began (no version of
    /// them is stored); the others are stored. `None` when the writer is not told, and finds
    /// out itself.
    pub created: Option<CreatedRows>,
    /// Labels this chain made known, for the heal log ([`super::heal_log`]): the other
    /// chains rename their domains from it.
    pub heals: Vec<entities::label::RawHash>,
    /// The chain's new mark in the heal log, when it applied entries since the last flush.
    pub heal_mark: Option<i64>,
}

impl Changes {
    /// Number of rows in the change set.
    pub fn len(&self) -> usize {
        self.tables.len()
            + self.cleared_records.len()
            + self.addresses.len()
            + self.texts.len()
            + self.contracts.len()
            + self.events.len()
            + self.event_blocks.len()
            + self.event_transactions.len()
            + self.heals.len()
    }

    /// Whether nothing changed.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// What a write does with a row whose primary key is already stored.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Conflict<'a, Col> {
    /// Update every column except the key and these. SQLite rewrites an index entry on update
    /// whenever one of its columns is assigned, equal or not, so columns that cannot have
    /// changed stay out of the `SET` list: a domain update then leaves `domains_label_hash`
    /// and `domains_parent_name_seq` untouched unless the name changed.
    UpdateAllBut(&'a [Col]),
    /// No conflict clause at all: the statement fails, and the flush with it. For the
    /// append-only history, whose rows are written once, in the transaction that moves the
    /// checkpoint past their block; a duplicate would be a bug, not something to paper over.
    /// Without the clause PostgreSQL also skips the probe of the key it makes before every
    /// row of an `ON CONFLICT` insert.
    Refuse,
}

impl<Col> Conflict<'static, Col> {
    /// Update every column except the key: the rows' newest versions win.
    pub(crate) const UPDATE_ALL: Self = Conflict::UpdateAllBut(&[]);
}

/// Upserts `rows`: their newest versions win over stored rows of the same key.
pub async fn upsert<E, C>(db: &C, rows: &[E::Model]) -> Result<(), StoreError>
where
    E: EntityTrait,
    C: sea_orm::ConnectionTrait,
{
    write_rows::<E, C, E::Model>(db, rows, Conflict::UPDATE_ALL).await
}

/// Inserts `rows`, resolving key conflicts as `conflict` says: [`super::sqlite_upsert`] on
/// SQLite, [`super::unnest_upsert`] on PostgreSQL.
pub(crate) async fn write_rows<E, C, R>(
    db: &C,
    rows: &[R],
    conflict: Conflict<'_, E::Column>,
) -> Result<(), StoreError>
where
    E: EntityTrait,
    C: sea_orm::ConnectionTrait,
    R: std::borrow::Borrow<E::Model>,
{
    write_rows_with::<E, C, R>(db, rows, conflict, Stored::OnConflict).await
}

/// [`write_rows`], with SQLite writing stored rows as `stored` says: [`Stored::Apart`] for a
/// table whose rows are entries in several B-trees (a rowid table, its key's index and other
/// indexes). PostgreSQL writes them as [`write_rows`] does.
pub(crate) async fn write_rows_with<E, C, R>(
    db: &C,
    rows: &[R],
    conflict: Conflict<'_, E::Column>,
    stored: Stored,
) -> Result<(), StoreError>
where
    E: EntityTrait,
    C: sea_orm::ConnectionTrait,
    R: std::borrow::Borrow<E::Model>,
{
    if rows.is_empty() {
        return Ok(());
    }
    if db.get_database_backend() == sea_orm::DatabaseBackend::Postgres {
        return super::unnest_upsert::upsert::<E, C, R>(db, rows, conflict).await;
    }
    super::sqlite_upsert::upsert::<E, C, R>(db, rows, conflict, stored).await
}

/// Inserts the rows of `chunks`, none of them stored (a stored key fails the write): by
/// `COPY` on PostgreSQL ([`super::pg_copy`]), one statement for all the chunks; on SQLite as
/// [`write_rows_with`] with [`Conflict::Refuse`] and `stored`.
pub(crate) async fn insert_new<E, R>(
    txn: &WriteTxn,
    chunks: &[&[R]],
    stored: Stored,
) -> Result<(), StoreError>
where
    E: EntityTrait,
    E::Model: Sync,
    R: std::borrow::Borrow<E::Model> + Sync,
{
    if matches!(txn, WriteTxn::Postgres(_)) {
        return super::pg_copy::insert::<E, R>(txn, chunks).await;
    }
    for rows in chunks {
        write_rows_with::<E, _, R>(txn, rows, Conflict::Refuse, stored).await?;
    }
    Ok(())
}

/// [`insert_new`] of `chunks` of new rows, timed together into
/// `ensemble_flush_table_seconds{entity}`: which table a flush spends its time on.
pub(super) async fn timed_insert<'a, E>(
    txn: &WriteTxn,
    chunks: impl IntoIterator<Item = &'a [E::Model]>,
    entity: &'static str,
) -> Result<(), StoreError>
where
    E: EntityTrait,
    E::Model: Sync,
{
    let started = std::time::Instant::now();
    let chunks: Vec<&[E::Model]> = chunks.into_iter().collect();
    insert_new::<E, E::Model>(txn, &chunks, Stored::OnConflict).await?;
    record_table_time(entity, started);
    Ok(())
}

/// [`write_rows`] of `rows`, timed into `ensemble_flush_table_seconds{entity}`.
async fn timed_write<E>(
    txn: &WriteTxn,
    rows: &[E::Model],
    conflict: Conflict<'_, E::Column>,
    entity: &'static str,
) -> Result<(), StoreError>
where
    E: EntityTrait,
{
    let started = std::time::Instant::now();
    write_rows::<E, _, E::Model>(txn, rows, conflict).await?;
    record_table_time(entity, started);
    Ok(())
}

/// Records into `ensemble_flush_table_seconds{entity}` the time a flush spent on a table.
pub(super) fn record_table_time(entity: &'static str, started: std::time::Instant) {
    metrics::histogram!("ensemble_flush_table_seconds", "entity" => entity)
        .record(started.elapsed().as_secs_f64());
}

/// Writes `changes` and `checkpoint` in one transaction; with a `journal` window, the prior
/// images of everything changed go into the journal first, in the same transaction. After
/// the commit, a WAL past its bound is emptied as `wal` says.
pub async fn write(
    db: &DatabaseConnection,
    changes: &Changes,
    checkpoint: &Checkpoint,
    journal: Option<&JournalWindow>,
    wal: WalBound,
) -> Result<(), StoreError> {
    let started = std::time::Instant::now();
    let txn = super::database::begin_write(db).await?;
    record_table_time("begin", started);
    if let Some(window) = journal {
        let started = std::time::Instant::now();
        super::journal::record(&txn, checkpoint.chain_id, window, changes).await?;
        record_table_time("journal", started);
    }
    if !changes.cleared_records.is_empty() {
        for ids in changes.cleared_records.chunks(MAX_BINDS_PER_STATEMENT) {
            resolver_address::Entity::delete_many()
                .filter(resolver_address::Column::RecordId.is_in(ids.iter().cloned()))
                .exec(&txn)
                .await
                .map_err(StoreError::db("clear addresses"))?;
            resolver_text::Entity::delete_many()
                .filter(resolver_text::Column::RecordId.is_in(ids.iter().cloned()))
                .exec(&txn)
                .await
                .map_err(StoreError::db("clear texts"))?;
        }
    }
    changes.tables.write(&txn, changes).await?;
    timed_write::<resolver_address::Entity>(
        &txn,
        &changes.addresses,
        Conflict::UPDATE_ALL,
        "resolver_address",
    )
    .await?;
    timed_write::<resolver_text::Entity>(
        &txn,
        &changes.texts,
        Conflict::UPDATE_ALL,
        "resolver_text",
    )
    .await?;
    timed_insert::<contract::Entity>(&txn, [changes.contracts.as_slice()], "contract").await?;
    timed_insert::<event::Entity>(&txn, changes.events.chunks(), "event").await?;
    timed_insert::<event_block::Entity>(&txn, changes.event_blocks.chunks(), "event_block").await?;
    timed_insert::<event_transaction::Entity>(
        &txn,
        changes.event_transactions.chunks(),
        "event_transaction",
    )
    .await?;
    // Last but for this chain's own rows: appending locks the log (see `heal_log`).
    super::heal_log::append(&txn, &changes.heals, checkpoint.chain_id.column()).await?;
    if let Some(mark) = changes.heal_mark {
        super::heal_log::set_mark(&txn, checkpoint.chain_id, mark).await?;
    }
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64);
    upsert::<checkpoint::Entity, _>(
        &txn,
        &[checkpoint::Model {
            chain_id: checkpoint.chain_id.column(),
            block_number: checkpoint.block_number as i64,
            block_hash: checkpoint.block_hash.clone(),
            updated_at: now,
        }],
    )
    .await?;
    // The commit is timed too: on SQLite it syncs the WAL and, past the autocheckpoint
    // threshold, copies the WAL into the database file, which no table's time shows.
    let started = std::time::Instant::now();
    txn.commit().await.map_err(StoreError::db("commit"))?;
    record_table_time("commit", started);
    super::database::bound_wal(db, wal).await;
    Ok(())
}

/// Reads a chain's checkpoint.
pub async fn read_checkpoint(
    db: &DatabaseConnection,
    chain_id: ChainId,
) -> Result<Option<Checkpoint>, StoreError> {
    Ok(checkpoint::Entity::find_by_id(chain_id.column())
        .one(db)
        .await
        .map_err(StoreError::db("read checkpoint"))?
        .map(|c| Checkpoint {
            chain_id,
            block_number: c.block_number as u64,
            block_hash: c.block_hash,
        }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_split_into_fixed_statement_sizes() {
        for len in [0, 1, 2, 3, 255, 256, 257, 1000, 5 * 256 + 77] {
            let sizes: Vec<usize> = statement_sizes(len).collect();
            assert_eq!(sizes.iter().sum::<usize>(), len, "{len}: {sizes:?}");
            assert!(sizes.iter().all(|s| s.is_power_of_two() && *s <= UPSERT_ROWS), "{sizes:?}");
            assert!(sizes.windows(2).all(|w| w[0] >= w[1]), "{sizes:?}");
        }
        assert_eq!(statement_sizes(256 + 7).collect::<Vec<_>>(), vec![256, 4, 2, 1]);
    }
}
