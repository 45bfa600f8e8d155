//! DataLoaders: nested lookups of a page (each domain's parent, each domain's latest
//! registration) are collected and answered by one `WHERE id IN (...)` query per kind instead
//! of one query per row. No cache: a loader only batches within a request, so answers are
//! never staler than the database.

use std::{collections::HashMap, sync::Arc, time::Duration};

use async_graphql::dataloader::{DataLoader, Loader};
use entities::{domain, event, registration, resolver_address, resolver_record, resolver_text};
use sea_orm::{ColumnTrait, DatabaseConnection, EntityTrait, QueryFilter, QueryOrder};

/// Domains by id.
#[derive(Clone, Debug)]
pub struct DomainLoader(pub DatabaseConnection);

impl Loader<String> for DomainLoader {
    type Value = domain::Model;
    type Error = Arc<sea_orm::DbErr>;

    async fn load(&self, keys: &[String]) -> Result<HashMap<String, Self::Value>, Self::Error> {
        Ok(domain::Entity::find()
            .filter(domain::Column::Id.is_in(keys.iter().cloned()))
            .all(&self.0)
            .await
            .map_err(Arc::new)?
            .into_iter()
            .map(|d| (d.id.clone(), d))
            .collect())
    }
}

/// Registrations by id.
#[derive(Clone, Debug)]
pub struct RegistrationLoader(pub DatabaseConnection);

impl Loader<String> for RegistrationLoader {
    type Value = registration::Model;
    type Error = Arc<sea_orm::DbErr>;

    async fn load(&self, keys: &[String]) -> Result<HashMap<String, Self::Value>, Self::Error> {
        Ok(registration::Entity::find()
            .filter(registration::Column::Id.is_in(keys.iter().cloned()))
            .all(&self.0)
            .await
            .map_err(Arc::new)?
            .into_iter()
            .map(|r| (r.id.clone(), r))
            .collect())
    }
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
            .filter(domain::Column::Node.is_in(keys.iter().map(|(_, n)| n.clone())))
            .all(&self.0)
            .await
            .map_err(Arc::new)?;
        let mut out: HashMap<(i64, String), Vec<domain::Model>> = HashMap::new();
        for row in rows {
            out.entry((row.chain_id, row.node.clone())).or_default().push(row);
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
        let reverses = domain::Entity::find()
            .filter(domain::Column::Name.is_in(keys.iter().map(|(_, a)| reverse_name(a))))
            .all(&self.0)
            .await
            .map_err(Arc::new)?;
        let record_id = |d: &domain::Model| {
            d.resolver.as_ref().map(|r| format!("{}-{r}-{}", d.chain_id, d.node))
        };
        let records: HashMap<String, resolver_record::Model> = resolver_record::Entity::find()
            .filter(resolver_record::Column::Id.is_in(reverses.iter().filter_map(record_id)))
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
                let name = records.get(&record_id(reverse)?)?.name.clone()?;
                Some(((*chain, account.clone()), name))
            })
            .collect())
    }
}

/// Resolver records by id.
#[derive(Clone, Debug)]
pub struct RecordLoader(pub DatabaseConnection);

impl Loader<String> for RecordLoader {
    type Value = resolver_record::Model;
    type Error = Arc<sea_orm::DbErr>;

    async fn load(&self, keys: &[String]) -> Result<HashMap<String, Self::Value>, Self::Error> {
        Ok(resolver_record::Entity::find()
            .filter(resolver_record::Column::Id.is_in(keys.iter().cloned()))
            .all(&self.0)
            .await
            .map_err(Arc::new)?
            .into_iter()
            .map(|r| (r.id.clone(), r))
            .collect())
    }
}

/// Address records of resolver records, by record id, in coin type order.
#[derive(Clone, Debug)]
pub struct AddressesLoader(pub DatabaseConnection);

impl Loader<String> for AddressesLoader {
    type Value = Vec<resolver_address::Model>;
    type Error = Arc<sea_orm::DbErr>;

    async fn load(&self, keys: &[String]) -> Result<HashMap<String, Self::Value>, Self::Error> {
        let mut out: HashMap<String, Self::Value> = HashMap::new();
        for row in resolver_address::Entity::find()
            .filter(resolver_address::Column::RecordId.is_in(keys.iter().cloned()))
            .order_by_asc(resolver_address::Column::CoinType)
            .all(&self.0)
            .await
            .map_err(Arc::new)?
        {
            out.entry(row.record_id.clone()).or_default().push(row);
        }
        Ok(out)
    }
}

/// Text records of resolver records, by record id, in key order.
#[derive(Clone, Debug)]
pub struct TextsLoader(pub DatabaseConnection);

impl Loader<String> for TextsLoader {
    type Value = Vec<resolver_text::Model>;
    type Error = Arc<sea_orm::DbErr>;

    async fn load(&self, keys: &[String]) -> Result<HashMap<String, Self::Value>, Self::Error> {
        let mut out: HashMap<String, Self::Value> = HashMap::new();
        for row in resolver_text::Entity::find()
            .filter(resolver_text::Column::RecordId.is_in(keys.iter().cloned()))
            .order_by_asc(resolver_text::Column::Key)
            .all(&self.0)
            .await
            .map_err(Arc::new)?
        {
            out.entry(row.record_id.clone()).or_default().push(row);
        }
        Ok(out)
    }
}

/// The events that opened registrations, by `(chain id, node, block)`: the first registrar
/// `NameRegistered` or NameWrapper `NameWrapped` about the node in that block.
#[derive(Clone, Debug)]
pub struct OpeningEventLoader(pub DatabaseConnection);

impl Loader<(i64, String, i64)> for OpeningEventLoader {
    type Value = event::Model;
    type Error = Arc<sea_orm::DbErr>;

    async fn load(
        &self,
        keys: &[(i64, String, i64)],
    ) -> Result<HashMap<(i64, String, i64), Self::Value>, Self::Error> {
        use alloy::primitives::keccak256;
        let selectors = [
            keccak256("NameRegistered(uint256,address,uint256)"),
            keccak256("NameWrapped(bytes32,bytes,address,uint32,uint64)"),
        ]
        .map(|s| format!("{s:#x}"));
        let rows = event::Entity::find()
            .filter(event::Column::Node.is_in(keys.iter().map(|(_, n, _)| n.clone())))
            .filter(event::Column::BlockNumber.is_in(keys.iter().map(|(_, _, b)| *b)))
            .filter(event::Column::Selector.is_in(selectors))
            .order_by_asc(event::Column::LogIndex)
            .all(&self.0)
            .await
            .map_err(Arc::new)?;
        let mut out = HashMap::new();
        for row in rows {
            let key = (row.chain_id, row.node.clone().unwrap_or_default(), row.block_number);
            if keys.contains(&key) {
                out.entry(key).or_insert(row);
            }
        }
        Ok(out)
    }
}

/// The loaders a schema carries. No batching delay: the default (1 ms, and tokio's timer
/// cannot sleep less) is a millisecond added to every query that loads anything. Batching
/// does not need it: the API runs on actix's single-threaded runtimes, where the spawned load
/// runs only once the request's task yields, and by then every resolver of the page polled in
/// that pass has queued its key.
pub fn loaders(
    db: &DatabaseConnection,
) -> (DataLoader<DomainLoader>, DataLoader<RegistrationLoader>) {
    (
        DataLoader::new(DomainLoader(db.clone()), tokio::spawn).delay(Duration::ZERO),
        DataLoader::new(RegistrationLoader(db.clone()), tokio::spawn).delay(Duration::ZERO),
    )
}

/// Maps a loader failure to the API's `INTERNAL` error.
pub fn loader_error(err: Arc<sea_orm::DbErr>) -> async_graphql::Error {
    tracing::error!(target: "api::graphql", error = %err, "Database error");
    crate::error::coded(crate::error::code::INTERNAL, "internal error")
}
