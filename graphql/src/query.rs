//! The query root: `domain`, `domains`, `account`, `resolver`.

use async_graphql::{Context, Enum, Error, InputObject, Object, OneofObject};
use entities::{domain, domain_key::DomainKey};
use sea_orm::{ColumnTrait, DatabaseConnection, EntityTrait, QueryFilter, QueryOrder};

use crate::{
    connection::{DomainConnection, DomainFilter, DomainsOrderInput, Paging},
    error::{code, coded, internal},
    name::{parse_address, validate_name},
    scalars::{Address, DomainId, InterpretedName, RegistryId, ResolverId},
    types::{Account, DomainInterface, IndexingStatus, Registry, Resolver},
};

/// Most names accepted by `domains(where: {name: {in: [...]}})`.
pub const MAX_NAMES_IN: usize = 100;

/// How to find one domain.
#[derive(Debug, OneofObject)]
pub enum DomainIdInput {
    /// Domain id.
    Id(DomainId),
    /// A name: every label ENSIP-15 normalized, or `[labelhash]`. Found by its namehash,
    /// so labels may be typed in plaintext whether or not the index knows them.
    Name(InterpretedName),
}

/// How to find an account.
#[derive(Debug, OneofObject)]
pub enum AccountByInput {
    /// Address.
    Address(Address),
    /// Address (the account id).
    Id(Address),
}

/// How to find a resolver.
#[derive(Debug, OneofObject)]
pub enum ResolverIdInput {
    /// The contract.
    Contract(crate::types::AccountIdInput),
    /// `${chainId}-${address}`.
    Id(ResolverId),
}

/// Name filter of `domains`.
#[derive(Debug, OneofObject)]
pub enum DomainsNameFilter {
    /// Exact name.
    Eq(InterpretedName),
    /// Any of these names (at most 100).
    In(Vec<InterpretedName>),
    /// Prefix (at least one character).
    #[graphql(name = "starts_with")]
    StartsWith(String),
    /// Substring anywhere in the name (at least 3 characters; served by a trigram index).
    Contains(String),
}

/// Shortest `contains` search: trigram indexes need three characters to narrow anything.
pub const MIN_CONTAINS_CHARS: usize = 3;

impl DomainsNameFilter {
    /// The validated listing filter.
    pub fn into_filter(self) -> Result<DomainFilter, Error> {
        if let Self::StartsWith(text) | Self::Contains(text) = &self
            && text.contains('\0')
        {
            // No name holds NUL, and PostgreSQL text cannot: refuse it rather than fail.
            return Err(coded(code::INVALID_ARGUMENT, "a name search cannot contain NUL"));
        }
        Ok(match self {
            Self::Eq(InterpretedName(name)) => {
                validate_name(&name)?;
                DomainFilter::NameEq(name)
            }
            Self::In(names) => {
                if names.len() > MAX_NAMES_IN {
                    return Err(coded(
                        code::INVALID_ARGUMENT,
                        format!("in accepts at most {MAX_NAMES_IN} names"),
                    ));
                }
                for name in &names {
                    validate_name(&name.0)?;
                }
                DomainFilter::NameIn(names.into_iter().map(|n| n.0).collect())
            }
            Self::StartsWith(prefix) => {
                if prefix.is_empty() || prefix.len() > crate::name::MAX_NAME_BYTES {
                    return Err(coded(
                        code::INVALID_ARGUMENT,
                        format!("starts_with needs 1 to {} bytes", crate::name::MAX_NAME_BYTES),
                    ));
                }
                // Names are normalized, hence lowercase: match case-insensitively everywhere.
                DomainFilter::NameStartsWith(prefix.to_lowercase())
            }
            Self::Contains(text) => {
                if text.chars().count() < MIN_CONTAINS_CHARS
                    || text.len() > crate::name::MAX_NAME_BYTES
                {
                    return Err(coded(
                        code::INVALID_ARGUMENT,
                        format!(
                            "contains needs {MIN_CONTAINS_CHARS} characters to {} bytes",
                            crate::name::MAX_NAME_BYTES
                        ),
                    ));
                }
                DomainFilter::NameContains(text.to_lowercase())
            }
        })
    }
}

/// Filter of `domains`.
#[derive(Debug, InputObject)]
pub struct DomainsWhereInput {
    /// By canonical name.
    pub name: DomainsNameFilter,
    /// Only domains of this protocol version.
    pub version: Option<EnsProtocolVersion>,
}

/// ENS protocol versions.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Enum)]
#[graphql(name = "ENSProtocolVersion", rename_items = "PascalCase")]
pub enum EnsProtocolVersion {
    /// The ENSv1 registry and registrars (every domain Ensemble indexes).
    #[graphql(name = "ENSv1")]
    EnsV1,
    /// ENSv2 registries (not indexed yet: matches nothing).
    #[graphql(name = "ENSv2")]
    EnsV2,
}

/// `base` restricted to a protocol version: ENSv2 matches nothing, since only ENSv1 is indexed.
pub fn with_version(base: DomainFilter, version: Option<EnsProtocolVersion>) -> DomainFilter {
    match version {
        Some(EnsProtocolVersion::EnsV2) => DomainFilter::Nothing,
        _ => base,
    }
}

/// Filter of `Domain.subdomains`.
#[derive(Debug, InputObject)]
pub struct SubdomainsWhereInput {
    /// By canonical name.
    pub name: Option<DomainsNameFilter>,
}

/// Filter of `Registry.domains`.
#[derive(Debug, InputObject)]
pub struct RegistryDomainsWhereInput {
    /// By canonical name.
    pub name: Option<DomainsNameFilter>,
}

/// `base`, narrowed by an optional name filter.
pub fn with_name(
    base: DomainFilter,
    name: Option<DomainsNameFilter>,
) -> Result<DomainFilter, Error> {
    Ok(match name {
        Some(name) => DomainFilter::And(Box::new(base), Box::new(name.into_filter()?)),
        None => base,
    })
}

/// How to find a registry.
#[derive(Debug, OneofObject)]
pub enum RegistryIdInput {
    /// The contract.
    Contract(crate::types::AccountIdInput),
    /// `${chainId}-${address}`, or `${chainId}-${address}-${node}` (virtual registry).
    Id(RegistryId),
}

/// Splits a `${chainId}-${address}` id, or `${chainId}-${address}-${node}` where `node`
/// is allowed (virtual registries).
fn split_contract_id(id: &str, node_allowed: bool) -> Result<(i64, String, Option<String>), Error> {
    let invalid = || coded(code::INVALID_ARGUMENT, "contract ids are ${chainId}-${address}");
    let mut parts = id.splitn(3, '-');
    let chain = parts.next().and_then(|c| c.parse().ok()).ok_or_else(invalid)?;
    let address = parse_address(parts.next().ok_or_else(invalid)?)?;
    let node = match parts.next() {
        None => None,
        Some(node) if node_allowed => Some(crate::name::parse_node(node)?),
        Some(_) => return Err(invalid()),
    };
    Ok((chain, address, node))
}

/// The query root.
#[derive(Debug)]
pub struct Query;

#[Object]
impl Query {
    /// Forward resolution of any name, indexed or not: a name that resolves only through an
    /// ancestor's wildcard (ENSIP-10 extended) resolver has no domain (`domain` is null for
    /// it) and resolves here.
    async fn resolve_name(
        &self,
        name: InterpretedName,
        #[graphql(default = true)] accelerate: bool,
        #[graphql(default = false)] trace: bool,
    ) -> Result<crate::types::resolve::ForwardResolve, Error> {
        validate_name(&name.0)?;
        Ok(crate::types::resolve::ForwardResolve {
            name: name.0,
            options: crate::resolution::ResolveOptions { accelerate, trace },
        })
    }

    /// One domain by id or name.
    async fn domain(
        &self,
        ctx: &Context<'_>,
        by: DomainIdInput,
    ) -> Result<Option<DomainInterface>, Error> {
        let db = ctx.data::<DatabaseConnection>()?;
        let query = match by {
            DomainIdInput::Id(DomainId(id)) => {
                let key = id
                    .parse::<DomainKey>()
                    .map_err(|err| coded(code::INVALID_ARGUMENT, err.to_string()))?;
                domain::Entity::find_by_id(key)
            }
            // The canonical domain of that name (one per name: a name's non-canonical
            // copies are a bridged chain's shadow nodes or the origin chain's names below a
            // bridged name), found by its namehash: a name typed in plaintext is found
            // whether or not the index knows the plaintext of each of its labels.
            DomainIdInput::Name(InterpretedName(name)) => {
                validate_name(&name)?;
                let links = crate::namegraph::namegraph(ctx).await?.links();
                let node = crate::name::interpreted_namehash(&name);
                domain::Entity::find()
                    .filter(sea_orm::sea_query::ExprTrait::eq(
                        domain::node_expr(),
                        node.as_slice().to_vec(),
                    ))
                    .filter(domain::Column::Link.is_in(links))
            }
        };
        Ok(query.one(db).await.map_err(internal)?.map(DomainInterface::from))
    }

    /// Canonical domains by name. Ordered by `order`; by default by name, or by depth for a
    /// `starts_with` search.
    #[allow(clippy::too_many_arguments)]
    #[graphql(complexity = "crate::connection::page_complexity(first, last, child_complexity)")]
    async fn domains(
        &self,
        ctx: &Context<'_>,
        #[graphql(name = "where")] filter: DomainsWhereInput,
        order: Option<DomainsOrderInput>,
        first: Option<i32>,
        after: Option<String>,
        last: Option<i32>,
        before: Option<String>,
    ) -> Result<DomainConnection, Error> {
        let filter = with_version(filter.name.into_filter()?, filter.version);
        let canonical = DomainFilter::Links(crate::namegraph::namegraph(ctx).await?.links());
        let filter = DomainFilter::And(Box::new(canonical), Box::new(filter));
        DomainConnection::load(ctx, filter, order, Paging { first, after, last, before }).await
    }

    /// Any account (it need not own anything).
    async fn account(&self, by: AccountByInput) -> Result<Account, Error> {
        let (AccountByInput::Address(a) | AccountByInput::Id(a)) = by;
        Ok(Account(parse_address(&a.0)?))
    }

    /// What each chain's indexer is doing.
    async fn indexing_status(&self, ctx: &Context<'_>) -> Result<Vec<IndexingStatus>, Error> {
        let db = ctx.data::<DatabaseConnection>()?;
        Ok(entities::chain_status::Entity::find()
            .order_by_asc(entities::chain_status::Column::ChainId)
            .all(db)
            .await
            .map_err(internal)?
            .into_iter()
            .map(IndexingStatus::from)
            .collect())
    }

    /// The root registry: the registry of the lowest chain id whose top-level domains are
    /// the namegraph's (Ethereum mainnet in the mainnet namespace; Base's and Linea's shadow
    /// registries are not). Null before anything is indexed.
    async fn root(&self, ctx: &Context<'_>) -> Result<Option<Registry>, Error> {
        let db = ctx.data::<DatabaseConnection>()?;
        Ok(domain::Entity::find()
            .filter(domain::Column::ParentSeq.is_null())
            .filter(domain::Column::Link.eq(entities::domain::LINK_ROOT))
            .order_by_asc(domain::Column::ChainId)
            .one(db)
            .await
            .map_err(internal)?
            .map(|d| Registry { chain_id: d.chain_id, address: d.registry_hex(), node: None }))
    }

    /// A registry: a registry contract, or by id also a domain's virtual registry.
    async fn registry(&self, by: RegistryIdInput) -> Result<Registry, Error> {
        let (chain_id, address, node) = match by {
            RegistryIdInput::Contract(c) => (c.chain_id.0, parse_address(&c.address.0)?, None),
            RegistryIdInput::Id(id) => split_contract_id(&id.0, true)?,
        };
        Ok(Registry { chain_id, address, node })
    }

    /// A resolver contract.
    async fn resolver(&self, by: ResolverIdInput) -> Result<Resolver, Error> {
        let (chain_id, address, _) = match by {
            ResolverIdInput::Contract(c) => (c.chain_id.0, parse_address(&c.address.0)?, None),
            ResolverIdInput::Id(id) => split_contract_id(&id.0, false)?,
        };
        Ok(Resolver { chain_id, address })
    }
}
