//! The reorg journal. Every flush of a window above finality also writes, in the same
//! transaction and before the new rows, the prior image of every row the window changes
//! (`journal_entries`) and the window's block hashes (`journal_windows`). [`rollback`] undoes
//! every window that ends at or after a fork block, in one transaction, and moves the
//! checkpoint back to just before the earliest undone window; the fetcher then re-reads the
//! canonical chain from there. Windows that fall below finality are pruned as new ones are
//! written, so the journal stays as small as the unfinalized part of the chain.
//!
//! Labels are not journaled: a label is knowledge about a hash, not chain state, and it is
//! shared by every chain, so a reorg of one chain never unlearns it. For the same reason a
//! restored domain keeps its current name: names only change when a label heals, and the
//! label stays healed.
//!
//! Address and text records are journaled per resolver record (`record_entries`: all of a
//! record's address and text rows), which also covers `VersionChanged` deleting them.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use entities::{
    checkpoint, domain, journal_entry, journal_window, resolver_address,
    resolver_record::ResolverRecordKey, resolver_text,
};
use sea_orm::{
    ColumnTrait, ConnectionTrait, DatabaseConnection, EntityTrait, IntoActiveModel, Iterable,
    PrimaryKeyToColumn, QueryFilter, QueryOrder, sea_query::OnConflict,
};
use serde::{Deserialize, Serialize, de::DeserializeOwned};

use super::{
    StoreError,
    tables::WriteBehind,
    write_txn::WriteTxn,
    writer::{Changes, Checkpoint, MAX_BINDS_PER_STATEMENT, upsert},
};
use crate::ChainId;

/// The window a journaled flush covers.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct JournalWindow {
    /// First block.
    pub start: u64,
    /// Last block.
    pub end: u64,
    /// Hash of the last block.
    pub end_hash: String,
    /// Parent hash of the first block.
    pub start_parent_hash: String,
    /// Windows ending below this block are final: pruned in the same transaction.
    pub prune_below: u64,
}

#[derive(Default, Serialize, Deserialize)]
struct RecordEntries {
    addresses: Vec<resolver_address::Model>,
    texts: Vec<resolver_text::Model>,
}

const RECORD_ENTRIES: &str = "record_entries";

fn to_json<T: Serialize>(value: &T) -> Result<String, StoreError> {
    serde_json::to_string(value).map_err(|e| StoreError::Journal(e.to_string()))
}

fn entry(
    chain_id: ChainId,
    window: &JournalWindow,
    table: &str,
    key: String,
    prior: Option<String>,
) -> journal_entry::Model {
    journal_entry::Model {
        chain_id: chain_id.column(),
        window_start: window.start as i64,
        table_name: table.to_owned(),
        row_key: key,
        prior,
    }
}

/// Prior images of the rows of `E` with these keys, by the text of their key (`key_of`).
async fn priors<E, C, K>(
    txn: &C,
    pk: E::Column,
    keys: Vec<K>,
    key_of: impl Fn(&E::Model) -> String,
) -> Result<HashMap<String, String>, StoreError>
where
    E: EntityTrait,
    E::Model: Serialize,
    C: ConnectionTrait,
    K: Into<sea_orm::Value> + Clone,
{
    let mut out = HashMap::new();
    for chunk in keys.chunks(MAX_BINDS_PER_STATEMENT) {
        let rows = E::find()
            .filter(pk.is_in(chunk.iter().cloned()))
            .all(txn)
            .await
            .map_err(StoreError::db("journal priors"))?;
        for row in rows {
            out.insert(key_of(&row), to_json(&row)?);
        }
    }
    Ok(out)
}

/// Appends to `entries` the prior image of each of `rows` (none for a row the window creates),
/// keyed by the text of its key, under the journal's name `table`.
pub(super) async fn priors_of<E: WriteBehind>(
    txn: &WriteTxn,
    rows: &[E::Model],
    table: &'static str,
    entry: &impl Fn(&'static str, String, Option<String>) -> journal_entry::Model,
    entries: &mut Vec<journal_entry::Model>,
) -> Result<(), StoreError>
where
    E::Model: Serialize,
    E::Key: Into<sea_orm::Value>,
{
    let Some(pk) = E::PrimaryKey::iter().next().map(|k| k.into_column()) else {
        return Ok(());
    };
    let keys: Vec<E::Key> = rows.iter().map(|r| E::key(r).clone()).collect();
    let mut found = priors::<E, _, _>(txn, pk, keys.clone(), |r| E::key(r).to_string()).await?;
    for key in keys {
        let key = key.to_string();
        let prior = found.remove(&key);
        entries.push(entry(table, key, prior));
    }
    Ok(())
}

/// Writes the prior images of everything `changes` touches, and the window row, into `txn`.
/// Must run before `changes` is written.
pub(crate) async fn record(
    txn: &WriteTxn,
    chain_id: ChainId,
    window: &JournalWindow,
    changes: &Changes,
) -> Result<(), StoreError> {
    let mut entries = Vec::new();
    let entry_of = |table: &'static str, key, prior| entry(chain_id, window, table, key, prior);
    changes.tables.journal(txn, entry_of, &mut entries).await?;

    let records: BTreeSet<ResolverRecordKey> = changes
        .cleared_records
        .iter()
        .cloned()
        .chain(changes.addresses.iter().map(|a| a.record_id.clone()))
        .chain(changes.texts.iter().map(|t| t.record_id.clone()))
        .collect();
    // The records' rows are read a chunk of records per query: a window of busy blocks
    // touches thousands of records, and a query per record would cost a round trip each.
    let records: Vec<ResolverRecordKey> = records.into_iter().collect();
    let mut held: BTreeMap<ResolverRecordKey, RecordEntries> =
        records.iter().map(|r| (r.clone(), RecordEntries::default())).collect();
    for chunk in records.chunks(MAX_BINDS_PER_STATEMENT) {
        let addresses = resolver_address::Entity::find()
            .filter(resolver_address::Column::RecordId.is_in(chunk.iter().cloned()))
            .all(txn)
            .await
            .map_err(StoreError::db("journal addresses"))?;
        for row in addresses {
            held.entry(row.record_id.clone()).or_default().addresses.push(row);
        }
        let texts = resolver_text::Entity::find()
            .filter(resolver_text::Column::RecordId.is_in(chunk.iter().cloned()))
            .all(txn)
            .await
            .map_err(StoreError::db("journal texts"))?;
        for row in texts {
            held.entry(row.record_id.clone()).or_default().texts.push(row);
        }
    }
    for (record_id, mut prior) in held {
        // In key order whatever order the engine returned them in.
        prior.addresses.sort_by_key(|a| a.coin_type);
        prior.texts.sort_by(|a, b| a.key_hash.cmp(&b.key_hash));
        let prior = to_json(&prior)?;
        entries.push(entry(chain_id, window, RECORD_ENTRIES, record_id.to_string(), Some(prior)));
    }

    for chunk in entries.chunks(MAX_BINDS_PER_STATEMENT / 5) {
        journal_entry::Entity::insert_many(
            chunk.iter().cloned().map(IntoActiveModel::into_active_model),
        )
        .on_conflict(
            OnConflict::columns([
                journal_entry::Column::ChainId,
                journal_entry::Column::WindowStart,
                journal_entry::Column::TableName,
                journal_entry::Column::RowKey,
            ])
            .do_nothing()
            .to_owned(),
        )
        .exec_without_returning(txn)
        .await
        .map_err(StoreError::db("journal entries"))?;
    }
    upsert::<journal_window::Entity, _>(
        txn,
        &[journal_window::Model {
            chain_id: chain_id.column(),
            window_start: window.start as i64,
            window_end: window.end as i64,
            end_hash: window.end_hash.clone(),
            start_parent_hash: window.start_parent_hash.clone(),
        }],
    )
    .await?;
    prune(txn, chain_id, window.prune_below).await
}

async fn prune<C: ConnectionTrait>(
    txn: &C,
    chain_id: ChainId,
    below: u64,
) -> Result<(), StoreError> {
    let finals: Vec<i64> = journal_window::Entity::find()
        .filter(journal_window::Column::ChainId.eq(chain_id.column()))
        .filter(journal_window::Column::WindowEnd.lt(below as i64))
        .all(txn)
        .await
        .map_err(StoreError::db("journal prune"))?
        .into_iter()
        .map(|w| w.window_start)
        .collect();
    if finals.is_empty() {
        return Ok(());
    }
    journal_entry::Entity::delete_many()
        .filter(journal_entry::Column::ChainId.eq(chain_id.column()))
        .filter(journal_entry::Column::WindowStart.is_in(finals.clone()))
        .exec(txn)
        .await
        .map_err(StoreError::db("journal prune"))?;
    journal_window::Entity::delete_many()
        .filter(journal_window::Column::ChainId.eq(chain_id.column()))
        .filter(journal_window::Column::WindowStart.is_in(finals))
        .exec(txn)
        .await
        .map_err(StoreError::db("journal prune"))?;
    Ok(())
}

/// Journaled windows of a chain, newest first.
pub async fn windows(
    db: &DatabaseConnection,
    chain_id: ChainId,
) -> Result<Vec<journal_window::Model>, StoreError> {
    journal_window::Entity::find()
        .filter(journal_window::Column::ChainId.eq(chain_id.column()))
        .order_by_desc(journal_window::Column::WindowStart)
        .all(db)
        .await
        .map_err(StoreError::db("journal windows"))
}

/// Puts back the row of `E` whose journal key is `key` (the text of its primary key `K`: a
/// domain's Omnigraph id, the others' ids as they are) as `prior`, or deletes it when the
/// window created it.
pub(super) async fn restore<E, C, K>(
    txn: &C,
    key: &str,
    prior: Option<&str>,
) -> Result<(), StoreError>
where
    K: std::str::FromStr,
    K::Err: std::fmt::Display,
    E: EntityTrait,
    E::Model: DeserializeOwned + IntoActiveModel<E::ActiveModel> + Clone,
    E::ActiveModel: sea_orm::ActiveModelTrait<Entity = E> + Send,
    <E::PrimaryKey as sea_orm::PrimaryKeyTrait>::ValueType: From<K>,
    C: ConnectionTrait,
{
    match prior {
        Some(json) => {
            let row: E::Model =
                serde_json::from_str(json).map_err(|e| StoreError::Journal(e.to_string()))?;
            upsert::<E, C>(txn, &[row]).await
        }
        None => {
            let key: K = key.parse().map_err(|e: K::Err| StoreError::Journal(e.to_string()))?;
            E::delete_by_id(key).exec(txn).await.map_err(StoreError::db("rollback delete"))?;
            Ok(())
        }
    }
}

/// [`restore`] for a domain, keeping the name it has now (see the module docs).
pub(super) async fn restore_domain<C: ConnectionTrait>(
    txn: &C,
    key: &str,
    prior: Option<&str>,
) -> Result<(), StoreError> {
    let Some(json) = prior else {
        // The domain was created by the undone window: its name leaves the search with it.
        let id: domain::DomainKey = key.parse().map_err(|e| StoreError::Journal(format!("{e}")))?;
        super::name_search::forget(txn, &[&id]).await?;
        return restore::<domain::Entity, _, domain::DomainKey>(txn, key, None).await;
    };
    let mut row: domain::Model =
        serde_json::from_str(json).map_err(|e| StoreError::Journal(e.to_string()))?;
    if let Some(current) = domain::Entity::find_by_id(row.id.clone())
        .one(txn)
        .await
        .map_err(StoreError::db("rollback domain"))?
    {
        row.name = current.name;
    }
    upsert::<domain::Entity, C>(txn, &[row]).await
}

/// Undoes every journaled window of `chain_id` that ends at or after `fork_block`, in one
/// transaction, and returns the restored checkpoint (none when everything was undone from
/// genesis). Errors with
/// [`StoreError::ReorgBeyondJournal`] when the fork lies before the journal.
pub async fn rollback(
    db: &DatabaseConnection,
    chain_id: ChainId,
    fork_block: u64,
) -> Result<Option<Checkpoint>, StoreError> {
    let txn = super::database::begin_write(db).await?;
    let undo: Vec<journal_window::Model> = journal_window::Entity::find()
        .filter(journal_window::Column::ChainId.eq(chain_id.column()))
        .filter(journal_window::Column::WindowEnd.gte(fork_block as i64))
        .order_by_desc(journal_window::Column::WindowStart)
        .all(&txn)
        .await
        .map_err(StoreError::db("rollback windows"))?;
    let Some(earliest) = undo.last().cloned() else {
        return Err(StoreError::ReorgBeyondJournal { chain_id, fork_block });
    };
    if (earliest.window_start as u64) > fork_block {
        return Err(StoreError::ReorgBeyondJournal { chain_id, fork_block });
    }
    // Newest window first: each key ends up with the image from before the earliest window.
    for window in &undo {
        let entries = journal_entry::Entity::find()
            .filter(journal_entry::Column::ChainId.eq(chain_id.column()))
            .filter(journal_entry::Column::WindowStart.eq(window.window_start))
            .all(&txn)
            .await
            .map_err(StoreError::db("rollback entries"))?;
        for e in entries {
            let prior = e.prior.as_deref();
            let key = e.row_key.as_str();
            match e.table_name.as_str() {
                RECORD_ENTRIES => {
                    let record_id: ResolverRecordKey =
                        key.parse().map_err(|e| StoreError::Journal(format!("{e}")))?;
                    resolver_address::Entity::delete_many()
                        .filter(resolver_address::Column::RecordId.eq(record_id.clone()))
                        .exec(&txn)
                        .await
                        .map_err(StoreError::db("rollback addresses"))?;
                    resolver_text::Entity::delete_many()
                        .filter(resolver_text::Column::RecordId.eq(record_id))
                        .exec(&txn)
                        .await
                        .map_err(StoreError::db("rollback texts"))?;
                    let prior: RecordEntries =
                        serde_json::from_str(prior.unwrap_or("{\"addresses\":[],\"texts\":[]}"))
                            .map_err(|err| StoreError::Journal(err.to_string()))?;
                    upsert::<resolver_address::Entity, _>(&txn, &prior.addresses).await?;
                    upsert::<resolver_text::Entity, _>(&txn, &prior.texts).await?;
                }
                table => match super::tables::restore(&txn, table, key, prior).await {
                    Some(restored) => restored?,
                    None => {
                        return Err(StoreError::Journal(format!("unknown journal table {table}")));
                    }
                },
            }
        }
    }
    // The event history is append-only: everything from the first undone block goes.
    super::event_history::delete_from(&txn, chain_id.column(), earliest.window_start).await?;
    let starts: Vec<i64> = undo.iter().map(|w| w.window_start).collect();
    journal_entry::Entity::delete_many()
        .filter(journal_entry::Column::ChainId.eq(chain_id.column()))
        .filter(journal_entry::Column::WindowStart.is_in(starts.clone()))
        .exec(&txn)
        .await
        .map_err(StoreError::db("rollback clear"))?;
    journal_window::Entity::delete_many()
        .filter(journal_window::Column::ChainId.eq(chain_id.column()))
        .filter(journal_window::Column::WindowStart.is_in(starts))
        .exec(&txn)
        .await
        .map_err(StoreError::db("rollback clear"))?;
    let restored = (earliest.window_start > 0).then(|| Checkpoint {
        chain_id,
        block_number: earliest.window_start as u64 - 1,
        block_hash: earliest.start_parent_hash,
    });
    match &restored {
        Some(restored) => {
            upsert::<checkpoint::Entity, _>(
                &txn,
                &[checkpoint::Model {
                    chain_id: chain_id.column(),
                    block_number: restored.block_number as i64,
                    block_hash: restored.block_hash.clone(),
                    updated_at: std::time::SystemTime::now()
                        .duration_since(std::time::UNIX_EPOCH)
                        .map_or(0, |d| d.as_secs() as i64),
                }],
            )
            .await?;
        }
        // Undone from genesis: nothing is indexed, and the chain starts over from its start
        // block (there is no block before genesis to link to).
        None => {
            checkpoint::Entity::delete_by_id(chain_id.column())
                .exec(&txn)
                .await
                .map_err(StoreError::db("rollback checkpoint"))?;
        }
    }
    txn.commit().await.map_err(StoreError::db("commit rollback"))?;
    Ok(restored)
}
