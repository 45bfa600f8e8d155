//! [`EntityStore::prefetch`]: the rows a batch will read, loaded in a few fixed-size `IN`
//! queries before its handlers run, so they find them in memory. Keys the filters of stored
//! keys know absent ([`super::key_filter`]) are not asked for.
//!
//! The queries of a prefetch run side by side on the pool's connections: the handler waits
//! for the slowest of them instead of their sum. On SQLite each query is served by its
//! connection's own thread, so while one waits for a page from the kernel another reads.

use entities::{domain, label, registration, resolver_record};
use foldhash::HashSet;
use futures::{StreamExt, TryStreamExt};
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

/// Queries of one table's prefetch that run at a time. Three tables are read side by side,
/// so a prefetch holds at most three times this many of the pool's connections
/// (`database::DEFAULT_MAX_CONNECTIONS`), leaving the others to the API.
pub const PREFETCH_QUERIES_PER_TABLE: usize = 2;

/// The keys of `keys` that are neither dirty nor cached, sorted and without repeats. Keys
/// the cache knows (rows and absences) are pinned for the batch on the way.
fn missing_keys<M, K>(table: &mut Table<M, K>, mut keys: Vec<K>) -> Vec<K>
where
    M: Clone + Send + Sync + 'static,
    K: CacheKey,
{
    keys.sort_unstable();
    keys.dedup();
    keys.retain(|k| !table.uncommitted(k));
    // Known not to be stored: pinned as absent without a query. The filter is asked before
    // the cache because most keys it knows absent are new ones the cache never saw.
    let before = keys.len();
    keys.retain(|k| {
        if table.stored.may_hold(k) {
            return true;
        }
        table.batch.insert(k.clone(), None);
        false
    });
    if keys.len() < before {
        table.count_known_absent((before - keys.len()) as u64);
    }
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
    keys
}

/// The stored rows of `keys`, read in [`PREFETCH_CHUNK`]-key queries, at most
/// [`PREFETCH_QUERIES_PER_TABLE`] at a time.
async fn load<E, K>(
    db: &DatabaseConnection,
    column: E::Column,
    keys: &[K],
) -> Result<Vec<E::Model>, StoreError>
where
    E: EntityTrait,
    K: CacheKey + Into<sea_orm::Value>,
{
    let chunks: Vec<Vec<E::Model>> = futures::stream::iter(keys.chunks(PREFETCH_CHUNK))
        .map(|chunk| {
            let pad = chunk.last().cloned().into_iter().cycle().take(PREFETCH_CHUNK - chunk.len());
            E::find().filter(column.is_in(chunk.iter().cloned().chain(pad))).all(db)
        })
        .buffered(PREFETCH_QUERIES_PER_TABLE)
        .try_collect()
        .await
        .map_err(StoreError::db("prefetch"))?;
    Ok(chunks.into_iter().flatten().collect())
}

/// Pins for the batch every row of `rows` and an absence for every key of `keys` without
/// one; the batch's end caches those it did not change ([`Table::end_batch`]). Returns the
/// rows read from the database.
fn pin_all<M, K>(
    table: &mut Table<M, K>,
    keys: Vec<K>,
    rows: Vec<M>,
    key_of: impl Fn(&M) -> &K,
) -> usize
where
    M: Clone + Send + Sync + 'static,
    K: CacheKey,
{
    let loaded = rows.len();
    let found: HashSet<K> = rows.iter().map(|r| key_of(r).clone()).collect();
    for row in rows {
        table.pin_loaded(key_of(&row).clone(), Some(row));
    }
    for key in keys.into_iter().filter(|k| !found.contains(k)) {
        table.pin_loaded(key, None);
    }
    loaded
}

impl EntityStore {
    /// Loads, in a few queries, the rows of `keys` that are not in memory yet, then the
    /// latest registration of each of those domains, so the handlers of a batch find what
    /// they read in the cache. Returns the rows read from the database.
    pub async fn prefetch(&mut self, keys: PrefetchKeys) -> Result<usize, StoreError> {
        self.know_stored_keys().await?;
        let PrefetchKeys { domains, labels, records } = keys;
        let tables = &mut self.tables;
        let labels = missing_keys(&mut tables.labels, labels);
        let records = missing_keys(&mut tables.records, records);
        let domain_keys = missing_keys(&mut tables.domains, domains.clone());
        let (label_rows, record_rows, domain_rows) = futures::try_join!(
            load::<label::Entity, _>(&self.db, label::Column::LabelHash, &labels),
            load::<resolver_record::Entity, _>(&self.db, resolver_record::Column::Id, &records),
            load::<domain::Entity, _>(&self.db, domain::Column::Id, &domain_keys),
        )?;
        let mut loaded = pin_all(&mut tables.labels, labels, label_rows, |r| &r.label_hash);
        loaded += pin_all(&mut tables.records, records, record_rows, |r| &r.id);
        loaded += pin_all(&mut tables.domains, domain_keys, domain_rows, |r| &r.id);
        // Known only now: which registration each domain points at.
        let registrations: Vec<RegistrationKey> = domains
            .iter()
            .filter_map(|id| tables.domains.peek(id).and_then(|row| row.registration_id()))
            .collect();
        let registrations = missing_keys(&mut tables.registrations, registrations);
        let rows =
            load::<registration::Entity, _>(&self.db, registration::Column::Id, &registrations)
                .await?;
        loaded += pin_all(&mut tables.registrations, registrations, rows, |r| &r.id);
        Ok(loaded)
    }
}

#[cfg(test)]
mod tests {
    use entities::{
        contract_node_key::{ADDRESS_BYTES, NODE_BYTES},
        resolver_record,
    };

    use super::*;
    use crate::{
        ChainId,
        store::{Checkpoint, database},
    };

    fn record(node: u16) -> resolver_record::Model {
        record_on(1, node)
    }

    fn record_on(chain: u64, node: u16) -> resolver_record::Model {
        let mut hash = [0; NODE_BYTES];
        hash[..2].copy_from_slice(&node.to_be_bytes());
        resolver_record::Model {
            id: ResolverRecordKey::new(chain, &[0x11; ADDRESS_BYTES], &hash),
            name: Some(format!("node {node}")),
            contenthash: None,
            pubkey_x: None,
            pubkey_y: None,
            version: 0,
        }
    }

    /// More keys than the queries that run at a time hold: every stored row is found and
    /// pinned, every other key pinned as absent, whichever query answered first.
    #[tokio::test]
    async fn a_prefetch_in_concurrent_chunks_finds_every_row() {
        let dir = tempfile::tempdir().expect("tempdir");
        let url = format!("sqlite://{}?mode=rwc", dir.path().join("prefetch.sqlite").display());
        let db = database::connect(&url).await.expect("database");
        let chunks = PREFETCH_QUERIES_PER_TABLE * 2 + 1;
        let stored: Vec<_> =
            (0..chunks * PREFETCH_CHUNK).step_by(2).map(|n| record(n as u16)).collect();
        let mut writer = EntityStore::new(db.clone(), ChainId(1), 1 << 20);
        for row in &stored {
            writer.create_record(row.clone());
        }
        let checkpoint = Checkpoint {
            chain_id: ChainId(1),
            block_number: 1,
            block_hash: format!("{:#066x}", 1),
        };
        writer.flush(&checkpoint, None).await.expect("flush");

        let mut reader = EntityStore::new(db, ChainId(1), 1 << 20);
        let asked: Vec<_> = (0..chunks * PREFETCH_CHUNK).map(|n| record(n as u16)).collect();
        let keys = PrefetchKeys {
            records: asked.iter().rev().map(|row| row.id.clone()).collect(),
            ..Default::default()
        };
        assert_eq!(reader.prefetch(keys).await.expect("prefetch"), stored.len());
        for (n, row) in asked.into_iter().enumerate() {
            let pinned = reader.tables.records.batch.get(&row.id).cloned();
            let expected = (n % 2 == 0).then_some(row);
            assert_eq!(pinned, Some(expected), "key {n} pinned as stored");
        }
    }

    async fn flush(store: &mut EntityStore, chain: u64, block: u64) {
        let checkpoint = Checkpoint {
            chain_id: ChainId(chain),
            block_number: block,
            block_hash: format!("{block:#066x}"),
        };
        store.flush(&checkpoint, None).await.expect("flush");
    }

    /// A store that first reads scans its chain's stored keys: a key it never stored is
    /// pinned absent without a query, a stored one is read, and so is a key of another
    /// chain (whose keys it did not scan) and every key it flushes after the scan.
    #[tokio::test]
    async fn keys_the_chain_never_stored_are_not_looked_up() {
        let dir = tempfile::tempdir().expect("tempdir");
        let url = format!("sqlite://{}?mode=rwc", dir.path().join("filter.sqlite").display());
        let db = database::connect(&url).await.expect("database");
        let mut writer = EntityStore::new(db.clone(), ChainId(1), 1 << 20);
        for n in (0..2_000).step_by(2) {
            writer.create_record(record(n));
        }
        flush(&mut writer, 1, 1).await;
        let mut other_chain = EntityStore::new(db.clone(), ChainId(2), 1 << 20);
        other_chain.create_record(record_on(2, 1));
        flush(&mut other_chain, 2, 1).await;

        let mut reader = EntityStore::new(db, ChainId(1), 1 << 20);
        // A row created before the first read and not flushed yet: dirty, not stored.
        reader.create_record(record(5_001));
        // Each key asked, and whether it is stored.
        let mut asked: Vec<_> = (0..2_000).map(|n| (record(n), n % 2 == 0)).collect();
        asked.push((record_on(2, 1), true));
        let keys = PrefetchKeys {
            records: asked.iter().map(|(row, _)| row.id.clone()).collect(),
            ..Default::default()
        };
        assert_eq!(reader.prefetch(keys).await.expect("prefetch"), 1_001);
        let table = &reader.tables.records;
        for (row, stored) in &asked {
            let pinned = table.batch.get(&row.id).cloned();
            assert_eq!(pinned, Some(stored.then(|| row.clone())), "{}", row.id);
        }
        // Read from the database: the stored rows, the other chain's, and the few absent
        // keys the filter cannot tell from stored ones (about one in a hundred).
        let read_absent = table.loaded.len() - 1_001;
        assert!(read_absent < 20, "{read_absent} of 1000 absent keys read");
        assert!(table.stored.may_hold(&record(5_001).id), "a dirty key at the scan");
        reader.end_batch();

        // Flushed after the scan: known stored, so read again once out of every cache.
        reader.create_record(record(7_001));
        flush(&mut reader, 1, 2).await;
        assert!(reader.tables.records.stored.may_hold(&record(7_001).id));
        assert!(reader.tables.key_filter_bytes() > 0);
        assert!(reader.tables.key_filter_bytes() <= (1 << 20) / 64);
    }
}
