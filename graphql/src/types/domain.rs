//! `Domain` (ENSv1 domain) and its small companion types.

use async_graphql::{Context, Error, Object, SimpleObject};
use entities::{domain, registration};
use sea_orm::{DatabaseConnection, EntityTrait};

use super::{Account, Registration, Resolver};
use crate::{
    connection::{DomainConnection, DomainFilter, DomainsOrderInput, Paging},
    error::internal,
};

/// An ENSv1 domain.
#[derive(Clone, Debug)]
pub struct Domain(pub domain::Model);

/// A label.
#[derive(Debug, SimpleObject)]
pub struct Label {
    /// The label if normalized, else `[labelhash]`.
    pub interpreted: String,
    /// labelhash.
    pub hash: String,
}

/// A canonical name.
#[derive(Debug, SimpleObject)]
pub struct CanonicalName {
    /// Every label normalized or `[labelhash]`.
    pub interpreted: String,
}

/// Where the domain sits in the canonical nametree.
#[derive(Debug, SimpleObject)]
pub struct DomainCanonical {
    /// Number of labels.
    pub depth: i32,
    /// The name.
    pub name: CanonicalName,
    /// namehash.
    pub node: String,
}

/// The resolver of a domain.
#[derive(Debug, SimpleObject)]
pub struct DomainResolver {
    /// The resolver set in the registry.
    pub assigned: Option<Resolver>,
}

#[Object]
impl Domain {
    /// `${chainId}-${registry}-${node}`.
    async fn id(&self) -> &str {
        &self.0.id
    }

    /// The leaf label.
    async fn label(&self) -> Label {
        // Names are rendered from interpreted labels, which never contain a dot.
        let interpreted = self.0.name.split('.').next().unwrap_or_default().to_owned();
        Label { interpreted, hash: self.0.label_hash.clone() }
    }

    /// Canonical name, depth and node.
    async fn canonical(&self) -> DomainCanonical {
        DomainCanonical {
            depth: self.0.depth,
            name: CanonicalName { interpreted: self.0.name.clone() },
            node: self.0.node.clone(),
        }
    }

    /// namehash.
    async fn node(&self) -> &str {
        &self.0.node
    }

    /// Effective owner: the registry owner, overridden by the registrar and NameWrapper
    /// token owners.
    async fn owner(&self) -> Option<Account> {
        self.0.owner.clone().map(Account)
    }

    /// Owner in the registry itself.
    async fn root_registry_owner(&self) -> Option<Account> {
        self.0.registry_owner.clone().map(Account)
    }

    /// The parent domain (none for top-level domains).
    async fn parent(&self, ctx: &Context<'_>) -> Result<Option<Domain>, Error> {
        let Some(parent) = &self.0.parent_id else {
            return Ok(None);
        };
        let db = ctx.data::<DatabaseConnection>()?;
        Ok(domain::Entity::find_by_id(parent.clone()).one(db).await.map_err(internal)?.map(Domain))
    }

    /// The latest registration.
    async fn registration(&self, ctx: &Context<'_>) -> Result<Option<Registration>, Error> {
        let Some(id) = &self.0.registration_id else {
            return Ok(None);
        };
        let db = ctx.data::<DatabaseConnection>()?;
        Ok(registration::Entity::find_by_id(id.clone())
            .one(db)
            .await
            .map_err(internal)?
            .map(Registration))
    }

    /// The resolver.
    async fn resolver(&self) -> DomainResolver {
        DomainResolver {
            assigned: self
                .0
                .resolver
                .as_ref()
                .map(|address| Resolver { chain_id: self.0.chain_id, address: address.clone() }),
        }
    }

    /// TTL set in the registry.
    async fn ttl(&self) -> Option<i64> {
        self.0.ttl
    }

    /// Direct subdomains (by name unless `order` says otherwise).
    #[allow(clippy::too_many_arguments)]
    #[graphql(complexity = "crate::connection::page_complexity(first, last, child_complexity)")]
    async fn subdomains(
        &self,
        ctx: &Context<'_>,
        order: Option<DomainsOrderInput>,
        first: Option<i32>,
        after: Option<String>,
        last: Option<i32>,
        before: Option<String>,
    ) -> Result<DomainConnection, Error> {
        let db = ctx.data::<DatabaseConnection>()?;
        let paging = Paging { first, after, last, before };
        DomainConnection::load(db, DomainFilter::Parent(self.0.id.clone()), order, paging).await
    }
}
