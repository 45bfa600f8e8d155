//! SQLite's bulk writes: multi-row `VALUES` statements in a few fixed sizes, with as little
//! statement journal as the table allows.
//!
//! SQLite keeps a statement journal, a copy of each page as it was before the statement
//! changed it, for a statement that writes several rows and may stop part-way with `ABORT`,
//! the default for a constraint: the copies let it undo the statement's own rows and keep the
//! transaction's. A multi-row `INSERT` is such a statement, and so is `INSERT … ON CONFLICT DO
//! UPDATE` whatever its `OR` clause (SQLite runs the upsert's update with `ABORT`). At 5M
//! events the flush wrote more pages to that journal than to the WAL (BENCHMARKS.md). A
//! statement whose constraints `FAIL` instead keeps the rows it wrote before the failure, so
//! it needs no journal; a failure here fails the whole flush, whose transaction is then rolled
//! back, so nothing of a failed statement's rows survives either way.
//!
//! - Rows that must be new (the append-only history) go in as `INSERT OR FAIL`.
//! - Rows that may be stored go in as `INSERT … ON CONFLICT DO UPDATE` ([`Stored::OnConflict`]),
//!   or, for a table whose row is an entry in several B-trees, apart ([`Stored::Apart`]): in
//!   chunks of [`CHUNK_ROWS`], in key order, which of the chunk's keys are stored (`SELECT`s
//!   over the keys), an `UPDATE OR FAIL … FROM (VALUES …)` of those, and an `INSERT OR FAIL`
//!   of the others.
//! - Rows the caller knows to be stored go in as that `UPDATE` alone ([`Stored::Known`]).
//!
//! Statements come in the fixed sizes of [`statement_sizes`] (the `SELECT` in one size, its
//! last chunk padded), so that a table has a few statement texts, each prepared once per
//! connection.

use std::borrow::Borrow;

use sea_orm::{
    ConnectionTrait, DatabaseBackend, EntityTrait, IdenStatic, Iterable, ModelTrait,
    PrimaryKeyToColumn, Statement, Value,
};

use super::{
    StoreError,
    writer::{Conflict, UPSERT_ROWS, statement_sizes},
};

/// Rows classified as stored or new before either kind is written: a multiple of
/// [`UPSERT_ROWS`], so that most statements are full ones, and few enough that the pages the
/// `SELECT`s read are still cached when the `UPDATE` and the `INSERT` write them.
pub const CHUNK_ROWS: usize = 16 * UPSERT_ROWS;

/// Keys per `SELECT` of stored rows: every such statement binds this many, a short last chunk
/// repeating its last key.
pub const PROBE_ROWS: usize = UPSERT_ROWS;

/// How [`upsert`] writes rows that may be stored already.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stored {
    /// `INSERT … ON CONFLICT DO UPDATE`, with its statement journal: for a table whose row is
    /// one entry of one B-tree (`WITHOUT ROWID`, no index besides the key), where a journaled
    /// page is the page the row is on, and finding the stored rows first costs a second
    /// search per row. At 5M events the registrations and the resolver records each took
    /// 0.2–1.8 s longer apart than as upserts (BENCHMARKS.md).
    OnConflict,
    /// Found first, then updated and the others inserted, without a statement journal: for a
    /// table whose row is an entry in several B-trees (the table by rowid, its key's index and
    /// its other indexes), each of which the journal copied a page of. At 5M events the
    /// domains took 23.8–25.5 s apart against 29.9–33.5 s as upserts (BENCHMARKS.md).
    Apart,
    /// Every row is stored, the caller knows: updated as [`Stored::Apart`] updates, without
    /// finding them first. An update that finds fewer rows than it was given fails with
    /// [`StoreError::StoredRowsMissing`] rather than lose the rows it missed.
    Known,
}

/// Inserts `rows` into `E`'s table, resolving key conflicts as `conflict` says, writing stored
/// rows as `stored` says. Rows a conflict refuses are inserted without a statement journal.
pub(crate) async fn upsert<E, C, R>(
    db: &C,
    rows: &[R],
    conflict: Conflict<'_, E::Column>,
    stored: Stored,
) -> Result<(), StoreError>
where
    E: EntityTrait,
    E::Model: ModelTrait<Entity = E>,
    C: ConnectionTrait,
    R: Borrow<E::Model>,
{
    let texts = Texts::<E>::new(conflict);
    match (conflict, stored) {
        (Conflict::Refuse, _) => {
            write(db, &texts, Kind::Insert, rows.iter().map(Borrow::borrow)).await.map(drop)
        }
        (_, Stored::OnConflict) => {
            write(db, &texts, Kind::Upsert, rows.iter().map(Borrow::borrow)).await.map(drop)
        }
        (_, Stored::Known) => {
            if texts.update.is_none() {
                return Ok(());
            }
            let updated = write(db, &texts, Kind::Update, rows.iter().map(Borrow::borrow)).await?;
            if updated != rows.len() as u64 {
                return Err(StoreError::StoredRowsMissing {
                    table: E::default().table_name(),
                    expected: rows.len(),
                    updated,
                });
            }
            Ok(())
        }
        (_, Stored::Apart) => {
            for chunk in rows.chunks(CHUNK_ROWS) {
                let found = find_stored::<E, C, R>(db, &texts, chunk).await?;
                let rows = || chunk.iter().zip(&found);
                // With nothing to update, a stored row stays as it is.
                if texts.update.is_some() {
                    let old = rows().filter(|(_, s)| **s).map(|(r, _)| r.borrow());
                    write(db, &texts, Kind::Update, old).await?;
                }
                let new = rows().filter(|(_, s)| !**s).map(|(r, _)| r.borrow());
                write(db, &texts, Kind::Insert, new).await?;
            }
            Ok(())
        }
    }
}

/// Which statement a row goes into.
#[derive(Clone, Copy)]
enum Kind {
    /// `INSERT OR FAIL`: new rows.
    Insert,
    /// `UPDATE OR FAIL … FROM (VALUES …)`: stored rows.
    Update,
    /// `INSERT … ON CONFLICT`: either.
    Upsert,
}

/// The pieces of a table's statement texts, for one [`Conflict`].
struct Texts<E: EntityTrait> {
    table: String,
    /// Every column, in the entity's order.
    all: Vec<E::Column>,
    /// The primary key's columns.
    key: Vec<E::Column>,
    /// The columns an update of a stored row sets; `None` when it sets none, or when stored
    /// rows are refused.
    update: Option<Vec<E::Column>>,
}

impl<E: EntityTrait> Texts<E> {
    fn new(conflict: Conflict<'_, E::Column>) -> Self {
        let key: Vec<E::Column> = E::PrimaryKey::iter().map(|k| k.into_column()).collect();
        let update = match conflict {
            Conflict::Refuse => None,
            Conflict::UpdateAllBut(keep) => {
                let set: Vec<E::Column> = E::Column::iter()
                    .filter(|c| !key.iter().chain(keep).any(|k| k.as_str() == c.as_str()))
                    .collect();
                (!set.is_empty()).then_some(set)
            }
        };
        Self {
            table: E::default().table_name().to_owned(),
            all: E::Column::iter().collect(),
            key,
            update,
        }
    }

    /// The columns a row binds in a statement of `kind`, in the order of its `VALUES`.
    fn bound(&self, kind: Kind) -> Vec<E::Column> {
        match kind {
            Kind::Insert | Kind::Upsert => self.all.clone(),
            Kind::Update => self.key.iter().chain(self.update.iter().flatten()).copied().collect(),
        }
    }

    /// The text of a statement of `kind` over `rows` rows.
    fn statement(&self, kind: Kind, rows: usize) -> String {
        let bound = self.bound(kind);
        let values = values_list(rows, bound.len());
        match kind {
            Kind::Insert => format!(
                "INSERT OR FAIL INTO \"{}\" ({}) VALUES {values}",
                self.table,
                names(&bound)
            ),
            Kind::Upsert => {
                let action = match &self.update {
                    None => "NOTHING".to_owned(),
                    Some(set) => format!(
                        "UPDATE SET {}",
                        set.iter()
                            .map(|c| format!("\"{0}\" = excluded.\"{0}\"", c.as_str()))
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                };
                format!(
                    "INSERT INTO \"{}\" ({}) VALUES {values} ON CONFLICT ({}) DO {action}",
                    self.table,
                    names(&bound),
                    names(&self.key),
                )
            }
            Kind::Update => {
                let set: Vec<String> = bound
                    .iter()
                    .enumerate()
                    .skip(self.key.len())
                    .map(|(i, c)| format!("\"{}\" = v.column{}", c.as_str(), i + 1))
                    .collect();
                format!(
                    "UPDATE OR FAIL \"{table}\" SET {set} FROM (VALUES {values}) AS v WHERE {on}",
                    table = self.table,
                    set = set.join(", "),
                    on = self.key_match(1),
                )
            }
        }
    }

    /// `"t"."k1" = v.column<first> AND …`: the table's key against the `VALUES`' columns from
    /// `first` on.
    fn key_match(&self, first: usize) -> String {
        self.key
            .iter()
            .enumerate()
            .map(|(i, c)| format!("\"{}\".\"{}\" = v.column{}", self.table, c.as_str(), first + i))
            .collect::<Vec<_>>()
            .join(" AND ")
    }

    /// The text of the query of which of `rows` rows are stored: each row binds its position
    /// in the chunk and its key, and the query answers the positions of the stored ones.
    fn stored_query(&self, rows: usize) -> String {
        format!(
            "SELECT v.column1 FROM (VALUES {values}) AS v WHERE EXISTS (SELECT 1 FROM \"{table}\" WHERE {on})",
            values = values_list(rows, 1 + self.key.len()),
            table = self.table,
            on = self.key_match(2),
        )
    }
}

/// `"a", "b", …`: the columns' names, quoted.
fn names<Col: IdenStatic>(columns: &[Col]) -> String {
    columns.iter().map(|c| format!("\"{}\"", c.as_str())).collect::<Vec<_>>().join(", ")
}

/// `(?, …), (?, …), …`: `rows` tuples of `columns` placeholders.
fn values_list(rows: usize, columns: usize) -> String {
    let tuple = format!("({})", vec!["?"; columns].join(", "));
    vec![tuple; rows].join(", ")
}

/// Whether each of `rows` is stored, by its key.
async fn find_stored<E, C, R>(db: &C, texts: &Texts<E>, rows: &[R]) -> Result<Vec<bool>, StoreError>
where
    E: EntityTrait,
    E::Model: ModelTrait<Entity = E>,
    C: ConnectionTrait,
    R: Borrow<E::Model>,
{
    let mut stored = vec![false; rows.len()];
    let sql = texts.stored_query(PROBE_ROWS);
    for (n, chunk) in rows.chunks(PROBE_ROWS).enumerate() {
        let first = n * PROBE_ROWS;
        let last = (first + chunk.len() - 1, &chunk[chunk.len() - 1]);
        let padded = (first..).zip(chunk).chain(std::iter::repeat(last)).take(PROBE_ROWS);
        let mut values = Vec::with_capacity(PROBE_ROWS * (1 + texts.key.len()));
        for (at, row) in padded {
            values.push(Value::BigInt(Some(at as i64)));
            values.extend(texts.key.iter().map(|c| row.borrow().get(*c)));
        }
        let found = db
            .query_all_raw(Statement::from_sql_and_values(DatabaseBackend::Sqlite, &sql, values))
            .await
            .map_err(StoreError::db("find stored rows"))?;
        for row in found {
            let at: i64 = row.try_get_by_index(0).map_err(StoreError::db("find stored rows"))?;
            stored[at as usize] = true;
        }
    }
    Ok(stored)
}

/// Writes `rows` in statements of `kind`, in the fixed sizes. Returns the rows the
/// statements changed.
async fn write<'r, E, C>(
    db: &C,
    texts: &Texts<E>,
    kind: Kind,
    rows: impl Iterator<Item = &'r E::Model>,
) -> Result<u64, StoreError>
where
    E: EntityTrait,
    E::Model: ModelTrait<Entity = E> + 'r,
    C: ConnectionTrait,
{
    let rows: Vec<&E::Model> = rows.collect();
    let bound = texts.bound(kind);
    let mut rest = rows.as_slice();
    let mut changed = 0;
    for size in statement_sizes(rows.len()) {
        let (chunk, tail) = rest.split_at(size);
        rest = tail;
        let values: Vec<Value> =
            chunk.iter().flat_map(|row| bound.iter().map(|c| row.get(*c))).collect();
        let sql = texts.statement(kind, size);
        changed += db
            .execute_raw(Statement::from_sql_and_values(DatabaseBackend::Sqlite, sql, values))
            .await
            .map_err(StoreError::db("upsert"))?
            .rows_affected();
    }
    Ok(changed)
}

#[cfg(test)]
mod tests {
    use entities::{label, resolver_address};
    use sea_orm::{
        DatabaseConnection, EntityTrait, IntoActiveModel, QueryOrder, TransactionTrait,
        sea_query::OnConflict,
    };

    use super::*;

    /// A migrated SQLite database in a temporary directory.
    async fn database(dir: &tempfile::TempDir, name: &str) -> DatabaseConnection {
        let url = format!("sqlite://{}?mode=rwc", dir.path().join(name).display());
        crate::store::database::connect(&url).await.unwrap()
    }

    /// SQLite's own upsert of `rows` (`INSERT … ON CONFLICT DO UPDATE`), for comparison.
    async fn reference<E>(db: &DatabaseConnection, rows: &[E::Model], keep: &[E::Column])
    where
        E: EntityTrait,
        E::Model: IntoActiveModel<E::ActiveModel> + Clone,
        E::ActiveModel: sea_orm::ActiveModelTrait<Entity = E> + Send,
    {
        let key: Vec<E::Column> = E::PrimaryKey::iter().map(|k| k.into_column()).collect();
        let set: Vec<E::Column> = E::Column::iter()
            .filter(|c| !key.iter().chain(keep).any(|k| k.as_str() == c.as_str()))
            .collect();
        let mut clause = OnConflict::columns(key);
        if set.is_empty() {
            clause.do_nothing();
        } else {
            clause.update_columns(set);
        }
        for chunk in rows.chunks(500) {
            E::insert_many(chunk.iter().cloned().map(IntoActiveModel::into_active_model))
                .on_conflict(clause.clone())
                .exec_without_returning(db)
                .await
                .unwrap();
        }
    }

    fn label(i: u32, round: u32) -> label::Model {
        let mut hash = [0u8; 32];
        hash[..4].copy_from_slice(&(i.wrapping_mul(2_654_435_761)).to_be_bytes());
        label::Model {
            label_hash: label::RawHash::new(hash),
            // Some rows unknown, the known ones different in each round.
            label: (!i.is_multiple_of(3)).then(|| format!("l{i}r{round}")),
            normalized: (i + round).is_multiple_of(2),
        }
    }

    fn address(i: u32, round: u32) -> resolver_address::Model {
        let id = format!("1-0x{:040x}-0x{:064x}", i % 7, i / 7);
        resolver_address::Model {
            record_id: id.parse().unwrap(),
            coin_type: i64::from(i % 5),
            address: format!("{i:x}{round}"),
        }
    }

    /// Rows stored and new, in many statements of every size, come out as SQLite's
    /// `ON CONFLICT` upsert leaves them, whichever way stored rows are written: stored rows
    /// take the new values of the columns the conflict updates and keep the others.
    #[tokio::test]
    async fn writes_what_an_on_conflict_upsert_writes() {
        let dir = tempfile::tempdir().unwrap();
        let theirs = database(&dir, "theirs.sqlite").await;
        let on_conflict = database(&dir, "on_conflict.sqlite").await;
        let apart = database(&dir, "apart.sqlite").await;
        let ours = [(&on_conflict, Stored::OnConflict), (&apart, Stored::Apart)];
        let value = [label::Column::Label, label::Column::Normalized];
        // Round 0 stores every other row; each later round rewrites a window of the rows,
        // about half of them stored, keeping the value columns in odd rounds.
        for round in 0..4u32 {
            let mut labels: Vec<label::Model> = match round {
                0 => (0..9_000).step_by(2).map(|i| label(i, round)).collect(),
                _ => (round * 1_000..round * 1_000 + 5_000 + round)
                    .map(|i| label(i, round))
                    .collect(),
            };
            labels.sort_by(|a, b| a.label_hash.cmp(&b.label_hash));
            let keep: &[label::Column] = if round % 2 == 1 { &value } else { &[] };
            let addresses: Vec<resolver_address::Model> =
                (round * 700..round * 700 + 1_500).map(|i| address(i, round)).collect();
            for (db, stored) in ours {
                let txn = db.begin().await.unwrap();
                upsert::<label::Entity, _, _>(&txn, &labels, Conflict::UpdateAllBut(keep), stored)
                    .await
                    .unwrap();
                txn.commit().await.unwrap();
                upsert::<resolver_address::Entity, _, _>(
                    db,
                    &addresses,
                    Conflict::UPDATE_ALL,
                    stored,
                )
                .await
                .unwrap();
            }
            reference::<label::Entity>(&theirs, &labels, keep).await;
            reference::<resolver_address::Entity>(&theirs, &addresses, &[]).await;
        }
        let labels = |db: DatabaseConnection| async move {
            label::Entity::find().order_by_asc(label::Column::LabelHash).all(&db).await.unwrap()
        };
        let addresses = |db: DatabaseConnection| async move {
            resolver_address::Entity::find()
                .order_by_asc(resolver_address::Column::RecordId)
                .order_by_asc(resolver_address::Column::CoinType)
                .all(&db)
                .await
                .unwrap()
        };
        let expected = labels(theirs.clone()).await;
        let keys: std::collections::HashSet<u32> = (0..9_000)
            .step_by(2)
            .chain((1..4).flat_map(|round| round * 1_000..round * 1_000 + 5_000 + round))
            .collect();
        assert_eq!(expected.len(), keys.len(), "every key once");
        for (db, stored) in ours {
            assert_eq!(labels(db.clone()).await, expected, "{stored:?}");
            assert_eq!(addresses(db.clone()).await, addresses(theirs.clone()).await, "{stored:?}");
        }
    }

    /// With nothing to update, stored rows stay as they are and new ones are inserted; a
    /// refused conflict fails the statement.
    #[tokio::test]
    async fn keeps_stored_rows_and_refuses_duplicates() {
        let dir = tempfile::tempdir().unwrap();
        for stored in [Stored::OnConflict, Stored::Apart] {
            let db = database(&dir, &format!("{stored:?}.sqlite")).await;
            let all = [label::Column::Label, label::Column::Normalized];
            let first: Vec<label::Model> = (0..300).map(|i| label(i, 0)).collect();
            upsert::<label::Entity, _, _>(&db, &first, Conflict::Refuse, stored).await.unwrap();
            let second: Vec<label::Model> = (200..600).map(|i| label(i, 1)).collect();
            upsert::<label::Entity, _, _>(&db, &second, Conflict::UpdateAllBut(&all), stored)
                .await
                .unwrap();
            let rows = label::Entity::find().all(&db).await.unwrap();
            assert_eq!(rows.len(), 600, "{stored:?}");
            for row in rows {
                let i = (0..600).find(|i| label(*i, 0).label_hash == row.label_hash).unwrap();
                assert_eq!(row, label(i, u32::from(i >= 300)), "{stored:?}: row {i}");
            }
            let again = upsert::<label::Entity, _, _>(&db, &second[..1], Conflict::Refuse, stored);
            assert!(again.await.is_err(), "{stored:?}: a stored key is refused");
        }
    }
}
