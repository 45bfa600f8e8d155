//! The write-behind tables, declared once.
//!
//! The tables the handlers read back are cached, kept dirty until a flush, handed to the writer
//! and journaled for reorgs. `write_behind_tables!` is their one list: the store's fields
//! (`CachedTables`), the rows a flush hands over ([`CachedRows`]), the flush's writes and the
//! journal's priors and rollbacks are all derived from it. What differs from table to table is
//! said by its [`WriteBehind`] impl below, next to the list.
//!
//! Adding such a table: its entity (`entities`), its migration, a line in the list and a
//! [`WriteBehind`] impl here, a [`super::row_size::RowSize`] for its row (and a
//! [`super::cache::CacheKey`] for a new kind of key), the store's read and write of it for the
//! handlers (a `table::load` and a `Table::put`, as for registrations), the handler
//! code, and its lines in the dump.

use entities::{
    domain::{self, DomainKey, RawHash},
    label,
    registration::{self, RegistrationKey},
    renewal::{self, RenewalKey},
    resolver_record::{self, ResolverRecordKey},
};
use futures::future::BoxFuture;
use sea_orm::EntityTrait;

use super::{
    StoreError,
    cache::CacheKey,
    in_flight::{InFlight, SharedRows},
    journal, name_search,
    row_size::RowSize,
    sqlite_upsert::Stored,
    table::{Table, map_bytes, set_bytes},
    write_txn::WriteTxn,
    writer::{self, Changes, Conflict},
};

/// Calls `$then!` with every write-behind table as `field: entity_module;`, in the order the
/// writer writes them (labels before the domains that render them).
macro_rules! write_behind_tables {
    ($then:ident) => {
        $then! {
            labels: label;
            domains: domain;
            registrations: registration;
            renewals: renewal;
            records: resolver_record;
        }
    };
}

/// What a write-behind table does its own way.
pub trait WriteBehind: EntityTrait<Model: RowSize + Clone + Send + Sync + 'static> {
    /// Its primary key, as the cache and the journal hold it.
    type Key: CacheKey + std::fmt::Display;
    /// Its name in the cache's metrics and the flush timings (`entity` label).
    const NAME: &'static str;
    /// Its share of the read cache, in percent (the handlers read domains most).
    const CACHE_PERCENT: u64;
    /// Its share of the key filters' bytes, in percent: 0 for a table without one (labels,
    /// which other chains and imports store too; registrations and renewals, which are read
    /// only through a domain that points at them or after the event that created them).
    const KEY_FILTER_PERCENT: u64;
    /// Its name in the reorg journal; `None` for a table a reorg leaves alone.
    const JOURNAL: Option<&'static str>;
    /// Whether every row of it that is not stored enters the store through
    /// [`Table::create`], so that a flush knows its new rows from its stored ones without
    /// asking the database. A table whose handlers write rows they did not look for first
    /// (labels, which another chain may store meanwhile) leaves it `false`.
    const KNOWS_CREATED: bool;

    /// The key of `row`.
    fn key(row: &Self::Model) -> &Self::Key;

    /// Writes a flush's rows of this table into `txn`; `created`, when the store knows it,
    /// says of each row whether it is new (the others are stored).
    fn write<'a>(
        txn: &'a WriteTxn,
        rows: &'a [Self::Model],
        created: Option<&'a [bool]>,
        changes: &'a Changes,
    ) -> BoxFuture<'a, Result<(), StoreError>>;

    /// Puts back the row whose journal key is `key` as `prior`, or deletes it when the undone
    /// window created it.
    fn restore<'a>(
        txn: &'a WriteTxn,
        key: &'a str,
        prior: Option<&'a str>,
    ) -> BoxFuture<'a, Result<(), StoreError>>;
}

/// Columns a domain row never changes after its creation (its identity, creation number and
/// place in the tree), and `name` and `depth` when the row was not renamed.
const DOMAIN_FIXED: [domain::Column; 6] = [
    domain::Column::Seq,
    domain::Column::ChainId,
    domain::Column::LabelHash,
    domain::Column::ParentSeq,
    domain::Column::CreatedBlock,
    domain::Column::CreatedAt,
];
const DOMAIN_NAME: [domain::Column; 2] = [domain::Column::Name, domain::Column::Depth];

/// A label's value columns: an unknown label written over a stored one keeps them.
const LABEL_VALUE: [label::Column; 2] = [label::Column::Label, label::Column::Normalized];

impl WriteBehind for label::Entity {
    type Key = RawHash;
    const NAME: &'static str = "label";
    const CACHE_PERCENT: u64 = 20;
    const KEY_FILTER_PERCENT: u64 = 0;
    // A label is knowledge about a hash, shared by every chain: a reorg never unlearns it.
    const JOURNAL: Option<&'static str> = None;
    const KNOWS_CREATED: bool = false;

    fn key(row: &label::Model) -> &RawHash {
        &row.label_hash
    }

    fn write<'a>(
        txn: &'a WriteTxn,
        rows: &'a [label::Model],
        _: Option<&'a [bool]>,
        _: &'a Changes,
    ) -> BoxFuture<'a, Result<(), StoreError>> {
        // A label is never unlearned: a known label (the same for every writer, since it is
        // the hash's preimage) overwrites, an unknown one only fills a gap. Another chain or
        // an import may have made it known since this chain read it.
        Box::pin(async move {
            let (known, unknown): (Vec<&label::Model>, Vec<&label::Model>) =
                rows.iter().partition(|l| l.label.is_some());
            writer::write_rows::<Self, _, _>(txn, &known, Conflict::UPDATE_ALL).await?;
            writer::write_rows::<Self, _, _>(txn, &unknown, Conflict::UpdateAllBut(&LABEL_VALUE))
                .await
        })
    }

    fn restore<'a>(
        _: &'a WriteTxn,
        key: &'a str,
        _: Option<&'a str>,
    ) -> BoxFuture<'a, Result<(), StoreError>> {
        Box::pin(async move { Err(StoreError::Journal(format!("label {key} is not journaled"))) })
    }
}

impl WriteBehind for domain::Entity {
    type Key = DomainKey;
    const NAME: &'static str = "domain";
    const CACHE_PERCENT: u64 = 40;
    const KEY_FILTER_PERCENT: u64 = 50;
    const JOURNAL: Option<&'static str> = Some("domains");
    const KNOWS_CREATED: bool = true;

    fn key(row: &domain::Model) -> &DomainKey {
        &row.id
    }

    fn write<'a>(
        txn: &'a WriteTxn,
        rows: &'a [domain::Model],
        created: Option<&'a [bool]>,
        changes: &'a Changes,
    ) -> BoxFuture<'a, Result<(), StoreError>> {
        // SQLite rewrites an index entry whenever one of its columns is assigned: a domain
        // that was not renamed keeps its name columns out of the update. The name search
        // relearns the names of the renamed rows and of every row inserted.
        Box::pin(async move {
            // When the store says which rows it created, those are inserted and the others
            // updated, without asking the database which keys it holds. New rows that were
            // renamed since their creation (most often a label healed by the registration
            // that follows the node's creation) go in first, then the others, so that each
            // kind of name takes a run of rowids: the name search keeps rowids as deltas, and
            // mixed it took 8 MB more at 5M events (BENCHMARKS.md).
            let (mut new, mut renamed, mut kept) = (Vec::new(), Vec::new(), Vec::new());
            let mut new_kept = Vec::new();
            for (at, row) in rows.iter().enumerate() {
                let is_new = created.is_some_and(|created| created[at]);
                match (is_new, changes.renamed_domains.contains(&row.id)) {
                    (true, true) => new.push(row),
                    (true, false) => new_kept.push(row),
                    (false, true) => renamed.push(row),
                    (false, false) => kept.push(row),
                }
            }
            new.append(&mut new_kept);
            let stored = if created.is_some() { Stored::Known } else { Stored::Apart };
            let renamed_ids: Vec<&DomainKey> = renamed.iter().map(|d| &d.id).collect();
            let started = std::time::Instant::now();
            let last = name_search::last_row(txn).await?;
            name_search::forget(txn, &renamed_ids).await?;
            writer::record_table_time("name_search", started);
            writer::write_rows_with::<Self, _, _>(
                txn,
                &renamed,
                Conflict::UpdateAllBut(&DOMAIN_FIXED),
                stored,
            )
            .await?;
            let fixed_and_name: Vec<domain::Column> =
                DOMAIN_FIXED.into_iter().chain(DOMAIN_NAME).collect();
            writer::write_rows_with::<Self, _, _>(
                txn,
                &kept,
                Conflict::UpdateAllBut(&fixed_and_name),
                stored,
            )
            .await?;
            // A created row that is stored after all fails the flush here.
            writer::insert_new::<Self, _>(txn, &[&new], Stored::Apart).await?;
            let started = std::time::Instant::now();
            name_search::index(txn, &renamed_ids, last).await?;
            writer::record_table_time("name_search", started);
            Ok(())
        })
    }

    fn restore<'a>(
        txn: &'a WriteTxn,
        key: &'a str,
        prior: Option<&'a str>,
    ) -> BoxFuture<'a, Result<(), StoreError>> {
        Box::pin(journal::restore_domain(txn, key, prior))
    }
}

/// A [`WriteBehind`] impl for a table written as upserts of its newest rows (or, when the store
/// knows which it created, as inserts of those and updates of the others) and restored from
/// its journaled images as they are.
macro_rules! plain_table {
    (
        $entity:ident, $key:ty, $name:literal, $percent:literal, $filter_percent:literal,
        $journal:literal, $id:ident, $knows_created:literal
    ) => {
        impl WriteBehind for $entity::Entity {
            type Key = $key;
            const NAME: &'static str = $name;
            const CACHE_PERCENT: u64 = $percent;
            const KEY_FILTER_PERCENT: u64 = $filter_percent;
            const JOURNAL: Option<&'static str> = Some($journal);
            const KNOWS_CREATED: bool = $knows_created;

            fn key(row: &$entity::Model) -> &$key {
                &row.$id
            }

            fn write<'a>(
                txn: &'a WriteTxn,
                rows: &'a [$entity::Model],
                created: Option<&'a [bool]>,
                _: &'a Changes,
            ) -> BoxFuture<'a, Result<(), StoreError>> {
                Box::pin(async move {
                    let Some(created) = created else {
                        return writer::write_rows::<Self, _, _>(txn, rows, Conflict::UPDATE_ALL)
                            .await;
                    };
                    let (mut new, mut stored) = (Vec::new(), Vec::new());
                    for (row, created) in rows.iter().zip(created) {
                        if *created { new.push(row) } else { stored.push(row) }
                    }
                    writer::write_rows_with::<Self, _, _>(
                        txn,
                        &stored,
                        Conflict::UPDATE_ALL,
                        Stored::Known,
                    )
                    .await?;
                    // A created row that is stored after all fails the flush here.
                    writer::insert_new::<Self, _>(txn, &[&new], Stored::OnConflict).await
                })
            }

            fn restore<'a>(
                txn: &'a WriteTxn,
                key: &'a str,
                prior: Option<&'a str>,
            ) -> BoxFuture<'a, Result<(), StoreError>> {
                Box::pin(journal::restore::<Self, _, $key>(txn, key, prior))
            }
        }
    };
}

plain_table!(registration, RegistrationKey, "registration", 15, 0, "registrations", id, true);
plain_table!(renewal, RenewalKey, "renewal", 5, 0, "renewals", id, true);
plain_table!(
    resolver_record,
    ResolverRecordKey,
    "resolver_record",
    20,
    50,
    "resolver_records",
    id,
    true
);

/// The store's part of every write-behind table, the rows a flush hands over, and what is
/// done to all of them at once.
macro_rules! derive_tables {
    ($($field:ident: $entity:ident;)*) => {
        /// Every write-behind table of a store.
        #[derive(Debug)]
        pub(super) struct CachedTables {
            $(pub(super) $field: Table<$entity::Model, <$entity::Entity as WriteBehind>::Key>,)*
        }

        impl CachedTables {
            /// Empty tables whose caches share `read_cache` bytes by their
            /// [`WriteBehind::CACHE_PERCENT`], and their key filters `key_filter` bytes by
            /// their [`WriteBehind::KEY_FILTER_PERCENT`].
            pub(super) fn new(read_cache: u64, key_filter: u64) -> Self {
                Self {
                    $($field: Table::new(
                        <$entity::Entity as WriteBehind>::NAME,
                        read_cache / 100 * <$entity::Entity as WriteBehind>::CACHE_PERCENT,
                        key_filter / 100 * <$entity::Entity as WriteBehind>::KEY_FILTER_PERCENT,
                        <$entity::Entity as WriteBehind>::key,
                    ),)*
                }
            }

            /// Bytes the key filters take.
            #[cfg(test)]
            pub(super) fn key_filter_bytes(&self) -> usize {
                0 $(+ self.$field.stored.bytes())*
            }

            /// Forgets the rows pinned for the batch just applied ([`Table::end_batch`]).
            pub(super) fn end_batch(&mut self) {
                $(self.$field.end_batch();)*
            }

            /// Rows changed since the last flush.
            pub(super) fn dirty_rows(&self) -> usize {
                0 $(+ self.$field.dirty.len())*
            }

            /// Bytes the dirty maps' and created sets' slots take (their rows' and keys' heap
            /// bytes are counted apart).
            pub(super) fn dirty_slot_bytes(&self) -> usize {
                0 $(+ map_bytes(&self.$field.dirty) + set_bytes(&self.$field.created))*
            }

            /// Moves every table's dirty rows in flight; with them, which rows each table
            /// created.
            pub(super) fn begin_flush(&mut self) -> (CachedRows, CreatedRows) {
                $(let $field = self.$field.begin_flush();)*
                (
                    CachedRows { $($field: $field.0,)* },
                    CreatedRows { $($field: $field.1,)* },
                )
            }

            /// The committed flush's rows of every table, out of flight, not cached yet.
            pub(super) fn take_committed(&mut self) -> CommittedRows {
                CommittedRows { $($field: self.$field.take_committed(),)* }
            }

            /// Has the read caches forget what they hold for a committed flush's rows
            /// ([`Table::forget_committed`]).
            pub(super) fn forget_committed(&mut self, committed: CommittedRows) {
                $(self.$field.forget_committed(committed.$field);)*
            }
        }

        /// The rows of every write-behind table of a committed flush, between leaving the
        /// flight and the read caches' forgetting their keys.
        #[derive(Debug)]
        pub struct CommittedRows {
            $($field: InFlight<<$entity::Entity as WriteBehind>::Key, $entity::Model>,)*
        }

        /// The rows of every write-behind table a flush writes, each sorted by key.
        #[derive(Debug, Default)]
        pub struct CachedRows {
            $(
                #[doc = concat!("Rows of `", stringify!($entity), "`.")]
                pub $field: SharedRows<$entity::Model>,
            )*
        }

        /// Of each write-behind table's rows in a flush, in their order, whether the store
        /// created it since the last flush began: no version of it is stored.
        #[derive(Debug, Default)]
        pub struct CreatedRows {
            $(
                #[doc = concat!("Of the rows of `", stringify!($entity), "`.")]
                pub $field: Vec<bool>,
            )*
        }

        impl CachedRows {
            /// Rows in all.
            pub fn len(&self) -> usize {
                0 $(+ self.$field.len())*
            }

            /// Whether there are none.
            pub fn is_empty(&self) -> bool {
                self.len() == 0
            }

            /// Writes every table's rows into `txn`, in the list's order, each timed into
            /// `ensemble_flush_table_seconds{entity}`.
            pub(super) async fn write(
                &self,
                txn: &WriteTxn,
                changes: &Changes,
            ) -> Result<(), StoreError> {
                $(
                    let started = std::time::Instant::now();
                    // Flags that do not match the rows (a hand-built change set) are not
                    // trusted: the writer finds out which rows are stored itself.
                    let created = changes
                        .created
                        .as_ref()
                        .map(|c| c.$field.as_slice())
                        .filter(|c| <$entity::Entity as WriteBehind>::KNOWS_CREATED && c.len() == self.$field.len());
                    <$entity::Entity as WriteBehind>::write(txn, &self.$field, created, changes)
                        .await?;
                    writer::record_table_time(<$entity::Entity as WriteBehind>::NAME, started);
                )*
                Ok(())
            }

            /// Journals the prior images of every journaled table's rows into `entries`.
            pub(super) async fn journal(
                &self,
                txn: &WriteTxn,
                entry: impl Fn(&'static str, String, Option<String>) -> entities::journal_entry::Model,
                entries: &mut Vec<entities::journal_entry::Model>,
            ) -> Result<(), StoreError> {
                $(
                    if let Some(table) = <$entity::Entity as WriteBehind>::JOURNAL {
                        journal::priors_of::<$entity::Entity>(txn, &self.$field, table, &entry, entries)
                            .await?;
                    }
                )*
                Ok(())
            }
        }

        /// Puts back a journaled row of the table the journal names `table`; `None` when no
        /// write-behind table has that name.
        pub(super) async fn restore(
            txn: &WriteTxn,
            table: &str,
            key: &str,
            prior: Option<&str>,
        ) -> Option<Result<(), StoreError>> {
            $(
                if <$entity::Entity as WriteBehind>::JOURNAL == Some(table) {
                    return Some(<$entity::Entity as WriteBehind>::restore(txn, key, prior).await);
                }
            )*
            None
        }
    };
}

write_behind_tables!(derive_tables);
