//! DataLoaders: nested lookups of a page (each domain's parent and latest registration, each
//! record's addresses and texts, each reference's domain and primary name, each registration's
//! opening event, each event's block and transaction) are collected and answered by one
//! `WHERE key IN (...)` query per kind instead of one query per row. No cache: a loader only batches within a request, so answers
//! are never staler than the database.

use std::{collections::HashMap, sync::Arc, time::Duration};

use async_graphql::dataloader::{DataLoader, Loader};
use entities::domain_key::DomainKey;
use entities::resolver_record_key::ResolverRecordKey;
use entities::{
    contract, domain, event, event_block, event_selector, event_transaction, registration,
    resolver_address, resolver_record, resolver_text,
};
use sea_orm::{
    ColumnTrait, DatabaseConnection, EntityTrait, QueryFilter, QueryOrder, sea_query::ExprTrait,
};

/// Rows of one table by a key column: by primary key (`Vec` of one) or by a foreign key
/// (every row that carries it, in `order`). One `WHERE key IN (...)` per batch. Keys are the
/// stored ones (raw key bytes, creation numbers), never the Omnigraph text.
#[derive(Debug)]
pub struct RowsBy<E: EntityTrait, K> {
    db: DatabaseConnection,
    key: E::Column,
    order: E::Column,
    read: fn(&E::Model) -> &K,
}

impl<E: EntityTrait, K> RowsBy<E, K> {
    /// Rows of `E` whose `key` column (read back with `read`) is one of the requested keys,
    /// each group in `order`.
    pub fn new(
        db: DatabaseConnection,
        key: E::Column,
        order: E::Column,
        read: fn(&E::Model) -> &K,
    ) -> Self {
        Self { db, key, order, read }
    }
}

impl<E, K> Loader<K> for RowsBy<E, K>
where
    E: EntityTrait,
    E::Model: Clone + Send + Sync + 'static,
    E::Column: Send + Sync,
    K: Clone + Eq + std::hash::Hash + Into<sea_orm::Value> + Send + Sync + 'static,
{
    type Value = Vec<E::Model>;
    type Error = Arc<sea_orm::DbErr>;

    async fn load(&self, keys: &[K]) -> Result<HashMap<K, Self::Value>, Self::Error> {
        let mut out: HashMap<K, Self::Value> = HashMap::new();
        for row in E::find()
            .filter(self.key.is_in(keys.iter().cloned()))
            .order_by_asc(self.order)
            .all(&self.db)
            .await
            .map_err(Arc::new)?
        {
            out.entry((self.read)(&row).clone()).or_default().push(row);
        }
        Ok(out)
    }
}

/// Domains by key.
pub type DomainLoader = RowsBy<domain::Entity, DomainKey>;
/// Domains by creation number (how a domain names its parent).
pub type DomainBySeqLoader = RowsBy<domain::Entity, i64>;
/// Registrations by id.
pub type RegistrationLoader = RowsBy<registration::Entity, registration::RegistrationKey>;
/// Resolver records by id.
pub type RecordLoader = RowsBy<resolver_record::Entity, ResolverRecordKey>;
/// Address records by resolver record id, in coin type order.
pub type AddressesLoader = RowsBy<resolver_address::Entity, ResolverRecordKey>;
/// Text records by resolver record id, in key order.
pub type TextsLoader = RowsBy<resolver_text::Entity, ResolverRecordKey>;

/// The one row a by-id loader found.
pub async fn load_row<E, K>(
    loader: &DataLoader<RowsBy<E, K>>,
    id: K,
) -> Result<Option<E::Model>, async_graphql::Error>
where
    E: EntityTrait,
    E::Model: Clone + Send + Sync + 'static,
    E::Column: Send + Sync,
    K: Clone + Eq + std::hash::Hash + Into<sea_orm::Value> + Send + Sync + 'static,
{
    Ok(loader.load_one(id).await.map_err(loader_error)?.and_then(|rows| rows.into_iter().next()))
}

/// Domains by `(chain id, node)`: what a resolver record names (the registry is not part of a
/// record, so the id cannot be built).
#[derive(Clone, Debug)]
pub struct DomainByNodeLoader(pub DatabaseConnection);

impl Loader<(i64, String)> for DomainByNodeLoader {
    type Value = Vec<domain::Model>;
    type Error = Arc<sea_orm::DbErr>;

    async fn load(
        &self,
        keys: &[(i64, String)],
    ) -> Result<HashMap<(i64, String), Self::Value>, Self::Error> {
        let rows = domain::Entity::find()
            .filter(
                domain::node_expr()
                    .is_in(keys.iter().map(|(_, n)| crate::types::event::hex_bytes(n))),
            )
            .all(&self.0)
            .await
            .map_err(Arc::new)?;
        let mut out: HashMap<(i64, String), Vec<domain::Model>> = HashMap::new();
        for row in rows {
            out.entry((row.chain_id, row.node_hex())).or_default().push(row);
        }
        Ok(out)
    }
}

/// Primary names (ENSIP-3) by `(chain id, account)`: the `name` record that the resolver of
/// `<account>.addr.reverse` holds for it. Two queries per batch, however many accounts.
#[derive(Clone, Debug)]
pub struct PrimaryNameLoader(pub DatabaseConnection);

impl Loader<(i64, String)> for PrimaryNameLoader {
    type Value = String;
    type Error = Arc<sea_orm::DbErr>;

    async fn load(
        &self,
        keys: &[(i64, String)],
    ) -> Result<HashMap<(i64, String), Self::Value>, Self::Error> {
        let reverse_name =
            |account: &str| format!("{}.addr.reverse", account.trim_start_matches("0x"));
        let names: Vec<String> = keys.iter().map(|(_, a)| reverse_name(a)).collect();
        let reverses = domain::Entity::find()
            .filter(crate::name_key::is_in(self.0.get_database_backend(), &names))
            .all(&self.0)
            .await
            .map_err(Arc::new)?;
        let records: HashMap<ResolverRecordKey, resolver_record::Model> =
            resolver_record::Entity::find()
                .filter(
                    resolver_record::Column::Id
                        .is_in(reverses.iter().filter_map(domain::Model::records_key)),
                )
                .all(&self.0)
                .await
                .map_err(Arc::new)?
                .into_iter()
                .map(|r| (r.id.clone(), r))
                .collect();
        Ok(keys
            .iter()
            .filter_map(|(chain, account)| {
                let reverse = reverses
                    .iter()
                    .find(|d| d.chain_id == *chain && d.name == reverse_name(account))?;
                let name = records.get(&reverse.records_key()?)?.name.clone()?;
                Some(((*chain, account.clone()), name))
            })
            .collect())
    }
}

/// The events that opened registrations, by `(domain seq, block)`: the first registrar
/// `NameRegistered` or NameWrapper `NameWrapped` about the domain in that block.
#[derive(Clone, Debug)]
pub struct OpeningEventLoader(pub DatabaseConnection);

impl Loader<(i64, i64)> for OpeningEventLoader {
    type Value = event::Model;
    type Error = Arc<sea_orm::DbErr>;

    async fn load(
        &self,
        keys: &[(i64, i64)],
    ) -> Result<HashMap<(i64, i64), Self::Value>, Self::Error> {
        let selectors: Vec<i16> = [
            "NameRegistered(uint256,address,uint256)",
            "NameWrapped(bytes32,bytes,address,uint32,uint64)",
        ]
        .into_iter()
        .filter_map(event_selector::code_of_signature)
        .collect();
        let rows = event::Entity::find()
            .filter(event::Column::DomainSeq.is_in(keys.iter().map(|(d, _)| *d)))
            .filter(event::Column::BlockNumber.is_in(keys.iter().map(|(_, b)| *b)))
            .filter(event::Column::Selector.is_in(selectors))
            .order_by_asc(event::Column::LogIndex)
            .all(&self.0)
            .await
            .map_err(Arc::new)?;
        let mut out = HashMap::new();
        for row in rows {
            let Some(domain) = row.domain_seq else { continue };
            let key = (domain, row.block_number);
            if keys.contains(&key) {
                out.entry(key).or_insert(row);
            }
        }
        Ok(out)
    }
}

/// Block hashes of events, by `(chain id, block number)`.
#[derive(Clone, Debug)]
pub struct EventBlockLoader(pub DatabaseConnection);

impl Loader<(i64, i64)> for EventBlockLoader {
    type Value = Vec<u8>;
    type Error = Arc<sea_orm::DbErr>;

    async fn load(
        &self,
        keys: &[(i64, i64)],
    ) -> Result<HashMap<(i64, i64), Self::Value>, Self::Error> {
        let rows = event_block::Entity::find()
            .filter(event_block::Column::ChainId.is_in(keys.iter().map(|k| k.0)))
            .filter(event_block::Column::BlockNumber.is_in(keys.iter().map(|k| k.1)))
            .all(&self.0)
            .await
            .map_err(Arc::new)?;
        Ok(rows
            .into_iter()
            .map(|b| ((b.chain_id, b.block_number), b.hash))
            .filter(|(key, _)| keys.contains(key))
            .collect())
    }
}

/// Transaction rows of events (hash, sender, recipient), by `(chain id, block number, tx index)`.
#[derive(Clone, Debug)]
pub struct EventTransactionLoader(pub DatabaseConnection);

impl Loader<(i64, i64, i32)> for EventTransactionLoader {
    type Value = event_transaction::Model;
    type Error = Arc<sea_orm::DbErr>;

    async fn load(
        &self,
        keys: &[(i64, i64, i32)],
    ) -> Result<HashMap<(i64, i64, i32), Self::Value>, Self::Error> {
        let rows = event_transaction::Entity::find()
            .filter(event_transaction::Column::ChainId.is_in(keys.iter().map(|k| k.0)))
            .filter(event_transaction::Column::BlockNumber.is_in(keys.iter().map(|k| k.1)))
            .filter(event_transaction::Column::TxIndex.is_in(keys.iter().map(|k| k.2)))
            .all(&self.0)
            .await
            .map_err(Arc::new)?;
        Ok(rows
            .into_iter()
            .map(|t| ((t.chain_id, t.block_number, t.tx_index), t))
            .filter(|(key, _)| keys.contains(key))
            .collect())
    }
}

/// Contract addresses of events, by `(chain id, contract code)`.
#[derive(Clone, Debug)]
pub struct ContractLoader(pub DatabaseConnection);

impl Loader<(i64, i32)> for ContractLoader {
    type Value = Vec<u8>;
    type Error = Arc<sea_orm::DbErr>;

    async fn load(&self, keys: &[(i64, i32)]) -> Result<HashMap<(i64, i32), Vec<u8>>, Self::Error> {
        let rows = contract::Entity::find()
            .filter(contract::Column::ChainId.is_in(keys.iter().map(|k| k.0)))
            .filter(contract::Column::Code.is_in(keys.iter().map(|k| k.1)))
            .all(&self.0)
            .await
            .map_err(Arc::new)?;
        Ok(rows
            .into_iter()
            .map(|c| ((c.chain_id, c.code), c.address))
            .filter(|(key, _)| keys.contains(key))
            .collect())
    }
}

/// The loaders a schema carries, each added to the schema's data. No batching delay: the
/// default (1 ms, and tokio's timer cannot sleep less) is a millisecond added to every query
/// that loads anything. Batching does not need it: the API runs on actix's single-threaded
/// runtimes, where the spawned load runs only once the request's task yields, and by then
/// every resolver of the page polled in that pass has queued its key.
pub fn add_loaders<Q, M, S>(
    builder: async_graphql::SchemaBuilder<Q, M, S>,
    db: &DatabaseConnection,
) -> async_graphql::SchemaBuilder<Q, M, S> {
    fn loader<T: Loader<K>, K: Send + Sync + std::hash::Hash + Eq + Clone + 'static>(
        inner: T,
    ) -> DataLoader<T> {
        DataLoader::new(inner, tokio::spawn).delay(Duration::ZERO)
    }
    let db = db.clone();
    builder
        .data(loader::<_, DomainKey>(DomainLoader::new(
            db.clone(),
            domain::Column::Id,
            domain::Column::Id,
            |r| &r.id,
        )))
        .data(loader::<_, i64>(DomainBySeqLoader::new(
            db.clone(),
            domain::Column::Seq,
            domain::Column::Seq,
            |r| &r.seq,
        )))
        .data(loader::<_, registration::RegistrationKey>(RegistrationLoader::new(
            db.clone(),
            registration::Column::Id,
            registration::Column::Id,
            |r| &r.id,
        )))
        .data(loader::<_, ResolverRecordKey>(RecordLoader::new(
            db.clone(),
            resolver_record::Column::Id,
            resolver_record::Column::Id,
            |r| &r.id,
        )))
        .data(loader::<_, ResolverRecordKey>(AddressesLoader::new(
            db.clone(),
            resolver_address::Column::RecordId,
            resolver_address::Column::CoinType,
            |r| &r.record_id,
        )))
        .data(loader::<_, ResolverRecordKey>(TextsLoader::new(
            db.clone(),
            resolver_text::Column::RecordId,
            resolver_text::Column::Key,
            |r| &r.record_id,
        )))
        .data(loader::<_, (i64, String)>(DomainByNodeLoader(db.clone())))
        .data(loader::<_, (i64, String)>(PrimaryNameLoader(db.clone())))
        .data(loader::<_, (i64, i64)>(EventBlockLoader(db.clone())))
        .data(loader::<_, (i64, i64, i32)>(EventTransactionLoader(db.clone())))
        .data(loader::<_, (i64, i32)>(ContractLoader(db.clone())))
        .data(loader::<_, ()>(crate::namegraph::NamegraphLoader(db.clone())))
        .data(loader::<_, (i64, i64)>(OpeningEventLoader(db)))
}

/// Maps a loader failure to the API's `INTERNAL` error.
pub fn loader_error(err: Arc<sea_orm::DbErr>) -> async_graphql::Error {
    tracing::error!(target: "api::graphql", error = %err, "Database error");
    crate::error::coded(crate::error::code::INTERNAL, "internal error")
}
