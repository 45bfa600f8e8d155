//! `Registry`: an ENSv1 registry contract (its top-level domains), or the virtual registry of
//! one domain (its direct subdomains). ENSv1 has one registry contract for the whole tree;
//! like the Omnigraph, every domain's children are presented as a registry of their own, whose
//! id is the parent's domain id, `${chainId}-${address}-${parentNode}`.

use async_graphql::{Context, Error, Object, dataloader::DataLoader};
use entities::domain_key::DomainKey;

use super::AccountId;
use crate::{
    connection::{DomainConnection, DomainFilter, DomainsOrderInput, Paging},
    loaders::{DomainLoader, load_row},
    query::{RegistryDomainsWhereInput, with_name},
    scalars::{Node, RegistryId},
};

/// An ENSv1 registry, concrete or virtual.
#[derive(Clone, Debug)]
pub struct Registry {
    /// Chain id.
    pub chain_id: i64,
    /// Address of the registry contract (lowercase hex).
    pub address: String,
    /// For a virtual registry, the node whose subdomains it holds.
    pub node: Option<String>,
}

impl Registry {
    /// `${chainId}-${address}`, or `${chainId}-${address}-${node}` for a virtual registry.
    pub fn id(&self) -> String {
        match &self.node {
            None => format!("{}-{}", self.chain_id, self.address),
            Some(node) => format!("{}-{}-{node}", self.chain_id, self.address),
        }
    }
}

#[Object]
impl Registry {
    /// `${chainId}-${address}`, or `${chainId}-${address}-${node}` for a virtual registry.
    #[graphql(name = "id")]
    async fn gql_id(&self) -> RegistryId {
        RegistryId(self.id())
    }

    /// The registry contract (a virtual registry reports the concrete one).
    async fn contract(&self) -> AccountId {
        AccountId::new(self.chain_id, &self.address)
    }

    /// For a virtual registry, the node of the domain whose subdomains it holds.
    async fn node(&self) -> Option<Node> {
        self.node.clone().map(Node)
    }

    /// Whether the registry is part of the canonical nametree (every ENSv1 registry is).
    async fn canonical(&self) -> bool {
        true
    }

    /// Domains whose subregistry this is: a virtual registry's domain; none for a registry
    /// contract (ENSv1 has no domain above the root).
    #[graphql(complexity = "crate::connection::page_complexity(first, last, child_complexity)")]
    async fn parents(
        &self,
        ctx: &Context<'_>,
        first: Option<i32>,
        after: Option<String>,
        last: Option<i32>,
        before: Option<String>,
    ) -> Result<DomainConnection, Error> {
        let filter = match &self.node {
            // A virtual registry's id is its domain's id.
            Some(_) => DomainFilter::id(&self.id()),
            None => DomainFilter::Nothing,
        };
        DomainConnection::load(ctx, filter, None, Paging { first, after, last, before }).await
    }

    /// The domains this registry holds: top-level domains, or one domain's subdomains.
    #[allow(clippy::too_many_arguments)]
    #[graphql(complexity = "crate::connection::page_complexity(first, last, child_complexity)")]
    async fn domains(
        &self,
        ctx: &Context<'_>,
        #[graphql(name = "where")] filter: Option<RegistryDomainsWhereInput>,
        order: Option<DomainsOrderInput>,
        first: Option<i32>,
        after: Option<String>,
        last: Option<i32>,
        before: Option<String>,
    ) -> Result<DomainConnection, Error> {
        let held = match &self.node {
            // A virtual registry's id is its parent domain's id; children name the parent
            // by its creation number.
            Some(_) => match self.id().parse::<DomainKey>() {
                Ok(key) => {
                    let loader = ctx.data::<DataLoader<DomainLoader>>()?;
                    load_row(loader, key)
                        .await?
                        .map_or(DomainFilter::Nothing, |parent| DomainFilter::Parent(parent.seq))
                }
                Err(_) => DomainFilter::Nothing,
            },
            None => DomainFilter::top_level(self.chain_id, &self.address),
        };
        let filter = with_name(held, filter.and_then(|f| f.name))?;
        DomainConnection::load(ctx, filter, order, Paging { first, after, last, before }).await
    }
}
