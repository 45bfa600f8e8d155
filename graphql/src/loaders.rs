//! DataLoaders: nested lookups of a page (each domain's parent, each domain's latest
//! registration) are collected and answered by one `WHERE id IN (...)` query per kind instead
//! of one query per row. No cache: a loader only batches within a request, so answers are
//! never staler than the database.

use std::{collections::HashMap, sync::Arc, time::Duration};

use async_graphql::dataloader::{DataLoader, Loader};
use entities::{domain, registration};
use sea_orm::{ColumnTrait, DatabaseConnection, EntityTrait, QueryFilter};

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
