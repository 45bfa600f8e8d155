//! [`Namegraph`]: the canonical namegraph across chains as it stands when a query runs.
//!
//! Each domain carries the link fixed when it was indexed (`entities::domain::Model::link`);
//! which links are canonical depends only on whether each bridge is up, that is on one row
//! per bridge: the origin domain's resolver (`entities::namegraph_bridge`). Loading that is
//! two small queries, batched per request by [`NamegraphLoader`], so the API answers with
//! the namegraph's current shape without the indexer ever rewriting the names below a bridge.

use std::{collections::HashMap, sync::Arc};

use async_graphql::{
    Context, Error,
    dataloader::{DataLoader, Loader},
};
use entities::{
    domain::{self, DomainKey, LINK_ROOT},
    namegraph_bridge,
};
use sea_orm::{ColumnTrait, DatabaseConnection, DbErr, EntityTrait, QueryFilter};

use crate::loaders::loader_error;

/// The bridges of the namespace and whether each is up.
#[derive(Clone, Debug, Default)]
pub struct Namegraph {
    bridges: Vec<(namegraph_bridge::Model, bool)>,
}

impl Namegraph {
    /// Reads the bridges and their origins' resolvers.
    pub async fn load(db: &DatabaseConnection) -> Result<Self, DbErr> {
        let rows = namegraph_bridge::Entity::find().all(db).await?;
        if rows.is_empty() {
            return Ok(Self::default());
        }
        let origins: HashMap<DomainKey, domain::Model> = domain::Entity::find()
            .filter(domain::Column::Id.is_in(rows.iter().map(|b| b.origin_domain.clone())))
            .all(db)
            .await?
            .into_iter()
            .map(|d| (d.id.clone(), d))
            .collect();
        let bridges = rows
            .into_iter()
            .map(|b| {
                let resolver = origins.get(&b.origin_domain).and_then(|d| d.resolver.as_ref());
                let up = b.is_up(resolver);
                (b, up)
            })
            .collect();
        Ok(Self { bridges })
    }

    /// The links that are canonical now.
    pub fn links(&self) -> Vec<i64> {
        std::iter::once(LINK_ROOT)
            .chain(self.bridges.iter().map(|(b, up)| b.canonical_link(*up)))
            .collect()
    }

    /// Whether a domain with `link` is canonical now.
    pub fn is_canonical(&self, link: Option<i64>) -> bool {
        link.is_some_and(|link| self.links().contains(&link))
    }

    /// The bridge that is up from `origin` (mainnet `base.eth` while it has the Basenames
    /// L1 resolver): its subdomains are then the target chain's.
    pub fn up_from(&self, origin: &DomainKey) -> Option<&namegraph_bridge::Model> {
        self.bridges.iter().find(|(b, up)| *up && &b.origin_domain == origin).map(|(b, _)| b)
    }

    /// The bridge that is up into `target` (Base's own `base.eth`): its children's canonical
    /// parent is then the origin.
    pub fn up_into(&self, target: &DomainKey) -> Option<&namegraph_bridge::Model> {
        self.bridges.iter().find(|(b, up)| *up && &b.target_domain == target).map(|(b, _)| b)
    }
}

/// Loads the [`Namegraph`] once per batch of fields that ask for it (a page of domains asks
/// once, not once per domain).
#[derive(Clone, Debug)]
pub struct NamegraphLoader(pub DatabaseConnection);

impl Loader<()> for NamegraphLoader {
    type Value = Arc<Namegraph>;
    type Error = Arc<DbErr>;

    async fn load(&self, _: &[()]) -> Result<HashMap<(), Self::Value>, Self::Error> {
        let graph = Namegraph::load(&self.0).await.map_err(Arc::new)?;
        Ok(HashMap::from([((), Arc::new(graph))]))
    }
}

/// The namegraph for this request.
pub async fn namegraph(ctx: &Context<'_>) -> Result<Arc<Namegraph>, Error> {
    let loader = ctx.data::<DataLoader<NamegraphLoader>>()?;
    Ok(loader.load_one(()).await.map_err(loader_error)?.unwrap_or_default())
}
