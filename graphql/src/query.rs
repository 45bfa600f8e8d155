//! The query root: `domain`, `domains`, `account`, `resolver`.

use async_graphql::{Context, Error, InputObject, Object, OneofObject};
use entities::domain;
use sea_orm::{ColumnTrait, DatabaseConnection, EntityTrait, QueryFilter, QueryOrder};

use crate::{
    connection::{DomainConnection, DomainFilter, DomainsOrderInput, Paging},
    error::{code, coded, internal},
    name::{parse_address, validate_name},
    types::{Account, Domain, IndexingStatus, Registry, Resolver},
};

/// Most names accepted by `domains(where: {name: {in: [...]}})`.
pub const MAX_NAMES_IN: usize = 100;

/// How to find one domain.
#[derive(Debug, OneofObject)]
pub enum DomainIdInput {
    /// Domain id.
    Id(String),
    /// Interpreted name.
    Name(String),
}

/// How to find an account.
#[derive(Debug, OneofObject)]
pub enum AccountByInput {
    /// Address.
    Address(String),
    /// Address (the account id).
    Id(String),
}

/// How to find a resolver.
#[derive(Debug, OneofObject)]
pub enum ResolverIdInput {
    /// The contract.
    Contract(crate::types::AccountIdInput),
    /// `${chainId}-${address}`.
    Id(String),
}

/// Name filter of `domains`.
#[derive(Debug, OneofObject)]
pub enum DomainsNameFilter {
    /// Exact name.
    Eq(String),
    /// Any of these names (at most 100).
    In(Vec<String>),
    /// Prefix (at least one character).
    #[graphql(name = "starts_with")]
    StartsWith(String),
}

/// Filter of `domains`.
#[derive(Debug, InputObject)]
pub struct DomainsWhereInput {
    /// By canonical name.
    pub name: DomainsNameFilter,
}

/// How to find a registry.
#[derive(Debug, OneofObject)]
pub enum RegistryIdInput {
    /// The contract.
    Contract(crate::types::AccountIdInput),
    /// `${chainId}-${address}`.
    Id(String),
}

/// Splits a `${chainId}-${address}` id.
fn split_contract_id(id: &str) -> Result<(i64, String), Error> {
    let invalid = || coded(code::INVALID_ARGUMENT, "contract ids are ${chainId}-${address}");
    let (chain, address) = id.split_once('-').ok_or_else(invalid)?;
    Ok((chain.parse().map_err(|_| invalid())?, address.to_owned()))
}

/// The query root.
#[derive(Debug)]
pub struct Query;

#[Object]
impl Query {
    /// One domain by id or name.
    async fn domain(&self, ctx: &Context<'_>, by: DomainIdInput) -> Result<Option<Domain>, Error> {
        let db = ctx.data::<DatabaseConnection>()?;
        let query = match by {
            DomainIdInput::Id(id) => domain::Entity::find_by_id(id),
            DomainIdInput::Name(name) => {
                validate_name(&name)?;
                domain::Entity::find().filter(domain::Column::Name.eq(name))
            }
        };
        Ok(query.one(db).await.map_err(internal)?.map(Domain))
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
        let db = ctx.data::<DatabaseConnection>()?;
        let filter = match filter.name {
            DomainsNameFilter::Eq(name) => {
                validate_name(&name)?;
                DomainFilter::NameEq(name)
            }
            DomainsNameFilter::In(names) => {
                if names.len() > MAX_NAMES_IN {
                    return Err(coded(
                        code::INVALID_ARGUMENT,
                        format!("in accepts at most {MAX_NAMES_IN} names"),
                    ));
                }
                for name in &names {
                    validate_name(name)?;
                }
                DomainFilter::NameIn(names)
            }
            DomainsNameFilter::StartsWith(prefix) => {
                if prefix.is_empty() || prefix.len() > crate::name::MAX_NAME_BYTES {
                    return Err(coded(code::INVALID_ARGUMENT, "starts_with needs 1 to 4096 bytes"));
                }
                // Names are normalized, hence lowercase: match case-insensitively on every engine.
                DomainFilter::NameStartsWith(prefix.to_lowercase())
            }
        };
        DomainConnection::load(db, filter, order, Paging { first, after, last, before }).await
    }

    /// Any account (it need not own anything).
    async fn account(&self, by: AccountByInput) -> Result<Account, Error> {
        let (AccountByInput::Address(a) | AccountByInput::Id(a)) = by;
        Ok(Account(parse_address(&a)?))
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

    /// The root registry: the registry of the lowest chain id that holds top-level domains
    /// (Ethereum mainnet in the mainnet namespace). Null before anything is indexed.
    async fn root(&self, ctx: &Context<'_>) -> Result<Option<Registry>, Error> {
        let db = ctx.data::<DatabaseConnection>()?;
        Ok(domain::Entity::find()
            .filter(domain::Column::ParentId.is_null())
            .order_by_asc(domain::Column::ChainId)
            .one(db)
            .await
            .map_err(internal)?
            .map(|d| Registry { chain_id: d.chain_id, address: d.registry }))
    }

    /// A registry contract.
    async fn registry(&self, by: RegistryIdInput) -> Result<Registry, Error> {
        let (chain_id, address) = match by {
            RegistryIdInput::Contract(c) => (c.chain_id, c.address),
            RegistryIdInput::Id(id) => split_contract_id(&id)?,
        };
        Ok(Registry { chain_id, address: parse_address(&address)? })
    }

    /// A resolver contract.
    async fn resolver(&self, by: ResolverIdInput) -> Result<Resolver, Error> {
        let (chain_id, address) = match by {
            ResolverIdInput::Contract(c) => (c.chain_id, c.address),
            ResolverIdInput::Id(id) => split_contract_id(&id)?,
        };
        Ok(Resolver { chain_id, address: parse_address(&address)? })
    }
}
