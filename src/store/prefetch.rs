//! [`EntityStore::prefetch`]: the rows a batch will read, loaded in a few fixed-size `IN`
//! queries before its handlers run, so they find them in memory.

use entities::{domain, label, registration, resolver_record};
use foldhash::HashSet;
use sea_orm::{ColumnTrait, DatabaseConnection, EntityTrait, QueryFilter};

use super::{EntityStore, StoreError, cache::CacheKey, table::Table};
use entities::{
    domain::DomainKey, label::RawHash, registration::RegistrationKey,
    resolver_record::ResolverRecordKey,
};

/// Primary keys a batch will read, per table (see `ens::prefetch`).
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct PrefetchKeys {
    /// Domain keys.
    pub domains: Vec<DomainKey>,
    /// Label hashes.
    pub labels: Vec<RawHash>,
    /// Resolver record ids.
    pub records: Vec<ResolverRecordKey>,
}

/// Keys per `IN (…)` query of a prefetch. Every query binds exactly this many values (the
/// last chunk repeats its last key), so each table has one prefetch statement and the
/// prepared-statement cache holds one entry for it, not one per batch size.
pub const PREFETCH_CHUNK: usize = 500;

/// Loads the rows of `keys` that are neither dirty nor cached, in fixed-size `IN` queries,
/// and pins every answer (absences too) for the batch; the batch's end caches those it did
/// not change ([`Table::end_batch`]). Returns the rows read from the database.
async fn prefetch_table<E, K>(
    db: &DatabaseConnection,
    table: &mut Table<E::Model, K>,
    column: E::Column,
    mut keys: Vec<K>,
    key_of: impl Fn(&E::Model) -> &K,
) -> Result<usize, StoreError>
where
    E: EntityTrait,
    E::Model: Clone + Send + Sync + 'static,
    K: CacheKey + Into<sea_orm::Value>,
{
    keys.sort_unstable();
    keys.dedup();
    keys.retain(|k| !table.uncommitted(k));
    // Known to the cache: pinned for the batch without a query.
    keys.retain(|k| match table.cache.peek_entry(k) {
        Some(known) => {
            table.batch.insert(k.clone(), known);
            false
        }
        None => true,
    });
    // What the read cache did not spare: keys looked up in the database.
    metrics::counter!("ensemble_prefetch_reads_total", "entity" => table.cache.table())
        .increment(keys.len() as u64);
    let mut loaded = 0;
    for chunk in keys.chunks(PREFETCH_CHUNK) {
        let pad = chunk.last().cloned().into_iter().cycle().take(PREFETCH_CHUNK - chunk.len());
        let rows = E::find()
            .filter(column.is_in(chunk.iter().cloned().chain(pad)))
            .all(db)
            .await
            .map_err(StoreError::db("prefetch"))?;
        loaded += rows.len();
        let found: HashSet<K> = rows.iter().map(|r| key_of(r).clone()).collect();
        for row in rows {
            table.pin_loaded(key_of(&row).clone(), Some(row));
        }
        for key in chunk.iter().filter(|k| !found.contains(*k)) {
            table.pin_loaded(key.clone(), None);
        }
    }
    Ok(loaded)
}

impl EntityStore {
    /// Loads, in a few queries, the rows of `keys` that are not in memory yet, then the
    /// latest registration of each of those domains, so the handlers of a batch find what
    /// they read in the cache. Returns the rows read from the database.
    pub async fn prefetch(&mut self, keys: PrefetchKeys) -> Result<usize, StoreError> {
        let PrefetchKeys { domains, labels, records } = keys;
        let mut loaded = prefetch_table::<label::Entity, _>(
            &self.db,
            &mut self.tables.labels,
            label::Column::LabelHash,
            labels,
            |r| &r.label_hash,
        )
        .await?;
        loaded += prefetch_table::<resolver_record::Entity, _>(
            &self.db,
            &mut self.tables.records,
            resolver_record::Column::Id,
            records,
            |r| &r.id,
        )
        .await?;
        loaded += prefetch_table::<domain::Entity, _>(
            &self.db,
            &mut self.tables.domains,
            domain::Column::Id,
            domains.clone(),
            |r| &r.id,
        )
        .await?;
        let registrations: Vec<RegistrationKey> = domains
            .iter()
            .filter_map(|id| self.tables.domains.peek(id).and_then(|row| row.registration_id()))
            .collect();
        loaded += prefetch_table::<registration::Entity, _>(
            &self.db,
            &mut self.tables.registrations,
            registration::Column::Id,
            registrations,
            |r| &r.id,
        )
        .await?;
        Ok(loaded)
    }
}
