//! `Domain` (ENSv1 domain) and its small companion types.

use async_graphql::{Context, Error, Interface, Object, SimpleObject, dataloader::DataLoader};
use entities::{domain, event};
use sea_orm::{ColumnTrait, Condition, DatabaseConnection};

use super::{
    Account, Registration, Registry, Resolver,
    event::{EventConnection, EventsWhereInput, list_events},
    registration::{RegistrationConnection, list_registrations},
};
use crate::{
    connection::{DomainConnection, DomainFilter, DomainsOrderInput, Paging},
    loaders::{DomainBySeqLoader, DomainLoader, RegistrationLoader, load_row},
    query::{SubdomainsWhereInput, with_name},
    scalars::{DomainId, Hex, InterpretedLabel, InterpretedName, Node},
};

/// An ENSv1 domain (GraphQL type `ENSv1Domain`).
#[derive(Clone, Debug)]
pub struct Domain(pub domain::Model);

/// The `Domain` interface of the Omnigraph; Ensemble indexes ENSv1 domains, so it has one
/// implementation. Fields that return domains return the interface, as the Omnigraph does,
/// so clients' `... on ENSv1Domain` fragments work.
// The lint reads two arguments of one type as a repeated attribute.
#[allow(clippy::duplicated_attributes)]
#[derive(Clone, Debug, Interface)]
#[graphql(
    name = "Domain",
    field(name = "id", ty = "DomainId", desc = "`${chainId}-${registry}-${node}`."),
    field(name = "label", ty = "Label", desc = "The leaf label."),
    field(
        name = "canonical",
        ty = "Option<DomainCanonical>",
        desc = "Place in the canonical nametree."
    ),
    field(name = "owner", ty = "Option<Account>", desc = "Effective owner."),
    field(name = "parent", ty = "Option<DomainInterface>", desc = "The parent domain."),
    field(name = "registry", ty = "Registry", desc = "The registry that holds the domain."),
    field(name = "subregistry", ty = "Option<Registry>", desc = "The registry of its subdomains."),
    field(name = "registration", ty = "Option<Registration>", desc = "The latest registration."),
    field(
        name = "registrations",
        ty = "RegistrationConnection",
        desc = "Every registration, oldest first.",
        arg(name = "first", ty = "Option<i32>"),
        arg(name = "after", ty = "Option<String>"),
        arg(name = "last", ty = "Option<i32>"),
        arg(name = "before", ty = "Option<String>")
    ),
    field(
        name = "subdomains",
        ty = "DomainConnection",
        desc = "Direct subdomains.",
        arg(name = "where", ty = "Option<SubdomainsWhereInput>"),
        arg(name = "order", ty = "Option<DomainsOrderInput>"),
        arg(name = "first", ty = "Option<i32>"),
        arg(name = "after", ty = "Option<String>"),
        arg(name = "last", ty = "Option<i32>"),
        arg(name = "before", ty = "Option<String>")
    ),
    field(
        name = "events",
        ty = "EventConnection",
        desc = "Events about the domain, oldest first.",
        arg(name = "where", ty = "Option<EventsWhereInput>"),
        arg(name = "first", ty = "Option<i32>"),
        arg(name = "after", ty = "Option<String>"),
        arg(name = "last", ty = "Option<i32>"),
        arg(name = "before", ty = "Option<String>")
    ),
    field(name = "resolver", ty = "DomainResolver", desc = "Assigned and effective resolver."),
    field(
        name = "resolve",
        ty = "super::resolve::ForwardResolve",
        desc = "Forward resolution of the domain's name (ENSIP-10).",
        arg(name = "accelerate", ty = "bool", default = true),
        arg(name = "trace", ty = "bool", default = false)
    )
)]
pub enum DomainInterface {
    /// An ENSv1 domain.
    #[graphql(name = "ENSv1Domain")]
    Ensv1(Domain),
}

impl From<domain::Model> for DomainInterface {
    fn from(row: domain::Model) -> Self {
        Self::Ensv1(Domain(row))
    }
}

/// A label.
#[derive(Debug, SimpleObject)]
pub struct Label {
    /// The label if normalized, else `[labelhash]`.
    pub interpreted: InterpretedLabel,
    /// labelhash.
    pub hash: Hex,
}

/// A canonical name.
#[derive(Debug, SimpleObject)]
pub struct CanonicalName {
    /// Every label normalized or `[labelhash]`.
    pub interpreted: InterpretedName,
}

/// Where the domain sits in the canonical nametree.
#[derive(Debug)]
pub struct DomainCanonical(domain::Model);

#[Object]
impl DomainCanonical {
    /// Number of labels.
    async fn depth(&self) -> i32 {
        self.0.depth
    }

    /// The name.
    async fn name(&self) -> CanonicalName {
        CanonicalName { interpreted: InterpretedName(self.0.name.clone()) }
    }

    /// namehash.
    async fn node(&self) -> Node {
        Node(self.0.node_hex())
    }

    /// The domains from the top-level domain down to this one, inclusive.
    async fn path(&self, ctx: &Context<'_>) -> Result<Vec<DomainInterface>, Error> {
        let mut path = ancestors(ctx, &self.0).await?;
        path.reverse();
        Ok(path.into_iter().map(DomainInterface::from).collect())
    }
}

/// `domain` and its ancestors, leaf first (at most 64: names are shallower than that, and a
/// corrupt parent loop must not spin).
async fn ancestors(ctx: &Context<'_>, leaf: &domain::Model) -> Result<Vec<domain::Model>, Error> {
    let loader = ctx.data::<DataLoader<DomainBySeqLoader>>()?;
    let mut chain = vec![leaf.clone()];
    while let Some(parent) = chain.last().and_then(|d| d.parent_seq) {
        if chain.len() >= 64 {
            break;
        }
        match load_row(loader, parent).await? {
            Some(p) => chain.push(p),
            None => break,
        }
    }
    Ok(chain)
}

/// The parent of `domain`, loaded with the page's others; none for a top-level domain.
async fn parent_of(
    ctx: &Context<'_>,
    domain: &domain::Model,
) -> Result<Option<domain::Model>, Error> {
    let Some(seq) = domain.parent_seq else { return Ok(None) };
    load_row(ctx.data::<DataLoader<DomainBySeqLoader>>()?, seq).await
}

/// The resolver of a domain.
#[derive(Debug)]
pub struct DomainResolver(domain::Model);

fn resolver_of(d: &domain::Model) -> Option<Resolver> {
    d.resolver
        .as_ref()
        .map(|address| Resolver { chain_id: d.chain_id, address: address.to_string() })
}

#[Object]
impl DomainResolver {
    /// The resolver set in the registry for this domain.
    async fn assigned(&self) -> Option<Resolver> {
        resolver_of(&self.0)
    }

    /// The resolver a client uses (ENSIP-10): this domain's, else the nearest ancestor's.
    async fn effective(&self, ctx: &Context<'_>) -> Result<Option<Resolver>, Error> {
        if let Some(own) = resolver_of(&self.0) {
            return Ok(Some(own));
        }
        Ok(ancestors(ctx, &self.0).await?.iter().find_map(resolver_of))
    }
}

#[Object(name = "ENSv1Domain")]
impl Domain {
    /// `${chainId}-${registry}-${node}`.
    async fn id(&self) -> DomainId {
        DomainId(self.0.id.to_string())
    }

    /// The leaf label.
    async fn label(&self) -> Label {
        // Names are rendered from interpreted labels, which never contain a dot.
        let interpreted = self.0.name.split('.').next().unwrap_or_default().to_owned();
        Label {
            interpreted: InterpretedLabel(interpreted),
            hash: Hex(self.0.label_hash.to_string()),
        }
    }

    /// Canonical name, depth, node and path; null when the domain is not in the canonical
    /// namegraph now (a bridged chain's shadow nodes, its names while its bridge is down, the
    /// origin chain's names below a bridged name while it is up).
    async fn canonical(&self, ctx: &Context<'_>) -> Result<Option<DomainCanonical>, Error> {
        let graph = crate::namegraph::namegraph(ctx).await?;
        Ok(graph.is_canonical(self.0.link).then(|| DomainCanonical(self.0.clone())))
    }

    /// namehash.
    async fn node(&self) -> Node {
        Node(self.0.node_hex())
    }

    /// The owner, from the current state whatever the order of events: the NameWrapper
    /// token's holder while the name is wrapped (its registry owner is the NameWrapper and the
    /// token exists); else, for a name a registrar manages (`x.eth`, `x.base.eth`) that has a
    /// registrar token, the token's holder, expired or not; else the registry owner
    /// (`rootRegistryOwner`).
    async fn owner(&self) -> Option<Account> {
        self.0.owner.as_ref().map(|a| Account(a.to_string()))
    }

    /// Owner in the registry itself.
    async fn root_registry_owner(&self) -> Option<Account> {
        self.0.registry_owner.as_ref().map(|a| Account(a.to_string()))
    }

    /// The parent domain (none for top-level domains). Across a bridge that is up, the
    /// parent of `alice.base.eth` on Base is mainnet's `base.eth`.
    async fn parent(&self, ctx: &Context<'_>) -> Result<Option<DomainInterface>, Error> {
        let Some(parent) = parent_of(ctx, &self.0).await? else { return Ok(None) };
        let graph = crate::namegraph::namegraph(ctx).await?;
        if let Some(bridge) = graph.up_into(&parent.id) {
            let loader = ctx.data::<DataLoader<DomainLoader>>()?;
            if let Some(origin) = load_row(loader, bridge.origin_domain.clone()).await? {
                return Ok(Some(DomainInterface::from(origin)));
            }
        }
        Ok(Some(DomainInterface::from(parent)))
    }

    /// The latest registration.
    async fn registration(&self, ctx: &Context<'_>) -> Result<Option<Registration>, Error> {
        let Some(id) = self.0.registration_id() else {
            return Ok(None);
        };
        let loader = ctx.data::<DataLoader<RegistrationLoader>>()?;
        Ok(load_row(loader, id).await?.map(Registration::from_model))
    }

    /// The registry that holds the domain: the registry contract for a top-level domain,
    /// else the parent's virtual registry.
    async fn registry(&self, ctx: &Context<'_>) -> Result<Registry, Error> {
        let node = parent_of(ctx, &self.0).await?.map(|p| p.node_hex());
        Ok(Registry { chain_id: self.0.chain_id, address: self.0.registry_hex(), node })
    }

    /// The registry of this domain's subdomains: its virtual registry, or across a bridge
    /// that is up the bridged chain's (mainnet `base.eth` → `8453-<Basenames registry>-<node>`).
    async fn subregistry(&self, ctx: &Context<'_>) -> Result<Option<Registry>, Error> {
        let graph = crate::namegraph::namegraph(ctx).await?;
        let holder = graph.up_from(&self.0.id).map_or(&self.0.id, |b| &b.target_domain);
        Ok(Some(Registry {
            chain_id: i64::try_from(holder.chain_id()).unwrap_or(i64::MAX),
            address: format!("0x{}", hex::encode(holder.registry())),
            node: Some(holder.node_hex()),
        }))
    }

    /// Registry, registrar and NameWrapper events about this domain, oldest first.
    #[graphql(complexity = "crate::connection::page_complexity(first, last, child_complexity)")]
    async fn events(
        &self,
        ctx: &Context<'_>,
        #[graphql(name = "where")] filter: Option<EventsWhereInput>,
        first: Option<i32>,
        after: Option<String>,
        last: Option<i32>,
        before: Option<String>,
    ) -> Result<EventConnection, Error> {
        let db = ctx.data::<DatabaseConnection>()?;
        let subject = Condition::all().add(event::Column::DomainSeq.eq(self.0.seq));
        list_events(db, subject, filter, Paging { first, after, last, before }).await
    }

    /// The resolver.
    async fn resolver(&self) -> DomainResolver {
        DomainResolver(self.0.clone())
    }

    /// Forward resolution of the domain's name (ENSIP-10): its records as the ENS protocol
    /// answers them, from the index where it knows them exactly (`accelerate`, the default),
    /// else by live calls.
    async fn resolve(
        &self,
        #[graphql(default = true)] accelerate: bool,
        #[graphql(default = false)] trace: bool,
    ) -> super::resolve::ForwardResolve {
        super::resolve::ForwardResolve {
            name: self.0.name.clone(),
            options: crate::resolution::ResolveOptions { accelerate, trace },
        }
    }

    /// Every registration of the domain, oldest first.
    #[graphql(complexity = "crate::connection::page_complexity(first, last, child_complexity)")]
    async fn registrations(
        &self,
        ctx: &Context<'_>,
        first: Option<i32>,
        after: Option<String>,
        last: Option<i32>,
        before: Option<String>,
    ) -> Result<RegistrationConnection, Error> {
        let db = ctx.data::<DatabaseConnection>()?;
        list_registrations(db, &self.0.id, Paging { first, after, last, before }).await
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
        #[graphql(name = "where")] filter: Option<SubdomainsWhereInput>,
        order: Option<DomainsOrderInput>,
        first: Option<i32>,
        after: Option<String>,
        last: Option<i32>,
        before: Option<String>,
    ) -> Result<DomainConnection, Error> {
        let paging = Paging { first, after, last, before };
        // Across a bridge that is up, the subdomains are the bridged chain's.
        let graph = crate::namegraph::namegraph(ctx).await?;
        let parent_seq = match graph.up_from(&self.0.id) {
            Some(bridge) => {
                let loader = ctx.data::<DataLoader<DomainLoader>>()?;
                match load_row(loader, bridge.target_domain.clone()).await? {
                    Some(target) => target.seq,
                    None => {
                        return DomainConnection::load(ctx, DomainFilter::Nothing, order, paging)
                            .await;
                    }
                }
            }
            None => self.0.seq,
        };
        let filter = with_name(DomainFilter::Parent(parent_seq), filter.and_then(|f| f.name))?;
        DomainConnection::load(ctx, filter, order, paging).await
    }
}
