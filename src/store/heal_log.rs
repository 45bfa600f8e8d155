//! The label heal log (`label_heals`, `label_heal_marks`): how a label learned
//! by one writer reaches the domains of every chain.
//!
//! Labels are shared, names are not: each chain's handler renders and caches only its own
//! domains. A writer that makes a label known appends its hash here in the same
//! transaction; each chain reads the entries past its mark, re-renders its own domains with
//! those labels, and moves its mark in the transaction that stores the new names. Entries
//! every chain has passed are pruned.
//!
//! Only readers need entries: a label is appended only while a chain other than the one that
//! learned it has a mark or a checkpoint. A chain indexed alone writes nothing here. A chain
//! new to the database registers its mark at the log's end before it reads any label, under
//! the appenders' lock: an appender either sees that mark or has committed its labels, which
//! the new chain then reads from the table.
//!
//! Entries become visible in `seq` order: a reader that has seen entry `n` never later finds
//! an entry below `n` committing. SQLite has one writer at a time. PostgreSQL hands out
//! identity values before commit, so two transactions could commit theirs out of order;
//! appending takes the table's `EXCLUSIVE` lock (plain reads still proceed), held to commit,
//! as the last lock of its transaction so that it cannot close a cycle with row locks.

use entities::{
    checkpoint,
    label_heal::{self, RawHash},
    label_heal_mark,
};
use sea_orm::{
    ColumnTrait, ConnectionTrait, DatabaseBackend, DatabaseConnection, EntityTrait, QueryFilter,
    QueryOrder, QuerySelect, Set, sea_query::OnConflict,
};

use super::{StoreError, writer::MAX_BINDS_PER_STATEMENT};
use crate::ChainId;

/// Entries read per query when a chain catches up with the log.
pub const READ_CHUNK: u64 = 10_000;

/// One entry read back.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Heal {
    /// Position in the log.
    pub seq: i64,
    /// The label that became known.
    pub label_hash: RawHash,
    /// The chain that wrote it (its own domains are already renamed), or
    /// [`label_heal::NO_CHAIN`].
    pub origin_chain: i64,
}

/// Serializes appenders on PostgreSQL until commit (see the module docs).
async fn lock_for_append<C: ConnectionTrait>(txn: &C) -> Result<(), StoreError> {
    if txn.get_database_backend() == DatabaseBackend::Postgres {
        txn.execute_unprepared("LOCK TABLE label_heals IN EXCLUSIVE MODE")
            .await
            .map_err(StoreError::db("lock heal log"))?;
    }
    Ok(())
}

/// Appends `hashes`, written by `origin_chain`, if any other chain reads the log; call it
/// last in the transaction but for the writer's own rows (its mark, its checkpoint).
pub async fn append<C: ConnectionTrait>(
    txn: &C,
    hashes: &[RawHash],
    origin_chain: i64,
) -> Result<(), StoreError> {
    if hashes.is_empty() {
        return Ok(());
    }
    lock_for_append(txn).await?;
    if !has_reader_besides(txn, origin_chain).await? {
        return Ok(());
    }
    for chunk in hashes.chunks(MAX_BINDS_PER_STATEMENT / 2) {
        label_heal::Entity::insert_many(chunk.iter().map(|hash| label_heal::ActiveModel {
            label_hash: Set(hash.clone()),
            origin_chain: Set(origin_chain),
            ..Default::default()
        }))
        .exec_without_returning(txn)
        .await
        .map_err(StoreError::db("append heal log"))?;
    }
    Ok(())
}

/// Moves `chain_id`'s mark to `applied` and prunes what every chain has passed.
pub async fn set_mark<C: ConnectionTrait>(
    txn: &C,
    chain_id: ChainId,
    applied: i64,
) -> Result<(), StoreError> {
    lock_for_append(txn).await?;
    label_heal_mark::Entity::insert(label_heal_mark::ActiveModel {
        chain_id: Set(chain_id.column()),
        applied: Set(applied),
    })
    .on_conflict(
        OnConflict::column(label_heal_mark::Column::ChainId)
            .update_column(label_heal_mark::Column::Applied)
            .to_owned(),
    )
    .exec_without_returning(txn)
    .await
    .map_err(StoreError::db("heal mark"))?;
    txn.execute_unprepared(
        "DELETE FROM label_heals WHERE seq <= (SELECT min(applied) FROM label_heal_marks)",
    )
    .await
    .map_err(StoreError::db("prune heal log"))?;
    Ok(())
}

/// Whether a chain other than `origin_chain` would read an entry it wrote: one with a mark,
/// or with a checkpoint (it reads the whole log when it registers its mark).
async fn has_reader_besides<C: ConnectionTrait>(
    txn: &C,
    origin_chain: i64,
) -> Result<bool, StoreError> {
    let marked = label_heal_mark::Entity::find()
        .filter(label_heal_mark::Column::ChainId.ne(origin_chain))
        .one(txn)
        .await
        .map_err(StoreError::db("heal log readers"))?;
    if marked.is_some() {
        return Ok(true);
    }
    let indexed = checkpoint::Entity::find()
        .filter(checkpoint::Column::ChainId.ne(origin_chain))
        .one(txn)
        .await
        .map_err(StoreError::db("heal log readers"))?;
    Ok(indexed.is_some())
}

/// `chain_id`'s mark, if it has registered one.
async fn read_mark<C: ConnectionTrait>(
    db: &C,
    chain_id: ChainId,
) -> Result<Option<i64>, StoreError> {
    Ok(label_heal_mark::Entity::find_by_id(chain_id.column())
        .one(db)
        .await
        .map_err(StoreError::db("read heal mark"))?
        .map(|mark| mark.applied))
}

/// `chain_id`'s mark, registering one if it has none so that nothing it needs is pruned:
/// a chain with a checkpoint (indexed before the log existed, or its mark lost) reads the
/// whole log; a chain that has written nothing starts at the end, since it has no domains
/// to rename and reads labels from the table from now on. Call it before the chain reads
/// any label: an appender that did not see the new mark has committed its labels by then.
pub async fn mark(db: &DatabaseConnection, chain_id: ChainId) -> Result<i64, StoreError> {
    if let Some(applied) = read_mark(db, chain_id).await? {
        return Ok(applied);
    }
    // Under the appenders' lock, held to commit (see the module docs).
    let txn = super::database::begin_write(db).await?;
    lock_for_append(&txn).await?;
    let start = match read_mark(&txn, chain_id).await? {
        Some(applied) => applied,
        None => {
            let indexed = checkpoint::Entity::find_by_id(chain_id.column())
                .one(&txn)
                .await
                .map_err(StoreError::db("read checkpoint"))?
                .is_some();
            let start = if indexed { 0 } else { last_seq(&txn).await? };
            label_heal_mark::Entity::insert(label_heal_mark::ActiveModel {
                chain_id: Set(chain_id.column()),
                applied: Set(start),
            })
            .exec_without_returning(&txn)
            .await
            .map_err(StoreError::db("register heal mark"))?;
            start
        }
    };
    txn.commit().await.map_err(StoreError::db("register heal mark"))?;
    Ok(start)
}

/// The largest `seq` in the log, 0 when it is empty.
async fn last_seq<C: ConnectionTrait>(db: &C) -> Result<i64, StoreError> {
    let last: Option<Option<i64>> = label_heal::Entity::find()
        .select_only()
        .column_as(label_heal::Column::Seq.max(), "last")
        .into_tuple()
        .one(db)
        .await
        .map_err(StoreError::db("heal log end"))?;
    Ok(last.flatten().unwrap_or(0))
}

/// Up to [`READ_CHUNK`] entries after `after`, in order.
pub async fn read_after<C: ConnectionTrait>(db: &C, after: i64) -> Result<Vec<Heal>, StoreError> {
    Ok(label_heal::Entity::find()
        .filter(label_heal::Column::Seq.gt(after))
        .order_by_asc(label_heal::Column::Seq)
        .limit(READ_CHUNK)
        .all(db)
        .await
        .map_err(StoreError::db("read heal log"))?
        .into_iter()
        .map(|e| Heal { seq: e.seq, label_hash: e.label_hash, origin_chain: e.origin_chain })
        .collect())
}
